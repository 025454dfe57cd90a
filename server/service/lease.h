/* SPDX-License-Identifier: MIT */
/*
 * lease.h - exclusive use of a tuner for a while.
 *
 * A lease names a holder, a priority (0..1000) and a time to live; it
 * vanishes by itself when not renewed (no stale locks).  A request with a
 * higher priority pre-empts the holder.  Lease ids are 128 random bits in
 * hex: knowing the id is what lets a client tune a leased tuner, so ids
 * never appear in events or logs.
 *
 * Events: lease.acquired, lease.renewed, lease.released, lease.expired,
 * lease.preempted.  Loop thread only.
 *
 * With a state directory a change (take, renew, release) is made in the
 * table at once, so the next request sees it, but is *pending* until a
 * write of the table that includes it has ended: only then are its
 * events published and its waiter told (struct lease_waiter), and only
 * then may its client be answered.  The changes of one loop turn, and
 * those made while a write is in flight, share the next write (group
 * commit).  A write that fails takes the table back to what is on disk:
 * every pending change is undone and each waiter told the write's errno.
 */
#ifndef TUNERD_LEASE_H
#define TUNERD_LEASE_H

#include <stdint.h>

struct loop;
struct eventbus;
struct state_dir;
struct lease_table;
struct lease_change;

/* Told once that a change was saved (err 0) or not (-errno, the change
 * undone); from the loop, never from inside the call that made it. */
typedef void (*lease_saved_fn)(int err, void *arg);

/* Embedded in the caller's state; fn and arg set by the caller. */
struct lease_waiter {
	lease_saved_fn fn;
	void *arg;
	struct lease_change *change; /* lease.c: the pending change */
};

/* 1 while w waits for its change's write. */
static inline int lease_waiting(const struct lease_waiter *w)
{
	return w && w->change;
}
/* The waiter's client went away: fn is not called (the change stays
 * pending and is saved all the same). */
void lease_waiter_cancel(struct lease_waiter *w);

#define LEASE_ID_LEN       32
#define LEASE_HOLDER_MAX   64 /* characters */
#define LEASE_TTL_MIN      1
#define LEASE_TTL_MAX      3600
#define LEASE_TTL_DEFAULT  30
#define LEASE_PRIO_MAX     1000
#define LEASE_PRIO_DEFAULT 100

struct lease {
	long tuner;
	char id[LEASE_ID_LEN + 1];
	/* LEASE_HOLDER_MAX characters of UTF-8, up to 4 bytes each */
	char holder[LEASE_HOLDER_MAX * 4 + 1];
	int priority;
	unsigned int ttl_s;
	uint64_t expires_ms;   /* monotonic (loop_now_ms) */
	uint64_t expires_wall; /* realtime ms, for answers and events */
};

/* loop and events may be NULL (tests): then expiry happens only in
 * lease_table_expire() and lookups. */
struct lease_table *lease_table_new(struct loop *loop, struct eventbus *ev);
void lease_table_free(struct lease_table *lt);

/* 1 when a lease that ends at expires_ms is over at now_ms. */
static inline int lease_is_expired(uint64_t expires_ms, uint64_t now_ms)
{
	return now_ms >= expires_ms;
}

/* When a lease taken or renewed at now_ms for ttl_s seconds ends. */
static inline uint64_t lease_deadline(uint64_t now_ms, unsigned int ttl_s)
{
	return now_ms + (uint64_t)ttl_s * 1000u;
}

/*
 * Keep the table in sd (document "leases", lease_store.h) from now on,
 * and take back the leases it holds that have not expired: each keeps
 * its id, holder, priority, ttl and wall-clock expiry.  A lease of a
 * tuner that is not there (yet) is kept like any other: tuners attach
 * after the start, and it expires at its time if its tuner never comes.
 * Call on an empty table.  0, -EBUSY (not empty) or -ENOMEM.
 *
 * From then on take, renew and release are pending until written
 * (above).  Needs the table's loop when sd is not NULL (-EINVAL).
 */
int lease_table_keep(struct lease_table *lt, struct state_dir *sd);
/* At a stop: wait at most max_ms for the write in flight, then write
 * what is pending at once (waiters told).  0 or -ETIMEDOUT. */
int lease_table_flush(struct lease_table *lt, unsigned int max_ms);

/*
 * Take tuner for holder.  Returns 0 (*out: the new lease), 1 when it
 * pre-empted a lower-priority holder (*out: the new lease, *other: the
 * pre-empted one), -EBUSY when someone else holds it with a priority >=
 * priority (*other: that lease), -ENOMEM or getrandom()'s errno.
 *
 * A change (0 or 1 returned) waits for its write when w is not NULL and
 * the table is kept (lease_waiting(w)); without a state directory it is
 * final at once and w stays unused.  A refusal changes nothing.
 */
int lease_acquire(struct lease_table *lt, long tuner, const char *holder,
		  int priority, unsigned int ttl_s, struct lease *out,
		  struct lease *other, struct lease_waiter *w);
/* Extend the lease with id by ttl_s (0: its own ttl).  Returns 0,
 * -ENOENT (tuner not leased), -EPERM (another id; *other: the lease) or
 * -ENOMEM; w as above. */
int lease_renew(struct lease_table *lt, long tuner, const char *id,
		unsigned int ttl_s, struct lease *out, struct lease *other,
		struct lease_waiter *w);
/* Returns 0, -ENOENT (not leased), -EPERM (another id; *other) or
 * -ENOMEM; w as above. */
int lease_release(struct lease_table *lt, long tuner, const char *id,
		  struct lease *other, struct lease_waiter *w);
/* The live lease on tuner, copied into *out: 1, or 0 when none. */
int lease_get(struct lease_table *lt, long tuner, struct lease *out);
/* A number that changes whenever a lease is added, renewed or dropped:
 * what lease_get() answers may have changed.  A lease past its expiry
 * stays until its timer (or a lease_get()) drops it. */
uint64_t lease_table_version(const struct lease_table *lt);
/* May a request carrying id (NULL: none) act on tuner?  1 when the tuner
 * is not leased or id matches; 0 with *holder filled otherwise. */
int lease_allows(struct lease_table *lt, long tuner, const char *id,
		 struct lease *holder);
/* Drop every lease over at now_ms (events lease.expired). */
void lease_table_expire(struct lease_table *lt, uint64_t now_ms);

#endif /* TUNERD_LEASE_H */

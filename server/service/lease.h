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
 */
#ifndef TUNERD_LEASE_H
#define TUNERD_LEASE_H

#include <stdint.h>

struct loop;
struct eventbus;
struct state_dir;
struct lease_table;

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
 * From then on take, renew and release write the table before they
 * change it and return the write's negative errno, changing nothing,
 * when it fails.
 */
int lease_table_keep(struct lease_table *lt, struct state_dir *sd);

/*
 * Take tuner for holder.  Returns 0 (*out: the new lease), 1 when it
 * pre-empted a lower-priority holder (*out: the new lease, *other: the
 * pre-empted one), -EBUSY when someone else holds it with a priority >=
 * priority (*other: that lease), -ENOMEM, getrandom()'s errno, or the
 * errno of a failed write.
 */
int lease_acquire(struct lease_table *lt, long tuner, const char *holder,
		  int priority, unsigned int ttl_s, struct lease *out,
		  struct lease *other);
/* Extend the lease with id by ttl_s (0: its own ttl).  Returns 0,
 * -ENOENT (tuner not leased), -EPERM (another id; *other: the lease),
 * or the errno of a failed write. */
int lease_renew(struct lease_table *lt, long tuner, const char *id,
		unsigned int ttl_s, struct lease *out, struct lease *other);
/* Returns 0, -ENOENT (not leased), -EPERM (another id; *other), or the
 * errno of a failed write. */
int lease_release(struct lease_table *lt, long tuner, const char *id,
		  struct lease *other);
/* The live lease on tuner, copied into *out: 1, or 0 when none. */
int lease_get(struct lease_table *lt, long tuner, struct lease *out);
/* May a request carrying id (NULL: none) act on tuner?  1 when the tuner
 * is not leased or id matches; 0 with *holder filled otherwise. */
int lease_allows(struct lease_table *lt, long tuner, const char *id,
		 struct lease *holder);
/* Drop every lease over at now_ms (events lease.expired). */
void lease_table_expire(struct lease_table *lt, uint64_t now_ms);

#endif /* TUNERD_LEASE_H */

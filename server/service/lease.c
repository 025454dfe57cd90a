// SPDX-License-Identifier: MIT
/*
 * Leases, one per tuner at most, in a short list: a box has a handful of
 * tuners.  Each lease has its own loop timer for its expiry; lookups also
 * compare with the clock, so a late timer never lets an expired lease
 * refuse anyone.
 *
 * With a state directory every change is written before it is made
 * (lease_store.c): the document is built as the table will be, written
 * and fsync()ed, and only then is the table changed and the event
 * published.  A write that fails changes nothing, so an answer the
 * client gets always matches what a restart finds.  Expiries are
 * written after the fact: nobody waits for them, and an expired lease
 * read back is dropped anyway.
 */
#include "lease.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "auth.h"
#include "eventbus.h"
#include "json_api.h"
#include "lease_store.h"
#include "log.h"
#include "loop.h"
#include "state_file.h"

struct lease_slot {
	struct lease lease;
	uint64_t timer;
	struct lease_table *lt;
	struct lease_slot *next;
};

struct lease_table {
	struct loop *loop;
	struct eventbus *events;
	struct lease_slot *slots;
	struct state_dir *state; /* NULL: leases live in memory only */
	int save_failed;         /* the last write failed (logged once) */
};

static uint64_t now_ms(void)
{
	return loop_now_ms();
}

struct lease_table *lease_table_new(struct loop *loop, struct eventbus *ev)
{
	struct lease_table *lt = calloc(1, sizeof(*lt));

	if (lt) {
		lt->loop = loop;
		lt->events = ev;
	}
	return lt;
}

static void slot_free(struct lease_table *lt, struct lease_slot *s)
{
	if (lt->loop)
		loop_del_timer(lt->loop, s->timer);
	explicit_bzero(s->lease.id, sizeof(s->lease.id));
	free(s);
}

void lease_table_free(struct lease_table *lt)
{
	struct lease_slot *s, *next;

	if (!lt)
		return;
	for (s = lt->slots; s; s = next) {
		next = s->next;
		slot_free(lt, s);
	}
	free(lt);
}

static void publish(struct lease_table *lt, const char *type,
		    const struct lease *l, json_t *extra)
{
	json_t *f;

	if (!lt->events) {
		json_decref(extra);
		return;
	}
	f = json_pack("{s:s, s:i, s:o, s:i}", "holder", l->holder, "priority",
		      l->priority, "expires", api_time_json(l->expires_wall),
		      "ttl_s", (int)l->ttl_s);
	if (f && extra)
		json_object_update(f, extra);
	json_decref(extra);
	eventbus_publish(lt->events, type, l->tuner, f);
}

static struct lease_slot **find_slot(struct lease_table *lt, long tuner)
{
	struct lease_slot **pp;

	for (pp = &lt->slots; *pp; pp = &(*pp)->next)
		if ((*pp)->lease.tuner == tuner)
			return pp;
	return pp;
}

static void drop(struct lease_table *lt, struct lease_slot **pp,
		 const char *event, json_t *extra)
{
	struct lease_slot *s = *pp;

	*pp = s->next;
	if (event)
		publish(lt, event, &s->lease, extra);
	else
		json_decref(extra);
	slot_free(lt, s);
}

/* The live slot of tuner, dropping it first if it is over. */
static struct lease_slot **live_slot(struct lease_table *lt, long tuner)
{
	struct lease_slot **pp = find_slot(lt, tuner);

	if (*pp && lease_is_expired((*pp)->lease.expires_ms, now_ms()))
		drop(lt, pp, "lease.expired", NULL);
	return pp;
}

static long expiry_timer(struct loop *l, uint64_t id, void *arg)
{
	struct lease_slot *s = arg;
	struct lease_table *lt = s->lt;

	(void)l;
	(void)id;
	s->timer = 0;
	lease_table_expire(lt, now_ms());
	return LOOP_TIMER_DONE;
}

static void set_expiry(struct lease *l, unsigned int ttl_s)
{
	l->ttl_s = ttl_s;
	l->expires_ms = lease_deadline(now_ms(), ttl_s);
	l->expires_wall = api_realtime_ms() + (uint64_t)ttl_s * 1000u;
}

/* The slot's timer for its lease's expires_ms. */
static void arm_expiry(struct lease_table *lt, struct lease_slot *s)
{
	uint64_t now = now_ms();

	if (!lt->loop)
		return;
	loop_del_timer(lt->loop, s->timer);
	/* A failed timer only delays the expiry to the next lookup. */
	s->timer = loop_add_timer(
	    lt->loop, s->lease.expires_ms > now ? s->lease.expires_ms - now : 0,
	    expiry_timer, s);
}

static void note_save(struct lease_table *lt, int err)
{
	if (err && !lt->save_failed)
		log_err("state: cannot save the leases in %s: %s",
			state_dir_path(lt->state), strerror(-err));
	else if (!err && lt->save_failed)
		log_info("state: the leases are saved again");
	lt->save_failed = !!err;
}

/* Write the table as it will be: every lease but tuner's, then with (a
 * new or renewed lease of tuner, or NULL).  0 or -errno. */
static int save(struct lease_table *lt, long tuner, const struct lease *with)
{
	json_t *arr;
	int err = 0;

	if (!lt->state)
		return 0;
	arr = json_array();
	for (struct lease_slot *s = lt->slots; arr && s; s = s->next)
		if (s->lease.tuner != tuner)
			err |= json_array_append_new(
			    arr, lease_store_entry(&s->lease));
	if (arr && with)
		err |= json_array_append_new(arr, lease_store_entry(with));
	if (err) {
		json_decref(arr);
		arr = NULL;
	}
	err = lease_store_write(lt->state, arr);
	note_save(lt, err);
	return err;
}

static int new_id(char *out)
{
	unsigned char raw[LEASE_ID_LEN / 2];
	ssize_t n = getrandom(raw, sizeof(raw), 0);

	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(raw))
		return -EIO; /* a short read: the pool is not ready */
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	explicit_bzero(raw, sizeof(raw));
	return 0;
}

int lease_acquire(struct lease_table *lt, long tuner, const char *holder,
		  int priority, unsigned int ttl_s, struct lease *out,
		  struct lease *other)
{
	struct lease_slot **pp = live_slot(lt, tuner), *s;
	int preempted = 0, err;

	if (*pp) {
		*other = (*pp)->lease;
		if ((*pp)->lease.priority >= priority)
			return -EBUSY;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = new_id(s->lease.id);
	s->lt = lt;
	s->lease.tuner = tuner;
	snprintf(s->lease.holder, sizeof(s->lease.holder), "%s", holder);
	s->lease.priority = priority;
	set_expiry(&s->lease, ttl_s);
	if (!err)
		err = save(lt, tuner, &s->lease); /* the pre-empted one gone */
	if (err) {
		explicit_bzero(s->lease.id, sizeof(s->lease.id));
		free(s);
		return err;
	}
	if (*pp) {
		drop(lt, pp, "lease.preempted",
		     json_pack("{s:s, s:i}", "by", holder, "by_priority",
			       priority));
		preempted = 1;
	}
	arm_expiry(lt, s);
	s->next = lt->slots;
	lt->slots = s;
	*out = s->lease;
	publish(lt, "lease.acquired", &s->lease, NULL);
	return preempted;
}

/* The live slot of tuner whose id matches: 0, -ENOENT or -EPERM. */
static int matching_slot(struct lease_table *lt, long tuner, const char *id,
			 struct lease_slot ***out, struct lease *other)
{
	struct lease_slot **pp = live_slot(lt, tuner);

	if (!*pp)
		return -ENOENT;
	if (!id || strlen(id) != LEASE_ID_LEN ||
	    !auth_token_equal((*pp)->lease.id, LEASE_ID_LEN, id,
			      LEASE_ID_LEN)) {
		if (other)
			*other = (*pp)->lease;
		return -EPERM;
	}
	*out = pp;
	return 0;
}

int lease_renew(struct lease_table *lt, long tuner, const char *id,
		unsigned int ttl_s, struct lease *out, struct lease *other)
{
	struct lease_slot **pp;
	struct lease renewed;
	int ret = matching_slot(lt, tuner, id, &pp, other);

	if (ret)
		return ret;
	renewed = (*pp)->lease;
	set_expiry(&renewed, ttl_s ? ttl_s : renewed.ttl_s);
	ret = save(lt, tuner, &renewed);
	if (!ret) /* exactly what was written, not a later clock's */
		(*pp)->lease = renewed;
	explicit_bzero(renewed.id, sizeof(renewed.id));
	if (ret)
		return ret;
	arm_expiry(lt, *pp);
	*out = (*pp)->lease;
	publish(lt, "lease.renewed", &(*pp)->lease, NULL);
	return 0;
}

int lease_release(struct lease_table *lt, long tuner, const char *id,
		  struct lease *other)
{
	struct lease_slot **pp;
	int ret = matching_slot(lt, tuner, id, &pp, other);

	if (!ret)
		ret = save(lt, tuner, NULL);
	if (ret)
		return ret;
	drop(lt, pp, "lease.released", NULL);
	return 0;
}

int lease_get(struct lease_table *lt, long tuner, struct lease *out)
{
	struct lease_slot **pp = live_slot(lt, tuner);

	if (!*pp)
		return 0;
	*out = (*pp)->lease;
	return 1;
}

int lease_allows(struct lease_table *lt, long tuner, const char *id,
		 struct lease *holder)
{
	struct lease_slot **pp;
	int ret = matching_slot(lt, tuner, id, &pp, holder);

	return ret != -EPERM;
}

void lease_table_expire(struct lease_table *lt, uint64_t now)
{
	struct lease_slot **pp = &lt->slots;
	int dropped = 0;

	while (*pp) {
		if (lease_is_expired((*pp)->lease.expires_ms, now)) {
			drop(lt, pp, "lease.expired", NULL);
			dropped = 1;
		} else {
			pp = &(*pp)->next;
		}
	}
	if (dropped)
		save(lt, 0, NULL); /* logged when it fails */
}

struct keep_count {
	struct lease_table *lt;
	unsigned int kept, expired, failed;
};

/*
 * A lease read back: its expiry stays where it was on the wall clock,
 * the monotonic deadline is derived from it.  A wall clock set back
 * while the daemon was down would lengthen it: never past one ttl.
 */
static void keep_one(const struct lease *l, void *arg)
{
	struct keep_count *kc = arg;
	uint64_t wall = api_realtime_ms(), left;
	struct lease_slot *s;

	if (l->expires_wall <= wall) {
		kc->expired++;
		return;
	}
	left = l->expires_wall - wall;
	if (left > (uint64_t)l->ttl_s * 1000u)
		left = (uint64_t)l->ttl_s * 1000u;
	s = calloc(1, sizeof(*s));
	if (!s) {
		kc->failed++;
		return;
	}
	s->lt = kc->lt;
	s->lease = *l;
	s->lease.expires_ms = now_ms() + left;
	s->lease.expires_wall = wall + left;
	arm_expiry(kc->lt, s);
	s->next = kc->lt->slots;
	kc->lt->slots = s;
	kc->kept++;
}

int lease_table_keep(struct lease_table *lt, struct state_dir *sd)
{
	struct keep_count kc = {.lt = lt};
	int n;

	if (lt->slots)
		return -EBUSY;
	lt->state = sd;
	if (!sd)
		return 0;
	n = lease_store_read(sd, keep_one, &kc);
	if (n < 0)
		return n;
	if (n)
		log_info("state: %u lease(s) kept from the last run, %u "
			 "expired meanwhile%s",
			 kc.kept, kc.expired,
			 kc.failed ? ", some lost: out of memory" : "");
	return kc.failed ? -ENOMEM : 0;
}

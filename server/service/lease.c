// SPDX-License-Identifier: MIT
/*
 * Leases, one per tuner at most, in a short list: a box has a handful of
 * tuners.  Each lease has its own loop timer for its expiry; lookups also
 * compare with the clock, so a late timer never lets an expired lease
 * refuse anyone.
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
#include "loop.h"

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

static void set_expiry(struct lease_table *lt, struct lease_slot *s,
		       unsigned int ttl_s)
{
	uint64_t now = now_ms();

	s->lease.ttl_s = ttl_s;
	s->lease.expires_ms = lease_deadline(now, ttl_s);
	s->lease.expires_wall = api_realtime_ms() + (uint64_t)ttl_s * 1000u;
	if (!lt->loop)
		return;
	loop_del_timer(lt->loop, s->timer);
	/* A failed timer only delays the expiry to the next lookup. */
	s->timer =
	    loop_add_timer(lt->loop, (uint64_t)ttl_s * 1000u, expiry_timer, s);
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
		drop(lt, pp, "lease.preempted",
		     json_pack("{s:s, s:i}", "by", holder, "by_priority",
			       priority));
		preempted = 1;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = new_id(s->lease.id);
	if (err) {
		free(s);
		return err;
	}
	s->lt = lt;
	s->lease.tuner = tuner;
	snprintf(s->lease.holder, sizeof(s->lease.holder), "%s", holder);
	s->lease.priority = priority;
	set_expiry(lt, s, ttl_s);
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
	int ret = matching_slot(lt, tuner, id, &pp, other);

	if (ret)
		return ret;
	set_expiry(lt, *pp, ttl_s ? ttl_s : (*pp)->lease.ttl_s);
	*out = (*pp)->lease;
	publish(lt, "lease.renewed", &(*pp)->lease, NULL);
	return 0;
}

int lease_release(struct lease_table *lt, long tuner, const char *id,
		  struct lease *other)
{
	struct lease_slot **pp;
	int ret = matching_slot(lt, tuner, id, &pp, other);

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

	while (*pp) {
		if (lease_is_expired((*pp)->lease.expires_ms, now))
			drop(lt, pp, "lease.expired", NULL);
		else
			pp = &(*pp)->next;
	}
}

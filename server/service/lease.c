// SPDX-License-Identifier: MIT
/*
 * Leases, one per tuner at most, in a short list: a box has a handful of
 * tuners.  Each lease has its own loop timer for its expiry; lookups also
 * compare with the clock, so a late timer never lets an expired lease
 * refuse anyone.
 *
 * With a state directory the table is written off the loop thread
 * (lease_commit.c: struct state_doc, lease_store.c's document) and every
 * change is pending until a
 * write that includes it has ended.  Two copies are kept: the table
 * itself (what requests see: every change, pending or not) and
 * "committed", the leases as the disk has them.  A change is made in
 * the table at once, so that two takes of one tuner in a turn conflict
 * as they did when each was written alone; its events and its waiter
 * wait in a list.  A write takes the table as it is then; when it ends
 * well that copy becomes committed and the changes it carried are
 * published and answered.  When it fails the table goes back to
 * committed and every pending change is undone and told so, also those
 * gathered for the next write: they were decided on top of the failed
 * ones.  So an answer a client gets always matches what a restart finds.
 *
 * Expiries are published at once and written with the next write:
 * nobody waits for them, and an expired lease read back is dropped
 * anyway.
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
#include "lease_priv.h"
#include "lease_store.h"
#include "log.h"
#include "loop.h"
#include "state_file.h"

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
		lt->gathering_tail = &lt->gathering;
	}
	return lt;
}

static void slot_free(struct lease_table *lt, struct lease_slot *s)
{
	lt->version++;
	if (lt->loop)
		loop_del_timer(lt->loop, s->timer);
	explicit_bzero(s->lease.id, sizeof(s->lease.id));
	free(s);
}

void lease_slots_free(struct lease_table *lt, struct lease_slot *s)
{
	struct lease_slot *next;

	for (; s; s = next) {
		next = s->next;
		slot_free(lt, s);
	}
}

void lease_table_free(struct lease_table *lt)
{
	if (!lt)
		return;
	state_doc_free(lt->doc);
	lease_changes_free(lt->gathering);
	lease_changes_free(lt->in_write);
	lease_slots_free(lt, lt->slots);
	lease_list_clear(&lt->committed);
	lease_list_clear(&lt->writing);
	free(lt);
}

void lease_publish(struct lease_table *lt, const char *type,
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
		lease_publish(lt, event, &s->lease, extra);
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

struct lease_slot *lease_slot_add(struct lease_table *lt, const struct lease *l)
{
	struct lease_slot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->lt = lt;
	s->lease = *l;
	lt->version++;
	arm_expiry(lt, s);
	s->next = lt->slots;
	lt->slots = s;
	return s;
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
		  struct lease *other, struct lease_waiter *w)
{
	struct lease_slot **pp = live_slot(lt, tuner), *s;
	struct lease_change *c;
	struct lease l = {.tuner = tuner, .priority = priority};
	int err;

	if (*pp) {
		*other = (*pp)->lease;
		if ((*pp)->lease.priority >= priority)
			return -EBUSY;
	}
	err = new_id(l.id);
	if (err)
		return err;
	snprintf(l.holder, sizeof(l.holder), "%s", holder);
	set_expiry(&l, ttl_s);
	c = lease_change_new("lease.acquired", &l);
	explicit_bzero(l.id, sizeof(l.id));
	if (!c)
		return -ENOMEM;
	if (*pp) {
		c->has_preempted = 1;
		c->preempted = (*pp)->lease;
		c->extra = json_pack("{s:s, s:i}", "by", holder, "by_priority",
				     priority);
		drop(lt, pp, NULL, NULL);
	}
	s = lease_slot_add(lt, &c->lease);
	if (!s) {
		/* Nothing was dropped but for a pre-emption: put it back. */
		if (c->has_preempted && !lease_slot_add(lt, &c->preempted))
			log_err("lease: tuner %ld: out of memory", tuner);
		lease_changes_free(c);
		return -ENOMEM;
	}
	*out = s->lease;
	return lease_change_add(lt, c, w, c->has_preempted);
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
		unsigned int ttl_s, struct lease *out, struct lease *other,
		struct lease_waiter *w)
{
	struct lease_slot **pp;
	struct lease_change *c;
	struct lease renewed;
	int ret = matching_slot(lt, tuner, id, &pp, other);

	if (ret)
		return ret;
	renewed = (*pp)->lease;
	set_expiry(&renewed, ttl_s ? ttl_s : renewed.ttl_s);
	c = lease_change_new("lease.renewed", &renewed);
	explicit_bzero(renewed.id, sizeof(renewed.id));
	if (!c)
		return -ENOMEM;
	(*pp)->lease = c->lease; /* exactly what is written */
	lt->version++;
	arm_expiry(lt, *pp);
	*out = (*pp)->lease;
	return lease_change_add(lt, c, w, 0);
}

int lease_release(struct lease_table *lt, long tuner, const char *id,
		  struct lease *other, struct lease_waiter *w)
{
	struct lease_slot **pp;
	struct lease_change *c;
	int ret = matching_slot(lt, tuner, id, &pp, other);

	if (ret)
		return ret;
	c = lease_change_new("lease.released", &(*pp)->lease);
	if (!c)
		return -ENOMEM;
	drop(lt, pp, NULL, NULL);
	return lease_change_add(lt, c, w, 0);
}

int lease_get(struct lease_table *lt, long tuner, struct lease *out)
{
	struct lease_slot **pp = live_slot(lt, tuner);

	if (!*pp)
		return 0;
	*out = (*pp)->lease;
	return 1;
}

uint64_t lease_table_version(const struct lease_table *lt)
{
	return lt ? lt->version : 0;
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
	if (dropped && lt->doc)
		state_doc_due(lt->doc); /* logged when it fails */
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
	struct lease back = *l;

	if (l->expires_wall <= wall) {
		kc->expired++;
		return;
	}
	left = l->expires_wall - wall;
	if (left > (uint64_t)l->ttl_s * 1000u)
		left = (uint64_t)l->ttl_s * 1000u;
	back.expires_ms = now_ms() + left;
	back.expires_wall = wall + left;
	if (lease_slot_add(kc->lt, &back))
		kc->kept++;
	else
		kc->failed++;
	explicit_bzero(back.id, sizeof(back.id));
}

int lease_table_keep(struct lease_table *lt, struct state_dir *sd)
{
	struct keep_count kc = {.lt = lt};
	int n;

	if (lt->slots || lt->doc)
		return -EBUSY;
	if (!sd)
		return 0;
	if (!lt->loop)
		return -EINVAL;
	if (lease_commit_open(lt, sd))
		return -ENOMEM;
	lt->state = sd;
	n = lease_store_read(sd, keep_one, &kc);
	if (n < 0 || lease_list_of_slots(lt, &lt->committed))
		return n < 0 ? n : -ENOMEM;
	if (n)
		log_info("state: %u lease(s) kept from the last run, %u "
			 "expired meanwhile%s",
			 kc.kept, kc.expired,
			 kc.failed ? ", some lost: out of memory" : "");
	return kc.failed ? -ENOMEM : 0;
}

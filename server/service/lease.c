// SPDX-License-Identifier: MIT
/*
 * Leases, one per tuner at most, in a short list: a box has a handful of
 * tuners.  Each lease has its own loop timer for its expiry; lookups also
 * compare with the clock, so a late timer never lets an expired lease
 * refuse anyone.
 *
 * With a state directory the table is written off the loop thread
 * (struct state_doc, lease_store.c) and every change is pending until a
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

/* A change waiting for its write: its events and its waiter. */
struct lease_change {
	struct lease_change *next;
	const char *event; /* lease.acquired, .renewed or .released */
	struct lease lease;
	int has_preempted;
	struct lease preempted; /* lease.preempted first, with extra */
	json_t *extra;
	struct lease_waiter *w;
};

struct lease_list {
	struct lease *v;
	size_t n;
};

struct lease_table {
	struct loop *loop;
	struct eventbus *events;
	struct lease_slot *slots;
	struct state_dir *state; /* NULL: leases live in memory only */
	struct state_doc *doc;
	struct lease_list committed; /* as on disk */
	struct lease_list writing;   /* the copy in the write in flight */
	struct lease_change *gathering, **gathering_tail; /* the next write's */
	struct lease_change *in_write; /* the changes the write carries */
	int save_failed;               /* the last write failed (logged once) */
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
		lt->gathering_tail = &lt->gathering;
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

static void slots_free(struct lease_table *lt, struct lease_slot *s)
{
	struct lease_slot *next;

	for (; s; s = next) {
		next = s->next;
		slot_free(lt, s);
	}
}

static void list_clear(struct lease_list *ll)
{
	if (ll->v)
		explicit_bzero(ll->v, ll->n * sizeof(*ll->v));
	free(ll->v);
	*ll = (struct lease_list){0};
}

static void changes_free(struct lease_change *c);

void lease_table_free(struct lease_table *lt)
{
	if (!lt)
		return;
	state_doc_free(lt->doc);
	changes_free(lt->gathering);
	changes_free(lt->in_write);
	slots_free(lt, lt->slots);
	list_clear(&lt->committed);
	list_clear(&lt->writing);
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

/* ---- pending changes ---- */

static void changes_free(struct lease_change *c)
{
	struct lease_change *next;

	for (; c; c = next) {
		next = c->next;
		if (c->w)
			c->w->change = NULL;
		json_decref(c->extra);
		explicit_bzero(c, sizeof(*c));
		free(c);
	}
}

static struct lease_change *change_new(const char *event, const struct lease *l)
{
	struct lease_change *c = calloc(1, sizeof(*c));

	if (c) {
		c->event = event;
		c->lease = *l;
	}
	return c;
}

/* The change is final: its events out, its waiter told. */
static void change_end(struct lease_table *lt, struct lease_change *c, int err)
{
	struct lease_waiter *w = c->w;

	if (!err && c->has_preempted) {
		publish(lt, "lease.preempted", &c->preempted, c->extra);
		c->extra = NULL;
	}
	if (!err)
		publish(lt, c->event, &c->lease, NULL);
	c->w = NULL;
	if (w) {
		w->change = NULL;
		w->fn(err, w->arg);
	}
}

static void changes_end(struct lease_table *lt, struct lease_change *list,
			int err)
{
	for (struct lease_change *c = list; c; c = c->next)
		change_end(lt, c, err);
	changes_free(list);
}

/* A change made in the table: final now without a state directory,
 * else pending until the next write that takes it.  Returns ret. */
static int change_add(struct lease_table *lt, struct lease_change *c,
		      struct lease_waiter *w, int ret)
{
	if (!lt->doc) {
		changes_end(lt, c, 0);
		return ret;
	}
	if (w) {
		c->w = w;
		w->change = c;
	}
	*lt->gathering_tail = c;
	lt->gathering_tail = &c->next;
	state_doc_due(lt->doc);
	return ret;
}

void lease_waiter_cancel(struct lease_waiter *w)
{
	if (w && w->change) {
		w->change->w = NULL;
		w->change = NULL;
	}
}

/* ---- the write ---- */

static int list_of_slots(struct lease_table *lt, struct lease_list *ll)
{
	size_t n = 0, i = 0;

	for (struct lease_slot *s = lt->slots; s; s = s->next)
		n++;
	*ll = (struct lease_list){.v = calloc(n + 1, sizeof(*ll->v)), .n = n};
	if (!ll->v)
		return -ENOMEM;
	for (struct lease_slot *s = lt->slots; s; s = s->next)
		ll->v[i++] = s->lease;
	return 0;
}

/* state_doc: the write starts.  It carries the table as it is and the
 * changes gathered so far. */
static json_t *build_doc(void *arg)
{
	struct lease_table *lt = arg;
	json_t *arr;
	int err = 0;

	lt->in_write = lt->gathering;
	lt->gathering = NULL;
	lt->gathering_tail = &lt->gathering;
	list_clear(&lt->writing);
	if (list_of_slots(lt, &lt->writing))
		return NULL;
	arr = json_array();
	for (size_t i = 0; arr && i < lt->writing.n; i++)
		err |= json_array_append_new(
		    arr, lease_store_entry(&lt->writing.v[i]));
	if (err) {
		json_decref(arr);
		arr = NULL;
	}
	return lease_store_doc(arr);
}

static struct lease_slot *slot_add(struct lease_table *lt,
				   const struct lease *l)
{
	struct lease_slot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->lt = lt;
	s->lease = *l;
	arm_expiry(lt, s);
	s->next = lt->slots;
	lt->slots = s;
	return s;
}

static int has_lease(struct lease_slot *s, const struct lease *l)
{
	for (; s; s = s->next)
		if (s->lease.tuner == l->tuner && !strcmp(s->lease.id, l->id))
			return 1;
	return 0;
}

/* Back to what the disk has.  A committed lease that is over and no
 * longer in the table was announced expired already: not again. */
static void roll_back(struct lease_table *lt)
{
	struct lease_slot *was = lt->slots;
	uint64_t now = now_ms();

	lt->slots = NULL;
	for (size_t i = 0; i < lt->committed.n; i++) {
		const struct lease *l = &lt->committed.v[i];

		if (lease_is_expired(l->expires_ms, now) && !has_lease(was, l))
			continue;
		if (!slot_add(lt, l))
			log_err("state: lease of tuner %ld lost: out of memory",
				l->tuner);
	}
	slots_free(lt, was);
}

/* state_doc: the write ended. */
static void write_done(int err, void *arg)
{
	struct lease_table *lt = arg;
	struct lease_change *carried = lt->in_write, *later = lt->gathering;

	note_save(lt, err);
	lt->in_write = NULL;
	if (!err) {
		list_clear(&lt->committed);
		lt->committed = lt->writing;
		lt->writing = (struct lease_list){0};
		changes_end(lt, carried, 0);
		return;
	}
	list_clear(&lt->writing);
	lt->gathering = NULL;
	lt->gathering_tail = &lt->gathering;
	state_doc_drop_due(lt->doc);
	roll_back(lt);
	changes_end(lt, carried, err);
	changes_end(lt, later, err);
}

int lease_table_flush(struct lease_table *lt, unsigned int max_ms)
{
	return lt && lt->doc ? state_doc_flush(lt->doc, max_ms) : 0;
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
	c = change_new("lease.acquired", &l);
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
	s = slot_add(lt, &c->lease);
	if (!s) {
		/* Nothing was dropped but for a pre-emption: put it back. */
		if (c->has_preempted && !slot_add(lt, &c->preempted))
			log_err("lease: tuner %ld: out of memory", tuner);
		changes_free(c);
		return -ENOMEM;
	}
	*out = s->lease;
	return change_add(lt, c, w, c->has_preempted);
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
	c = change_new("lease.renewed", &renewed);
	explicit_bzero(renewed.id, sizeof(renewed.id));
	if (!c)
		return -ENOMEM;
	(*pp)->lease = c->lease; /* exactly what is written */
	arm_expiry(lt, *pp);
	*out = (*pp)->lease;
	return change_add(lt, c, w, 0);
}

int lease_release(struct lease_table *lt, long tuner, const char *id,
		  struct lease *other, struct lease_waiter *w)
{
	struct lease_slot **pp;
	struct lease_change *c;
	int ret = matching_slot(lt, tuner, id, &pp, other);

	if (ret)
		return ret;
	c = change_new("lease.released", &(*pp)->lease);
	if (!c)
		return -ENOMEM;
	drop(lt, pp, NULL, NULL);
	return change_add(lt, c, w, 0);
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
	if (slot_add(kc->lt, &back))
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
	lt->doc = state_doc_new(sd, lt->loop, LEASE_STORE_DOC, build_doc,
				write_done, lt);
	if (!lt->doc)
		return -ENOMEM;
	lt->state = sd;
	n = lease_store_read(sd, keep_one, &kc);
	if (n < 0 || list_of_slots(lt, &lt->committed))
		return n < 0 ? n : -ENOMEM;
	if (n)
		log_info("state: %u lease(s) kept from the last run, %u "
			 "expired meanwhile%s",
			 kc.kept, kc.expired,
			 kc.failed ? ", some lost: out of memory" : "");
	return kc.failed ? -ENOMEM : 0;
}

// SPDX-License-Identifier: MIT
/*
 * The lease table's group commit (lease.h, lease_priv.h): the changes
 * waiting for a write, the write of the table (struct state_doc, off the
 * loop thread), and what its end does: the copy it wrote becomes the
 * committed one and its changes are published and told, or, when it
 * failed, the table goes back to the committed copy and every pending
 * change is told the error.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lease_priv.h"
#include "lease_store.h"
#include "log.h"
#include "loop.h"
#include "state_file.h"

static void note_save(struct lease_table *lt, int err)
{
	if (err && !lt->save_failed)
		log_err("state: cannot save the leases in %s: %s",
			state_dir_path(lt->state), strerror(-err));
	else if (!err && lt->save_failed)
		log_info("state: the leases are saved again");
	lt->save_failed = !!err;
}

void lease_list_clear(struct lease_list *ll)
{
	if (ll->v)
		explicit_bzero(ll->v, ll->n * sizeof(*ll->v));
	free(ll->v);
	*ll = (struct lease_list){0};
}

/* ---- pending changes ---- */

void lease_changes_free(struct lease_change *c)
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

struct lease_change *lease_change_new(const char *event, const struct lease *l)
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
		lease_publish(lt, "lease.preempted", &c->preempted, c->extra);
		c->extra = NULL;
	}
	if (!err)
		lease_publish(lt, c->event, &c->lease, NULL);
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
	lease_changes_free(list);
}

/* A change made in the table: final now without a state directory,
 * else pending until the next write that takes it.  Returns ret. */
int lease_change_add(struct lease_table *lt, struct lease_change *c,
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

int lease_list_of_slots(struct lease_table *lt, struct lease_list *ll)
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
	lease_list_clear(&lt->writing);
	if (lease_list_of_slots(lt, &lt->writing))
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
	uint64_t now = loop_now_ms();

	lt->slots = NULL;
	for (size_t i = 0; i < lt->committed.n; i++) {
		const struct lease *l = &lt->committed.v[i];

		if (lease_is_expired(l->expires_ms, now) && !has_lease(was, l))
			continue;
		if (!lease_slot_add(lt, l))
			log_err("state: lease of tuner %ld lost: out of memory",
				l->tuner);
	}
	lease_slots_free(lt, was);
}

/* state_doc: the write ended. */
static void write_done(int err, void *arg)
{
	struct lease_table *lt = arg;
	struct lease_change *carried = lt->in_write, *later = lt->gathering;

	note_save(lt, err);
	lt->in_write = NULL;
	if (!err) {
		lease_list_clear(&lt->committed);
		lt->committed = lt->writing;
		lt->writing = (struct lease_list){0};
		changes_end(lt, carried, 0);
		return;
	}
	lease_list_clear(&lt->writing);
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

int lease_commit_open(struct lease_table *lt, struct state_dir *sd)
{
	lt->doc = state_doc_new(sd, lt->loop, LEASE_STORE_DOC, build_doc,
				write_done, lt);
	return lt->doc ? 0 : -ENOMEM;
}

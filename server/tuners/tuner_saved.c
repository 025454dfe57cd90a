// SPDX-License-Identifier: MIT
/*
 * Each tuner's last params in the state directory (document "tuners"),
 * so a box that restarted whole (the stub forgot them too) comes back
 * tuned.  After a daemon restart alone the stub still knows them and
 * its copy wins (worker.c): it also holds a local tune the daemon saw
 * end but had not saved yet.
 *
 * Entries are kept for tuners not attached (yet): the stub re-sends its
 * ATTACHes only after the daemon is up, and a tuner that comes back
 * later finds its params.  An entry is used only when the tuner that
 * attaches is the same chip on the same adapter, address and bridge: a
 * client id the stub gave to another tuner after a reboot is never
 * tuned with someone else's params.
 *
 * When to write: an API tune is answered only once its params are on
 * disk.  They are known when the tune is sent to the worker, so their
 * write starts then (tuner_saved_intent()) and runs on libuv's
 * threadpool while the chip tunes: a tune of 13 ms does not wait 2 ms
 * more for an fsync after it.  Should the tune fail, the entry goes back
 * to the tuner's params (written later, as a kernel-side tune's).  A
 * crash in between keeps the params asked for, never answered: a
 * restore then tunes what the client asked, which is what it retries.
 *
 * Writes are numbered (struct state_doc: one in flight, the next one
 * carrying every change made meanwhile).  An entry notes the write that
 * carries its value; a tune whose entry is not on disk yet when it ends
 * holds its answer (t->answer_held, t->held_write) until that write
 * ends, so tunes of many tuners cost one fsync, and the loop serves
 * everyone meanwhile.  A kernel-side tune (or a restore) was answered by
 * the worker before the daemon heard of it, so nothing can wait for its
 * write: those are written at most once per TUNER_SAVE_DELAY_MS, so that
 * a channel scan does not cost an fsync per step; a power cut loses at
 * most that much of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "loop.h"
#include "state_file.h"
#include "tuner_priv.h"

#define SAVED_DOC           "tuners"
#define SAVED_VERSION       1
#define SAVED_MAX           256  /* entries: more clients than a stub has */
#define TUNER_SAVE_DELAY_MS 1000 /* kernel-side tunes: at most one write */
#define TUNER_SAVE_STOP_MS  5000 /* a stop waits this long for the write */

struct saved_tuner {
	uint32_t id;
	struct tstub_attach attach; /* who it was: chip, adapter, address */
	struct tstub_params params;
	uint64_t in_write; /* the number of the write that carries params */
};

struct saved_params {
	struct saved_tuner *v;
	size_t n;
	int write_failed; /* log a failing disk once, not per tune */
	int dirty;        /* v changed since the last write began */
	uint64_t writes_begun, writes_ended; /* numbered from 1 */
	uint64_t timer; /* the kernel-side tunes' delayed write */
	struct state_doc *doc;
};

static json_t *saved_doc(void *arg);
static void saved_written(int err, void *arg);

static int same_chip(const struct tstub_attach *a, const struct tstub_attach *b)
{
	return a->chip_id == b->chip_id && a->adapter == b->adapter &&
	       a->i2c_addr == b->i2c_addr &&
	       !strncmp(a->bridge, b->bridge, sizeof(a->bridge));
}

static int same_tune(const struct tstub_params *a, const struct tstub_params *b)
{
	return a->delsys == b->delsys && a->frequency == b->frequency &&
	       a->bandwidth == b->bandwidth &&
	       a->symbol_rate == b->symbol_rate && a->std == b->std;
}

static json_t *entry_json(const struct saved_tuner *e)
{
	const struct tstub_params *p = &e->params;

	return json_pack(
	    "{s:I, s:I, s:I, s:I, s:s, s:{s:I, s:I, s:I, s:I, s:I}}", "id",
	    (json_int_t)e->id, "chip_id", (json_int_t)e->attach.chip_id,
	    "adapter", (json_int_t)e->attach.adapter, "address",
	    (json_int_t)e->attach.i2c_addr, "bridge", e->attach.bridge,
	    "params", "delsys", (json_int_t)p->delsys, "frequency",
	    (json_int_t)p->frequency, "bandwidth", (json_int_t)p->bandwidth,
	    "symbol_rate", (json_int_t)p->symbol_rate, "std",
	    (json_int_t)p->std);
}

static int u32_ok(json_int_t v)
{
	return v >= 0 && v <= (json_int_t)UINT32_MAX;
}

static int entry_from_json(json_t *j, struct saved_tuner *e)
{
	json_int_t id, chip, adapter, addr, delsys, freq, bw, sr, std;
	const char *bridge;

	if (json_unpack(j,
			"{s:I, s:I, s:I, s:I, s:s, s:{s:I, s:I, s:I, s:I, "
			"s:I}}",
			"id", &id, "chip_id", &chip, "adapter", &adapter,
			"address", &addr, "bridge", &bridge, "params", "delsys",
			&delsys, "frequency", &freq, "bandwidth", &bw,
			"symbol_rate", &sr, "std", &std))
		return -EINVAL;
	if (!id || !u32_ok(id) || !u32_ok(chip) || !u32_ok(adapter) ||
	    addr < 0 || addr > 0x7f || delsys <= 0 ||
	    delsys >= TSTUB_DELSYS_COUNT || !u32_ok(freq) || !u32_ok(bw) ||
	    !u32_ok(sr) || std < 0 ||
	    strlen(bridge) >= sizeof(e->attach.bridge))
		return -EINVAL;
	*e = (struct saved_tuner){
	    .id = (uint32_t)id,
	    .attach = {.client = (uint32_t)id,
		       .chip_id = (uint32_t)chip,
		       .adapter = (uint32_t)adapter,
		       .i2c_addr = (uint16_t)addr},
	    .params = {.delsys = (uint32_t)delsys,
		       .frequency = (uint32_t)freq,
		       .bandwidth = (uint32_t)bw,
		       .symbol_rate = (uint32_t)sr,
		       .std = (uint64_t)std,
		       .flags = TSTUB_PARAMS_VALID},
	};
	snprintf(e->attach.bridge, sizeof(e->attach.bridge), "%s", bridge);
	return 0;
}

static int load_entries(struct saved_params *sp, json_t *doc)
{
	json_t *arr = json_object_get(doc, "tuners"), *j;
	size_t i;

	if (json_integer_value(json_object_get(doc, "version")) !=
		SAVED_VERSION ||
	    !json_is_array(arr) || json_array_size(arr) > SAVED_MAX)
		return -EINVAL;
	sp->v = calloc(json_array_size(arr) + 1, sizeof(*sp->v));
	if (!sp->v)
		return -ENOMEM;
	json_array_foreach(arr, i, j)
	{
		if (entry_from_json(j, &sp->v[sp->n]))
			return -EINVAL;
		for (size_t k = 0; k < sp->n; k++)
			if (sp->v[k].id == sp->v[sp->n].id)
				return -EINVAL;
		sp->n++;
	}
	return 0;
}

int tuners_load_saved(struct daemon *d)
{
	struct saved_params *sp;
	json_t *doc;
	int err;

	if (!d->state)
		return 0;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	d->saved = sp;
	sp->doc = state_doc_new(d->state, d->loop, SAVED_DOC, saved_doc,
				saved_written, d);
	if (!sp->doc)
		return -ENOMEM;
	if (state_file_read(d->state, SAVED_DOC, &doc))
		return 0; /* none, or corrupt and set aside (logged) */
	err = load_entries(sp, doc);
	json_decref(doc);
	if (err == -ENOMEM)
		return err;
	if (err) {
		sp->n = 0;
		state_file_set_aside(d->state, SAVED_DOC,
				     "not a valid list of tuner params");
		return 0;
	}
	log_info("state: params of %zu tuner(s) kept from the last run", sp->n);
	return 0;
}

void tuners_free_saved(struct daemon *d)
{
	struct saved_params *sp = d->saved;

	if (!sp)
		return;
	if (d->loop)
		loop_del_timer(d->loop, sp->timer);
	if (sp->doc) {
		/* A clean stop keeps the last local tunes. */
		if (sp->dirty)
			state_doc_due(sp->doc);
		if (state_doc_flush(sp->doc, TUNER_SAVE_STOP_MS))
			log_err("state: the tuners' params write did not end "
				"within %d ms",
				TUNER_SAVE_STOP_MS);
		state_doc_free(sp->doc);
	}
	free(sp->v);
	free(sp);
	d->saved = NULL;
}

static struct saved_tuner *find_entry(struct saved_params *sp, uint32_t id)
{
	for (size_t i = 0; sp && i < sp->n; i++)
		if (sp->v[i].id == id)
			return &sp->v[i];
	return NULL;
}

void tuner_saved_attach(struct tuner *t)
{
	struct saved_tuner *e = find_entry(t->d->saved, t->id);

	t->have_saved = 0;
	if (!e)
		return;
	if (!same_chip(&e->attach, &t->attach)) {
		log_warn("tuner %u: the params saved for it belong to chip %u "
			 "at 0x%02x on adapter %u (%s): not restored",
			 t->id, e->attach.chip_id, e->attach.i2c_addr,
			 e->attach.adapter, e->attach.bridge);
		return;
	}
	t->saved_params = e->params;
	t->have_saved = 1;
}

/* state_doc: a write starts.  It carries the entries as they are. */
static json_t *saved_doc(void *arg)
{
	struct daemon *d = arg;
	struct saved_params *sp = d->saved;
	json_t *arr = json_array();

	loop_del_timer(d->loop, sp->timer); /* this write takes them */
	sp->timer = 0;
	sp->dirty = 0;
	sp->writes_begun++;
	for (size_t i = 0; arr && i < sp->n; i++)
		if (json_array_append_new(arr, entry_json(&sp->v[i]))) {
			json_decref(arr);
			return NULL;
		}
	return arr ? json_pack("{s:i, s:o}", "version", SAVED_VERSION, "tuners",
			       arr)
		   : NULL;
}

/* The entry of t, added when missing (NULL: the table is full). */
static struct saved_tuner *entry_of(struct saved_params *sp,
				    const struct tuner *t)
{
	struct saved_tuner *e = find_entry(sp, t->id), *grown;

	if (e || sp->n == SAVED_MAX)
		return e;
	grown = realloc(sp->v, (sp->n + 1) * sizeof(*sp->v));
	if (!grown)
		return NULL;
	sp->v = grown;
	e = &sp->v[sp->n++];
	*e = (struct saved_tuner){.id = t->id};
	return e;
}

static void note_write(struct daemon *d, int err)
{
	if (err && !d->saved->write_failed)
		log_err("state: cannot save the tuners' params in %s: %s",
			state_dir_path(d->state), strerror(-err));
	else if (!err && d->saved->write_failed)
		log_info("state: the tuners' params are saved again");
	d->saved->write_failed = !!err;
}

/* The held answer of t goes out; its tuner takes its next request. */
static void release(struct tuner *t)
{
	t->answer_held = 0;
	tuner_complete_inflight(t, 0,
				t->have_held_status ? &t->held_status : NULL);
	if (t->sock >= 0) /* not from a worker's end (fail_requests) */
		tuner_pump(t);
}

/* state_doc: the write ended.  The answers waiting for it go out
 * whether it worked or not: the tune itself did (a failing disk is
 * logged, not the client's fault). */
static void saved_written(int err, void *arg)
{
	struct daemon *d = arg;

	note_write(d, err);
	d->saved->writes_ended = d->saved->writes_begun;
	for (struct tuner *t = d->tuners; t; t = t->next)
		if (t->answer_held && t->held_write <= d->saved->writes_ended)
			release(t);
}

/* The worker of a tuner whose answer is held ended: its tune worked, so
 * every held answer goes out now, before its write; the params stay due
 * and are written all the same. */
void tuners_saved_flush(struct daemon *d)
{
	for (struct tuner *t = d->tuners; t; t = t->next)
		if (t->answer_held)
			release(t);
}

static long delayed_fire(struct loop *l, uint64_t id, void *arg)
{
	struct daemon *d = arg;

	(void)l;
	(void)id;
	d->saved->timer = 0;
	state_doc_due(d->saved->doc);
	return LOOP_TIMER_DONE;
}

static struct saved_params *saved_of(struct daemon *d)
{
	return d->state && d->saved && d->saved->doc ? d->saved : NULL;
}

/* Keep p as the params of t; 1 when that changed the entry (e). */
static int saved_set(struct saved_params *sp, const struct tuner *t,
		     const struct tstub_params *p, struct saved_tuner **e)
{
	*e = find_entry(sp, t->id);
	if (*e && same_chip(&(*e)->attach, &t->attach) &&
	    same_tune(&(*e)->params, p))
		return 0; /* nothing new to keep */
	*e = entry_of(sp, t);
	if (!*e) {
		log_warn("tuner %u: params not saved: out of memory", t->id);
		return 0;
	}
	(*e)->attach = t->attach;
	(*e)->params = *p;
	(*e)->in_write = sp->writes_begun + 1;
	sp->dirty = 1;
	return 1;
}

/* Written within TUNER_SAVE_DELAY_MS: what no answer waits for. */
static void saved_due_later(struct daemon *d)
{
	struct saved_params *sp = d->saved;

	if (!sp->timer)
		sp->timer = loop_add_timer(d->loop, TUNER_SAVE_DELAY_MS,
					   delayed_fire, d);
	if (!sp->timer)
		state_doc_due(sp->doc); /* no timer: write now, not never */
}

void tuner_saved_intent(struct tuner *t, const struct tstub_params *p)
{
	struct saved_params *sp = saved_of(t->d);
	struct saved_tuner *e;

	if (sp && saved_set(sp, t, p, &e))
		state_doc_due(sp->doc);
}

void tuner_saved_undo(struct tuner *t)
{
	struct saved_params *sp = saved_of(t->d);
	const struct tstub_params *p = t->have_params  ? &t->params
				       : t->have_saved ? &t->saved_params
						       : NULL;
	struct saved_tuner *e;

	if (!sp || !find_entry(sp, t->id))
		return;
	if (!p) { /* nothing kept before the failed tune: keep nothing */
		e = find_entry(sp, t->id);
		*e = sp->v[--sp->n];
		sp->dirty = 1;
		saved_due_later(t->d);
	} else if (saved_set(sp, t, p, &e)) {
		saved_due_later(t->d);
	}
}

int tuner_saved_tuned(struct tuner *t)
{
	struct saved_params *sp = saved_of(t->d);
	struct saved_tuner *e;
	int api = t->changed_origin == TUNER_ORIGIN_API;

	if (!sp)
		return 0;
	if (saved_set(sp, t, &t->params, &e) && !api)
		saved_due_later(t->d);
	if (!e || !api || e->in_write <= sp->writes_ended)
		return 0; /* on disk (or out of memory: answered all the same) */
	if (e->in_write > sp->writes_begun) {
		loop_del_timer(t->d->loop, sp->timer); /* now, not later */
		sp->timer = 0;
		state_doc_due(sp->doc);
	}
	t->held_write = e->in_write;
	return 1;
}

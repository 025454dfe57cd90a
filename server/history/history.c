// SPDX-License-Identifier: MIT
/*
 * The history on the loop (history.h).  Each tuner has the second being
 * filled; a sample of a later second, or the flush timer once the second
 * is over, moves it to the batch.  The batch (seconds sorted by tuner and
 * time, so the store rolls each tuner's minutes up in one statement, and
 * marks) goes to the threadpool as one job once a second: one commit a
 * second whatever the number of tuners, and a slow disk only makes the
 * next batch bigger, never the loop wait.  A batch is bounded
 * (HISTORY_BATCH_MAX rows); past it, seconds are dropped and counted.
 */
#include "history.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "api_json.h"
#include "eventbus.h"
#include "log.h"
#include "loop.h"

#define HISTORY_FLUSH_MS  1000
#define HISTORY_BATCH_MAX (256 * 600) /* ten minutes of 256 tuners */

struct hist_tuner {
	uint32_t id;
	int open;               /* cur is being filled */
	struct history_row cur; /* the second being filled */
	uint64_t errors;        /* the stream's counter at the last sample */
	int64_t errors_at_ms;   /* 0: no previous counter */
	struct hist_tuner *next;
};

struct hist_batch {
	struct history_row *rows;
	size_t nrows, cap;
	struct history_mark *marks;
	size_t nmarks, mcap;
};

struct hist_job {
	uv_work_t work;
	struct history *h;
	struct hist_batch b;
	int64_t now_ms;
	int err;
	uint64_t ns;
};

struct hist_query_job {
	uv_work_t work;
	struct history *h;
	struct history_query q;
	json_t *answer;
	int err;
	history_answer_fn done;
	void *arg;
};

struct history {
	struct loop *loop;
	char path[4096];
	unsigned int queries; /* in flight */
	struct eventbus *events;
	struct history_store *store;
	long sub;
	uint64_t timer;
	struct hist_tuner *tuners;
	struct hist_batch pending;
	struct hist_job *in_flight;
	int failing;
	uint64_t dropped;
	uint64_t writes, total_ns, max_ns;
};

static void batch_free(struct hist_batch *b)
{
	for (size_t i = 0; i < b->nmarks; i++)
		free(b->marks[i].json);
	free(b->rows);
	free(b->marks);
	memset(b, 0, sizeof(*b));
}

static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap = *cap ? *cap * 2 : 64;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, ncap * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static void batch_row(struct history *h, const struct history_row *r)
{
	struct hist_batch *b = &h->pending;

	if (b->nrows >= HISTORY_BATCH_MAX ||
	    grow((void **)&b->rows, &b->cap, b->nrows, sizeof(*r))) {
		h->dropped++;
		return;
	}
	b->rows[b->nrows++] = *r;
}

static struct hist_tuner *tuner_of(struct history *h, uint32_t id)
{
	struct hist_tuner *t;

	for (t = h->tuners; t; t = t->next)
		if (t->id == id)
			return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->id = id;
	t->next = h->tuners;
	h->tuners = t;
	return t;
}

static void agg_add(struct history_agg *a, int64_t v)
{
	if (!a->count || v < a->min)
		a->min = v;
	if (!a->count || v > a->max)
		a->max = v;
	a->sum += v;
	a->count++;
}

/* The stream's errors per second since the previous sample. */
static int errors_rate(struct hist_tuner *t, int64_t time_ms,
		       const struct history_stream *s, int64_t *rate)
{
	int64_t dt = time_ms - t->errors_at_ms;
	int have = t->errors_at_ms && dt > 0 && s->errors >= t->errors;

	if (have)
		*rate =
		    (int64_t)((s->errors - t->errors) * 1000 / (uint64_t)dt);
	t->errors = s->errors;
	t->errors_at_ms = time_ms;
	return have;
}

void history_sample(struct history *h, uint32_t tuner, int64_t time_ms,
		    const struct tstub_status *st,
		    const struct history_stream *stream)
{
	struct hist_tuner *t = h ? tuner_of(h, tuner) : NULL;
	int64_t sec = time_ms / HISTORY_TIER0_STEP_MS * HISTORY_TIER0_STEP_MS;
	struct history_row *r;
	int64_t rate;

	if (!t)
		return;
	r = &t->cur;
	if (t->open && r->time_ms != sec) {
		batch_row(h, r);
		t->open = 0;
	}
	if (!t->open) {
		*r = (struct history_row){.tuner = tuner, .time_ms = sec};
		t->open = 1;
	}
	r->samples++;
	r->locked += api_status_locked(st) ? 1 : 0;
	if (st->valid & TSTUB_ST_STRENGTH_DBM)
		agg_add(&r->f[HIST_SIGNAL], st->strength_mdbm);
	if (st->valid & TSTUB_ST_CNR_DB)
		agg_add(&r->f[HIST_CNR], st->cnr_mdb);
	if (st->valid & TSTUB_ST_AFC)
		agg_add(&r->f[HIST_AFC], st->afc_hz);
	if (!stream) {
		t->errors_at_ms = 0;
		return;
	}
	agg_add(&r->f[HIST_BITRATE], (int64_t)stream->bitrate_bps);
	if (errors_rate(t, time_ms, stream, &rate))
		agg_add(&r->f[HIST_ERRORS], rate);
}

/* ---- marks: lock gained/lost and tunes, from the event bus ---- */

/* A mark's object from the event's text: its type, "locked", "result"
 * and "params".  Run on the threadpool (marks_reduce()): the loop only
 * copies the text, since parsing it back is a tune's largest cost in the
 * loop after building the event itself. */
static char *mark_text(const char *event_text)
{
	static const char *const keep[] = {"type", "locked", "result",
					   "params"};
	json_t *e = json_loads(event_text, 0, NULL);
	json_t *m = json_object();
	char *text = NULL;

	if (e && m) {
		for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
			json_t *v = json_object_get(e, keep[i]);

			if (v)
				json_object_set(m, keep[i], v);
		}
		text = json_dumps(m, API_JSON_DUMP_FLAGS);
	}
	json_decref(e);
	json_decref(m);
	return text;
}

/* Each mark's event text made its object; one that will not parse is
 * left out. */
static void marks_reduce(struct hist_batch *b)
{
	size_t keep = 0;

	for (size_t i = 0; i < b->nmarks; i++) {
		char *text = mark_text(b->marks[i].json);

		free(b->marks[i].json);
		b->marks[i].json = text;
		if (text)
			b->marks[keep++] = b->marks[i];
	}
	b->nmarks = keep;
}

static void on_event(const struct event *ev, void *arg)
{
	struct history *h = arg;
	struct hist_batch *b = &h->pending;
	char *text;

	if (ev->tuner < 0 ||
	    (strcmp(ev->type, "tuner.lock") && strcmp(ev->type, "tuner.tune")))
		return;
	if (b->nmarks >= HISTORY_BATCH_MAX ||
	    grow((void **)&b->marks, &b->mcap, b->nmarks, sizeof(*b->marks)) ||
	    !(text = strndup(ev->json, ev->json_len))) {
		h->dropped++;
		return;
	}
	b->marks[b->nmarks++] = (struct history_mark){
	    .tuner = (uint32_t)ev->tuner, .time_ms = ev->time_ms, .json = text};
}

/* ---- writes on the threadpool ---- */

static int row_order(const void *a, const void *b)
{
	const struct history_row *x = a, *y = b;

	if (x->tuner != y->tuner)
		return x->tuner < y->tuner ? -1 : 1;
	return (x->time_ms > y->time_ms) - (x->time_ms < y->time_ms);
}

static void job_work(uv_work_t *w)
{
	struct hist_job *j = w->data;
	uint64_t t0 = loop_now_ns();

	if (j->b.nrows) /* rows is NULL without any */
		qsort(j->b.rows, j->b.nrows, sizeof(*j->b.rows), row_order);
	marks_reduce(&j->b);
	j->err = history_store_append(j->h->store, j->b.rows, j->b.nrows,
				      j->b.marks, j->b.nmarks, j->now_ms);
	j->ns = loop_now_ns() - t0;
}

static void job_done(uv_work_t *w, int status)
{
	struct hist_job *j = w->data;
	struct history *h = j->h;

	(void)status;
	h->in_flight = NULL;
	h->writes++;
	h->total_ns += j->ns;
	h->max_ns = j->ns > h->max_ns ? j->ns : h->max_ns;
	if (j->err && !h->failing)
		log_err("history: writes fail (%s); seconds are lost until "
			"they work again",
			strerror(-j->err));
	else if (!j->err && h->failing)
		log_info("history: writes work again");
	h->failing = j->err != 0;
	batch_free(&j->b);
	free(j);
}

/* Move every second that is over (before now) to the batch. */
static void close_seconds(struct history *h, int64_t now_ms, int all)
{
	for (struct hist_tuner *t = h->tuners; t; t = t->next)
		if (t->open &&
		    (all || t->cur.time_ms + HISTORY_TIER0_STEP_MS <= now_ms)) {
			batch_row(h, &t->cur);
			t->open = 0;
		}
}

static void start_write(struct history *h)
{
	struct hist_job *j;

	if (h->in_flight || (!h->pending.nrows && !h->pending.nmarks))
		return;
	j = calloc(1, sizeof(*j));
	if (!j)
		return; /* the batch waits for the next turn */
	j->h = h;
	j->b = h->pending;
	j->now_ms = eventbus_now_ms();
	j->work.data = j;
	memset(&h->pending, 0, sizeof(h->pending));
	h->in_flight = j;
	/* Fails only without a work callback. */
	uv_queue_work(loop_uv(h->loop), &j->work, job_work, job_done);
}

void history_flush_now(struct history *h)
{
	if (!h)
		return;
	close_seconds(h, eventbus_now_ms(), 0);
	start_write(h);
}

static long flush_tick(struct loop *l, uint64_t id, void *arg)
{
	(void)l;
	(void)id;
	history_flush_now(arg);
	return HISTORY_FLUSH_MS;
}

struct history *history_open(struct loop *loop, struct eventbus *events,
			     const char *dir)
{
	struct history *h = calloc(1, sizeof(*h));
	const char *path = h ? h->path : NULL;

	if (!h)
		return NULL;
	h->loop = loop;
	h->events = events;
	snprintf(h->path, sizeof(h->path), "%s/%s", dir, HISTORY_DB_NAME);
	if (history_store_open(path, eventbus_now_ms(), &h->store) ||
	    (h->sub = eventbus_subscribe(events, on_event, h)) < 0 ||
	    !(h->timer =
		  loop_add_timer(loop, HISTORY_FLUSH_MS, flush_tick, h))) {
		log_err("history: not kept (%s cannot be used)", path);
		if (h->sub > 0)
			eventbus_unsubscribe(events, h->sub);
		history_store_close(h->store);
		free(h);
		return NULL;
	}
	return h;
}

static void query_work(uv_work_t *w)
{
	struct hist_query_job *j = w->data;

	j->err = history_store_query_file(j->h->path, &j->q, &j->answer);
}

static void query_done(uv_work_t *w, int status)
{
	struct hist_query_job *j = w->data;

	(void)status;
	j->h->queries--;
	j->done(j->err, j->answer, j->arg);
	free(j);
}

int history_query_start(struct history *h, const struct history_query *q,
			history_answer_fn done, void *arg)
{
	struct hist_query_job *j;

	if (h->queries >= HISTORY_QUERIES_MAX)
		return -EBUSY;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	*j = (struct hist_query_job){.h = h, .q = *q, .done = done, .arg = arg};
	j->work.data = j;
	h->queries++;
	uv_queue_work(loop_uv(h->loop), &j->work, query_work, query_done);
	return 0;
}

void history_write_stats(const struct history *h, uint64_t *writes,
			 uint64_t *total_ns, uint64_t *max_ns)
{
	*writes = h ? h->writes : 0;
	*total_ns = h ? h->total_ns : 0;
	*max_ns = h ? h->max_ns : 0;
}

void history_close(struct history *h, unsigned int max_ms)
{
	uint64_t deadline = loop_now_ms() + max_ms, now;
	struct hist_tuner *t, *next;

	if (!h)
		return;
	loop_del_timer(h->loop, h->timer);
	eventbus_unsubscribe(h->events, h->sub);
	while ((h->in_flight || h->queries) && (now = loop_now_ms()) < deadline)
		loop_run_once(h->loop, (int)(deadline - now));
	if (h->in_flight || h->queries) {
		/* Its thread still uses the store: leave both behind. */
		log_err("history: the work in flight did not end in %u ms",
			max_ms);
		return;
	}
	close_seconds(h, 0, 1);
	if (h->pending.nrows)
		qsort(h->pending.rows, h->pending.nrows,
		      sizeof(*h->pending.rows), row_order);
	history_store_append(h->store, h->pending.rows, h->pending.nrows,
			     h->pending.marks, h->pending.nmarks,
			     eventbus_now_ms());
	batch_free(&h->pending);
	for (t = h->tuners; t; t = next) {
		next = t->next;
		free(t);
	}
	history_store_close(h->store);
	free(h);
}

// SPDX-License-Identifier: MIT
/*
 * Event stream subscribers (event_stream.h).
 *
 * One hub per daemon subscribes to the bus once and hands each event to
 * the subscribers whose filter passes it, by reference: an item holds a
 * reference to the bus's serialised event, so a thousand subscribers cost
 * a thousand pointers, not a thousand copies.
 *
 * A subscriber that asked for "since" first reads the ring in batches as
 * its transport drains the queue (so a slow catch-up meets a gap, never an
 * overflow), then turns live.  While it catches up it ignores the live
 * dispatch: every live event is in the ring too.  The seq it caught up to
 * tells the duplicates apart: a live dispatch can arrive after the ring
 * read that already gave its event (a publish from another thread is
 * dispatched later through the loop).
 */
#include "event_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "eventbus.h"
#include "json_api.h"
#include "log.h"
#include "status_deadband.h"
#include "status_sampler.h"

/* Ring events read per catch-up step (the ring stays locked meanwhile). */
#define REPLAY_BATCH 64

struct event_hub {
	struct daemon *d;
	long bus_id;
	struct event_sub *subs;
	unsigned int nsubs;
	int stopping, stopped; /* stopped: free with the last subscriber */
	struct status_sampler *sampler;
	struct status_deadband *status_events;
	struct event_stream_counters counters; /* for /metrics */
};

struct event_sub {
	struct event_hub *hub;
	struct event_filter filter;
	event_sub_wake_fn wake;
	void *owner;
	struct stream_item q[EVENT_STREAM_QUEUE_MAX];
	size_t head, count, bytes;
	int replaying;
	int replay_full;     /* the queue filled during a ring read */
	uint64_t cursor;     /* catching up: the last seq read */
	uint64_t live_after; /* live: seqs up to this came from the ring */
	const char *closed;  /* the reason, a static string */
	struct event_sub *prev, *next;
};

/* One daemon per process; the hub belongs to its loop thread. */

char *event_stream_dump(json_t *json, size_t *len)
{
	char *text = json ? json_dumps(json, API_JSON_DUMP_FLAGS) : NULL;

	json_decref(json);
	if (text)
		*len = strlen(text);
	return text;
}

/* ---- filters ---- */

static int filter_error(struct api_error *e, const char *field, const char *why)
{
	api_error_set(e, 400, "bad_request", json_pack("{s:s}", "field", field),
		      "%s: %s", field, why);
	return -1;
}

static int type_pattern_ok(const char *p, size_t n)
{
	if (n == 0 || n >= EVENT_STREAM_TYPE_LEN)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (c == '*' && i == n - 1)
			continue;
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

static int parse_types(struct event_filter *f, const char *s,
		       struct api_error *e)
{
	while (*s) {
		size_t n = strcspn(s, ",");

		if (!type_pattern_ok(s, n))
			return filter_error(e, "types",
					    "a comma-separated list of event "
					    "types (a trailing * matches a "
					    "prefix, e.g. tuner.*)");
		if (f->ntypes == EVENT_STREAM_TYPES_MAX)
			return filter_error(e, "types", "too many types");
		memcpy(f->types[f->ntypes], s, n);
		f->types[f->ntypes++][n] = '\0';
		s += n;
		if (*s == ',' && !*++s)
			return filter_error(e, "types", "empty type");
	}
	return 0;
}

static int parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 20)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned int dgt = (unsigned int)(s[i] - '0');

		if (dgt > 9 || v > (max - dgt) / 10)
			return -1;
		v = v * 10 + dgt;
	}
	*out = v;
	return 0;
}

static int parse_tuners(struct event_filter *f, const char *s,
			struct api_error *e)
{
	while (*s) {
		size_t n = strcspn(s, ",");
		uint64_t id;

		if (parse_u64(s, n, UINT32_MAX, &id))
			return filter_error(e, "tuner",
					    "a comma-separated list of tuner "
					    "ids");
		if (f->ntuners == EVENT_STREAM_TUNERS_MAX)
			return filter_error(e, "tuner", "too many tuners");
		f->tuners[f->ntuners++] = (uint32_t)id;
		s += n;
		if (*s == ',' && !*++s)
			return filter_error(e, "tuner", "empty tuner id");
	}
	return 0;
}

int event_filter_parse(struct event_filter *f, const char *types,
		       const char *tuners, struct api_error *e)
{
	memset(f, 0, sizeof(*f));
	if (types && parse_types(f, types, e))
		return -1;
	if (tuners && parse_tuners(f, tuners, e))
		return -1;
	return 0;
}

int event_filter_match(const struct event_filter *f, const char *type,
		       long tuner)
{
	unsigned int i;

	for (i = 0; i < f->ntypes; i++) {
		const char *p = f->types[i];
		size_t n = strlen(p);

		if (p[n - 1] == '*' ? !strncmp(type, p, n - 1)
				    : !strcmp(type, p))
			break;
	}
	if (f->ntypes && i == f->ntypes)
		return 0;
	if (!f->ntuners)
		return 1;
	for (i = 0; i < f->ntuners; i++)
		if (tuner == (long)f->tuners[i])
			return 1;
	return 0;
}

int event_since_parse(const char *text, uint64_t *out)
{
	return text ? parse_u64(text, strlen(text), UINT64_MAX, out) : -1;
}

/* ---- the queue ---- */

static size_t item_bytes(const struct stream_item *it)
{
	return it->kind == STREAM_EVENT ? it->ev->json_len : it->len;
}

static void item_release(struct stream_item *it)
{
	if (it->ev)
		event_put(it->ev);
	free(it->text);
	memset(it, 0, sizeof(*it));
}

static void queue_clear(struct event_sub *s)
{
	while (s->count)
		event_sub_pop(s);
}

/* Append it (its references move into the queue).  -ENOSPC when full. */
static int queue_push(struct event_sub *s, const struct stream_item *it)
{
	size_t bytes = item_bytes(it);

	if (s->count == EVENT_STREAM_QUEUE_MAX ||
	    (s->count && s->bytes + bytes > EVENT_STREAM_QUEUE_BYTES))
		return -ENOSPC;
	s->q[(s->head + s->count) % EVENT_STREAM_QUEUE_MAX] = *it;
	s->count++;
	s->bytes += bytes;
	return 0;
}

const struct stream_item *event_sub_peek(struct event_sub *s);

void event_sub_pop(struct event_sub *s)
{
	struct stream_item *it = &s->q[s->head];

	if (!s->count)
		return;
	s->bytes -= item_bytes(it);
	item_release(it);
	s->head = (s->head + 1) % EVENT_STREAM_QUEUE_MAX;
	s->count--;
}

size_t event_sub_queued(const struct event_sub *s)
{
	return s->count;
}

int event_sub_is_closed(const struct event_sub *s)
{
	return s->closed != NULL;
}

const char *event_sub_close_reason(const struct event_sub *s)
{
	return s->closed;
}

static char *closed_text(const char *reason, size_t *len)
{
	return event_stream_dump(
	    json_pack("{s:s,s:s}", "type", "closed", "reason", reason), len);
}

void event_sub_close(struct event_sub *s, const char *reason)
{
	struct stream_item it = {.kind = STREAM_CLOSED};

	if (s->closed)
		return;
	queue_clear(s);
	s->closed = reason;
	s->replaying = 0;
	it.text = closed_text(reason, &it.len);
	if (it.text && queue_push(s, &it))
		free(it.text);
	s->wake(s->owner);
}

static void sub_overflow(struct event_sub *s)
{
	log_info("events: a subscriber fell %zu events (%zu bytes) behind: "
		 "closing it (slow consumer)",
		 s->count, s->bytes);
	s->hub->counters.slow_consumers++;
	s->hub->counters.dropped_slow += s->count;
	event_sub_close(s, "slow_consumer");
}

int event_sub_push_text(struct event_sub *s, enum stream_item_kind kind,
			char *text, size_t len)
{
	struct stream_item it = {.kind = kind, .text = text, .len = len};
	int was_empty = s->count == 0;

	if (s->closed) {
		free(text);
		return -ESHUTDOWN;
	}
	if (queue_push(s, &it)) {
		free(text);
		sub_overflow(s);
		return -ENOSPC;
	}
	if (was_empty)
		s->wake(s->owner);
	return 0;
}

const char *event_sub_text(const struct stream_item *it, size_t *len)
{
	if (it->kind == STREAM_EVENT) {
		*len = it->ev->json_len;
		return it->ev->json;
	}
	*len = it->len;
	return it->text;
}

/* ---- catching up from the ring ---- */

/* 0, or -ENOSPC when the queue has no room (nothing was queued). */
static int push_gap(struct event_sub *s, uint64_t from, uint64_t to)
{
	struct stream_item it = {.kind = STREAM_GAP, .id = to};

	if (s->count == EVENT_STREAM_QUEUE_MAX)
		return -ENOSPC;
	it.text = event_stream_dump(
	    json_pack("{s:s,s:I,s:I,s:s}", "type", "gap", "from",
		      (json_int_t)from, "to", (json_int_t)to, "message",
		      "these events are no longer kept: read the current "
		      "state with GET /api/v1/tuners"),
	    &it.len);
	if (it.text && queue_push(s, &it)) {
		free(it.text);
		return -ENOSPC;
	}
	s->hub->counters.dropped_gap += to - from + 1;
	return 0;
}

/* eventbus_read() callback, with the ring locked. */
static void replay_one(const struct event *ev, void *arg)
{
	struct event_sub *s = arg;
	struct stream_item it = {.kind = STREAM_EVENT, .id = ev->seq};

	if (s->replay_full)
		return;
	if (ev->seq > s->cursor + 1) {
		if (push_gap(s, s->cursor + 1, ev->seq - 1)) {
			s->replay_full = 1;
			return;
		}
		s->cursor = ev->seq - 1;
	}
	if (event_filter_match(&s->filter, ev->type, ev->tuner)) {
		it.ev = event_get(ev);
		if (queue_push(s, &it)) {
			event_put(ev);
			s->replay_full = 1;
			return;
		}
	}
	s->cursor = ev->seq;
}

static void sub_refill(struct event_sub *s)
{
	struct eventbus_read r;

	while (s->replaying && !s->count) {
		s->replay_full = 0;
		eventbus_read(s->hub->d->events, s->cursor, REPLAY_BATCH,
			      replay_one, s, &r);
		if (!r.more && !s->replay_full) {
			s->replaying = 0;
			s->live_after = s->cursor;
		}
	}
}

const struct stream_item *event_sub_peek(struct event_sub *s)
{
	if (!s->count && s->replaying)
		sub_refill(s);
	return s->count ? &s->q[s->head] : NULL;
}

/* ---- live dispatch ---- */

static void sub_take(struct event_sub *s, const struct event *ev)
{
	struct stream_item it = {.kind = STREAM_EVENT, .id = ev->seq};
	int was_empty = s->count == 0;

	if (s->closed || s->replaying || ev->seq <= s->live_after ||
	    !event_filter_match(&s->filter, ev->type, ev->tuner))
		return;
	it.ev = event_get(ev);
	if (queue_push(s, &it)) {
		event_put(ev);
		sub_overflow(s);
		return;
	}
	if (was_empty)
		s->wake(s->owner);
}

static void hub_on_event(const struct event *ev, void *arg)
{
	struct event_hub *h = arg;

	/* A wake only takes note: no subscriber goes away meanwhile. */
	for (struct event_sub *s = h->subs; s; s = s->next)
		sub_take(s, ev);
}

/* ---- the hub ---- */

static void hub_free(struct event_hub *h)
{
	status_deadband_stop(h->status_events);
	status_sampler_free(h->sampler);
	if (h->bus_id > 0)
		eventbus_unsubscribe(h->d->events, h->bus_id);
	if (h->d->event_hub == h)
		h->d->event_hub = NULL;
	free(h);
}

void event_streams_counters(const struct daemon *d,
			    struct event_stream_counters *out)
{
	const struct event_hub *h = d->event_hub;

	*out = h ? h->counters : (struct event_stream_counters){0};
}

static struct event_hub *hub_get(struct daemon *d)
{
	struct event_hub *h = d->event_hub;

	if (h)
		return h->stopping ? NULL : h;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->d = d;
	h->bus_id = eventbus_subscribe(d->events, hub_on_event, h);
	if (h->bus_id < 0) {
		hub_free(h);
		return NULL;
	}
	d->event_hub = h;
	return h;
}

struct event_sub *event_sub_new(struct daemon *d, const struct event_filter *f,
				int has_since, uint64_t since,
				event_sub_wake_fn wake, void *owner)
{
	struct event_hub *h = hub_get(d);
	uint64_t last = eventbus_last_seq(d->events);
	struct event_sub *s;

	if (!h)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->hub = h;
	s->filter = *f;
	s->wake = wake;
	s->owner = owner;
	/* A since from the future (a daemon restarted since): from now. */
	if (has_since && since < last) {
		s->replaying = 1;
		s->cursor = since;
	} else {
		s->live_after = last;
	}
	s->next = h->subs;
	if (s->next)
		s->next->prev = s;
	h->subs = s;
	h->nsubs++;
	return s;
}

void event_sub_free(struct event_sub *s)
{
	struct event_hub *h;

	if (!s)
		return;
	h = s->hub;
	queue_clear(s);
	if (s->prev)
		s->prev->next = s->next;
	else
		h->subs = s->next;
	if (s->next)
		s->next->prev = s->prev;
	free(s);
	if (--h->nsubs == 0 && h->stopped)
		hub_free(h);
}

int event_streams_start(struct daemon *d, long status_interval_ms,
			long status_heartbeat_ms)
{
	struct event_hub *h = hub_get(d);

	if (!h)
		return -ENOMEM;
	if (!h->sampler)
		h->sampler = status_sampler_new(d);
	if (!h->sampler)
		return -ENOMEM;
	if (status_interval_ms > 0 && !h->status_events) {
		h->status_events = status_deadband_start(
		    d, h->sampler, (unsigned long)status_interval_ms,
		    (unsigned long)status_heartbeat_ms);
		if (!h->status_events)
			return -ENOMEM;
	}
	return 0;
}

int event_streams_want(const struct daemon *d, const char *type, long tuner)
{
	const struct event_hub *h = d->event_hub;

	if (!h || h->stopping)
		return 0;
	for (const struct event_sub *s = h->subs; s; s = s->next)
		if (!event_sub_is_closed(s) &&
		    event_filter_match(&s->filter, type, tuner))
			return 1;
	return 0;
}

struct status_sampler *event_streams_sampler(struct daemon *d)
{
	return d->event_hub ? d->event_hub->sampler : NULL;
}

void event_streams_stop(struct daemon *d)
{
	struct event_hub *h = d->event_hub;

	if (!h || h->stopping)
		return;
	status_deadband_stop(h->status_events);
	h->status_events = NULL;
	status_sampler_free(h->sampler);
	h->sampler = NULL;
	h->stopping = 1;
	eventbus_unsubscribe(d->events, h->bus_id);
	h->bus_id = 0;
	for (struct event_sub *s = h->subs; s; s = s->next)
		event_sub_close(s, "shutdown");
	h->stopped = 1;
	if (!h->nsubs)
		hub_free(h);
}

// SPDX-License-Identifier: MIT
#include "eventbus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_json.h"

/* An event published soon: stamped at the call, built at the flush. */
struct soon_event {
	char type[32];
	long tuner;
	int64_t time_ms;
	json_t *fields;
};

struct subscriber {
	long id;
	eventbus_fn fn; /* NULL: unsubscribed, freed when no dispatch runs */
	void *arg;
	struct subscriber *next;
};

/*
 * The ring keeps events by count, bytes and age: it starts small and
 * grows (doubling, linearised) up to max events; the oldest go when a
 * new one would pass max or max_bytes, and when they are older than
 * keep_ms.  So a quiet daemon keeps keep_ms of history in little memory,
 * and a busy one at most max_bytes, however many events that is.
 */
struct eventbus {
	char *box;
	struct event **ring;
	size_t size, count, oldest; /* oldest: index of the oldest event */
	size_t max;                 /* events at most (size grows to it) */
	size_t bytes, max_bytes;    /* of the events kept (0: no bound) */
	int64_t keep_ms;            /* age at most (0: no bound) */
	uint64_t next_seq;
	struct subscriber *subs;
	long next_sub_id;
	int dispatching;
	struct soon_event soon[EVENTBUS_SOON_MAX]; /* oldest first */
	size_t nsoon;
	void (*flush_hook)(void *arg); /* NULL: "soon" is "now" */
	void *flush_arg;
};

#define EVENTBUS_FIRST_SIZE 1024

struct eventbus *eventbus_new(size_t ring_size)
{
	struct eventbus *eb;

	if (ring_size == 0)
		return NULL;
	eb = calloc(1, sizeof(*eb));
	if (!eb)
		return NULL;
	eb->size =
	    ring_size < EVENTBUS_FIRST_SIZE ? ring_size : EVENTBUS_FIRST_SIZE;
	eb->ring = calloc(eb->size, sizeof(*eb->ring));
	if (!eb->ring) {
		free(eb);
		return NULL;
	}
	eb->max = ring_size;
	eb->next_seq = 1;
	return eb;
}

void eventbus_set_retention(struct eventbus *eb, int64_t keep_ms,
			    size_t max_bytes)
{
	eb->keep_ms = keep_ms;
	eb->max_bytes = max_bytes;
}

size_t eventbus_ring_bytes(const struct eventbus *eb)
{
	return eb->bytes;
}

void eventbus_free(struct eventbus *eb)
{
	struct subscriber *s, *next;

	if (!eb)
		return;
	for (size_t i = 0; i < eb->count; i++)
		event_put(eb->ring[(eb->oldest + i) % eb->size]);
	for (size_t i = 0; i < eb->nsoon; i++)
		json_decref(eb->soon[i].fields);
	for (s = eb->subs; s; s = next) {
		next = s->next;
		free(s);
	}
	free(eb->box);
	free(eb->ring);
	free(eb);
}

int eventbus_set_box(struct eventbus *eb, const char *name)
{
	char *copy = strdup(name);

	if (!copy)
		return -ENOMEM;
	free(eb->box);
	eb->box = copy;
	return 0;
}

const struct event *event_get(const struct event *ev)
{
	struct event *e = (struct event *)ev;

	e->refs++;
	return ev;
}

void event_put(const struct event *ev)
{
	struct event *e = (struct event *)ev;

	if (e && --e->refs == 0)
		free(e);
}

void eventbus_format_time(int64_t time_ms, char *buf, size_t len)
{
	time_t sec = (time_t)(time_ms / 1000);
	struct tm tm;

	gmtime_r(&sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (int)(time_ms % 1000));
}

int64_t eventbus_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int envelope_key(const char *key)
{
	static const char *const keys[] = {"seq", "time", "box", "type",
					   "tuner"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i]))
			return 1;
	return 0;
}

/* The envelope first (seq, time, box, type, tuner), then the caller's
 * fields. */
static json_t *event_object(uint64_t seq, int64_t now, const char *box,
			    const char *type, long tuner, json_t *fields)
{
	char stamp[32];
	const char *key;
	json_t *obj, *val;

	eventbus_format_time(now, stamp, sizeof(stamp));
	obj = json_pack("{s:I,s:s}", "seq", (json_int_t)seq, "time", stamp);
	if (!obj)
		return NULL;
	if (box)
		json_object_set_new(obj, "box", json_string(box));
	json_object_set_new(obj, "type", json_string(type));
	if (tuner != EVENTBUS_NO_TUNER)
		json_object_set_new(obj, "tuner", json_integer(tuner));
	json_object_foreach(fields, key, val)
	{
		if (!envelope_key(key))
			json_object_set(obj, key, val);
	}
	return obj;
}

/* Serialise once, with the API's number format, straight into the event:
 * json_dumpb() into a stack buffer first (most events fit), so the text
 * costs no allocation of its own and no strlen(). */
#define EVENT_DUMP_STACK 2048

static struct event *event_build(struct eventbus *eb, const char *type,
				 long tuner, json_t *fields, int64_t now)
{
	struct event *ev = NULL;
	char stack[EVENT_DUMP_STACK];
	char *text;
	json_t *obj;
	size_t len = 0;

	obj = event_object(eb->next_seq, now, eb->box, type, tuner, fields);
	if (obj)
		len =
		    json_dumpb(obj, stack, sizeof(stack), API_JSON_DUMP_FLAGS);
	if (len)
		ev = malloc(sizeof(*ev) + len + 1);
	if (ev) {
		*ev = (struct event){.seq = eb->next_seq,
				     .time_ms = now,
				     .tuner = tuner,
				     .json_len = len,
				     .refs = 1};
		snprintf(ev->type, sizeof(ev->type), "%s", type);
		text = (char *)(ev + 1);
		if (len <= sizeof(stack))
			memcpy(text, stack, len);
		else
			json_dumpb(obj, text, len, API_JSON_DUMP_FLAGS);
		text[len] = '\0';
		ev->json = text;
	}
	json_decref(obj);
	return ev;
}

static size_t event_bytes(const struct event *ev)
{
	return sizeof(*ev) + ev->json_len + 1;
}

static void ring_drop_oldest(struct eventbus *eb)
{
	struct event *ev = eb->ring[eb->oldest];

	eb->bytes -= event_bytes(ev);
	eb->ring[eb->oldest] = NULL;
	eb->oldest = (eb->oldest + 1) % eb->size;
	eb->count--;
	event_put(ev);
}

/* A full array that may grow doubles (in order, oldest first); 0, or -1
 * when it may not or cannot. */
static int ring_grow(struct eventbus *eb)
{
	size_t nsize = eb->size * 2 < eb->max ? eb->size * 2 : eb->max;
	struct event **n;

	if (nsize <= eb->size)
		return -1;
	n = calloc(nsize, sizeof(*n));
	if (!n)
		return -1;
	for (size_t i = 0; i < eb->count; i++)
		n[i] = eb->ring[(eb->oldest + i) % eb->size];
	free(eb->ring);
	eb->ring = n;
	eb->size = nsize;
	eb->oldest = 0;
	return 0;
}

static void eventbus_ring_push(struct eventbus *eb, struct event *ev)
{
	size_t add = event_bytes(ev);

	while (eb->count &&
	       ((eb->keep_ms &&
		 ev->time_ms - eb->ring[eb->oldest]->time_ms > eb->keep_ms) ||
		(eb->max_bytes && eb->bytes + add > eb->max_bytes)))
		ring_drop_oldest(eb);
	if (eb->count == eb->size && ring_grow(eb))
		ring_drop_oldest(eb);
	eb->ring[(eb->oldest + eb->count) % eb->size] = ev;
	eb->count++;
	eb->bytes += add;
}

static void eventbus_dispatch(struct eventbus *eb, const struct event *ev)
{
	struct subscriber **pp, *s;

	eb->dispatching++;
	for (s = eb->subs; s; s = s->next)
		if (s->fn)
			s->fn(ev, s->arg);
	if (--eb->dispatching)
		return;
	for (pp = &eb->subs; (s = *pp);) {
		if (s->fn) {
			pp = &s->next;
			continue;
		}
		*pp = s->next;
		free(s);
	}
}

static uint64_t publish_at(struct eventbus *eb, const char *type, long tuner,
			   json_t *fields, int64_t now)
{
	struct event *ev;
	uint64_t seq = 0;

	ev = event_build(eb, type, tuner, fields, now);
	if (ev) {
		seq = eb->next_seq++;
		event_get(ev); /* for the notification below */
		eventbus_ring_push(eb, ev);
	}
	json_decref(fields);
	if (!ev)
		return 0;
	eventbus_dispatch(eb, ev);
	event_put(ev);
	return seq;
}

uint64_t eventbus_publish(struct eventbus *eb, const char *type, long tuner,
			  json_t *fields)
{
	eventbus_flush(eb); /* the ones published soon came first */
	return publish_at(eb, type, tuner, fields, eventbus_now_ms());
}

void eventbus_set_flush_hook(struct eventbus *eb, void (*fn)(void *arg),
			     void *arg)
{
	eb->flush_hook = fn;
	eb->flush_arg = arg;
}

void eventbus_publish_soon(struct eventbus *eb, const char *type, long tuner,
			   json_t *fields)
{
	struct soon_event *s;

	if (!eb->flush_hook) {
		eventbus_publish(eb, type, tuner, fields);
		return;
	}
	if (eb->nsoon == EVENTBUS_SOON_MAX)
		eventbus_flush(eb);
	s = &eb->soon[eb->nsoon++];
	snprintf(s->type, sizeof(s->type), "%s", type);
	s->tuner = tuner;
	s->time_ms = eventbus_now_ms();
	s->fields = fields;
	if (eb->nsoon == 1)
		eb->flush_hook(eb->flush_arg);
}

/* One at a time from the front: a subscriber that publishes meanwhile
 * flushes the rest first, so the order stays the order of the calls. */
void eventbus_flush(struct eventbus *eb)
{
	while (eb->nsoon) {
		struct soon_event s = eb->soon[0];

		eb->nsoon--;
		memmove(&eb->soon[0], &eb->soon[1], eb->nsoon * sizeof(s));
		publish_at(eb, s.type, s.tuner, s.fields, s.time_ms);
	}
}

uint64_t eventbus_last_seq(struct eventbus *eb)
{
	eventbus_flush(eb);
	return eb->next_seq - 1;
}

uint64_t eventbus_oldest_seq(struct eventbus *eb)
{
	eventbus_flush(eb);
	return eb->count ? eb->ring[eb->oldest]->seq : eb->next_seq;
}

int eventbus_read(struct eventbus *eb, uint64_t since, size_t max,
		  eventbus_fn fn, void *arg, struct eventbus_read *res)
{
	struct eventbus_read r = {.last = since};
	uint64_t oldest;
	size_t i = 0;

	eventbus_flush(eb);
	oldest = eb->count ? eb->ring[eb->oldest]->seq : eb->next_seq;
	if (since + 1 < oldest) {
		r.gap = 1;
		r.missed = oldest - since - 1;
	}
	/* Seqs are consecutive in the ring: index straight to since + 1. */
	if (since >= oldest)
		i = (size_t)(since - oldest + 1);
	for (; i < eb->count; i++) {
		const struct event *ev = eb->ring[(eb->oldest + i) % eb->size];

		if (max && r.count == max) {
			r.more = 1;
			break;
		}
		fn(ev, arg);
		r.count++;
		r.last = ev->seq;
	}
	if (res)
		*res = r;
	return 0;
}

long eventbus_subscribe(struct eventbus *eb, eventbus_fn fn, void *arg)
{
	struct subscriber *s, **pp;

	eventbus_flush(eb); /* it sees what comes after its subscription */
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->id = ++eb->next_sub_id;
	s->fn = fn;
	s->arg = arg;
	/* Appended: subscribers are called in the order they came. */
	for (pp = &eb->subs; *pp; pp = &(*pp)->next)
		;
	*pp = s;
	return s->id;
}

void eventbus_unsubscribe(struct eventbus *eb, long id)
{
	struct subscriber **pp, *s;

	for (pp = &eb->subs; (s = *pp); pp = &s->next) {
		if (s->id != id)
			continue;
		if (eb->dispatching) {
			s->fn = NULL;
		} else {
			*pp = s->next;
			free(s);
		}
		return;
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * eventbus.h - what happened in the daemon, in order: tunes, lock changes,
 * plugins, attach/detach, worker crashes, stub connection.
 *
 * Each event gets a 64-bit sequence number (1, 2, ...), a realtime stamp
 * and is serialised once, at publish (or at the flush of those published
 * soon), into
 *   {"seq":N,"time":"2024-05-01T12:00:00.123Z","box":"<name>",
 *    "type":"tuner.tune","tuner":3, ...fields}
 * ("tuner" absent for the box's own events, "box" absent until
 * eventbus_set_box() named it).
 * The last events stay in a ring so a client can catch up ("since seq")
 * and learn when it fell behind too far (a gap).  The ring is bounded by
 * count (eventbus_new()), and by bytes and age
 * (eventbus_set_retention()): the daemon keeps EVENTBUS_DEFAULT_KEEP_MS
 * of events within EVENTBUS_DEFAULT_BYTES, so a watcher away for hours
 * resumes where it left.
 *
 * The daemon has one thread, its loop's: publishing, reading and the
 * subscriber callbacks (called inside eventbus_publish(), or at the flush
 * of events published soon) all run there, so nothing is locked.
 */
#ifndef TUNERD_EVENTBUS_H
#define TUNERD_EVENTBUS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct eventbus;

#define EVENTBUS_NO_TUNER        (-1L)
#define EVENTBUS_DEFAULT_RING    (1u << 20)           /* events at most */
#define EVENTBUS_DEFAULT_BYTES   (64u << 20)          /* 64 MiB */
#define EVENTBUS_DEFAULT_KEEP_MS (24LL * 3600 * 1000) /* 24 h */

/* One published event; immutable, reference-counted. */
struct event {
	uint64_t seq;
	int64_t time_ms; /* realtime, ms since the epoch */
	long tuner;      /* EVENTBUS_NO_TUNER or a tuner id */
	char type[32];   /* "tuner.tune", ... */
	const char *json;
	size_t json_len;
	int refs; /* internal */
};

/* A subscriber; the event is valid for the call (event_get() to keep). */
typedef void (*eventbus_fn)(const struct event *ev, void *arg);

/* ring_size: events kept at most (the ring's memory grows to it). */
struct eventbus *eventbus_new(size_t ring_size);
/* Also drop events older than keep_ms and the oldest ones past
 * max_bytes (their JSON and header); 0: no such bound. */
void eventbus_set_retention(struct eventbus *eb, int64_t keep_ms,
			    size_t max_bytes);
/* Bytes the ring's events take now. */
size_t eventbus_ring_bytes(const struct eventbus *eb);
void eventbus_free(struct eventbus *eb);

/* The daemon's name, put into every event published from now on (a
 * copy is kept).  Returns 0 or -ENOMEM (the previous name stays). */
int eventbus_set_box(struct eventbus *eb, const char *name);

/*
 * Publish an event; fields (a JSON object, may be NULL) is consumed (its
 * reference is stolen, as with json_object_set_new).  Keys seq, time,
 * box, type and tuner in fields are ignored.  Returns the seq, or 0 if
 * the event could not be built (out of memory).
 */
uint64_t eventbus_publish(struct eventbus *eb, const char *type, long tuner,
			  json_t *fields);

/*
 * Publish after the answers this loop turn completes: an answer that
 * waits for nothing but the JSON of its own events goes out first.  The
 * event is stamped now and queued (EVENTBUS_SOON_MAX at most; a full queue
 * is flushed first); eventbus_flush() gives the queued their seqs and
 * subscribers, in the order of the calls.  The owner flushes soon after
 * the hook tells it the queue gained its first event; every publish, read,
 * last/oldest seq and subscription flushes first, so no reader misses an
 * event published before its read.  Without a hook, soon is now.
 */
#define EVENTBUS_SOON_MAX 64
void eventbus_publish_soon(struct eventbus *eb, const char *type, long tuner,
			   json_t *fields);
void eventbus_flush(struct eventbus *eb);
void eventbus_set_flush_hook(struct eventbus *eb, void (*fn)(void *arg),
			     void *arg);

/* seq of the newest event (0 if none) and of the oldest one kept. */
uint64_t eventbus_last_seq(struct eventbus *eb);
uint64_t eventbus_oldest_seq(struct eventbus *eb);

struct eventbus_read {
	size_t count;    /* events handed to the callback */
	uint64_t last;   /* seq of the last one handed, or since */
	int gap;         /* 1: events after since were dropped from the ring */
	uint64_t missed; /* how many of them */
	int more;        /* 1: max stopped the read before the newest */
};

/*
 * Hand the events with seq > since, oldest first, at most max (0: no
 * limit), to fn.  fn copies what it needs and must not call back into
 * the bus (the ring may move under a publish).  Returns 0.
 */
int eventbus_read(struct eventbus *eb, uint64_t since, size_t max,
		  eventbus_fn fn, void *arg, struct eventbus_read *res);

/* Returns a subscription id (> 0) or a negative errno. */
long eventbus_subscribe(struct eventbus *eb, eventbus_fn fn, void *arg);
void eventbus_unsubscribe(struct eventbus *eb, long id);

/* Keep an event beyond a callback; release with event_put(). */
const struct event *event_get(const struct event *ev);
void event_put(const struct event *ev);

/* CLOCK_REALTIME in ms since the epoch, as events carry it. */
int64_t eventbus_now_ms(void);

/* "2024-05-01T12:00:00.123Z" (24 chars + NUL). */
void eventbus_format_time(int64_t time_ms, char *buf, size_t len);

#endif /* TUNERD_EVENTBUS_H */

/* SPDX-License-Identifier: MIT */
/*
 * event_stream.h - what the WebSocket and the Server-Sent Events streams
 * share (protocol/events.md): a subscriber to the event bus with its
 * filter, catch-up from the ring ("since"), an explicit gap message when
 * the ring no longer holds what was asked for, and a bounded queue.
 *
 * Memory stays bounded whatever a client does: a subscriber queues at
 * most EVENT_STREAM_QUEUE_MAX items or EVENT_STREAM_QUEUE_BYTES bytes of
 * the bus's shared, reference-counted event texts (never a copy per
 * subscriber).  A live subscriber that overflows is given one final
 * {"type":"closed","reason":"slow_consumer"} item and is then closed by
 * its transport.  Catching up is pulled from the ring as the queue
 * drains, so a slow catch-up meets a gap instead of an overflow.
 *
 * Loop thread only.
 */
#ifndef TUNERD_EVENT_STREAM_H
#define TUNERD_EVENT_STREAM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct api_error;
struct daemon;
struct event;
struct event_sub;
struct status_sampler;

#define EVENT_STREAM_QUEUE_MAX   256
#define EVENT_STREAM_QUEUE_BYTES (1024 * 1024)
#define EVENT_STREAM_TYPES_MAX   32
#define EVENT_STREAM_TYPE_LEN    32
#define EVENT_STREAM_TUNERS_MAX  64
/* tuner.status sampling period when nothing else is configured. */
#define EVENT_STREAM_STATUS_INTERVAL_MS 1000

/* types=a.b,c.* and tuner=1,2 of a stream's URL; empty lists pass all. */
struct event_filter {
	char types[EVENT_STREAM_TYPES_MAX][EVENT_STREAM_TYPE_LEN];
	unsigned int ntypes;
	uint32_t tuners[EVENT_STREAM_TUNERS_MAX];
	unsigned int ntuners;
};

/*
 * Parse the query values (NULL or "": no filter).  Returns 0, or -1 with
 * e set to 400 bad_request (details.field).
 */
int event_filter_parse(struct event_filter *f, const char *types,
		       const char *tuners, struct api_error *e);
/* 1 when an event of this type and tuner (EVENTBUS_NO_TUNER: none)
 * passes.  An event without a tuner never passes a tuner list. */
int event_filter_match(const struct event_filter *f, const char *type,
		       long tuner);
/* A since value or Last-Event-ID: a decimal sequence number.  0 or -1. */
int event_since_parse(const char *text, uint64_t *out);

enum stream_item_kind {
	STREAM_EVENT = 1, /* an event of the bus */
	STREAM_GAP,       /* {"type":"gap",...} */
	STREAM_CLOSED,    /* {"type":"closed",...}: the last item */
	STREAM_REPLY,     /* {"type":"reply",...} (WebSocket) */
};

struct stream_item {
	enum stream_item_kind kind;
	const struct event *ev; /* STREAM_EVENT: a reference we hold */
	char *text;             /* else: this stream's own message */
	size_t len;
	uint64_t id; /* STREAM_EVENT: seq; STREAM_GAP: last seq missed */
};

/* Called when the queue goes from empty to not empty and when the
 * subscriber is closed; from inside the bus's dispatch, so it only takes
 * note and schedules the transport's work. */
typedef void (*event_sub_wake_fn)(void *owner);

/*
 * A new subscriber.  has_since: catch up from the ring with the events
 * after since (a gap item first if the ring lost some), then live;
 * otherwise live from now.  Returns NULL when out of memory.
 */
struct event_sub *event_sub_new(struct daemon *d, const struct event_filter *f,
				int has_since, uint64_t since,
				event_sub_wake_fn wake, void *owner);
void event_sub_free(struct event_sub *s);

/* The next item to send, or NULL when there is none now.  Valid until
 * event_sub_pop() or event_sub_free(). */
const struct stream_item *event_sub_peek(struct event_sub *s);
void event_sub_pop(struct event_sub *s);
/* The text of an item as it goes on the wire (an event: the bus's
 * serialised text itself, shared by every subscriber). */
const char *event_sub_text(const struct stream_item *it, size_t *len);
/* Queue this stream's own message (text from malloc, taken in every
 * case).  Returns 0, or -ENOSPC after closing the subscriber as a slow
 * consumer, -ESHUTDOWN when it is closed already. */
int event_sub_push_text(struct event_sub *s, enum stream_item_kind kind,
			char *text, size_t len);
/* Drop what is queued and queue a final {"type":"closed","reason":..};
 * reason is a static string. */
void event_sub_close(struct event_sub *s, const char *reason);
/* 1 once a closed item was queued: after it, the transport closes. */
int event_sub_is_closed(const struct event_sub *s);
/* Why: "slow_consumer", "shutdown" (NULL while open). */
const char *event_sub_close_reason(const struct event_sub *s);
/* How many items wait (tests). */
size_t event_sub_queued(const struct event_sub *s);

/*
 * The event streams inside the daemon.  event_streams_start() makes the
 * status sampler (status_sampler.h; others ask it for reads through
 * event_streams_sampler()) and, with status_interval_ms > 0, looks at
 * every tuner's status that often and publishes tuner.status past a
 * deadband or every status_heartbeat_ms (status_deadband.h); it is called once
 * the daemon is up; event_streams_stop() closes every stream (a final
 * "closed" message with reason "shutdown", which wakes its transport) and
 * stops the sampling, and is called before the HTTP front stops, which
 * then lets the transports send those messages.  The shared state is
 * made on first use when event_streams_start() was not called.  Loop
 * thread.
 */
int event_streams_start(struct daemon *d, long status_interval_ms,
			long status_heartbeat_ms);
/* The sampler made by event_streams_start(), or NULL. */
struct status_sampler *event_streams_sampler(struct daemon *d);
void event_streams_stop(struct daemon *d);
/* 1 when an open stream's filter passes an event of this type and tuner:
 * someone would receive it (the status sampler reads only then). */
int event_streams_want(const struct daemon *d, const char *type, long tuner);

/* What the streams lost, since the daemon started (for /metrics). */
struct event_stream_counters {
	uint64_t slow_consumers; /* subscribers closed as slow consumers */
	uint64_t dropped_slow;   /* items queued for them, dropped then */
	uint64_t dropped_gap;    /* events a catch-up missed (its gap) */
};
void event_streams_counters(const struct daemon *d,
			    struct event_stream_counters *out);

/* A stream's own message: json (reference taken) serialised compactly;
 * NULL when out of memory. */
char *event_stream_dump(json_t *json, size_t *len);

#endif /* TUNERD_EVENT_STREAM_H */

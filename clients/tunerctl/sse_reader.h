/* SPDX-License-Identifier: MIT */
/*
 * sse_reader.h - an incremental parser of text/event-stream (server-sent events)
 * as the HTML Living Standard defines it: fields id, event, data, retry;
 * lines end in CRLF, LF or CR; a blank line dispatches an event.
 */
#ifndef TUNERCTL_SSE_H
#define TUNERCTL_SSE_H

#include "util.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * Called for every dispatched event.  id is the stream's last event id ("" if
 * none yet), type the event name ("message" if none), data the joined data
 * lines.  Returns 0 to go on, non-zero to stop parsing.
 */
typedef int (*sse_event_fn)(void *ctx, const char *id, const char *type,
			    const char *data);

struct sse_parser {
	sse_event_fn fn;
	void *ctx;
	struct ctl_buf line;
	struct ctl_buf data;
	struct ctl_buf type;
	struct ctl_buf id;
	bool have_data;
	bool after_cr; /* a CR ended the last line: skip a following LF */
	long retry_ms; /* last "retry:" field, -1 if none */
};

/* max_line bounds one line (and one event's data). */
void sse_init(struct sse_parser *p, sse_event_fn fn, void *ctx,
	      size_t max_line);
/*
 * Feeds bytes in any chunking.  Returns 0, -ENOMEM when a line is over the
 * bound, or the callback's non-zero value.
 */
int sse_feed(struct sse_parser *p, const char *buf, size_t len);
/* Forgets a partial event (a new connection); keeps the last event id. */
void sse_reset(struct sse_parser *p);
void sse_free(struct sse_parser *p);

#endif

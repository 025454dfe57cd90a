/* SPDX-License-Identifier: MIT */
/*
 * sse_stream.h - the event stream as Server-Sent Events: GET /api/v1/events
 * with "Accept: text/event-stream" (protocol/events.md).
 */
#ifndef TUNERD_SSE_STREAM_H
#define TUNERD_SSE_STREAM_H

#include <microhttpd.h>

struct auth_result;
struct daemon;
struct http_front;
struct sse_set;

/*
 * Answer GET /api/v1/events as an SSE stream for a caller already
 * authenticated as who (viewer or better).  Called from libmicrohttpd's
 * access handler in the loop thread; the front runs MHD with
 * MHD_ALLOW_SUSPEND_RESUME, and the stream suspends its connection while
 * there is nothing to send.  The streams belong to the front's sse_set.
 */
enum MHD_Result sse_handle(struct daemon *d, struct MHD_Connection *c,
			   const struct auth_result *who);
/* Answer HEAD /api/v1/events: the status and headers a GET would get
 * (its query checked the same way), no body and no stream. */
enum MHD_Result sse_head(struct MHD_Connection *c);

/* The SSE streams of a front (it resumes MHD through front). */
struct sse_set *sse_set_new(struct daemon *d, struct http_front *front);
/* Stopping (the subscribers are closed already): every stream writes its
 * last message and ends, none suspends or opens any more. */
void sse_set_close(struct sse_set *set);
/* After MHD stopped (it ended every stream); NULL is a no-op. */
void sse_set_free(struct sse_set *set);

#endif /* TUNERD_SSE_STREAM_H */

/* SPDX-License-Identifier: MIT */
/*
 * sse_stream.h - the event stream as Server-Sent Events: GET /api/v1/events with
 * "Accept: text/event-stream" (protocol/events.md).
 */
#ifndef TUNERD_SSE_H
#define TUNERD_SSE_H

#include <microhttpd.h>

struct daemon;
struct auth_result;

/*
 * Answer GET /api/v1/events as an SSE stream for a caller already
 * authenticated as who (viewer or better).  Called from libmicrohttpd's
 * access handler in the loop thread; the daemon runs MHD with
 * MHD_ALLOW_SUSPEND_RESUME, and the stream suspends its connection while
 * there is nothing to send.
 */
enum MHD_Result sse_handle(struct daemon *d, struct MHD_Connection *c,
			   const struct auth_result *who);

#endif /* TUNERD_SSE_H */

// SPDX-License-Identifier: MIT
/*
 * Event streams enter the stream class (http_front.h): a WebSocket
 * upgrade that libmicrohttpd is about to answer with its 101, an SSE
 * stream with its 200.
 *
 * Every WebSocket upgrade is libmicrohttpd's, wherever it sits on its
 * connection (a first head, a head after a kept-alive request, one
 * pipelined behind a plain GET): MHD reads it, the REST handler checks
 * it (ws_handshake()) and queues MHD's upgrade response, and MHD hands
 * the socket to the WebSocket server once the 101 is out.  So the
 * connection stays MHD's from its accept to its close, and its count
 * ends with MHD's CLOSED notification like any other; the upgrade only
 * moves it to the stream class and marks it (MHD_CONN_UPGRADED) so that
 * the request's completion, which MHD reports when the stream is given
 * back, does not move it back.
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdint.h>

#include "http_front_priv.h"

int http_front_upgrade(struct http_front *f, struct MHD_Connection *c)
{
	void **sc = front_mhd_socket_ctx(c);
	uintptr_t flags;

	if (!f || !sc)
		return -EINVAL;
	flags = (uintptr_t)*sc;
	if (flags & MHD_CONN_UPGRADED)
		return 0;
	if (!(flags & MHD_CONN_STREAM) && front_to_stream(f))
		return -EBUSY;
	/* The 101 is the request's answer: a stop waits for the stream's
	 * goodbye (ws_server_busy()) instead. */
	if (flags & MHD_CONN_IN_FLIGHT)
		f->busy_reqs--;
	*sc = (void *)(uintptr_t)(MHD_CONN_STREAM | MHD_CONN_UPGRADED);
	return 0;
}

int http_front_stream_begin(struct http_front *f, struct MHD_Connection *c)
{
	void **sc = front_mhd_socket_ctx(c);

	if (!f || !sc)
		return -EINVAL;
	if ((uintptr_t)*sc & MHD_CONN_STREAM)
		return 0; /* counted already */
	if (front_to_stream(f))
		return -EBUSY;
	*sc = (void *)((uintptr_t)*sc | MHD_CONN_STREAM);
	return 0;
}

char *http_front_streams_full(const struct http_front *f)
{
	return front_full_body(f, FRONT_STREAMS);
}

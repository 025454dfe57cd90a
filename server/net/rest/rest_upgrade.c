// SPDX-License-Identifier: MIT
/*
 * A WebSocket upgrade libmicrohttpd read: a request on a connection after
 * its first (kept alive, or pipelined behind a plain one).  The front
 * peeked at the first head only, so such an upgrade reaches the REST
 * handler, which moves the connection to the WebSocket server
 * (http_front_upgrade(), front_upgrade.c says how and why) or answers
 * why it cannot, with the API's JSON error.  Only GET /api/v1/events can
 * be upgraded: an Upgrade header on any other request is ignored, as
 * HTTP allows, and the request served as it is.
 */
#define _GNU_SOURCE /* strcasestr */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "http_front.h"
#include "net_api.h"
#include "rest.h"

/* Does the request ask for "Upgrade: websocket"? */
int rest_wants_websocket(struct MHD_Connection *c)
{
	const char *v =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Upgrade");

	return v && strcasestr(v, "websocket") != NULL;
}

/* An upgrade on a connection MHD serves (not its first request): it
 * moves to the WebSocket server, which answers it. */
enum MHD_Result rest_upgrade(struct rest_req *r, const char *version)
{
	int err = http_front_upgrade(r->net->front, r->conn, r->target,
				     version ? version : "HTTP/1.1");
	char *text;

	if (!err)
		return MHD_NO; /* MHD lets go of the connection silently */
	if (err == -E2BIG)
		return rest_error(
		    r, 431, "bad_request",
		    json_pack("{s:i}", "max", HTTP_FRONT_PEEK_MAX),
		    "the request head is larger than %d bytes",
		    HTTP_FRONT_PEEK_MAX);
	rest_add_header(r, "Retry-After", "1");
	text = err == -EBUSY ? http_front_streams_full(r->net->front) : NULL;
	if (text)
		return rest_reply_text(r, 503, text, strlen(text));
	return rest_error(r, 503, "unavailable", NULL,
			  "cannot open the event stream now: %s",
			  strerror(-err));
}

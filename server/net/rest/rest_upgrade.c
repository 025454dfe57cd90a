// SPDX-License-Identifier: MIT
/*
 * A WebSocket upgrade of GET /api/v1/events, wherever it sits on its
 * connection (libmicrohttpd reads every head).  The WebSocket server
 * checks it (ws_handshake(): the handshake's headers, the Origin rule,
 * the token, the query), the front moves the connection to the stream
 * class, and MHD's own upgrade response (the 101) hands the socket to
 * the WebSocket server once it is sent.  Only GET /api/v1/events can be
 * upgraded: an Upgrade header on any other request is ignored, as HTTP
 * allows, and the request served as it is.
 *
 * A refusal is the API's JSON error, and the connection closes after it:
 * a client that asked to leave HTTP may send WebSocket frames next,
 * which are no request to parse.
 */
#define _GNU_SOURCE /* strcasestr */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "http_front.h"
#include "net_api.h"
#include "rest.h"
#include "ws.h"

/* Does the request ask for "Upgrade: websocket"? */
int rest_wants_websocket(struct MHD_Connection *c)
{
	const char *v =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Upgrade");

	return v && strcasestr(v, "websocket") != NULL;
}

/* The streams are full, or the 101 could not be made. */
static enum MHD_Result upgrade_unavailable(struct rest_req *r, int err)
{
	char *text =
	    err == -EBUSY ? http_front_streams_full(r->net->front) : NULL;

	rest_add_header(r, "Retry-After", "1");
	if (text)
		return rest_reply_text(r, 503, text, strlen(text));
	return rest_error(r, 503, "unavailable", NULL,
			  "cannot open the event stream now: %s",
			  strerror(-err));
}

enum MHD_Result rest_upgrade(struct rest_req *r, const char *version)
{
	struct api_error e = {0};
	int www_auth = 0, err;
	struct ws_conn *c = ws_handshake(http_front_ws(r->net->front), r->conn,
					 version, &e, &www_auth);
	struct MHD_Response *resp;
	enum MHD_Result ret;

	r->route = ROUTE_EVENTS;
	rest_add_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	if (!c) {
		if (www_auth)
			rest_add_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"tunerd\"");
		else if (e.details && json_object_get(e.details, "field") &&
			 !strcmp(json_string_value(
				     json_object_get(e.details, "field")),
				 "Sec-WebSocket-Version"))
			rest_add_header(r, "Sec-WebSocket-Version", "13");
		return rest_reply(r, (unsigned int)e.status,
				  api_error_to_json(&e));
	}
	err = http_front_upgrade(r->net->front, r->conn);
	resp = err ? NULL : ws_upgrade_response(c);
	if (!resp) {
		ws_conn_put(c);
		return upgrade_unavailable(r, err ? err : -ENOMEM);
	}
	/* The request holds the client until MHD is done with it. */
	r->ext = c;
	r->ext_free = ws_conn_put;
	ret = MHD_queue_response(r->conn, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
	MHD_destroy_response(resp);
	return ret;
}

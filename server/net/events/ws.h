/* SPDX-License-Identifier: MIT */
/*
 * ws.h - the event stream over WebSocket: GET /api/v1/events upgraded
 * with subprotocol "tunerd.v1" (protocol/events.md).
 *
 * The HTTP front peeks at a connection's request head; when it asks for
 * an upgrade to WebSocket the front hands the socket over, the request
 * head still unread, and libwebsockets parses it.  Everything runs in the
 * daemon's loop thread.
 */
#ifndef TUNERD_WS_H
#define TUNERD_WS_H

struct daemon;

/*
 * Serve the WebSocket upgrade request waiting (unread) on fd.  Takes
 * ownership of fd in every case: returns 0 when the connection is served
 * (http_front_conn_closed() is called once when it closes), or a negative
 * errno after closing fd.  Loop thread.
 */
int ws_adopt(struct daemon *d, int fd);

#endif /* TUNERD_WS_H */

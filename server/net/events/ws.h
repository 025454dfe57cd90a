/* SPDX-License-Identifier: MIT */
/*
 * ws.h - the event stream over WebSocket: GET /api/v1/events upgraded
 * with subprotocol "tunerd.v1" (protocol/events.md).
 *
 * libwebsockets runs on the daemon's libuv loop as a foreign loop: it
 * watches the sockets it serves and runs its own timers there.  The HTTP
 * front peeks at a connection's request head; when it asks for an
 * upgrade to WebSocket the front hands the socket over, the request head
 * still unread, and libwebsockets parses it.  Loop thread only.
 */
#ifndef TUNERD_WS_H
#define TUNERD_WS_H

#include <stddef.h>

struct daemon;
struct ws_server;

/* A served connection ended (its fd, given by number, is closed). */
typedef void (*ws_closed_fn)(void *arg, int fd);

/*
 * The WebSocket server of d, on d->loop.  closed (may be NULL) is called
 * once for every connection ws_adopt() accepted, when it ends.  Returns
 * NULL (the reason is logged) when libwebsockets or its libuv event
 * library plugin cannot start.
 */
struct ws_server *ws_server_new(struct daemon *d, ws_closed_fn closed,
				void *arg);
/*
 * Serve the WebSocket upgrade request on fd: waiting unread in the
 * socket (head NULL), or read already, head[0..len) (at most 8192 bytes;
 * lws copies it).  Takes ownership of fd in every case: returns 0 when
 * the connection is served (closed() follows once when it ends), or a
 * negative errno after closing fd (closed() is not called; an answer
 * lws gave, a refusal of the upgrade, went out first).
 */
int ws_adopt(struct ws_server *srv, int fd, const char *head, size_t len);
/* Connections that have not yet handed their last message (the stream's
 * "closed" item, or a refusal) to libwebsockets: a stop waits for these
 * to reach zero before it tears the server down. */
unsigned int ws_server_busy(const struct ws_server *srv);
/*
 * Close every connection and free the server.  libwebsockets closes its
 * libuv handles asynchronously: this runs the loop (not loop_run(): the
 * loop is stopped by then) until they are closed, then finishes the
 * context.  Call it outside the loop's callbacks (libuv's loop is not
 * reentrant), after event_streams_stop().  NULL is a no-op.
 */
void ws_server_free(struct ws_server *srv);

#endif /* TUNERD_WS_H */

/* SPDX-License-Identifier: MIT */
/*
 * ws.h - the event stream over WebSocket: GET /api/v1/events upgraded
 * with subprotocol "tunerd.v1" (protocol/events.md).
 *
 * libmicrohttpd parses the upgrade request and sends the 101 (its own
 * upgrade: MHD_create_response_for_upgrade()); the REST handler asks
 * ws_handshake() whether the request may be upgraded and queues
 * ws_upgrade_response().  Once the 101 is out, MHD hands the socket over
 * and wslay frames the stream on the daemon's loop; closing the stream
 * gives the socket back to MHD (MHD_UPGRADE_ACTION_CLOSE), which closes
 * it on its next run.  Loop thread only.
 */
#ifndef TUNERD_WS_H
#define TUNERD_WS_H

#include <stddef.h>
#include <stdint.h>

struct api_error;
struct daemon;
struct MHD_Connection;
struct MHD_Response;
struct ws_conn;
struct ws_server;

/* Run libmicrohttpd soon: a connection was given back to it. */
typedef void (*ws_kick_fn)(void *arg);

/*
 * The WebSocket server of d, on d->loop.  kick (may be NULL) is called
 * after a connection was given back to libmicrohttpd, which closes it on
 * its next run.  Returns NULL when out of memory.
 */
struct ws_server *ws_server_new(struct daemon *d, ws_kick_fn kick, void *arg);
/*
 * Check the upgrade request on mc (ws_handshake.c): an HTTP/1.1 GET with
 * Upgrade: websocket, Connection: Upgrade, a Sec-WebSocket-Key of 16
 * bytes, version 13, subprotocol tunerd.v1 (or none), the Origin rule,
 * the token (a viewer at least) and the query (types, tuner, since).
 * Returns the client to be, or NULL with *e set (status, code, message,
 * details: the API's error) and *www_auth set for a 401; the refusal is
 * logged within the server's budget.  The caller owns the client: it
 * goes to ws_upgrade_response(), or to ws_conn_put().
 */
struct ws_conn *ws_handshake(struct ws_server *srv, struct MHD_Connection *mc,
			     const char *version, struct api_error *e,
			     int *www_auth);
/*
 * The 101 answer for c (Upgrade, Sec-WebSocket-Accept computed with
 * OpenSSL's SHA-1, the subprotocol when the client named it).  Once MHD
 * sent it, the stream is served on the socket; c's owner still holds its
 * reference and drops it with ws_conn_put() when MHD is done with the
 * request.  NULL when out of memory.
 */
struct MHD_Response *ws_upgrade_response(struct ws_conn *c);
/* Drop the caller's reference to c (a void * for struct rest_req's
 * ext_free); the server holds its own while it serves c. */
void ws_conn_put(void *c);
/* Connections that have not yet handed their last message (the stream's
 * "closed" item and the close frame) to the kernel: a stop waits for
 * these to reach zero before it tears the server down. */
unsigned int ws_server_busy(const struct ws_server *srv);
/*
 * What the server wrote since it started: each write to a socket carries
 * one batch of a client's queued messages, framed by wslay into one
 * buffer (ws_write.c), so messages / batches is the messages per write.
 * deferred: loop turns that left clients with something to send waiting
 * for a later turn (the turn's budget was spent).
 */
struct ws_stats {
	uint64_t batches, messages, max_batch, deferred;
};
void ws_server_stats(const struct ws_server *srv, struct ws_stats *out);
/* Sec-WebSocket-Accept: base64 of a SHA-1, 28 characters. */
#define WS_ACCEPT_LEN 28
/* out = Sec-WebSocket-Accept for the client's Sec-WebSocket-Key (RFC
 * 6455 4.2.2: base64 of the SHA-1 of the key and the protocol's GUID;
 * OpenSSL's libcrypto): 0, or -1 for a key of more than 24 characters
 * (NULL included). */
int ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1]);
/* The keepalive's sweep as of now_ms (a ping after 30 s of a client's
 * silence, the end after 60 s); its timer runs it every second. */
void ws_server_keepalive(struct ws_server *srv, uint64_t now_ms);
/*
 * Give every connection back to libmicrohttpd (closed on its next run or
 * by MHD_stop_daemon()) and free the server.  Call it before stopping
 * MHD, after event_streams_stop().  NULL is a no-op.
 */
void ws_server_free(struct ws_server *srv);

#endif /* TUNERD_WS_H */

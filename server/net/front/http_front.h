/* SPDX-License-Identifier: MIT */
/*
 * http_front.h - the network API's one TCP port.
 *
 * The front owns the listening socket and accepts in the daemon's loop.
 * It peeks at each new connection's request head (the bytes stay in the
 * socket), checks its bounds and hands it to libmicrohttpd: REST, static
 * files, GET /api/v1/events as Server-Sent Events (sse_handle()) and as
 * WebSocket (MHD's upgrade; the REST handler calls http_front_upgrade()
 * and the front's WebSocket server, ws.h, serves the upgraded socket).
 *
 * Connections are counted here only, in two classes with a cap each
 * (front_classes.c): request/response connections (every connection
 * until its head is read) and event streams (WebSocket and SSE).  The
 * front owns the WebSocket server and the SSE streams, and runs both,
 * and MHD, on the daemon's loop.
 */
#ifndef TUNERD_HTTP_FRONT_H
#define TUNERD_HTTP_FRONT_H

#include <stdint.h>

struct http_front;
struct MHD_Connection;
struct net_api;
struct sse_set;
struct ws_server;

/* The caps of the two classes by default (--max-request-conns,
 * --max-stream-conns, or the config file's max_request_connections and
 * max_stream_connections). */
#define HTTP_FRONT_MAX_REQUESTS 256
#define HTTP_FRONT_MAX_STREAMS  2048
/* The largest cap either class may be given. */
#define HTTP_FRONT_CLASS_MAX 65536
/* A non-loopback address holds at most this many connections, and all
 * of them together leave the last HTTP_FRONT_LOOPBACK_RESERVE request
 * slots to loopback clients: the box's admin always gets in. */
#define HTTP_FRONT_PER_ADDR         32
#define HTTP_FRONT_LOOPBACK_RESERVE 16
/* A connection's whole request head must arrive within this long
 * (--head-timeout-ms for tests), or it is closed: a client trickling
 * its head byte by byte holds a slot for no longer. */
#define HTTP_FRONT_HEAD_S 10
/* Bounds of the peek at a new connection's request head (a bigger head
 * is refused with 431); a refused connection's head is waited for
 * HTTP_FRONT_PEEK_MS at most. */
#define HTTP_FRONT_PEEK_MAX 8192
#define HTTP_FRONT_PEEK_MS  2000
/* Idle HTTP connections (kept alive, between requests) are closed after
 * this long. */
#define HTTP_FRONT_IDLE_S 30
/* Per-connection memory of libmicrohttpd (request head and buffers). */
#define HTTP_FRONT_CONN_MEMORY (32 * 1024)
/* At stop, the longest the loop runs for clients to take their last
 * answers and messages (those that read get them at once). */
#define HTTP_FRONT_STOP_MS 3000

/*
 * Bind, listen on spec ("ADDR:PORT", "[V6]:PORT", ":PORT"; PORT 0 = any
 * free port) and serve in net's loop.  Returns the front, or NULL with
 * errno set (the reason is logged too).
 */
struct http_front *http_front_start(struct net_api *net, const char *spec);
/* Close the listener, let the waiting answers and the streams' last
 * messages out (the loop runs, at most HTTP_FRONT_STOP_MS), then close
 * every connection.  Called after event_streams_stop(), outside the
 * loop's callbacks; NULL is a no-op. */
void http_front_stop(struct http_front *f);
/* A second listener on spec, served exactly as the first (the
 * HDHomeRun face's port 5004): 0, or -errno (logged). */
int http_front_listen_extra(struct http_front *f, const char *spec);
/* The second listener's port, or 0 when there is none. */
int http_front_extra_port(const struct http_front *f);
/* The port actually bound (useful with PORT 0). */
int http_front_port(const struct http_front *f);
/* The local port of a bound socket, or -1. */
int http_front_bound_port(int fd);
/* Connections open now (peeking, HTTP and WebSocket). */
unsigned int http_front_conns(const struct http_front *f);
/* Run libmicrohttpd now (after a suspended request was resumed), or,
 * when called from inside it, right after. */
void http_front_kick(struct http_front *f);
/* Run libmicrohttpd from the loop, right after the current callback:
 * several resumes then cost one run. */
void http_front_kick_soon(struct http_front *f);

/*
 * A WebSocket upgrade on c is about to be answered with its 101: c moves
 * to the stream class until MHD closes it.  0, or -EBUSY when the
 * streams are full (answer http_front_streams_full()'s 503).
 */
int http_front_upgrade(struct http_front *f, struct MHD_Connection *c);
/* An SSE stream begins on c: 0, or -EBUSY when the streams are full.
 * Its end (the request's completion) makes c a request again. */
int http_front_stream_begin(struct http_front *f, struct MHD_Connection *c);
/* The 503 body for full streams (malloc'ed JSON text, or NULL). */
char *http_front_streams_full(const struct http_front *f);

/* The SSE streams served through this front (sse_stream.h). */
struct sse_set *http_front_sse(const struct http_front *f);
/* The WebSocket server that serves the upgraded sockets (ws.h). */
struct ws_server *http_front_ws(const struct http_front *f);

#endif /* TUNERD_HTTP_FRONT_H */

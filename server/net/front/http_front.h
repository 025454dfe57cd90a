/* SPDX-License-Identifier: MIT */
/*
 * http_front.h - the network API's one TCP port.
 *
 * The front owns the listening socket and accepts in the daemon's loop.
 * It peeks at each new connection's request head (the bytes stay in the
 * socket) and hands it on:
 *  - "Upgrade: websocket" -> ws_adopt(d, fd) (server/ws.h), which takes
 *    ownership of fd;
 *  - anything else -> libmicrohttpd (REST, static files, and
 *    GET /api/v1/events as Server-Sent Events through sse_handle()).
 *
 * Every connection counts against one cap (HTTP_FRONT_MAX_CONNS) whoever
 * serves it: the WebSocket side reports each adopted fd it closes with
 * http_front_conn_closed().
 */
#ifndef TUNERD_HTTP_FRONT_H
#define TUNERD_HTTP_FRONT_H

#include <stdint.h>

struct daemon;
struct http_front;
struct net_api;

#define HTTP_FRONT_MAX_CONNS 256
/* Bounds of the peek at a new connection's request head. */
#define HTTP_FRONT_PEEK_MAX 8192
#define HTTP_FRONT_PEEK_MS  2000
/* Idle HTTP connections are closed after this long. */
#define HTTP_FRONT_IDLE_S 30
/* Per-connection memory of libmicrohttpd (request head and buffers). */
#define HTTP_FRONT_CONN_MEMORY (32 * 1024)

/*
 * Bind, listen on spec ("ADDR:PORT", "[V6]:PORT", ":PORT"; PORT 0 = any
 * free port) and serve in net's loop.  Returns the front, or NULL (the
 * reason is logged).
 */
struct http_front *http_front_start(struct net_api *net, const char *spec);
/* Close the listener and every connection; NULL is a no-op. */
void http_front_stop(struct http_front *f);
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
 * ws_adopt() owns the fd it is given in every case.  When it returns 0
 * it serves the connection and calls this once when that connection is
 * closed.  When it returns a negative errno it has closed the fd and
 * must not call this (the front then releases the slot itself).
 */
void http_front_conn_closed(struct daemon *d);

#endif /* TUNERD_HTTP_FRONT_H */

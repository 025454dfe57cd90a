/* SPDX-License-Identifier: MIT */
/*
 * http_front_priv.h - private to the front: its state, shared by
 * http_front.c (accept, peek, hand over, stop), front_upgrade.c,
 * front_classes.c, front_peers.c, front_head.c and front_mhd.c
 * (libmicrohttpd on the loop).  Loop thread only.
 */
#ifndef TUNERD_HTTP_FRONT_PRIV_H
#define TUNERD_HTTP_FRONT_PRIV_H

#include <stdint.h>

#include "http_front.h"

struct MHD_Connection;
struct MHD_Daemon;
struct loop;
struct pending;
struct sse_set;
struct ws_server;

/* An open connection from a non-loopback address (front_peers.c). */
/* Connection classes: each has its own cap, so that event streams can
 * never take the slots commands need. */
enum front_class { FRONT_REQUESTS, FRONT_STREAMS, FRONT_CLASSES };

struct front_peer {
	int fd;
	unsigned char addr[16]; /* IPv6, or IPv4 as v4-mapped */
};

struct http_front {
	struct net_api *net;
	struct loop *loop;
	int listen_fd;
	int port;
	int extra_fd;   /* http_front_listen_extra(), or -1 */
	int extra_port; /* its port, or 0 */
	int peek_ep;
	struct pending *pending;
	unsigned int refusing;
	uint64_t sweep_timer;
	uint64_t accept_timer;
	struct MHD_Daemon *mhd;
	int mhd_ep;
	uint64_t mhd_timer, mhd_due;
	int in_run;             /* inside MHD_run() */
	unsigned int busy_reqs; /* MHD requests begun and not completed */
	struct ws_server *ws;   /* the WebSocket upgrades */
	struct sse_set *sse;    /* the Server-Sent Events streams */
	/* Open connections by class (FRONT_REQUESTS: peeking and HTTP
	 * request/response; FRONT_STREAMS: WebSocket and SSE) and each
	 * class's cap. */
	unsigned int conns[FRONT_CLASSES];
	unsigned int max[FRONT_CLASSES];
	unsigned int head_ms;     /* the whole request head's deadline */
	struct front_peer *peers; /* max[0] + max[1] entries */
	unsigned int npeers;      /* non-loopback connections open */
};

/* What the front knows of an MHD connection, kept as its socket
 * context: a request in flight, serving an event stream (SSE, or a
 * WebSocket), upgraded to WebSocket (it stays a stream until MHD closes
 * it). */
enum {
	MHD_CONN_IN_FLIGHT = 1,
	MHD_CONN_STREAM = 2,
	MHD_CONN_UPGRADED = 4,
};

struct sockaddr;
/* The peer's address as 16 bytes into addr; 1 when it is loopback. */
int front_peer_addr(const struct sockaddr *sa, unsigned char addr[16]);
/* Open connections from addr (non-loopback ones are listed). */
unsigned int front_peer_count(const struct http_front *f,
			      const unsigned char addr[16]);
/* List a non-loopback connection by its fd, from accept to close. */
void front_peer_add(struct http_front *f, int fd, const unsigned char addr[16]);
/* Forget fd's entry (a no-op when it has none). */
void front_peer_del(struct http_front *f, int fd);

/* An admitted connection of class cls closed: its slots are free. */
void front_conn_gone(struct http_front *f, enum front_class cls, int fd);
/* Move a connection to the stream class once its head shows it is one:
 * 0, or -EBUSY when the streams are full (it stays a request). */
int front_to_stream(struct http_front *f);
/* An event stream ended on a connection that stays open. */
void front_to_requests(struct http_front *f);
/* The API's 503 for a full class, or for an address at its cap, as a
 * JSON text (malloc'ed) or NULL. */
char *front_full_body(const struct http_front *f, enum front_class cls);
char *front_per_addr_body(void);
/* Send a 503 with body (taken; NULL: nothing) and shut fd for writing. */
void front_send_refusal(int fd, char *body);
/* Raise the open files limit for the caps (logged). */
void front_raise_nofile(const struct http_front *f);

/* The MHD connection of fd flags (MHD_CONN_*), or NULL. */
void **front_mhd_socket_ctx(struct MHD_Connection *c);
int front_mhd_conn_fd(struct MHD_Connection *c);

/* Start MHD on the loop (its epoll fd watched, its timeout on a loop
 * timer).  0 or -1 (logged). */
int front_mhd_start(struct http_front *f);
/* Run MHD now and re-arm its timer. */
void front_mhd_run(struct http_front *f);
/* Stop MHD (no connection may be suspended) and forget it. */
void front_mhd_stop(struct http_front *f);

/* Why a request head is refused before it is handed over (front_head.c):
 * the answer's status, the API's error code and message, details.max. */
struct front_refusal {
	unsigned int status;
	const char *code;
	const char *message;
	long max; /* -1: no details */
};

/* Check the bounds of a request head: head[0..len) is the head up to its
 * last line's end, or all the peeked bytes when truncated (the peek bound
 * was reached before the head's end).  0: it may be handed over; 1: *out
 * says how to refuse it. */
int front_head_check(const char *head, size_t len, int truncated,
		     struct front_refusal *out);
/* Answer a refused head with the API's JSON error object and shut the
 * connection for writing (the caller closes it). */
void front_head_answer(int fd, const struct front_refusal *r);

#endif /* TUNERD_HTTP_FRONT_PRIV_H */

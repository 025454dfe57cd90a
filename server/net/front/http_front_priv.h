/* SPDX-License-Identifier: MIT */
/*
 * http_front_priv.h - private to the front: its state, shared by
 * http_front.c (accept, peek, hand over, stop) and front_mhd.c
 * (libmicrohttpd on the loop).  Loop thread only.
 */
#ifndef TUNERD_HTTP_FRONT_PRIV_H
#define TUNERD_HTTP_FRONT_PRIV_H

#include <stdint.h>

#include "http_front.h"

struct MHD_Daemon;
struct loop;
struct pending;
struct sse_set;
struct ws_server;

/* An open connection from a non-loopback address (front_peers.c). */
struct front_peer {
	int fd;
	unsigned char addr[16]; /* IPv6, or IPv4 as v4-mapped */
};

struct http_front {
	struct net_api *net;
	struct loop *loop;
	int listen_fd;
	int port;
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
	unsigned int conns;     /* pending + MHD + WebSocket */
	unsigned int head_ms;   /* the whole request head's deadline */
	struct front_peer peers[HTTP_FRONT_MAX_CONNS];
	unsigned int npeers; /* non-loopback connections open */
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

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
};

/* Start MHD on the loop (its epoll fd watched, its timeout on a loop
 * timer).  0 or -1 (logged). */
int front_mhd_start(struct http_front *f);
/* Run MHD now and re-arm its timer. */
void front_mhd_run(struct http_front *f);
/* Stop MHD (no connection may be suspended) and forget it. */
void front_mhd_stop(struct http_front *f);

#endif /* TUNERD_HTTP_FRONT_PRIV_H */

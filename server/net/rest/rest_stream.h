/* SPDX-License-Identifier: MIT */
/*
 * rest_stream.h - private to rest_stream.c and rest_stream_direct.c: one
 * GET .../stream being served, through libmicrohttpd's content callback
 * or written by the daemon itself on the connection's socket.
 */
#ifndef TUNERD_REST_STREAM_H
#define TUNERD_REST_STREAM_H

#include <microhttpd.h>
#include <stddef.h>

#include "rest.h"
#include "stream.h"

struct rest_stream {
	struct net_api *net;
	struct MHD_Connection *conn;
	struct stream_reader *reader; /* NULL once closed */
	int suspended;                /* MHD: waiting for packets */
	/* Direct delivery: a duplicate of the connection's socket, written
	 * from the loop while MHD keeps the connection suspended. */
	int fd;
	size_t head_off; /* bytes of the answer's head sent */
	unsigned int mask;
	int done; /* ended: MHD closes the connection on its resume */
};

/* Serve s on r's connection directly; the reader is open.  Returns what
 * the access handler returns. */
enum MHD_Result rest_stream_direct_start(struct rest_req *r,
					 struct rest_stream *s);
void rest_stream_direct_wake(struct rest_stream *s);
/* End a direct stream now (client_closed), as when its client leaves. */
void rest_stream_direct_stop(struct rest_stream *s);

#endif /* TUNERD_REST_STREAM_H */

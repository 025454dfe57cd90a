/* SPDX-License-Identifier: MIT */
/*
 * bench_rest.h - bench_rest's baseline: a bare libmicrohttpd front on an
 * external epoll loop, like tunerd's, answering the daemon's bytes; its
 * fresh status crosses the same process hops as tunerd's (front -> worker
 * process -> box process and back) with the same message sizes.
 */
#ifndef BENCH_REST_H
#define BENCH_REST_H

#include <stddef.h>
#include <sys/types.h>

struct bench_body {
	char *data;
	size_t len;
};

struct bench_bare_cfg {
	int port;
	struct bench_body tuner;  /* GET /api/v1/tuners/1 */
	struct bench_body status; /* GET /api/v1/tuners/1/status[?...] */
	struct bench_body tuners; /* GET /api/v1/tuners */
	/* One fresh status read: k I2C round trips between the worker and
	 * the box, each xfer_len bytes answered with xfer_reply_len. */
	unsigned int k;
	size_t xfer_len, xfer_reply_len;
};

/*
 * Fork the bare front (which forks its worker, which forks its box); all
 * three die with the caller.  Returns the front's pid once it answers on
 * cfg->port, or -1.
 */
pid_t bench_bare_start(const struct bench_bare_cfg *cfg);
/* SIGTERM and reap it (its worker and box end with it). */
void bench_bare_stop(pid_t front);

#endif /* BENCH_REST_H */

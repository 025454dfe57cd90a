/* SPDX-License-Identifier: MIT */
/*
 * bench_fanout.h - what bench_fanout's parent (the servers) and its
 * children (the subscribers, the REST prober) share: the control
 * protocol on each child's socketpair and the figures they report.
 *
 * Subscribers (one child per side):
 *   child -> 'R'           all N connected
 *   child -> 'A'           the round's tick reached all N
 *   child -> 'Z' result    after every run of warm-up + E rounds
 *   parent -> 'L'          the load phase begins ("l_ns" events)
 *   parent -> 'Q' uint64   stop once each open subscriber has that many
 *                          "l_ns" events (the load's publications; at
 *                          most FANOUT_DRAIN_MS): child -> 'Y' result
 *                          (the load's latencies) and exits
 * REST prober:
 *   parent -> 'P'          probe now: child -> 'Y' result
 *   parent -> 'Q'          exit
 */
#ifndef TUNERD_BENCH_FANOUT_H
#define TUNERD_BENCH_FANOUT_H

#include <stdint.h>

#define FANOUT_WARMUP_ROUNDS 10
#define FANOUT_MSG_MAX       2048
/* The bound on the wait for the load's last events, past the last
 * publication; they come within milliseconds. */
#define FANOUT_DRAIN_MS 10000

/* Percentiles in microseconds over n samples; ok == 0: the child failed. */
struct fanout_result {
	int ok;
	long n;
	long closed; /* load: subscribers the server closed meanwhile */
	double p50, p99, max;
};

struct fanout_args {
	int subs, rounds, runs;
	int probes;   /* REST requests per probe */
	int probe_us; /* pause between two of them */
};

/* Sort samples (ns) and fill r. */
void fanout_percentiles(uint64_t *ns, long n, struct fanout_result *r);
struct eventbus;
struct loop;

/* The baseline server on l (bench_fanout_base.c): 0 or -1; adopt an
 * accepted socket (0, or -1 when libmicrohttpd refused it); the bus it
 * sends. */
int fanout_base_start(struct loop *l);
void fanout_base_stop(struct loop *l);
int fanout_base_adopt(int fd);
struct eventbus *fanout_base_bus(void);

/* A tag and its figures to the parent in one write: 0 or -1. */
int fanout_send_result(int ctl, char tag, const struct fanout_result *r);
/* The children's mains (bench_fanout_clients.c); ctl is the socketpair
 * to the parent, port the server's. */
int fanout_subscribers_main(const struct fanout_args *a, int ctl, int port);
int fanout_prober_main(const struct fanout_args *a, int ctl, int port);

#endif /* TUNERD_BENCH_FANOUT_H */

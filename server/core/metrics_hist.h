/* SPDX-License-Identifier: MIT */
/*
 * metrics_hist.h - a latency histogram with fixed bounds, for /metrics
 * (server/net/rest/rest_metrics.c).  Observing is a short scan of the
 * bounds and two increments on the loop thread; the cumulative counts
 * and the text are made only when /metrics is read.
 */
#ifndef TUNERD_METRICS_HIST_H
#define TUNERD_METRICS_HIST_H

#include <stdint.h>

/* Upper bounds 1 ms .. 10 s; slower observations count in +Inf only. */
#define METRICS_HIST_BOUNDS 13

struct metrics_hist {
	uint64_t bucket[METRICS_HIST_BOUNDS]; /* per bound, not cumulative */
	uint64_t count;                       /* every observation (+Inf) */
	uint64_t sum_ns;
};

/* The bounds as the "le" label's text ("0.001" ... "10"). */
extern const char *const metrics_hist_le[METRICS_HIST_BOUNDS];

void metrics_hist_observe(struct metrics_hist *h, uint64_t ns);

#endif /* TUNERD_METRICS_HIST_H */

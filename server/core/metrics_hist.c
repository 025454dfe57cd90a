// SPDX-License-Identifier: MIT
/*
 * Fixed histogram bounds: the same for every latency the daemon measures
 * (a tune, a REST request), so dashboards can compare them bucket by
 * bucket; 1 ms .. 10 s spans a cached GET to a tune that waits for lock.
 */
#include "metrics_hist.h"

static const uint64_t bounds_ns[METRICS_HIST_BOUNDS] = {
    1000000ull,    2500000ull,    5000000ull,     10000000ull,  25000000ull,
    50000000ull,   100000000ull,  250000000ull,   500000000ull, 1000000000ull,
    2500000000ull, 5000000000ull, 10000000000ull,
};

const char *const metrics_hist_le[METRICS_HIST_BOUNDS] = {
    "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
    "0.25",  "0.5",    "1",     "2.5",  "5",     "10",
};

void metrics_hist_observe(struct metrics_hist *h, uint64_t ns)
{
	for (unsigned int i = 0; i < METRICS_HIST_BOUNDS; i++)
		if (ns <= bounds_ns[i]) {
			h->bucket[i]++;
			break;
		}
	h->count++;
	h->sum_ns += ns;
}

/* SPDX-License-Identifier: MIT */
/*
 * status_deadband.h - tuner.status events with economy: a consumer of the
 * status sampler that looks at each tuner's reads every interval_ms and
 * publishes {"type":"tuner.status","tuner":N,"locked":bool,
 * "status":Status} only when the status moved past a deadband since the
 * last one it published (lock, fe_status, PLL, validity, frequency,
 * bandwidth or params change: always; signal by STATUS_DEADBAND_SIGNAL_MDB
 * or 2 %; CNR by STATUS_DEADBAND_CNR_MDB or 2 %; AFC by
 * STATUS_DEADBAND_AFC_HZ), or when heartbeat_ms passed without one.  A
 * steady tuner costs one event per heartbeat instead of one per read.
 *
 * The bands are wider than a demodulator's jitter between two reads
 * (about +-0.5 dB on signal and CNR, as the simulated box draws it: two
 * reads differ by less than 1 dB, or 1.6 % of the relative scale), so a
 * steady tuner stays quiet, and narrower than any change an operator
 * acts on.  Loop thread.
 */
#ifndef TUNERD_STATUS_DEADBAND_H
#define TUNERD_STATUS_DEADBAND_H

#include "tuner_stub.h"

struct daemon;
struct status_sampler;
struct status_deadband;

#define STATUS_DEADBAND_SIGNAL_MDB  1000  /* 1 dB */
#define STATUS_DEADBAND_CNR_MDB     1000  /* 1 dB */
#define STATUS_DEADBAND_REL         1311  /* 2 % of 65535 */
#define STATUS_DEADBAND_AFC_HZ      10000 /* 10 kHz */
#define STATUS_HEARTBEAT_MS_DEFAULT 30000

/* Has st moved past the deadband since last (the status of the last
 * event)?  1 or 0. */
int status_deadband_moved(const struct tstub_status *st,
			  const struct tstub_status *last);

/* NULL when out of memory.  interval_ms > 0. */
struct status_deadband *status_deadband_start(struct daemon *d,
					      struct status_sampler *s,
					      unsigned long interval_ms,
					      unsigned long heartbeat_ms);
/* Leaves the sampler (which must still be there); NULL is a no-op. */
void status_deadband_stop(struct status_deadband *db);

#endif /* TUNERD_STATUS_DEADBAND_H */

/* SPDX-License-Identifier: MIT */
/*
 * status_sampler.h - status reads of every ready tuner through its worker
 * (tuner_submit, never blocking the loop), handed to the consumers that
 * asked for them.  A consumer says how often it needs a read; the
 * sampler reads at the shortest interval its consumers want, and not at
 * all while it has none, so a chip is read only as often as someone
 * needs and one read serves every consumer.  The consumers today:
 * tuner.status events (status_deadband.c, at --status-interval-ms, for
 * the tuners someone follows) and the history (1 s, every tuner).  A tuner whose previous read
 * is still pending is skipped.  Loop thread.
 */
#ifndef TUNERD_STATUS_SAMPLER_H
#define TUNERD_STATUS_SAMPLER_H

#include <stdint.h>

#include "tuner_stub.h"

struct daemon;
struct status_sampler;

/* One read of tuner, done at time_ms (realtime); changed_at_ms is the
 * tuner's last params change. */
typedef void (*status_sample_fn)(uint32_t tuner, int64_t time_ms,
				 const struct tstub_status *st,
				 uint64_t changed_at_ms, void *arg);

/* Whether a consumer wants tuner read now (its reads are I2C). */
typedef int (*status_wants_fn)(uint32_t tuner, void *arg);

/* NULL when out of memory.  Reads nothing until a consumer asks. */
struct status_sampler *status_sampler_new(struct daemon *d);
/* A consumer wanting a read of every ready tuner that wants() accepts
 * (NULL: all) at least every interval_ms (> 0); it gets every read made
 * (also those made sooner for another consumer).  Returns its id (> 0)
 * or -errno. */
long status_sampler_want(struct status_sampler *s, unsigned long interval_ms,
			 status_sample_fn fn, status_wants_fn wants, void *arg);
void status_sampler_unwant(struct status_sampler *s, long id);
/* The interval reads are made at now (0: none). */
unsigned long status_sampler_interval_ms(const struct status_sampler *s);
/* Stops the timer and forgets the reads in flight; NULL is a no-op. */
void status_sampler_free(struct status_sampler *s);

#endif /* TUNERD_STATUS_SAMPLER_H */

/* SPDX-License-Identifier: MIT */
/*
 * status_sampler.h - tuner.status events: every interval, a status read
 * through each ready tuner's worker (tuner_submit, never blocking the
 * loop), published as {"type":"tuner.status","tuner":N,"locked":bool,
 * "status":Status}.  Only tuners some open event stream wants
 * tuner.status of are read (no subscriber: no I2C); a tuner whose
 * previous read is still pending is skipped.  Loop thread.
 */
#ifndef TUNERD_STATUS_SAMPLER_H
#define TUNERD_STATUS_SAMPLER_H

struct daemon;
struct status_sampler;

/* NULL when out of memory. */
struct status_sampler *status_sampler_start(struct daemon *d,
					    unsigned long interval_ms);
/* Stops the timer and forgets the reads in flight; NULL is a no-op. */
void status_sampler_stop(struct status_sampler *s);

#endif /* TUNERD_STATUS_SAMPLER_H */

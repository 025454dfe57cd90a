/* SPDX-License-Identifier: MIT */
/*
 * scan_job.h - channel scans: one job per tuner at a time, run on the
 * loop.  For each frequency a job tunes through the command service (the
 * caller's role and lease, like any tune), waits for lock, reads the
 * multiplex's PAT, SDT and NIT as an internal reader of the tuner's
 * stream (the stream hub's one source, PIDs 0, 0x10, 0x11), and puts the
 * multiplex's services into the channel list.  Events scan.progress per
 * frequency and scan.done at the end (protocol/events.md).
 */
#ifndef TUNERD_SCAN_JOB_H
#define TUNERD_SCAN_JOB_H

#include <jansson.h>
#include <stdint.h>

#include "auth.h"
#include "command.h"

struct daemon;
struct stream_hub;
struct channel_list;
struct scan_hub;

#define SCAN_FREQUENCIES_MAX 200
/* How long a frequency may take to lock (each delivery system tried),
 * and to show a signal at all: a frequency without any (no RF there) is
 * left after SCAN_SIGNAL_MS, which makes a band scan of mostly empty
 * channels about three times faster.  The status is polled every
 * SCAN_POLL_MS meanwhile. */
#define SCAN_LOCK_MS   1500
#define SCAN_SIGNAL_MS 500
#define SCAN_POLL_MS   50
/* How long the tables of a locked multiplex are read at most. */
#define SCAN_TABLES_MS 4000

struct scan_hub *scan_hub_new(struct daemon *d, struct command_service *cs,
			      struct stream_hub *streams,
			      struct channel_list *channels);
/* Cancel every running job (state cancelled, its scan.done). */
void scan_hub_stop(struct scan_hub *h);
void scan_hub_free(struct scan_hub *h);

/* Who starts or cancels a scan. */
struct scan_caller {
	enum role role;
	const char *name;     /* token name, or NULL */
	const char *lease_id; /* the request's, or NULL */
};

/* POST .../scan with body: 202 and the job in *res, or an error answer
 * (400 bad body, 404 tuner, 409 busy or leased, 403 role).  Returns
 * res->err. */
int scan_start(struct scan_hub *h, uint32_t tuner, json_t *body,
	       const struct scan_caller *who, struct command_result *res);
/* GET .../scan: the tuner's current or last job, or 404. */
int scan_get(struct scan_hub *h, uint32_t tuner, struct command_result *res);
/* DELETE .../scan: cancel the running job (200 with it), 404 none. */
int scan_cancel(struct scan_hub *h, uint32_t tuner,
		const struct scan_caller *who, struct command_result *res);

/* The frequencies of a band (scan_bands.c): a new array of Hz in *out
 * with the band's bandwidth, or -EINVAL for an unknown band/region. */
int scan_band(const char *band, const char *region, json_t **out,
	      uint32_t *bandwidth);

#endif /* TUNERD_SCAN_JOB_H */

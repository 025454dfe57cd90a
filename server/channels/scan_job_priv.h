/* SPDX-License-Identifier: MIT */
/*
 * scan_job_priv.h - private to scan_job.c (running a job) and
 * scan_request.c (the API's requests: start, get, cancel).
 */
#ifndef TUNERD_SCAN_JOB_PRIV_H
#define TUNERD_SCAN_JOB_PRIV_H

#include "scan_job.h"
#include "scan_tables.h"

enum scan_state {
	SCAN_RUNNING = 0,
	SCAN_DONE,
	SCAN_FAILED,
	SCAN_CANCELLED,
};

struct scan_job {
	struct scan_hub *h;
	struct scan_job *next; /* h->jobs */
	uint32_t tuner;
	char id[24]; /* "scan-N" */
	enum scan_state state;
	uint32_t *freqs;
	size_t total, done;
	char delsys[16]; /* what the caller asked for, the API's name */
	uint32_t bandwidth;
	int trying_t2;    /* this frequency's second try, as DVB-T2 */
	int signal;       /* this frequency showed a signal or carrier */
	uint64_t tune_ms; /* when this try's tune was answered */
	char *name, *lease_id;
	struct command_client client;
	struct stream_reader *reader;
	struct scan_tables *tables;
	uint64_t timer;
	json_t *params; /* the current tune's, as the daemon answered it */
	unsigned int multiplexes;
	json_t *found; /* the channels found */
	json_t *error; /* why it failed */
	uint8_t carry[188];
	size_t ncarry;
};

struct scan_hub {
	struct daemon *d;
	struct command_service *cs;
	struct stream_hub *streams;
	struct channel_list *channels;
	struct scan_job *jobs; /* the last one of each tuner */
	unsigned int next_id;
};

/* Start running j (its first tune). */
void scan_job_run(struct scan_job *j);
/* Stop j where it is: state cancelled, its scan.done. */
void scan_job_cancel(struct scan_job *j);
void scan_job_free(struct scan_job *j);
json_t *scan_job_json(const struct scan_job *j);

#endif /* TUNERD_SCAN_JOB_PRIV_H */

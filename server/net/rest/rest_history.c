// SPDX-License-Identifier: MIT
/*
 * GET /api/v1/tuners/{id}/history?from=&to=&step=&fields= and the
 * history's place in the network layer: it is opened in the state
 * directory at the API's start, and asks the status sampler for a read
 * of every tuner each second (HISTORY_SAMPLE_MS) whether or not anyone
 * watches tuner.status, so the seconds have no holes; a stream's bitrate
 * and errors are taken from the stream hub at each read.
 *
 * Times are ms since the epoch; to defaults to now, from to an hour
 * before to, step to the tier's step that gives at most 1,000 points.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "event_stream.h"
#include "eventbus.h"
#include "history.h"
#include "net_api.h"
#include "rest.h"
#include "state_file.h"
#include "status_sampler.h"
#include "stream.h"

#define HISTORY_SAMPLE_MS 1000
/* At a stop, how long the history's write in flight is waited for. */
#define HISTORY_CLOSE_MS 5000

static void history_consume(uint32_t tuner, int64_t time_ms,
			    const struct tstub_status *st,
			    uint64_t changed_at_ms, void *arg)
{
	struct net_api *net = arg;
	struct stream_stats ss;
	struct history_stream hs;
	int open = stream_hub_stats(net->streams, tuner, &ss);

	(void)changed_at_ms;
	hs.bitrate_bps = ss.bitrate_bps;
	hs.errors = ss.cc_errors + ss.tei_errors;
	history_sample(net->history, tuner, time_ms, st, open ? &hs : NULL);
}

int rest_history_start(struct net_api *net)
{
	struct daemon *d = net->d;
	long id;

	if (!d->state || !net->cfg.history_enabled)
		return 0; /* no state directory or off: GET says so */
	net->history =
	    history_open(d->loop, d->events, state_dir_path(d->state));
	if (!net->history)
		return 0; /* logged; the daemon runs without it */
	id = status_sampler_want(event_streams_sampler(d), HISTORY_SAMPLE_MS,
				 history_consume, NULL, net);
	if (id < 0)
		return (int)id;
	net->history_consumer = id;
	return 0;
}

void rest_history_stop(struct net_api *net)
{
	if (net->history_consumer > 0)
		status_sampler_unwant(event_streams_sampler(net->d),
				      net->history_consumer);
	net->history_consumer = 0;
	history_close(net->history, HISTORY_CLOSE_MS);
	net->history = NULL;
}

static enum MHD_Result bad_param(struct rest_req *r, const char *field,
				 const char *why)
{
	return rest_error(r, 400, "bad_request",
			  json_pack("{s:s}", "field", field), "%s: %s", field,
			  why);
}

/* A decimal integer in [min, max] from the query, or def when absent.
 * 0, or -1 when present and not that. */
static int query_int(struct rest_req *r, const char *key, int64_t min,
		     int64_t max, int64_t def, int64_t *out)
{
	const char *v =
	    MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
	char *end;
	long long n;

	*out = def;
	if (!v)
		return 0;
	if (*v < '0' || *v > '9' || strlen(v) > 15)
		return -1;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || *end || n < min || n > max)
		return -1;
	*out = n;
	return 0;
}

/* ?fields=signal,cnr: bits of enum history_field (absent: all). */
static int query_fields(struct rest_req *r, unsigned int *fields)
{
	const char *v = MHD_lookup_connection_value(
	    r->conn, MHD_GET_ARGUMENT_KIND, "fields");

	*fields = (1u << HIST_NFIELDS) - 1;
	if (!v)
		return 0;
	*fields = 0;
	for (const char *p = v;; p++) {
		size_t len = strcspn(p, ",");
		int f = history_field_parse(p, len);

		if (f < 0)
			return -1;
		*fields |= 1u << f;
		p += len;
		if (!*p)
			return 0;
	}
}

/* The query of r, or an answer queued in *ret. */
static int parse_query(struct rest_req *r, struct history_query *q,
		       enum MHD_Result *ret)
{
	const int64_t epoch_max = 253402300799999LL; /* 9999-12-31 */
	int64_t now = eventbus_now_ms();

	q->tuner = r->tuner;
	q->now_ms = now;
	if (query_int(r, "to", 0, epoch_max, now, &q->to_ms)) {
		*ret = bad_param(r, "to", "ms since the epoch");
		return -1;
	}
	if (query_int(r, "from", 0, epoch_max, q->to_ms - HISTORY_TIER0_KEEP_MS,
		      &q->from_ms) ||
	    q->from_ms >= q->to_ms) {
		*ret = bad_param(r, "from", "ms since the epoch, before to");
		return -1;
	}
	if (query_int(r, "step", HISTORY_TIER0_STEP_MS, HISTORY_TIER1_KEEP_MS,
		      0, &q->step_ms)) {
		*ret = bad_param(r, "step", "1000 to 2592000000 ms");
		return -1;
	}
	if (query_fields(r, &q->fields)) {
		*ret = bad_param(r, "fields",
				 "a comma-separated list of signal, cnr, afc, "
				 "bitrate, errors");
		return -1;
	}
	return 0;
}

static void history_answered(int err, json_t *answer, void *arg)
{
	struct rest_req *r = arg;
	struct api_error e = {0};

	if (!err) {
		rest_finish(r, 200, answer);
		return;
	}
	if (err == -ERANGE)
		api_error_set(
		    &e, 400, "bad_request", json_pack("{s:s}", "field", "step"),
		    "the range needs more than %d points at this step",
		    HISTORY_MAX_POINTS);
	else
		api_error_set(&e, 500, "internal", NULL,
			      "the history cannot be read");
	rest_finish_error(r, &e);
}

enum MHD_Result rest_history_get(struct rest_req *r)
{
	struct history_query q = {0};
	enum MHD_Result ret;
	int err;

	if (!tuner_find(r->net->d, r->tuner))
		return rest_error(
		    r, 404, "not_found",
		    json_pack("{s:I}", "tuner", (json_int_t)r->tuner),
		    "no tuner %u", r->tuner);
	if (parse_query(r, &q, &ret))
		return ret;
	if (!r->net->history)
		return rest_error(r, 503, "unavailable", NULL,
				  "the daemon keeps no history (no usable "
				  "state directory, or \"history\" is off "
				  "in the config)");
	/* The SQL runs on the threadpool; the request waits suspended. */
	err = history_query_start(r->net->history, &q, history_answered, r);
	if (err == -EBUSY) {
		rest_add_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
		return rest_error(r, 503, "unavailable", NULL,
				  "%d history queries run already",
				  HISTORY_QUERIES_MAX);
	}
	if (err)
		return rest_error(r, 500, "internal", NULL, "out of memory");
	return rest_suspend(r);
}

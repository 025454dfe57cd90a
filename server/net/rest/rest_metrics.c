// SPDX-License-Identifier: MIT
/*
 * GET /metrics: the Prometheus text exposition format (version 0.0.4).
 *
 * Nothing is kept for the scrape: the tuners' counters and status, the
 * streams' statistics and the event streams' losses are read where they
 * already live; only the REST requests are counted here, by route
 * template and status (a fixed table, so the series are bounded whatever
 * paths clients send) with one histogram of their time per route.  The
 * hot paths pay an increment; the text is built only when scraped, with
 * stdio's open_memstream().  Debian 12 has no C client library for the
 * format (only prometheus-cpp, C++), and the format is a line format.
 */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "event_stream.h"
#include "loop.h"
#include "metrics_hist.h"
#include "net_api.h"
#include "rest.h"
#include "stream.h"
#include "tunerd_version.h"

#define STATUS_MIN 100
#define STATUS_MAX 599

struct rest_metrics {
	uint64_t requests[REST_ROUTES][STATUS_MAX - STATUS_MIN + 1];
	struct metrics_hist latency[REST_ROUTES];
};

/* The route templates: what a series is labelled with, never the path a
 * client sent. */
static const char *route_template(enum rest_route rt)
{
	static const char *const names[REST_ROUTES] = {
	    [ROUTE_NONE] = "other",
	    [ROUTE_BOX] = "/api/v1/box",
	    [ROUTE_TUNERS] = "/api/v1/tuners",
	    [ROUTE_TUNER] = "/api/v1/tuners/{id}",
	    [ROUTE_TUNE] = "/api/v1/tuners/{id}/tune",
	    [ROUTE_STATUS] = "/api/v1/tuners/{id}/status",
	    [ROUTE_SLEEP] = "/api/v1/tuners/{id}/sleep",
	    [ROUTE_INIT] = "/api/v1/tuners/{id}/init",
	    [ROUTE_LEASE] = "/api/v1/tuners/{id}/lease",
	    [ROUTE_PLUGINS] = "/api/v1/plugins",
	    [ROUTE_EVENTS] = "/api/v1/events",
	    [ROUTE_STREAM] = "/api/v1/tuners/{id}/stream",
	    [ROUTE_SCAN] = "/api/v1/tuners/{id}/scan",
	    [ROUTE_CHANNELS] = "/api/v1/channels",
	    [ROUTE_HISTORY] = "/api/v1/tuners/{id}/history",
	    [ROUTE_STATIC] = "static",
	    [ROUTE_METRICS] = "/metrics",
	    [ROUTE_HDHR] = "hdhomerun",
	};

	return (unsigned int)rt < REST_ROUTES && names[rt] ? names[rt]
							   : "other";
}

void rest_metrics_request_done(struct rest_req *r)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_HTTP_STATUS);
	unsigned int status = ci ? ci->http_status : 0;
	struct net_api *net = r->net;
	unsigned int rt = (unsigned int)r->route;

	if (!status || status < STATUS_MIN || status > STATUS_MAX ||
	    rt >= REST_ROUTES)
		return; /* handed to the WebSocket server: not an answer here */
	if (!net->metrics) {
		net->metrics = calloc(1, sizeof(*net->metrics));
		if (!net->metrics)
			return;
	}
	net->metrics->requests[rt][status - STATUS_MIN]++;
	/* An event stream's or a transport stream's time is its life, not
	 * the request's: only the answers are timed (the HDHomeRun face's
	 * paths are mostly streams). */
	if (r->route != ROUTE_EVENTS && r->route != ROUTE_STREAM &&
	    r->route != ROUTE_HDHR && r->t0_ns)
		metrics_hist_observe(&net->metrics->latency[rt],
				     loop_now_ns() - r->t0_ns);
}

int rest_metrics_token_ok(const struct net_api *net, const char *bearer)
{
	const struct metrics_config *m = &net->cfg.metrics;

	return m->token && bearer &&
	       auth_token_equal(bearer, strlen(bearer), m->token, m->token_len);
}

/* ---- the text ---- */

/* A label value: backslash, double quote and newline escaped. */
static void put_label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*v, f);
	}
}

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The cumulative buckets, sum and count of h; labels is the series'
 * labels with a trailing comma ("" or `tuner="1",`). */
static void put_hist(FILE *f, const char *name, const char *labels,
		     const struct metrics_hist *h)
{
	uint64_t cum = 0;

	for (unsigned int i = 0; i < METRICS_HIST_BOUNDS; i++) {
		cum += h->bucket[i];
		fprintf(f, "%s_bucket{%sle=\"%s\"} %llu\n", name, labels,
			metrics_hist_le[i], (unsigned long long)cum);
	}
	fprintf(f, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, labels,
		(unsigned long long)h->count);
	fprintf(f, "%s_sum{%.*s} %.9f\n", name,
		(int)(labels[0] ? strlen(labels) - 1 : 0), labels,
		h->sum_ns / 1e9);
	fprintf(f, "%s_count{%.*s} %llu\n", name,
		(int)(labels[0] ? strlen(labels) - 1 : 0), labels,
		(unsigned long long)h->count);
}

/* The labels of a tuner's series, with a trailing comma. */
static void tuner_labels(char *buf, size_t len, const struct daemon *d,
			 const struct tuner_snapshot *s)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);

	buf[0] = '\0';
	if (!f)
		return;
	fprintf(f, "tuner=\"%u\",chip=\"", s->id);
	put_label(f, s->have_info ? s->info.name : "");
	fputs("\",box=\"", f);
	put_label(f, d->name);
	fputs("\",", f);
	if (!fclose(f))
		snprintf(buf, len, "%s", text);
	free(text);
}

struct tuner_row {
	char labels[512];
	struct tuner_snapshot s;
	struct stream_stats st;
};

/* Which daemon answers: a fleet's dashboard joins on its labels. */
static void box_families(FILE *f, const struct net_api *net)
{
	family(f, "tunerd_build_info", "gauge",
	       "Always 1; the daemon's version and box name as labels");
	fprintf(f, "tunerd_build_info{version=\"%s\",box=\"", TUNERD_VERSION);
	put_label(f, net->d->name);
	fputs("\"} 1\n", f);
	family(f, "tunerd_start_time_seconds", "gauge",
	       "When the network API started, in seconds since the epoch");
	fprintf(f, "tunerd_start_time_seconds %.3f\n",
		(double)net->started_ms / 1000.0);
}

/* One family over every tuner: put(f, row) writes its samples. */
static void per_tuner(FILE *f, struct tuner_row *rows, size_t n,
		      const char *name, const char *type, const char *help,
		      void (*put)(FILE *, const char *,
				  const struct tuner_row *))
{
	family(f, name, type, help);
	for (size_t i = 0; i < n; i++)
		put(f, name, &rows[i]);
}

static void put_locked(FILE *f, const char *name, const struct tuner_row *t)
{
	if (t->s.locked >= 0)
		fprintf(f, "%s{%.*s} %d\n", name, (int)strlen(t->labels) - 1,
			t->labels, t->s.locked);
}

static void put_signal(FILE *f, const char *name, const struct tuner_row *t)
{
	if (t->s.have_status && (t->s.status.valid & TSTUB_ST_STRENGTH_DBM))
		fprintf(f, "%s{%.*s} %.3f\n", name, (int)strlen(t->labels) - 1,
			t->labels, t->s.status.strength_mdbm / 1000.0);
}

static void put_cnr(FILE *f, const char *name, const struct tuner_row *t)
{
	if (t->s.have_status && (t->s.status.valid & TSTUB_ST_CNR_DB))
		fprintf(f, "%s{%.*s} %.3f\n", name, (int)strlen(t->labels) - 1,
			t->labels, t->s.status.cnr_mdb / 1000.0);
}

static void put_bitrate(FILE *f, const char *name, const struct tuner_row *t)
{
	fprintf(f, "%s{%.*s} %.3f\n", name, (int)strlen(t->labels) - 1,
		t->labels, t->st.bitrate_bps / 8.0);
}

static void put_stream_bytes(FILE *f, const char *name,
			     const struct tuner_row *t)
{
	fprintf(f, "%s{%.*s} %llu\n", name, (int)strlen(t->labels) - 1,
		t->labels, (unsigned long long)t->st.bytes);
}

static void put_tunes(FILE *f, const char *name, const struct tuner_row *t)
{
	for (int o = TUNER_ORIGIN_KERNEL; o <= TUNER_ORIGIN_RESTORE; o++)
		for (int res = 0; res < 2; res++)
			fprintf(
			    f, "%s{%sorigin=\"%s\",result=\"%s\"} %llu\n", name,
			    t->labels, tuner_origin_name((enum tuner_origin)o),
			    res ? "error" : "ok",
			    (unsigned long long)t->s.counters.tunes_by[o][res]);
}

#define COUNTER_PUT(fn, field)                                                 \
	static void fn(FILE *f, const char *name, const struct tuner_row *t)   \
	{                                                                      \
		fprintf(f, "%s{%.*s} %llu\n", name,                            \
			(int)strlen(t->labels) - 1, t->labels,                 \
			(unsigned long long)t->s.counters.field);              \
	}
COUNTER_PUT(put_i2c, i2c_transfers)
COUNTER_PUT(put_restarts, restarts)
COUNTER_PUT(put_hangs, hangs)
COUNTER_PUT(put_crashes, crashes)
COUNTER_PUT(put_timeouts, timeouts)

static void put_tune_hist(FILE *f, const char *name, const struct tuner_row *t)
{
	put_hist(f, name, t->labels, &t->s.counters.tune_seconds);
}

static void tuner_families(FILE *f, struct tuner_row *rows, size_t n)
{
	per_tuner(f, rows, n, "tunerd_tuner_locked", "gauge",
		  "1 when the tuner has lock, 0 when not (absent: unknown)",
		  put_locked);
	per_tuner(f, rows, n, "tunerd_tuner_signal_dbm", "gauge",
		  "Signal strength of the last status read, in dBm",
		  put_signal);
	per_tuner(f, rows, n, "tunerd_tuner_cnr_db", "gauge",
		  "Carrier-to-noise ratio of the last status read, in dB",
		  put_cnr);
	/* Bytes, Prometheus's base unit (promtool's lint refuses bits):
	 * a dashboard multiplies by 8 for the bitrate. */
	per_tuner(f, rows, n, "tunerd_tuner_stream_bytes_per_second", "gauge",
		  "Transport stream rate over the last second, in bytes per "
		  "second (x8: bitrate; 0 while nobody reads the stream)",
		  put_bitrate);
	per_tuner(f, rows, n, "tunerd_tuner_stream_bytes_total", "counter",
		  "Transport stream bytes read from the tuner, in bytes",
		  put_stream_bytes);
	per_tuner(f, rows, n, "tunerd_tunes_total", "counter",
		  "Tunes by origin (api, kernel, restore) and result (ok, "
		  "error)",
		  put_tunes);
	per_tuner(f, rows, n, "tunerd_tuner_i2c_transfers_total", "counter",
		  "I2C transfers the tuner's worker made through the stub",
		  put_i2c);
	per_tuner(f, rows, n, "tunerd_worker_restarts_total", "counter",
		  "Worker processes restarted", put_restarts);
	per_tuner(f, rows, n, "tunerd_worker_hangs_total", "counter",
		  "Workers killed because a command ran past its deadline",
		  put_hangs);
	per_tuner(f, rows, n, "tunerd_worker_crashes_total", "counter",
		  "Workers that died unasked", put_crashes);
	per_tuner(f, rows, n, "tunerd_tuner_timeouts_total", "counter",
		  "API commands answered past their deadline", put_timeouts);
	per_tuner(f, rows, n, "tunerd_tune_duration_seconds", "histogram",
		  "Time of a tune in the worker, in seconds", put_tune_hist);
}

static void request_families(FILE *f, const struct rest_metrics *m)
{
	family(f, "tunerd_http_requests_total", "counter",
	       "REST requests answered, by route template and HTTP status");
	for (unsigned int rt = 0; m && rt < REST_ROUTES; rt++)
		for (unsigned int s = 0; s <= STATUS_MAX - STATUS_MIN; s++)
			if (m->requests[rt][s])
				fprintf(f,
					"tunerd_http_requests_total{route=\"%s"
					"\",status=\"%u\"} %llu\n",
					route_template((enum rest_route)rt),
					s + STATUS_MIN,
					(unsigned long long)m->requests[rt][s]);
	family(f, "tunerd_http_request_duration_seconds", "histogram",
	       "Time from a REST request's head to the end of its answer, "
	       "in seconds (event and transport streams not included)");
	for (unsigned int rt = 0; m && rt < REST_ROUTES; rt++) {
		char labels[64];

		if (!m->latency[rt].count)
			continue;
		snprintf(labels, sizeof(labels), "route=\"%s\",",
			 route_template((enum rest_route)rt));
		put_hist(f, "tunerd_http_request_duration_seconds", labels,
			 &m->latency[rt]);
	}
}

static void loss_families(FILE *f, const struct daemon *d,
			  const struct tuner_row *rows, size_t n)
{
	struct event_stream_counters ev;
	uint64_t slow_readers = 0;

	event_streams_counters(d, &ev);
	for (size_t i = 0; i < n; i++)
		slow_readers += rows[i].st.dropped_readers;
	family(f, "tunerd_events_dropped_total", "counter",
	       "Events a stream client lost: queued for a slow consumer "
	       "that was closed, or past the ring in a catch-up (gap)");
	fprintf(f,
		"tunerd_events_dropped_total{reason=\"slow_consumer\"} "
		"%llu\n",
		(unsigned long long)ev.dropped_slow);
	fprintf(f, "tunerd_events_dropped_total{reason=\"gap\"} %llu\n",
		(unsigned long long)ev.dropped_gap);
	family(f, "tunerd_slow_consumers_total", "counter",
	       "Clients dropped for reading too slowly: event streams "
	       "(WebSocket, SSE) and transport stream readers");
	fprintf(f, "tunerd_slow_consumers_total{kind=\"events\"} %llu\n",
		(unsigned long long)ev.slow_consumers);
	fprintf(f, "tunerd_slow_consumers_total{kind=\"stream\"} %llu\n",
		(unsigned long long)slow_readers);
}

/* The tuners as rows, in the tuner table's order; NULL when none (or
 * out of memory, *n 0). */
static struct tuner_row *tuner_rows(struct net_api *net, size_t *n)
{
	struct tuner_row *rows;
	size_t i = 0;

	*n = 0;
	for (struct tuner *t = tuner_first(net->d); t; t = tuner_next(t))
		(*n)++;
	rows = *n ? calloc(*n, sizeof(*rows)) : NULL;
	if (!rows) {
		*n = 0;
		return NULL;
	}
	for (struct tuner *t = tuner_first(net->d); t && i < *n;
	     t = tuner_next(t), i++) {
		tuner_snapshot(t, &rows[i].s);
		if (net->streams)
			stream_hub_stats(net->streams, rows[i].s.id,
					 &rows[i].st);
		tuner_labels(rows[i].labels, sizeof(rows[i].labels), net->d,
			     &rows[i].s);
	}
	return rows;
}

enum MHD_Result rest_metrics_get(struct rest_req *r)
{
	struct tuner_row *rows;
	char *text = NULL;
	size_t n, len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return rest_error(r, 500, "internal", NULL, "out of memory");
	rows = tuner_rows(r->net, &n);
	box_families(f, r->net);
	tuner_families(f, rows, n);
	request_families(f, r->net->metrics);
	loss_families(f, r->net->d, rows, n);
	free(rows);
	if (fclose(f)) {
		free(text);
		return rest_error(r, 500, "internal", NULL, "out of memory");
	}
	return rest_reply_typed(r, 200, text, len,
				"text/plain; version=0.0.4; charset=utf-8");
}

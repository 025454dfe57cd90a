// SPDX-License-Identifier: MIT
/*
 * cmd_scan.c - `tunerctl scan`: start a channel scan on a tuner
 * (POST /api/v1/tuners/{id}/scan), follow it to its end and print the
 * channels it found.
 *
 * The scan is followed on the event stream, filtered to the tuner's scan
 * events and read from the sequence number the box had before the scan
 * began, so no event of it is missed however fast it goes.  The scan
 * object (GET .../scan) is the fallback: it is polled every second when
 * the event stream cannot be had or breaks, and every few seconds while
 * no event comes, so a lost event costs seconds, not the scan.  A scan
 * that makes no progress for SCAN_STALL_MS is given up.  Ctrl-C cancels
 * the scan on the box (DELETE .../scan).
 */
#include "channels.h"
#include "http.h"
#include "sse_reader.h"
#include "tunerctl.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define POLL_DEAD_MS   1000   /* without an event stream */
#define POLL_QUIET_MS  5000   /* with one that says nothing */
#define SCAN_STALL_MS  120000 /* no progress at all: give up */
#define MAX_EVENT_SIZE (64u << 10)

struct scan_follow {
	const struct ctl_opts *o;
	struct ctl_target t;
	char label[128];
	char id[64];
	uint64_t since;
	CURLM *multi;
	CURL *easy;
	struct curl_slist *headers;
	struct sse_parser sse;
	bool checked, streaming, sse_dead, finished;
	json_int_t done; /* frequencies done, as last seen */
	int64_t news_ms; /* the last sign of progress */
	int64_t poll_ms; /* the last poll of the scan object */
};

static volatile sig_atomic_t scan_stop;

static void scan_on_signal(int sig)
{
	(void)sig;
	scan_stop = 1;
}

static void progress_line(struct scan_follow *f, json_t *ev)
{
	json_t *freq = json_object_get(ev, "frequency");
	json_t *services = json_object_get(ev, "services");
	json_int_t total = json_integer_value(json_object_get(ev, "total"));
	char mhz[32];

	ctl_fmt_mhz((uint64_t)json_integer_value(freq), mhz, sizeof(mhz));
	fprintf(stderr, "%s: %s %3lld/%lld  %s MHz  %s", f->label, f->id,
		(long long)f->done, (long long)total, mhz,
		json_is_true(json_object_get(ev, "locked")) ? "lock"
							    : "no lock");
	if (json_is_integer(services))
		fprintf(stderr, "  %lld services",
			(long long)json_integer_value(services));
	fputc('\n', stderr);
}

static int on_sse(void *ctx, const char *id, const char *type, const char *data)
{
	struct scan_follow *f = ctx;
	json_t *ev = json_loads(data, 0, NULL);
	const char *scan = json_string_value(json_object_get(ev, "scan"));

	(void)id;
	if (scan && !strcmp(scan, f->id)) {
		f->news_ms = ctl_now_ms();
		if (!strcmp(type, "scan.progress")) {
			/* counted here: one event per frequency, none missed */
			f->done++;
			progress_line(f, ev);
		} else if (!strcmp(type, "scan.done")) {
			f->finished = true;
		}
	}
	json_decref(ev);
	return 0;
}

static size_t on_events(char *p, size_t size, size_t n, void *arg)
{
	struct scan_follow *f = arg;
	const char *ctype = NULL;
	long status = 0;

	if (!f->checked) {
		curl_easy_getinfo(f->easy, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_getinfo(f->easy, CURLINFO_CONTENT_TYPE, &ctype);
		f->checked = true;
		f->streaming = status == 200 && ctype &&
			       !strncasecmp(ctype, "text/event-stream", 17);
	}
	if (!f->streaming || sse_feed(&f->sse, p, size * n))
		return 0; /* not the event stream: end it, poll instead */
	return size * n;
}

static int start_events(struct scan_follow *f)
{
	char url[512];

	snprintf(url, sizeof(url),
		 "%s/api/v1/events?types=scan.*&tuner=%u&since=%" PRIu64,
		 f->t.box->url, f->t.id, f->since);
	f->easy = curl_easy_init();
	if (!f->easy ||
	    ctl_http_prepare(f->easy, &f->headers, f->t.box, f->o->timeout_ms))
		return -ENOMEM;
	f->headers = curl_slist_append(f->headers, "Accept: text/event-stream");
	if (!f->headers)
		return -ENOMEM;
	curl_easy_setopt(f->easy, CURLOPT_URL, url);
	curl_easy_setopt(f->easy, CURLOPT_HTTPHEADER, f->headers);
	curl_easy_setopt(f->easy, CURLOPT_WRITEFUNCTION, on_events);
	curl_easy_setopt(f->easy, CURLOPT_WRITEDATA, f);
	return curl_multi_add_handle(f->multi, f->easy) == CURLM_OK ? 0
								    : -ENOMEM;
}

static void stop_events(struct scan_follow *f)
{
	if (f->easy) {
		curl_multi_remove_handle(f->multi, f->easy);
		curl_easy_cleanup(f->easy);
	}
	curl_slist_free_all(f->headers);
	f->easy = NULL;
	f->headers = NULL;
}

/* GET .../scan; *scan is the object.  Returns an exit code. */
static int get_scan(struct scan_follow *f, json_t **scan)
{
	json_t *answer;
	int ret = ctl_tuner_request(&f->t, "GET", "/scan", NULL, f->o->lease,
				    f->o->timeout_ms, &answer);

	*scan = NULL;
	if (ret)
		return ret;
	*scan = json_incref(json_object_get(answer, "scan"));
	if (!*scan)
		*scan = json_incref(answer); /* the bare object */
	json_decref(answer);
	return CTL_EXIT_OK;
}

/* The fallback: the scan object says how far it is. */
static int poll_scan(struct scan_follow *f)
{
	json_t *scan;
	const char *state;
	json_int_t done;
	int ret = get_scan(f, &scan);

	f->poll_ms = ctl_now_ms();
	if (ret)
		return ret;
	state = json_string_value(json_object_get(scan, "state"));
	done = json_integer_value(json_object_get(scan, "done"));
	if (done != f->done) {
		f->news_ms = f->poll_ms;
		if (f->sse_dead)
			fprintf(stderr, "%s: %s %lld/%lld done\n", f->label,
				f->id, (long long)done,
				(long long)json_integer_value(
				    json_object_get(scan, "total")));
		f->done = done;
	}
	if (!state || strcmp(state, "running"))
		f->finished = true;
	json_decref(scan);
	return CTL_EXIT_OK;
}

/* Reads events (or polls) until the scan ends; an exit code. */
static int follow(struct scan_follow *f)
{
	int64_t now;
	int running, left, ret;
	CURLMsg *msg;

	while (!f->finished && !scan_stop) {
		curl_multi_perform(f->multi, &running);
		while ((msg = curl_multi_info_read(f->multi, &left))) {
			if (msg->msg == CURLMSG_DONE && !f->sse_dead) {
				f->sse_dead = true;
				ctl_err("%s: events: the stream ended; polling "
					"the scan instead",
					f->t.box->name);
			}
		}
		if (f->finished)
			break;
		now = ctl_now_ms();
		if (f->sse_dead ? now - f->poll_ms >= POLL_DEAD_MS
				: now - f->news_ms >= POLL_QUIET_MS &&
				      now - f->poll_ms >= POLL_QUIET_MS) {
			ret = poll_scan(f);
			if (ret)
				return ret;
		}
		if (now - f->news_ms >= SCAN_STALL_MS) {
			ctl_err("%s: %s made no progress for %d s", f->label,
				f->id, SCAN_STALL_MS / 1000);
			return CTL_EXIT_CONN;
		}
		curl_multi_poll(f->multi, NULL, 0, 250, NULL);
	}
	return CTL_EXIT_OK;
}

/* {"band","region"} or {"frequencies":[...],"delivery_system","bandwidth"} */
static json_t *scan_body(const struct ctl_opts *o)
{
	json_t *body = json_object(), *freqs;
	char *copy, *save = NULL, *tok, sys[32];
	uint64_t hz;
	size_t i;

	if (o->band) {
		json_object_set_new(body, "band", json_string(o->band));
		if (o->region)
			json_object_set_new(body, "region",
					    json_string(o->region));
		return body;
	}
	freqs = json_array();
	json_object_set_new(body, "frequencies", freqs);
	copy = strdup(o->freqs);
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (ctl_parse_hz(tok, &hz) || !hz || hz > INT64_MAX) {
			ctl_err("bad --freq '%s' (Hz, or with k/M/G: 474M)",
				tok);
			goto fail;
		}
		json_array_append_new(freqs, json_integer((json_int_t)hz));
	}
	if (!json_array_size(freqs)) {
		ctl_err("--freq needs frequencies: 474M,490M");
		goto fail;
	}
	for (i = 0; o->system && o->system[i] && i < sizeof(sys) - 1; i++)
		sys[i] = (char)toupper((unsigned char)o->system[i]);
	if (o->system) {
		sys[i] = '\0';
		json_object_set_new(body, "delivery_system", json_string(sys));
	}
	if (o->bandwidth) {
		if (ctl_parse_hz(o->bandwidth, &hz) || !hz || hz > INT64_MAX) {
			ctl_err("bad --bandwidth '%s' (Hz, or 8M)",
				o->bandwidth);
			goto fail;
		}
		json_object_set_new(body, "bandwidth",
				    json_integer((json_int_t)hz));
	}
	free(copy);
	return body;
fail:
	free(copy);
	json_decref(body);
	return NULL;
}

/* The box's event position now: the scan's events come after it. */
static int event_position(struct scan_follow *f)
{
	struct ctl_req req;
	json_t *box = NULL, *next;
	int ret;

	if (ctl_req_init(&req, f->t.box, "GET", "/api/v1/box", NULL,
			 f->o->timeout_ms)) {
		ctl_err("out of memory");
		return CTL_EXIT_API;
	}
	ctl_req_perform(&req);
	ret = ctl_req_check(&req);
	if (!ret && !(box = ctl_req_json(&req)))
		ret = CTL_EXIT_API;
	next = json_object_get(json_object_get(box, "events"), "next_seq");
	if (json_integer_value(next) > 0)
		f->since = (uint64_t)json_integer_value(next) - 1;
	json_decref(box);
	ctl_req_free(&req);
	return ret;
}

static int start_scan(struct scan_follow *f)
{
	json_t *body = scan_body(f->o), *answer, *scan;
	const char *id;
	int ret;

	if (!body)
		return CTL_EXIT_USAGE;
	ret = ctl_tuner_request(&f->t, "POST", "/scan", body, f->o->lease,
				f->o->timeout_ms, &answer);
	json_decref(body);
	if (ret)
		return ret;
	scan = json_object_get(answer, "scan");
	id = json_string_value(json_object_get(scan, "id"));
	if (!id) {
		ctl_err("%s: the answer names no scan", f->t.box->name);
		json_decref(answer);
		return CTL_EXIT_API;
	}
	snprintf(f->id, sizeof(f->id), "%s", id);
	fprintf(stderr, "%s: %s started: %lld frequencies\n", f->label, f->id,
		(long long)json_integer_value(json_object_get(scan, "total")));
	json_decref(answer);
	return CTL_EXIT_OK;
}

/* The finished scan: its channels, or why it did not finish. */
static int report(struct scan_follow *f)
{
	json_t *scan, *channels;
	const char *state, *msg;
	int ret = get_scan(f, &scan);

	if (ret)
		return ret;
	state = json_string_value(json_object_get(scan, "state"));
	channels = json_object_get(scan, "channels");
	if (!state || strcmp(state, "done")) {
		msg = json_string_value(json_object_get(scan, "message"));
		ctl_err("%s: %s %s%s%s", f->label, f->id, state ? state : "?",
			msg ? ": " : "", msg ? msg : "");
		ret = CTL_EXIT_API;
	} else if (f->o->json) {
		ctl_print_json(scan);
	} else {
		fprintf(stderr, "%s: %s done: %zu channels\n", f->label, f->id,
			json_array_size(channels));
		ctl_print_channels(json_is_array(channels) ? channels
							   : json_array());
	}
	json_decref(scan);
	return ret;
}

static void cancel(struct scan_follow *f)
{
	json_t *answer = NULL;

	if (!ctl_tuner_request(&f->t, "DELETE", "/scan", NULL, f->o->lease,
			       f->o->timeout_ms, &answer))
		ctl_err("%s: %s cancelled", f->label, f->id);
	json_decref(answer);
}

int ctl_cmd_scan(const struct ctl_boxes *boxes, const struct ctl_opts *o)
{
	struct scan_follow f = {.o = o};
	struct sigaction sa = {.sa_handler = scan_on_signal};
	int ret;

	if (ctl_target_parse(boxes, o->args[0], &f.t))
		return CTL_EXIT_USAGE;
	snprintf(f.label, sizeof(f.label), "%s:%u", f.t.box->name, f.t.id);
	sse_init(&f.sse, on_sse, &f, MAX_EVENT_SIZE);
	f.multi = curl_multi_init();
	ret = f.multi ? event_position(&f) : CTL_EXIT_API;
	if (ret || (ret = start_scan(&f)))
		goto out;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	f.news_ms = f.poll_ms = ctl_now_ms();
	if (start_events(&f)) {
		stop_events(&f);
		f.sse_dead = true;
	}
	ret = follow(&f);
	stop_events(&f);
	if (scan_stop) {
		cancel(&f);
		ret = CTL_EXIT_API;
	} else if (!ret) {
		ret = report(&f);
	}
out:
	stop_events(&f);
	sse_free(&f.sse);
	if (f.multi)
		curl_multi_cleanup(f.multi);
	return ret;
}

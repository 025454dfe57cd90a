// SPDX-License-Identifier: MIT
/*
 * watch.c - the merged live events of every box: one SSE transfer per box
 * in one curl multi.  A box that goes away is retried with backoff; before
 * resuming, GET /api/v1/box tells whether the box restarted (its event
 * numbers then begin again, so Last-Event-ID would skip them) or not (then
 * Last-Event-ID resumes after the last event seen, and a gap is reported by
 * the box if it no longer keeps some).
 */
#include "http.h"
#include "sse_reader.h"
#include "tunerctl.h"
#include "watch_print.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define BACKOFF_FIRST_MS 250
#define BACKOFF_MAX_MS   5000
#define MAX_ERROR_BODY   (64u << 10)
#define MAX_EVENT_BYTES  (1u << 20)
#define POLL_MS          200

enum wb_step { WB_IDLE, WB_PROBE, WB_STREAM, WB_DEAD };

struct watch;

struct watch_box {
	struct watch *w;
	const struct ctl_box *box;
	enum wb_step step; /* what runs now */
	enum wb_step next; /* what starts at retry_at when idle */
	int64_t retry_at;
	long backoff_ms;
	CURL *easy;
	struct curl_slist *headers;
	struct ctl_buf body; /* probe answer, or a refused stream's answer */
	struct sse_parser sse;
	bool streaming;
	bool down; /* the loss was reported; "reconnected" not yet */
	bool have_seq;
	uint64_t last_seq;
	bool have_since; /* after a restart: replay what the box kept */
	uint64_t since;
	int64_t lost_at;     /* when the last live stream ended */
	int64_t probe_start; /* when the last GET /api/v1/box went out */
	char errbuf[CURL_ERROR_SIZE];
};

struct watch {
	const struct ctl_opts *o;
	CURLM *multi;
	struct watch_box *boxes;
	size_t n;
	struct watch_printer printer;
	long printed;
	bool done;
	int exit_code;
};

static volatile sig_atomic_t watch_stop;

static void watch_on_signal(int sig)
{
	(void)sig;
	watch_stop = 1;
}

static void box_note(struct watch_box *b, const char *what)
{
	ctl_err("%s: events: %s", b->box->name, what);
}

static void schedule(struct watch_box *b, enum wb_step next, long delay_ms)
{
	b->step = WB_IDLE;
	b->next = next;
	b->retry_at = ctl_now_ms() + delay_ms;
}

/* Retry later, the delay doubling up to BACKOFF_MAX_MS, with some jitter
 * so boxes restarted together are not hit by every client at once. */
static void retry_later(struct watch_box *b, const char *why)
{
	long delay = b->backoff_ms + rand() % (b->backoff_ms / 4 + 1);
	char msg[CURL_ERROR_SIZE + 64];

	if (!b->down) {
		snprintf(msg, sizeof(msg), "%s; reconnecting", why);
		box_note(b, msg);
		b->down = true;
	}
	schedule(b, b->have_seq ? WB_PROBE : WB_STREAM, delay);
	b->backoff_ms = b->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS
							   : b->backoff_ms * 2;
}

static void give_up(struct watch_box *b, int code)
{
	b->step = WB_DEAD;
	if (!b->w->exit_code)
		b->w->exit_code = code;
}

/* tuner.status is a sample of values that other events already mark
 * when they matter (tuner.lock, tuner.tune): watch shows it when asked,
 * with --status or by naming it (or a pattern) in --types. */
static bool hidden_status(const struct ctl_opts *o, json_t *ev)
{
	const char *t = json_string_value(json_object_get(ev, "type"));

	return t && !strcmp(t, "tuner.status") && !o->status_events &&
	       !o->types;
}

/* One event or control message (gap, closed) from the box. */
static int on_sse(void *ctx, const char *id, const char *type, const char *data)
{
	struct watch_box *b = ctx;
	struct watch *w = b->w;
	json_t *ev;
	json_t *seqv;
	uint64_t seq;

	if (w->done)
		return 0;
	ev = json_loads(data, 0, NULL);
	if (!json_is_object(ev)) {
		json_decref(ev);
		box_note(b, "an event that is not a JSON object; skipped");
		return 0;
	}
	seqv = json_object_get(ev, "seq");
	if (json_is_integer(seqv) && json_integer_value(seqv) >= 0)
		seq = (uint64_t)json_integer_value(seqv);
	else if (!seqv && *id && strspn(id, "0123456789") == strlen(id))
		seq = strtoull(id, NULL, 10);
	else
		seq = UINT64_MAX; /* gap, closed: no place in the sequence */
	if (seq != UINT64_MAX && b->have_seq && seq <= b->last_seq) {
		json_decref(ev); /* seen before this reconnection */
		return 0;
	}
	if (hidden_status(w->o, ev)) {
		/* Not shown, but the place to resume from all the same. */
		if (seq != UINT64_MAX) {
			b->have_seq = true;
			b->last_seq = seq;
			b->have_since = false;
		}
		json_decref(ev);
		return 0;
	}
	if (watch_print_event(&w->printer, b->box->name, ev, type))
		w->done = true; /* stdout is gone */
	if (seq != UINT64_MAX) {
		b->have_seq = true;
		b->last_seq = seq;
		b->have_since = false;
		if (w->o->count > 0 && ++w->printed >= w->o->count)
			w->done = true;
	}
	json_decref(ev);
	return 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct watch_box *b = arg;
	const char *ctype = NULL;
	long status = 0;

	if (b->step != WB_STREAM || size * n > 2 ||
	    (n && p[0] != '\r' && p[0] != '\n'))
		return size * n;
	/* end of the headers: is this the event stream? */
	curl_easy_getinfo(b->easy, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(b->easy, CURLINFO_CONTENT_TYPE, &ctype);
	if (status == 200 && ctype &&
	    !strncasecmp(ctype, "text/event-stream", 17)) {
		b->streaming = true;
		b->backoff_ms =
		    b->sse.retry_ms > 0 ? b->sse.retry_ms : BACKOFF_FIRST_MS;
		sse_reset(&b->sse);
		if (b->down)
			box_note(b, "reconnected");
		b->down = false;
	}
	return size * n;
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct watch_box *b = arg;

	if (b->streaming) {
		if (sse_feed(&b->sse, p, size * n))
			return 0; /* an over-long line: reconnect */
		return size * n;
	}
	if (ctl_buf_append(&b->body, p, size * n))
		return 0;
	return size * n;
}

static int append_query(char *url, size_t n, const char *key, const char *value,
			CURL *easy)
{
	char *esc = curl_easy_escape(easy, value, 0);
	size_t len = strlen(url);

	if (!esc)
		return -ENOMEM;
	snprintf(url + len, n - len, "%c%s=%s", strchr(url, '?') ? '&' : '?',
		 key, esc);
	curl_free(esc);
	return 0;
}

static int stream_request(struct watch_box *b, char *url, size_t n)
{
	const struct ctl_opts *o = b->w->o;
	char hdr[64], since[24];

	snprintf(url, n, "%s/api/v1/events", b->box->url);
	if ((o->types && append_query(url, n, "types", o->types, b->easy)) ||
	    (o->tuners && append_query(url, n, "tuner", o->tuners, b->easy)))
		return -ENOMEM;
	if (b->have_since) {
		snprintf(since, sizeof(since), "%" PRIu64, b->since);
		if (append_query(url, n, "since", since, b->easy))
			return -ENOMEM;
	} else if (b->have_seq) {
		snprintf(hdr, sizeof(hdr), "Last-Event-ID: %" PRIu64,
			 b->last_seq);
		b->headers = curl_slist_append(b->headers, hdr);
	}
	b->headers = curl_slist_append(b->headers, "Accept: text/event-stream");
	b->headers = curl_slist_append(b->headers, "Cache-Control: no-cache");
	return b->headers ? 0 : -ENOMEM;
}

static int start_transfer(struct watch_box *b, enum wb_step step)
{
	char url[4096];
	long timeout = b->w->o->timeout_ms;

	b->easy = curl_easy_init();
	if (!b->easy || ctl_http_prepare(b->easy, &b->headers, b->box, timeout))
		return -ENOMEM;
	ctl_buf_reset(&b->body);
	b->streaming = false;
	b->errbuf[0] = '\0';
	b->step = step;
	if (step == WB_PROBE) {
		b->probe_start = ctl_now_ms();
		snprintf(url, sizeof(url), "%s/api/v1/box", b->box->url);
		curl_easy_setopt(b->easy, CURLOPT_TIMEOUT_MS, timeout);
		b->headers =
		    curl_slist_append(b->headers, "Accept: application/json");
		if (!b->headers)
			return -ENOMEM;
	} else if (stream_request(b, url, sizeof(url))) {
		return -ENOMEM;
	}
	curl_easy_setopt(b->easy, CURLOPT_URL, url);
	curl_easy_setopt(b->easy, CURLOPT_HTTPHEADER, b->headers);
	curl_easy_setopt(b->easy, CURLOPT_ERRORBUFFER, b->errbuf);
	curl_easy_setopt(b->easy, CURLOPT_PRIVATE, b);
	curl_easy_setopt(b->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(b->easy, CURLOPT_HEADERDATA, b);
	curl_easy_setopt(b->easy, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(b->easy, CURLOPT_WRITEDATA, b);
	if (curl_multi_add_handle(b->w->multi, b->easy) != CURLM_OK)
		return -ENOMEM;
	return 0;
}

static void end_transfer(struct watch_box *b)
{
	if (b->easy) {
		curl_multi_remove_handle(b->w->multi, b->easy);
		curl_easy_cleanup(b->easy);
	}
	curl_slist_free_all(b->headers);
	b->easy = NULL;
	b->headers = NULL;
}

/* A refused request: worth retrying (the box is busy or coming up) or not
 * (wrong token, wrong path: retrying cannot help). */
static void refused(struct watch_box *b, long status)
{
	char why[64];

	if (status == 429 || status >= 500) {
		snprintf(why, sizeof(why), "the box answered %ld", status);
		retry_later(b, why);
		return;
	}
	give_up(b, ctl_report_http_error(b->box, status, b->body.data,
					 b->body.len));
}

/*
 * Did the box restart since the stream broke?  Its numbering then began at
 * 1 again, so a next_seq at or below the last event seen tells; so does an
 * uptime (whole seconds, rounded down) shorter than the outage.
 */
static bool box_restarted(const struct watch_box *b, json_t *box)
{
	json_t *next =
	    json_object_get(json_object_get(box, "events"), "next_seq");
	json_t *up = json_object_get(box, "uptime_s");

	if (json_is_integer(next) &&
	    (uint64_t)json_integer_value(next) <= b->last_seq)
		return true;
	return json_is_integer(up) && (json_integer_value(up) + 1) * 1000 <
					  b->probe_start - b->lost_at;
}

/* Tells the reader that the numbering of this box begins again. */
static void print_restart(struct watch_box *b)
{
	json_t *msg = json_pack("{s:s,s:s}", "type", "restarted", "message",
				"the box restarted: its event numbers begin "
				"again");

	if (msg &&
	    watch_print_event(&b->w->printer, b->box->name, msg, "restarted"))
		b->w->done = true;
	json_decref(msg);
}

/* The box answered GET /api/v1/box: resume, or start over if it restarted
 * (then with the events it kept since). */
static void probe_done(struct watch_box *b)
{
	json_t *root =
	    json_loadb(b->body.data ? b->body.data : "", b->body.len, 0, NULL);
	json_t *oldest =
	    json_object_get(json_object_get(root, "events"), "oldest_seq");

	if (b->have_seq && box_restarted(b, root)) {
		print_restart(b);
		b->have_seq = false;
		b->have_since = json_integer_value(oldest) > 0;
		if (b->have_since)
			b->since = (uint64_t)json_integer_value(oldest) - 1;
	}
	json_decref(root);
	schedule(b, WB_STREAM, 0);
}

static void transfer_done(struct watch_box *b, CURLcode result)
{
	enum wb_step step = b->step;
	bool streamed = b->streaming;
	long status = 0;
	char why[CURL_ERROR_SIZE + 32];

	curl_easy_getinfo(b->easy, CURLINFO_RESPONSE_CODE, &status);
	snprintf(why, sizeof(why), "%s",
		 b->errbuf[0] ? b->errbuf : curl_easy_strerror(result));
	end_transfer(b);
	if (streamed)
		b->lost_at = ctl_now_ms();
	if (streamed || (result != CURLE_OK && status == 0)) {
		/* a live stream ended, or the box cannot be reached */
		retry_later(b, streamed ? "connection lost" : why);
		return;
	}
	if (result != CURLE_OK || status != 200) {
		if (result != CURLE_OK && status == 200)
			retry_later(b, why);
		else
			refused(b, status);
		return;
	}
	if (step == WB_PROBE) {
		probe_done(b);
	} else {
		box_note(b, "the answer is not an event stream");
		give_up(b, CTL_EXIT_API);
	}
}

static void start_due(struct watch *w)
{
	int64_t now = ctl_now_ms();
	size_t i;

	for (i = 0; i < w->n; i++) {
		struct watch_box *b = &w->boxes[i];

		if (b->step != WB_IDLE || b->retry_at > now)
			continue;
		if (start_transfer(b, b->next)) {
			end_transfer(b);
			ctl_err("out of memory");
			give_up(b, CTL_EXIT_API);
		}
	}
}

static void reap(struct watch *w)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(w->multi, &left))) {
		struct watch_box *b = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
				  (char **)&b);
		/* msg points into the handle: read it before the handle goes */
		transfer_done(b, msg->data.result);
	}
}

/* How long to wait for network activity: until the next retry is due. */
static int poll_timeout(const struct watch *w, bool *all_dead)
{
	int64_t now = ctl_now_ms(), wait = POLL_MS;
	size_t i;

	*all_dead = true;
	for (i = 0; i < w->n; i++) {
		const struct watch_box *b = &w->boxes[i];

		if (b->step != WB_DEAD)
			*all_dead = false;
		if (b->step == WB_IDLE && b->retry_at - now < wait)
			wait = b->retry_at - now > 0 ? b->retry_at - now : 0;
	}
	return (int)wait;
}

static void watch_loop(struct watch *w)
{
	bool all_dead = false;
	int running;

	while (!w->done && !watch_stop) {
		start_due(w);
		if (curl_multi_perform(w->multi, &running) != CURLM_OK) {
			ctl_err("events: curl multi failed");
			w->exit_code = CTL_EXIT_API;
			break;
		}
		reap(w);
		if (w->done)
			break;
		if (curl_multi_poll(w->multi, NULL, 0,
				    poll_timeout(w, &all_dead),
				    NULL) != CURLM_OK ||
		    all_dead)
			break;
	}
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watch_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int ctl_cmd_watch(const struct ctl_boxes *boxes, const struct ctl_opts *o)
{
	struct watch w = {.o = o, .n = boxes->n};
	size_t i;

	w.multi = curl_multi_init();
	w.boxes = calloc(boxes->n, sizeof(*w.boxes));
	if (!w.multi || !w.boxes) {
		ctl_err("out of memory");
		w.exit_code = CTL_EXIT_API;
		goto out;
	}
	watch_printer_init(&w.printer, o->json, ctl_box_label_width(boxes));
	for (i = 0; i < w.n; i++) {
		struct watch_box *b = &w.boxes[i];

		b->w = &w;
		b->box = &boxes->v[i];
		b->backoff_ms = BACKOFF_FIRST_MS;
		b->body.max = MAX_ERROR_BODY;
		sse_init(&b->sse, on_sse, b, MAX_EVENT_BYTES);
		schedule(b, WB_STREAM, 0);
	}
	/* jitter differs between clients started together */
	srand((unsigned int)getpid() ^ (unsigned int)ctl_now_ms());
	install_signals();
	watch_loop(&w);
out:
	for (i = 0; w.boxes && i < w.n; i++) {
		end_transfer(&w.boxes[i]);
		sse_free(&w.boxes[i].sse);
		ctl_buf_free(&w.boxes[i].body);
	}
	free(w.boxes);
	if (w.multi)
		curl_multi_cleanup(w.multi);
	return w.exit_code;
}

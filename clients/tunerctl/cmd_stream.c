// SPDX-License-Identifier: MIT
/*
 * cmd_stream.c - `tunerctl stream`: a tuner's MPEG transport stream
 * (GET /api/v1/tuners/{id}/stream) to stdout, with a rate line on stderr.
 *
 * The stream never ends by itself, so it runs until Ctrl-C/SIGTERM,
 * --duration or a closed stdout (a player or `head` that has enough), all
 * of which are a normal end (exit 0).  The box closing it is not: a
 * recorder must learn that its recording is cut (exit 3).  The bytes go to
 * stdout with write(2) as curl hands them over, without stdio's buffer in
 * between, so a player reading a pipe gets each piece at once; a page a
 * write costs about 750 poll+write pairs a second at 24 Mbit/s, nothing
 * beside the network side.
 */
#include "http.h"
#include "tunerctl.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Refresh of the rate line: a terminal line is redrawn in place, a log
 * (--progress into a file or pipe) gets a new line each time. */
#define RATE_TTY_MS    500
#define RATE_LOG_MS    5000
#define MAX_ERROR_BODY (64u << 10)
#define STOP_CHECK_MS  200
#define WRITE_CHUNK    4096

enum stream_end { END_NONE, END_STOPPED, END_STDOUT, END_WRITE, END_NO_HEAD };

struct stream_run {
	const struct ctl_opts *o;
	char label[128];
	CURL *easy;
	bool checked; /* the response code is known */
	bool ok;      /* ... and it is 200 */
	struct ctl_buf err;
	uint64_t bytes;
	int64_t start_ms;
	int64_t rate_ms; /* the last rate line */
	uint64_t rate_bytes;
	bool show_rate;
	bool tty;
	enum stream_end end;
	int write_errno;
};

static volatile sig_atomic_t stream_stop;

static void stream_on_signal(int sig)
{
	(void)sig;
	stream_stop = 1;
}

/*
 * Returns 0, -errno, or -EINTR when a signal asked to stop.  A reader that
 * stopped reading (a paused player) must not keep tunerctl in a blocked
 * write past Ctrl-C, and a signal may come just before a write: so each
 * write waits in poll() with a timeout first, and writes at most a page,
 * which a pipe or socket that polls writable takes without blocking.
 */
static int write_all(const char *p, size_t n)
{
	struct pollfd pfd = {.fd = STDOUT_FILENO, .events = POLLOUT};
	ssize_t w;
	int ready;

	while (n) {
		if (stream_stop)
			return -EINTR;
		ready = poll(&pfd, 1, STOP_CHECK_MS);
		if (ready < 0 && errno != EINTR)
			return -errno;
		if (ready <= 0)
			continue;
		w = write(STDOUT_FILENO, p, n < WRITE_CHUNK ? n : WRITE_CHUNK);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct stream_run *s = arg;
	long status = 0;
	int ret;

	if (!s->checked) {
		curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
		s->checked = true;
		s->ok = status == 200;
	}
	if (!s->ok) {
		/* an error answer: kept for the message, bounded */
		ctl_buf_append(&s->err, p, size * n);
		return size * n;
	}
	ret = write_all(p, size * n);
	if (ret) {
		s->end = ret == -EPIPE   ? END_STDOUT
			 : ret == -EINTR ? END_STOPPED
					 : END_WRITE;
		s->write_errno = -ret;
		return 0;
	}
	s->bytes += size * n;
	return size * n;
}

/* "24.13 Mbit/s  15.09 MB  0:05" after the label. */
static void print_rate(struct stream_run *s, int64_t now, bool last)
{
	int64_t span = now - s->rate_ms;
	int64_t secs = (now - s->start_ms) / 1000;
	double mbps;

	/* the last line gives the average over the whole stream */
	if (last)
		span = now - s->start_ms;
	mbps =
	    span > 0
		? (double)((last ? s->bytes : s->bytes - s->rate_bytes) * 8) /
		      ((double)span * 1000.0)
		: 0.0;
	fprintf(stderr, "%s%s  %7.2f Mbit/s  %10.2f MB  %" PRId64 ":%02d%s%s",
		s->tty ? "\r" : "", s->label, mbps, (double)s->bytes / 1e6,
		secs / 60, (int)(secs % 60), last ? " (average)" : "",
		s->tty && !last ? "\033[K" : "\n");
	fflush(stderr);
	s->rate_ms = now;
	s->rate_bytes = s->bytes;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct stream_run *s = arg;
	int64_t now = ctl_now_ms();
	long status = 0;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	if (stream_stop ||
	    (s->o->duration_ms > 0 && now - s->start_ms >= s->o->duration_ms)) {
		s->end = END_STOPPED;
		return 1;
	}
	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status == 200)
		s->ok = true; /* a tuner without lock: 200 and no bytes yet */
	if (!status && now - s->start_ms >= s->o->timeout_ms) {
		s->end = END_NO_HEAD; /* connected, but no answer */
		return 1;
	}
	if (s->show_rate && s->ok &&
	    now - s->rate_ms >= (s->tty ? RATE_TTY_MS : RATE_LOG_MS))
		print_rate(s, now, false);
	return 0;
}

/* The URL with the query of --pids / --service. */
static int stream_url(const struct ctl_target *t, const struct ctl_opts *o,
		      CURL *easy, char *url, size_t n)
{
	char *esc = NULL;
	int len;

	if (o->pids && !(esc = curl_easy_escape(easy, o->pids, 0)))
		return -ENOMEM;
	len =
	    snprintf(url, n, "%s/api/v1/tuners/%u/stream", t->box->url, t->id);
	if (esc)
		len += snprintf(url + len, n - (size_t)len, "?pids=%s", esc);
	else if (o->service >= 0)
		len += snprintf(url + len, n - (size_t)len, "?service=%ld",
				o->service);
	curl_free(esc);
	return len < (int)n ? 0 : -ENAMETOOLONG;
}

static int stream_setup(struct stream_run *s, const struct ctl_target *t,
			struct curl_slist **headers)
{
	char url[4096], hdr[160];

	s->easy = curl_easy_init();
	if (!s->easy ||
	    ctl_http_prepare(s->easy, headers, t->box, s->o->timeout_ms) ||
	    stream_url(t, s->o, s->easy, url, sizeof(url)))
		return -ENOMEM;
	if (s->o->lease) {
		snprintf(hdr, sizeof(hdr), "X-Tunerd-Lease: %s", s->o->lease);
		*headers = curl_slist_append(*headers, hdr);
		if (!*headers)
			return -ENOMEM;
	}
	curl_easy_setopt(s->easy, CURLOPT_URL, url);
	curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, *headers);
	curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(s->easy, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(s->easy, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(s->easy, CURLOPT_XFERINFODATA, s);
	/* a big receive buffer: fewer, larger writes at multiplex rates */
	curl_easy_setopt(s->easy, CURLOPT_BUFFERSIZE, 512L * 1024);
	return 0;
}

/* How the transfer ended, as an exit code with its message. */
static int stream_outcome(struct stream_run *s, const struct ctl_box *box,
			  CURLcode res)
{
	long status = 0;

	curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
	if (s->end == END_NO_HEAD) {
		ctl_err("%s: no answer within %ld ms", box->name,
			s->o->timeout_ms);
		return CTL_EXIT_CONN;
	}
	if (status && status != 200)
		return ctl_report_http_error(box, status, s->err.data,
					     s->err.len);
	if (s->end == END_STOPPED || s->end == END_STDOUT)
		return CTL_EXIT_OK;
	if (s->end == END_WRITE) {
		ctl_err("stdout: %s", strerror(s->write_errno));
		return CTL_EXIT_API;
	}
	if (res != CURLE_OK && !status) {
		ctl_err("%s: %s", box->name, curl_easy_strerror(res));
		return CTL_EXIT_CONN;
	}
	ctl_err("%s: the box ended the stream after %" PRIu64 " bytes (its "
		"stream.stop event says why)",
		box->name, s->bytes);
	return CTL_EXIT_CONN;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stream_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int ctl_cmd_stream(const struct ctl_boxes *boxes, const struct ctl_opts *o)
{
	struct stream_run s = {.o = o, .err = {.max = MAX_ERROR_BODY}};
	struct curl_slist *headers = NULL;
	struct ctl_target t;
	CURLcode res;
	int ret;

	if (ctl_target_parse(boxes, o->args[0], &t))
		return CTL_EXIT_USAGE;
	if (isatty(STDOUT_FILENO)) {
		ctl_err("stdout is a terminal: redirect it (> file.ts) or "
			"pipe it to a player (| ffplay -)");
		return CTL_EXIT_USAGE;
	}
	snprintf(s.label, sizeof(s.label), "%s:%u", t.box->name, t.id);
	s.tty = isatty(STDERR_FILENO);
	s.show_rate = s.tty || o->progress;
	if (stream_setup(&s, &t, &headers)) {
		ctl_err("out of memory");
		ret = CTL_EXIT_API;
		goto out;
	}
	install_signals();
	s.start_ms = s.rate_ms = ctl_now_ms();
	res = curl_easy_perform(s.easy);
	if (s.show_rate && s.ok)
		print_rate(&s, ctl_now_ms(), true);
	ret = stream_outcome(&s, t.box, res);
out:
	if (s.easy)
		curl_easy_cleanup(s.easy);
	curl_slist_free_all(headers);
	ctl_buf_free(&s.err);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * bench_fanout's children (bench_fanout.h): the N WebSocket subscribers
 * of one side, all in one libwebsockets client context with its own poll
 * loop (the same program for both sides), and the REST prober, a libcurl
 * client on one kept-alive connection.
 *
 * A subscriber stamps each message with CLOCK_MONOTONIC on its receipt
 * against the publication time it carries: "t_ns" for the one-at-a-time
 * rounds, "l_ns" for the events of the load phase.  Messages are
 * reassembled from lws's fragments first: under load a batch of frames
 * can end in the middle of one.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_fanout.h"
#include "bench_proc.h"

#define EVENTS_QUERY "/api/v1/events?types=bench.*"
#define LOAD_SAMPLES (8 * 1000 * 1000)
#define CTL_POLL_MS  10
#define SUB_FAILED   2
/* lws reads a client's socket this much at a time: a server's batch in
 * one read, or the clients, not the server, set the pace under load. */
#define SUB_RX_BUF (64 * 1024)

void fanout_percentiles(uint64_t *ns, long n, struct fanout_result *r)
{
	qsort(ns, (size_t)n, sizeof(uint64_t), bench_cmp_u64);
	r->ok = 1;
	r->n = n;
	r->p50 = n ? (double)ns[n / 2] / 1000.0 : 0;
	r->p99 = n ? (double)ns[n * 99 / 100] / 1000.0 : 0;
	r->max = n ? (double)ns[n - 1] / 1000.0 : 0;
}

int fanout_send_result(int ctl, char tag, const struct fanout_result *r)
{
	char buf[1 + sizeof(*r)];

	/* One write: the parent reads the tag and the figures together. */
	buf[0] = tag;
	memcpy(buf + 1, r, sizeof(*r));
	return write(ctl, buf, sizeof(buf)) == (ssize_t)sizeof(buf) ? 0 : -1;
}

/* ---- the subscribers ---- */

struct sub_conn {
	size_t len;
	int too_big;
	uint64_t load_got; /* "l_ns" events */
	char buf[FANOUT_MSG_MAX];
};

struct subs {
	const struct fanout_args *a;
	struct lws_context *ctx;
	int ctl;
	int established, failed, closed;
	int got, rounds;
	uint64_t *ns, *lns;
	long nns, nlns;
	int load, quit;
	uint64_t load_open_got; /* the open subscribers' "l_ns" events */
	uint64_t drain_each;    /* 'Q': the load's events, each */
	uint64_t drain_until;   /* 0: not draining */
};

static struct subs U;

static void send_result(char tag, uint64_t *ns, long n)
{
	struct fanout_result r;

	fanout_percentiles(ns, n, &r);
	r.closed = U.closed;
	if (fanout_send_result(U.ctl, tag, &r))
		U.quit = 1;
}

static void round_done(void)
{
	U.got = 0;
	if (++U.rounds == FANOUT_WARMUP_ROUNDS + U.a->rounds) {
		send_result('Z', U.ns, U.nns);
		U.rounds = 0;
		U.nns = 0;
	}
	if (write(U.ctl, "A", 1) != 1)
		U.quit = 1;
}

/* A load event counts whenever it comes: the first may come before the
 * parent's 'L' is read. */
static void note_message(struct sub_conn *sc, const char *msg, size_t len)
{
	uint64_t t = bench_now_ns();
	const char *p;

	if ((p = memmem(msg, len, "\"l_ns\":", 7))) {
		if (U.nlns < LOAD_SAMPLES)
			U.lns[U.nlns++] = t - strtoull(p + 7, NULL, 10);
		sc->load_got++;
		U.load_open_got++;
		return;
	}
	if (!(p = memmem(msg, len, "\"t_ns\":", 7)))
		return;
	if (U.rounds >= FANOUT_WARMUP_ROUNDS)
		U.ns[U.nns++] = t - strtoull(p + 7, NULL, 10);
	if (++U.got == U.a->subs)
		round_done();
}

static void sub_receive(struct lws *wsi, struct sub_conn *sc, const void *in,
			size_t len)
{
	if (lws_is_first_fragment(wsi)) {
		sc->len = 0;
		sc->too_big = 0;
	}
	if (sc->len + len >= sizeof(sc->buf))
		sc->too_big = 1;
	else {
		memcpy(sc->buf + sc->len, in, len);
		sc->len += len;
	}
	if (lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi) &&
	    !sc->too_big)
		note_message(sc, sc->buf, sc->len);
}

static int sub_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user,
		  void *in, size_t len)
{
	switch (reason) {
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		U.established++;
		break;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		U.failed++;
		break;
	case LWS_CALLBACK_CLIENT_CLOSED:
		U.closed++;
		if (user)
			U.load_open_got -= ((struct sub_conn *)user)->load_got;
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		sub_receive(wsi, user, in, len);
		break;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols sub_protocols[] = {
    {"tunerd.v1", sub_cb, sizeof(struct sub_conn), SUB_RX_BUF, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void subs_connect(int port)
{
	struct lws_client_connect_info ci;

	for (int i = 0; i < U.a->subs; i++) {
		memset(&ci, 0, sizeof(ci));
		ci.context = U.ctx;
		ci.address = "127.0.0.1";
		ci.port = port;
		ci.path = EVENTS_QUERY;
		ci.host = "127.0.0.1";
		ci.origin = "127.0.0.1";
		ci.protocol = "tunerd.v1";
		if (!lws_client_connect_via_info(&ci))
			U.failed++;
	}
}

/* Every open subscriber has the load's events, or the bound passed. */
static void subs_drain(void)
{
	uint64_t open = (uint64_t)(U.established - U.closed);

	if (!U.drain_until || (U.load_open_got < U.drain_each * open &&
			       bench_now_ns() < U.drain_until))
		return;
	send_result('Y', U.lns, U.nlns);
	U.quit = 1;
}

/* The parent's word, without waiting for it. */
static void subs_control(void)
{
	char c;

	if (recv(U.ctl, &c, 1, MSG_DONTWAIT) != 1)
		return;
	if (c == 'L') {
		U.load = 1;
	} else if (c == 'Q') {
		/* Sent with its count in one write: it is there. */
		if (recv(U.ctl, &U.drain_each, sizeof(U.drain_each),
			 MSG_WAITALL) != (ssize_t)sizeof(U.drain_each))
			U.drain_each = 0;
		U.drain_until = bench_now_ns() + FANOUT_DRAIN_MS * 1000000ull;
	}
}

int fanout_subscribers_main(const struct fanout_args *a, int ctl, int port)
{
	struct lws_context_creation_info info;
	int closed;

	U.a = a;
	U.ctl = ctl;
	U.ns = calloc((size_t)a->subs * (size_t)a->rounds, sizeof(uint64_t));
	U.lns = calloc(LOAD_SAMPLES, sizeof(uint64_t));
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = sub_protocols;
	info.gid = -1;
	info.uid = -1;
	if (getenv("FANOUT_LWS_LOG"))
		lws_set_log_level(atoi(getenv("FANOUT_LWS_LOG")),
				  lwsl_emit_stderr);
	U.ctx = lws_create_context(&info);
	if (!U.ctx || !U.ns || !U.lns)
		return 1;
	subs_connect(port);
	while (U.established + U.failed < a->subs)
		lws_service(U.ctx, 100);
	if (U.failed) {
		fprintf(stderr, "bench_fanout: %d of %d subscribers failed\n",
			U.failed, a->subs);
		return SUB_FAILED;
	}
	if (write(ctl, "R", 1) != 1)
		return 1;
	/* A close before the load phase fails the run; under load it is
	 * the server's verdict (slow consumer), and reported. */
	while (!U.quit && !(U.closed && !U.load)) {
		lws_service(U.ctx, CTL_POLL_MS);
		subs_control();
		subs_drain();
	}
	closed = U.closed && !U.load; /* before the destroy closes the rest */
	if (closed)
		fprintf(stderr,
			"bench_fanout: %d subscribers of port %d were closed "
			"(round %d)\n",
			U.closed, port, U.rounds);
	lws_context_destroy(U.ctx);
	return closed ? 1 : 0;
}

/* ---- the REST prober ---- */

static size_t discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/* a->probes GET /api/v1/tuners one after another; -1 when one failed. */
static int probe(CURL *h, const struct fanout_args *a, uint64_t *ns)
{
	for (int i = 0; i < a->probes; i++) {
		uint64_t t0 = bench_now_ns();
		long code = 0;

		if (curl_easy_perform(h) != CURLE_OK)
			return -1;
		ns[i] = bench_now_ns() - t0;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		if (code != 200)
			return -1;
		usleep((useconds_t)a->probe_us);
	}
	return 0;
}

int fanout_prober_main(const struct fanout_args *a, int ctl, int port)
{
	uint64_t *ns = calloc((size_t)a->probes, sizeof(uint64_t));
	CURL *h = curl_easy_init();
	char url[64], c;

	if (!ns || !h)
		return 1;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners", port);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	while (read(ctl, &c, 1) == 1 && c == 'P') {
		struct fanout_result r = {0};

		if (probe(h, a, ns) == 0)
			fanout_percentiles(ns, a->probes, &r);
		if (fanout_send_result(ctl, 'Y', &r))
			break;
	}
	curl_easy_cleanup(h);
	free(ns);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * The event subscribers of one process: `count` libwebsockets client
 * connections to /api/v1/events, unfiltered, each checking that the seq
 * numbers it gets follow one another.
 *
 * Every subscriber starts with since=<the seq before the load>, so each
 * must see exactly since+1, since+2, ... up to the last event the parent
 * names at the end.  A jump is a hole unless a gap message announced it
 * (events.md: "events from..to are lost for this client"): a told loss is
 * counted apart from a silent one.  A subscriber the daemon drops as slow
 * gets a {"type":"closed","reason":"slow_consumer"} message first; it is
 * counted, and the subscriber comes back with since=<last seq seen>, as
 * events.md tells clients to, so its sequence goes on being checked.  A
 * close without that message while the load runs is a failure.
 *
 * The seq is found with a plain search for "seq": in the event text: the
 * envelope is the only place the key occurs (events.md), and a JSON parse
 * of each of a few hundred thousand messages a second would make this
 * process the slow consumer.  Messages without a seq (gap, closed) are
 * rare and parsed with jansson.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "soak.h"

#define SUB_RX_CHUNK      16384
#define SUB_MSG_MAX       (256 * 1024)
#define SUB_RETRY_MS      1000
#define SUB_COMEBACK_MS   200
#define SUB_SERVICE_MS    50
#define SUB_PATH_MAX      96
#define SUB_LAG_EVERY     8
#define SUB_FINISH_MAX_MS (10 * 60 * 1000)

struct sub {
	int index;
	struct lws *wsi;
	int open;
	int told;         /* a closed message came on this connection */
	int counted;      /* its first attempt is answered */
	uint64_t expect;  /* the seq due next */
	uint64_t redo_at; /* when to connect again (0: not waiting) */
	unsigned lag_tick;
	uint32_t lag_last; /* ms, of the last event sampled */
	char *msg;         /* the message being reassembled */
	size_t len, cap;
	struct soak_sub_result r;
};

struct subs {
	const struct soak_opts *o;
	struct lws_context *ctx;
	struct sub *s;
	int count, first;
	int answered; /* first attempts established or failed */
	int finishing;
};

static struct subs G;

/* The parent waits until every subscriber's first attempt is answered. */
static void first_answer(struct sub *s)
{
	if (!s->counted) {
		s->counted = 1;
		G.answered++;
	}
}

static void sub_connect(struct sub *s)
{
	struct lws_client_connect_info ci;
	char path[SUB_PATH_MAX];

	/* since = the last seq seen: resume right after it */
	snprintf(path, sizeof(path), "/api/v1/events?since=%llu",
		 (unsigned long long)(s->expect - 1));
	memset(&ci, 0, sizeof(ci));
	ci.context = G.ctx;
	ci.address = G.o->host;
	ci.port = G.o->port;
	ci.path = path;
	ci.host = G.o->host;
	ci.origin = G.o->host;
	ci.protocol = "tunerd.v1";
	ci.opaque_user_data = s;
	s->redo_at = 0;
	s->told = 0;
	if (!lws_client_connect_via_info(&ci)) {
		first_answer(s);
		s->r.connect_fail++;
		s->redo_at = soak_now_ms() + SUB_RETRY_MS;
	}
}

/* A gap message: from..to are lost; the stream goes on with to + 1. */
static void on_gap(struct sub *s, json_t *m)
{
	json_int_t from = json_integer_value(json_object_get(m, "from"));
	json_int_t to = json_integer_value(json_object_get(m, "to"));

	s->r.gap_msgs++;
	if (to < from || (uint64_t)from != s->expect) {
		s->r.holes++; /* the gap does not start where we were */
		fprintf(stderr,
			"soak: subscriber %d: gap %lld..%lld, expected %llu\n",
			s->index, (long long)from, (long long)to,
			(unsigned long long)s->expect);
	}
	if (to >= from && (uint64_t)to >= s->expect) {
		s->r.gap_lost += (uint64_t)(to - (json_int_t)s->expect + 1);
		s->expect = (uint64_t)to + 1;
	}
}

static void on_stream_message(struct sub *s, const char *text, size_t len)
{
	json_error_t err;
	json_t *m = json_loadb(text, len, 0, &err);
	const char *type = json_string_value(json_object_get(m, "type"));

	if (type && !strcmp(type, "gap")) {
		on_gap(s, m);
	} else if (type && !strcmp(type, "closed")) {
		const char *why =
		    json_string_value(json_object_get(m, "reason"));

		s->told = why && !strcmp(why, "slow_consumer");
	} else {
		fprintf(stderr, "soak: subscriber %d: unexpected %.*s\n",
			s->index, (int)(len > 200 ? 200 : len), text);
	}
	json_decref(m);
}

static void on_event(struct sub *s, uint64_t seq)
{
	if (seq < s->expect) {
		s->r.dups++;
		return;
	}
	if (seq > s->expect) {
		s->r.holes++;
		fprintf(stderr,
			"soak: subscriber %d: seq %llu after %llu, no gap "
			"message\n",
			s->index, (unsigned long long)seq,
			(unsigned long long)(s->expect - 1));
	}
	if (!s->r.first_seq)
		s->r.first_seq = seq;
	s->r.last_seq = seq;
	s->r.events++;
	s->expect = seq + 1;
}

/* Milliseconds since midnight UTC, of now and of an event's "time"
 * (RFC 3339 UTC with milliseconds, events.md). */
static long day_ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long)(ts.tv_sec % 86400) * 1000 + ts.tv_nsec / 1000000;
}

static long day_ms_of(const char *text, size_t len)
{
	const char *p = memmem(text, len, "\"time\":\"", 8);
	int h, m, sec, ms;

	if (!p || (size_t)(p - text) + 8 + 24 > len ||
	    sscanf(p + 8 + 11, "%2d:%2d:%2d.%3d", &h, &m, &sec, &ms) != 4)
		return -1;
	return ((h * 60L + m) * 60 + sec) * 1000 + ms;
}

/* How late an event arrives: one in SUB_LAG_EVERY, and the last one
 * before a slow_consumer message, so a drop can be told apart: a client
 * that was behind, or a burst the daemon published faster than it
 * wrote. */
static void note_lag(struct sub *s, const char *text, size_t len)
{
	long t = day_ms_of(text, len), lag;

	if (t < 0)
		return;
	lag = (day_ms_now() - t + 86400000L) % 86400000L;
	s->lag_last = (uint32_t)lag;
	if (lag > (long)s->r.lag_ms_max)
		s->r.lag_ms_max = (uint32_t)lag;
}

static void on_message(struct sub *s, const char *text, size_t len)
{
	const char *p = memmem(text, len, "\"seq\":", 6);

	if (!p) {
		if (memmem(text, len, "slow_consumer", 13) &&
		    s->lag_last > s->r.lag_at_drop)
			s->r.lag_at_drop = s->lag_last;
		on_stream_message(s, text, len);
		return;
	}
	if (++s->lag_tick % SUB_LAG_EVERY == 0)
		note_lag(s, text, len);
	on_event(s, strtoull(p + 6, NULL, 10));
}

/* lws hands a message over in pieces of at most SUB_RX_CHUNK bytes. */
static int on_receive(struct sub *s, struct lws *wsi, const char *in,
		      size_t len)
{
	if (s->len + len > SUB_MSG_MAX)
		return -1;
	if (s->len + len > s->cap) {
		size_t cap = s->len + len + SUB_RX_CHUNK;
		char *m = realloc(s->msg, cap);

		if (!m)
			return -1;
		s->msg = m;
		s->cap = cap;
	}
	memcpy(s->msg + s->len, in, len);
	s->len += len;
	if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi))
		return 0;
	on_message(s, s->msg, s->len);
	s->len = 0;
	return 0;
}

static void on_closed(struct sub *s)
{
	s->open = 0;
	s->wsi = NULL;
	s->len = 0;
	if (s->told)
		s->r.told_slow++;
	else if (!G.finishing)
		s->r.untold_close++;
	s->r.reconnects++;
	s->redo_at = soak_now_ms() + SUB_COMEBACK_MS;
}

static void on_connect_error(struct sub *s, const char *why)
{
	first_answer(s);
	s->r.connect_fail++;
	if (s->r.connect_fail <= 3)
		fprintf(stderr, "soak: subscriber %d: connection refused: %s\n",
			s->index, why ? why : "?");
	s->wsi = NULL;
	s->redo_at = soak_now_ms() + SUB_RETRY_MS;
}

static int client_cb(struct lws *wsi, enum lws_callback_reasons reason,
		     void *user, void *in, size_t len)
{
	struct sub *s = lws_get_opaque_user_data(wsi);

	(void)user;
	if (!s)
		return 0;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		first_answer(s);
		s->wsi = wsi;
		s->open = 1;
		break;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		on_connect_error(s, in);
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		return on_receive(s, wsi, in, len);
	case LWS_CALLBACK_CLIENT_CLOSED:
		on_closed(s);
		break;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols protocols[] = {
    {"tunerd.v1", client_cb, 0, SUB_RX_CHUNK, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void reconnect_due(uint64_t now)
{
	for (int i = 0; i < G.count; i++)
		if (G.s[i].redo_at && now >= G.s[i].redo_at)
			sub_connect(&G.s[i]);
}

/* 1 when every subscriber has `last`; *progress: the sum of their
 * positions, which moves as long as one of them reads. */
static int all_reached(uint64_t last, uint64_t *progress)
{
	int all = 1;

	*progress = 0;
	for (int i = 0; i < G.count; i++) {
		*progress += G.s[i].expect;
		all &= G.s[i].expect > last;
	}
	return all;
}

/* The parent's command, if one came: 1 with *last set on FINISH. */
static int poll_ctl(int ctl, uint64_t *last)
{
	char c;
	ssize_t n = read(ctl, &c, 1);

	if (n == 0)
		return -1; /* the parent is gone */
	if (n < 0)
		return errno == EAGAIN ? 0 : -1;
	if (c != SOAK_CMD_FINISH)
		return 0;
	if (soak_read_all(ctl, last, sizeof(*last)))
		return -1;
	return 1;
}

/* Runs until told to finish, then until every subscriber saw `last`, or
 * none of those short of it moved for finish_ms (stuck), or
 * SUB_FINISH_MAX_MS passed: a subscriber that fell far behind on a
 * loaded machine holds minutes of events in its socket buffers, and
 * reading them is not the daemon's failure. */
static int run(int ctl)
{
	uint64_t last = 0, end_by = 0, cap = 0, progress = 0, seen = 0;
	int ret = 0;

	while (!end_by || soak_now_ms() < end_by) {
		lws_service(G.ctx, SUB_SERVICE_MS);
		reconnect_due(soak_now_ms());
		if (!end_by && G.answered == G.count && ctl >= 0) {
			char ready = SOAK_READY;

			if (soak_write_all(ctl, &ready, 1))
				return -1;
			G.answered = G.count + 1; /* said once */
		}
		if (!end_by) {
			ret = poll_ctl(ctl, &last);
			if (ret < 0)
				return -1;
			if (ret == 1) {
				G.finishing = 1;
				cap = soak_now_ms() + SUB_FINISH_MAX_MS;
				end_by =
				    soak_now_ms() + (uint64_t)G.o->finish_ms;
			}
		}
		if (end_by && all_reached(last, &progress))
			break;
		if (end_by && progress != seen) {
			seen = progress;
			end_by = soak_now_ms() + (uint64_t)G.o->finish_ms;
			end_by = end_by < cap ? end_by : cap;
		}
	}
	for (int i = 0; i < G.count; i++) {
		G.s[i].r.open_at_end = (uint8_t)G.s[i].open;
		G.s[i].r.reached_end = G.s[i].expect > last;
	}
	return 0;
}

int soak_subs_main(const struct soak_opts *o, int ctl, int first, int count,
		   uint64_t since)
{
	struct lws_context_creation_info info;
	int ret = 1;

	G.o = o;
	G.first = first;
	G.count = count;
	G.s = calloc((size_t)count, sizeof(*G.s));
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.gid = -1;
	info.uid = -1;
	lws_set_log_level(LLL_ERR, NULL);
	G.ctx = G.s ? lws_create_context(&info) : NULL;
	if (!G.ctx)
		return 1;
	for (int i = 0; i < count; i++) {
		G.s[i].index = first + i;
		G.s[i].expect = since + 1;
		sub_connect(&G.s[i]);
	}
	if (run(ctl) == 0) {
		char z = 'Z';
		struct soak_sub_result *r = calloc((size_t)count, sizeof(*r));

		for (int i = 0; r && i < count; i++)
			r[i] = G.s[i].r;
		ret = !r || soak_write_all(ctl, &z, 1) ||
		      soak_write_all(ctl, r, (size_t)count * sizeof(*r));
		free(r);
	}
	G.finishing = 1;
	lws_context_destroy(G.ctx);
	for (int i = 0; i < count; i++)
		free(G.s[i].msg);
	free(G.s);
	return ret;
}

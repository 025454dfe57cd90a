// SPDX-License-Identifier: MIT
/*
 * test_tunerctl_parse.c - tunerctl's frequency and duration parsing, MHz
 * formatting and the text/event-stream parser fed in every chunking.
 */
#include "check.h"
#include "sse_reader.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void test_hz(void)
{
	static const struct {
		const char *in;
		uint64_t hz;
	} good[] = {
	    {"474000000", 474000000}, {"474M", 474000000},
	    {"474.25M", 474250000},   {"474.015625MHz", 474015625},
	    {"88.8m", 88800000},      {"200k", 200000},
	    {"6.9M", 6900000},        {"1.5G", 1500000000},
	    {"0.000001G", 1000},      {"12.5kHz", 12500},
	    {"100hz", 100},           {"18446744073709551615", UINT64_MAX},
	};
	static const char *const bad[] = {
	    "",
	    "M",
	    "474x",
	    "-474M",
	    "474.0000001M",
	    "1.5",
	    "4 74M",
	    "474MM",
	    ".",
	    "0.5Hz",
	    "18446744073709551616",
	    "99999999999G",
	};
	uint64_t hz;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		hz = 0;
		CHECK_EQ_INT(ctl_parse_hz(good[i].in, &hz), 0);
		CHECK(hz == good[i].hz);
		if (hz != good[i].hz)
			fprintf(stderr, "  %s -> %llu\n", good[i].in,
				(unsigned long long)hz);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(ctl_parse_hz(bad[i], &hz) != 0);
		if (!ctl_parse_hz(bad[i], &hz))
			fprintf(stderr, "  accepted '%s'\n", bad[i]);
	}
}

static void test_seconds_and_longs(void)
{
	long v;

	CHECK_EQ_INT(ctl_parse_seconds_ms("2", &v), 0);
	CHECK_EQ_INT(v, 2000);
	CHECK_EQ_INT(ctl_parse_seconds_ms("0.25", &v), 0);
	CHECK_EQ_INT(v, 250);
	CHECK(ctl_parse_seconds_ms("0", &v) != 0);
	CHECK(ctl_parse_seconds_ms("2s", &v) != 0);
	CHECK(ctl_parse_seconds_ms("0.0001", &v) != 0);
	CHECK(ctl_parse_seconds_ms("", &v) != 0);
	CHECK_EQ_INT(ctl_parse_long("42", 0, 100, &v), 0);
	CHECK_EQ_INT(v, 42);
	CHECK(ctl_parse_long("101", 0, 100, &v) != 0);
	CHECK(ctl_parse_long("-1", 0, 100, &v) != 0);
	CHECK(ctl_parse_long("4x", 0, 100, &v) != 0);
	CHECK(ctl_parse_long(" 4", 0, 100, &v) != 0);
}

static void test_mhz(void)
{
	char s[32];

	ctl_fmt_mhz(474000000, s, sizeof(s));
	CHECK(!strcmp(s, "474.000"));
	ctl_fmt_mhz(474015625, s, sizeof(s));
	CHECK(!strcmp(s, "474.015625"));
	ctl_fmt_mhz(88800000, s, sizeof(s));
	CHECK(!strcmp(s, "88.800"));
	ctl_fmt_mhz(346250000, s, sizeof(s));
	CHECK(!strcmp(s, "346.250"));
	ctl_fmt_mhz(0, s, sizeof(s));
	CHECK(!strcmp(s, "0.000"));
}

struct collected {
	char out[2048];
	int events;
	int stop_after;
};

static int collect(void *ctx, const char *id, const char *type,
		   const char *data)
{
	struct collected *c = ctx;
	size_t len = strlen(c->out);

	snprintf(c->out + len, sizeof(c->out) - len, "[%s|%s|%s]", id, type,
		 data);
	c->events++;
	return c->stop_after && c->events >= c->stop_after ? 7 : 0;
}

/* A stream with every line ending, comments, a multi-line data field, an
 * event without data (not dispatched) and an id kept across events. */
static const char stream[] = ": keep-alive\r\n"
			     "retry: 1500\n"
			     "id: 41\r\n"
			     "event: tuner.lock\r\n"
			     "data: {\"seq\":41}\r\n"
			     "\r\n"
			     "event: nothing\n"
			     "\n"
			     "data:first\r"
			     "data:  second\r"
			     "\r"
			     "id: 42\n"
			     "event: gap\n"
			     "data: {\"type\":\"gap\"}\n"
			     "unknown: field\n"
			     "data\n"
			     "\n";

static const char expected[] = "[41|tuner.lock|{\"seq\":41}]"
			       "[41|message|first\n second]"
			       "[42|gap|{\"type\":\"gap\"}\n]";

static void feed_in_chunks(size_t chunk)
{
	struct collected c = {0};
	struct sse_parser p;
	size_t off, len = strlen(stream);

	sse_init(&p, collect, &c, 4096);
	for (off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		CHECK_EQ_INT(sse_feed(&p, stream + off, n), 0);
	}
	CHECK(!strcmp(c.out, expected));
	if (strcmp(c.out, expected))
		fprintf(stderr, "  chunk %zu: %s\n", chunk, c.out);
	CHECK_EQ_INT(p.retry_ms, 1500);
	sse_free(&p);
}

static void test_sse_limits(void)
{
	struct collected c = {.stop_after = 1};
	struct sse_parser p;
	char *big = malloc(200);

	/* the callback's non-zero answer stops the parse and comes back */
	sse_init(&p, collect, &c, 64);
	CHECK_EQ_INT(sse_feed(&p, "data: a\n\ndata: b\n\n", 18), 7);
	CHECK_EQ_INT(c.events, 1);
	/* a partial event is forgotten on a new connection */
	sse_reset(&p);
	c.stop_after = 0;
	CHECK_EQ_INT(sse_feed(&p, "data: half", 10), 0);
	sse_reset(&p);
	CHECK_EQ_INT(sse_feed(&p, "data: whole\n\n", 13), 0);
	CHECK(strstr(c.out, "half") == NULL);
	CHECK(strstr(c.out, "whole") != NULL);
	/* an over-long line is refused, not buffered without end */
	memset(big, 'x', 200);
	CHECK_EQ_INT(sse_feed(&p, big, 200), -ENOMEM);
	sse_free(&p);
	free(big);
}

int main(void)
{
	size_t chunk;

	test_hz();
	test_seconds_and_longs();
	test_mhz();
	for (chunk = 1; chunk <= sizeof(stream); chunk++)
		feed_in_chunks(chunk);
	test_sse_limits();
	return check_done("test_tunerctl_parse");
}

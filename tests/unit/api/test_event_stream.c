// SPDX-License-Identifier: MIT
/* Event stream subscribers (server/event_stream.c): filters, catching up
 * from the ring with gaps, the bounded queue and the slow-consumer close,
 * the shared (never copied) event texts with the "box" field. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_config.h"
#include "check.h"
#include "daemon.h"
#include "event_stream.h"
#include "eventbus.h"
#include "json_api.h"

struct owner {
	int wakes;
};

static void wake(void *arg)
{
	((struct owner *)arg)->wakes++;
}

static void daemon_setup(struct daemon *d, size_t ring)
{
	memset(d, 0, sizeof(*d));
	d->events = eventbus_new(ring);
	snprintf(d->name, sizeof(d->name), "box \"7\"");
	eventbus_set_box(d->events, d->name);
}

static void daemon_teardown(struct daemon *d)
{
	event_streams_stop(d);
	eventbus_free(d->events);
}

static void publish(struct daemon *d, const char *type, long tuner, int n)
{
	for (int i = 0; i < n; i++)
		eventbus_publish(d->events, type, tuner,
				 json_pack("{s:i}", "i", i));
}

/* The item's text as a JSON object. */
static json_t *item_json(const struct stream_item *it)
{
	size_t len;
	const char *text = event_sub_text(it, &len);

	return json_loadb(text, len, 0, NULL);
}

static void test_filters(void)
{
	struct event_filter f;
	struct api_error e = {0};

	CHECK_EQ_INT(event_filter_parse(&f, NULL, NULL, &e), 0);
	CHECK(event_filter_match(&f, "tuner.tune", 1));
	CHECK(event_filter_match(&f, "stub.connected", EVENTBUS_NO_TUNER));

	CHECK_EQ_INT(event_filter_parse(&f, "tuner.tune,lease.*", "2,7", &e),
		     0);
	CHECK_EQ_INT(f.ntypes, 2);
	CHECK_EQ_INT(f.ntuners, 2);
	CHECK(event_filter_match(&f, "tuner.tune", 2));
	CHECK(event_filter_match(&f, "lease.expired", 7));
	CHECK(!event_filter_match(&f, "tuner.tune", 3));
	CHECK(!event_filter_match(&f, "tuner.tune_started", 2));
	CHECK(!event_filter_match(&f, "tuner.lock", 2));
	CHECK(!event_filter_match(&f, "lease.expired", EVENTBUS_NO_TUNER));

	/* types= and tuner= with nothing: no filter */
	CHECK_EQ_INT(event_filter_parse(&f, "", "", &e), 0);
	CHECK(event_filter_match(&f, "tuner.tune", EVENTBUS_NO_TUNER));
	CHECK_EQ_INT(event_filter_parse(&f, "*", NULL, &e), 0);
	CHECK(event_filter_match(&f, "anything", EVENTBUS_NO_TUNER));

	static const char *const bad_types[] = {
	    ",",
	    "a,",
	    ",a",
	    "Tuner.tune",
	    "a*b",
	    "tuner tune",
	    "a123456789012345678901234567890123"};
	for (size_t i = 0; i < sizeof(bad_types) / sizeof(*bad_types); i++) {
		CHECK_EQ_INT(event_filter_parse(&f, bad_types[i], NULL, &e),
			     -1);
		CHECK_EQ_INT(e.status, 400);
		CHECK(!strcmp(
		    json_string_value(json_object_get(e.details, "field")),
		    "types"));
		api_error_clear(&e);
	}
	static const char *const bad_tuners[] = {",",  "1,",         "x",
						 "-1", "4294967296", "1,,2"};
	for (size_t i = 0; i < sizeof(bad_tuners) / sizeof(*bad_tuners); i++) {
		CHECK_EQ_INT(event_filter_parse(&f, NULL, bad_tuners[i], &e),
			     -1);
		api_error_clear(&e);
	}
	CHECK_EQ_INT(event_filter_parse(&f, NULL, "4294967295", &e), 0);
}

static void test_since_parse(void)
{
	uint64_t v;

	CHECK_EQ_INT(event_since_parse("0", &v), 0);
	CHECK_EQ_INT(v, 0);
	CHECK_EQ_INT(event_since_parse("18446744073709551615", &v), 0);
	CHECK_EQ_INT(event_since_parse("18446744073709551616", &v), -1);
	CHECK_EQ_INT(event_since_parse("", &v), -1);
	CHECK_EQ_INT(event_since_parse("12a", &v), -1);
	CHECK_EQ_INT(event_since_parse("-1", &v), -1);
}

static void test_live_and_shared_texts(void)
{
	struct daemon d;
	struct event_filter all = {0}, tunes = {0};
	struct owner o1 = {0}, o2 = {0};
	struct api_error e = {0};
	const struct stream_item *a, *b;
	struct event_sub *s1, *s2;
	size_t len;
	json_t *j;

	daemon_setup(&d, 64);
	publish(&d, "tuner.tune", 1, 3); /* before: not delivered */
	s1 = event_sub_new(&d, &all, 0, 0, wake, &o1);
	CHECK_EQ_INT(event_filter_parse(&tunes, "tuner.tune", "2", &e), 0);
	s2 = event_sub_new(&d, &tunes, 0, 0, wake, &o2);
	CHECK(s1 && s2);
	CHECK(event_sub_peek(s1) == NULL);

	publish(&d, "tuner.tune", 2, 2);
	publish(&d, "tuner.lock", 2, 1);
	CHECK_EQ_INT(o1.wakes, 1); /* only empty -> not empty */
	CHECK_EQ_INT(o2.wakes, 1);
	CHECK_EQ_INT(event_sub_queued(s1), 3);
	CHECK_EQ_INT(event_sub_queued(s2), 2);

	a = event_sub_peek(s1);
	b = event_sub_peek(s2);
	CHECK(a && b && a->kind == STREAM_EVENT);
	/* one serialised event, referenced by both queues */
	CHECK(a->ev == b->ev);
	CHECK_EQ_INT(a->id, 4);
	j = item_json(a);
	CHECK(j != NULL);
	CHECK(
	    !strcmp(json_string_value(json_object_get(j, "box")), "box \"7\""));
	CHECK_EQ_INT(json_integer_value(json_object_get(j, "seq")), 4);
	CHECK(!strcmp(json_string_value(json_object_get(j, "type")),
		      "tuner.tune"));
	CHECK_EQ_INT(json_integer_value(json_object_get(j, "tuner")), 2);
	json_decref(j);
	/* the wire text is the bus's own, not a copy */
	CHECK(event_sub_text(a, &len) == a->ev->json && len == a->ev->json_len);

	event_sub_pop(s1);
	CHECK_EQ_INT(event_sub_peek(s1)->id, 5);
	event_sub_pop(s1);
	CHECK(!strcmp(event_sub_peek(s1)->ev->type, "tuner.lock"));
	event_sub_pop(s1);
	CHECK(event_sub_peek(s1) == NULL);
	publish(&d, "tuner.tune", 2, 1);
	CHECK_EQ_INT(o1.wakes, 2);
	event_sub_pop(s1);
	/* an event of the box: "box" but no "tuner" */
	publish(&d, "stub.connected", EVENTBUS_NO_TUNER, 1);
	j = item_json(event_sub_peek(s1));
	CHECK(j && json_object_get(j, "box") && !json_object_get(j, "tuner"));
	json_decref(j);

	event_sub_free(s1);
	event_sub_free(s2);
	daemon_teardown(&d);
}

static void test_count_bound(void)
{
	struct daemon d;
	struct event_filter all = {0};
	struct owner o = {0};
	struct event_sub *s;
	const struct stream_item *it;
	json_t *j, *want;

	daemon_setup(&d, 1024);
	s = event_sub_new(&d, &all, 0, 0, wake, &o);
	publish(&d, "tuner.status", 1, EVENT_STREAM_QUEUE_MAX);
	CHECK_EQ_INT(event_sub_queued(s), EVENT_STREAM_QUEUE_MAX);
	CHECK(!event_sub_is_closed(s));
	publish(&d, "tuner.status", 1, 1);
	CHECK(event_sub_is_closed(s));
	CHECK(!strcmp(event_sub_close_reason(s), "slow_consumer"));
	CHECK_EQ_INT(event_sub_queued(s), 1);
	CHECK_EQ_INT(o.wakes, 2);
	it = event_sub_peek(s);
	CHECK(it && it->kind == STREAM_CLOSED);
	j = item_json(it);
	want =
	    json_pack("{s:s,s:s}", "type", "closed", "reason", "slow_consumer");
	CHECK(json_equal(j, want));
	json_decref(want);
	json_decref(j);
	/* closed: nothing more is queued */
	publish(&d, "tuner.status", 1, 10);
	CHECK_EQ_INT(event_sub_queued(s), 1);
	CHECK_EQ_INT(event_sub_push_text(s, STREAM_REPLY, strdup("{}"), 2),
		     -ESHUTDOWN);
	event_sub_free(s);
	daemon_teardown(&d);
}

static void test_byte_bound(void)
{
	struct daemon d;
	struct event_filter all = {0};
	struct owner o = {0};
	struct event_sub *s;
	char *big = malloc(16 * 1024);
	size_t before = 0;

	memset(big, 'x', 16 * 1024 - 1);
	big[16 * 1024 - 1] = '\0';
	daemon_setup(&d, 1024);
	s = event_sub_new(&d, &all, 0, 0, wake, &o);
	for (int i = 0; i < 100 && !event_sub_is_closed(s); i++) {
		before = event_sub_queued(s);
		eventbus_publish(d.events, "tuner.big", 1,
				 json_pack("{s:s}", "pad", big));
	}
	CHECK(event_sub_is_closed(s));
	/* 1 MiB of 16 KiB texts: closed at the 64th */
	CHECK(before >= 60 && before <= 64);
	CHECK(before < EVENT_STREAM_QUEUE_MAX);
	event_sub_free(s);
	daemon_teardown(&d);
	free(big);
}

static void test_replay_and_gap(void)
{
	struct daemon d;
	struct event_filter all = {0}, locks = {0};
	struct owner o = {0};
	struct api_error e = {0};
	const struct stream_item *it;
	struct event_sub *s;
	json_t *j;
	uint64_t expect;

	daemon_setup(&d, 16);
	publish(&d, "tuner.tune", 1, 40); /* ring keeps 25..40 */
	CHECK_EQ_INT(eventbus_oldest_seq(d.events), 25);

	s = event_sub_new(&d, &all, 1, 30, wake, &o);
	for (expect = 31; (it = event_sub_peek(s)); expect++) {
		CHECK_EQ_INT(it->id, expect);
		event_sub_pop(s);
	}
	CHECK_EQ_INT(expect, 41);
	publish(&d, "tuner.tune", 1, 1); /* live now */
	CHECK_EQ_INT(event_sub_peek(s)->id, 41);
	event_sub_free(s);

	s = event_sub_new(&d, &all, 1, 5, wake, &o);
	it = event_sub_peek(s);
	CHECK(it && it->kind == STREAM_GAP);
	j = item_json(it);
	CHECK(!strcmp(json_string_value(json_object_get(j, "type")), "gap"));
	CHECK_EQ_INT(json_integer_value(json_object_get(j, "from")), 6);
	CHECK_EQ_INT(json_integer_value(json_object_get(j, "to")), 25);
	CHECK(json_is_string(json_object_get(j, "message")));
	json_decref(j);
	event_sub_pop(s);
	CHECK_EQ_INT(event_sub_peek(s)->id, 26);
	event_sub_free(s);

	/* a filter applies to what the ring gives too */
	publish(&d, "tuner.lock", 3, 1);
	CHECK_EQ_INT(event_filter_parse(&locks, "tuner.lock", NULL, &e), 0);
	s = event_sub_new(&d, &locks, 1, 30, wake, &o);
	it = event_sub_peek(s);
	CHECK(it && it->kind == STREAM_EVENT);
	CHECK_EQ_INT(it->id, 42);
	event_sub_pop(s);
	CHECK(event_sub_peek(s) == NULL);
	event_sub_free(s);

	/* a since from the future (the daemon restarted): live from now */
	s = event_sub_new(&d, &all, 1, 1000, wake, &o);
	CHECK(event_sub_peek(s) == NULL);
	publish(&d, "tuner.tune", 1, 1);
	CHECK_EQ_INT(event_sub_peek(s)->id, 43);
	event_sub_free(s);
	daemon_teardown(&d);
}

/* Catching up through a ring far larger than the queue never counts as
 * a slow consumer: it is pulled as the queue drains. */
static void test_long_replay_stays_bounded(void)
{
	struct daemon d;
	struct event_filter all = {0};
	struct owner o = {0};
	struct event_sub *s;
	size_t n = 0, most = 0;

	daemon_setup(&d, 4096);
	publish(&d, "tuner.status", 1, 3000);
	s = event_sub_new(&d, &all, 1, 0, wake, &o);
	while (event_sub_peek(s)) {
		if (event_sub_queued(s) > most)
			most = event_sub_queued(s);
		CHECK_EQ_INT(event_sub_peek(s)->id, n + 1);
		event_sub_pop(s);
		n++;
		if (n == 1500) /* live events meanwhile come through the ring */
			publish(&d, "tuner.status", 2, 10);
	}
	CHECK_EQ_INT(n, 3010);
	CHECK(most <= EVENT_STREAM_QUEUE_MAX);
	CHECK(!event_sub_is_closed(s));
	publish(&d, "tuner.status", 1, 1);
	CHECK_EQ_INT(event_sub_peek(s)->id, 3011);
	event_sub_free(s);
	daemon_teardown(&d);
}

static void test_close_and_own_messages(void)
{
	struct daemon d;
	struct event_filter all = {0};
	struct owner o = {0};
	struct event_sub *s;
	const struct stream_item *it;

	daemon_setup(&d, 16);
	s = event_sub_new(&d, &all, 0, 0, wake, &o);
	CHECK_EQ_INT(
	    event_sub_push_text(s, STREAM_REPLY, strdup("{\"a\":1}"), 7), 0);
	CHECK_EQ_INT(o.wakes, 1);
	it = event_sub_peek(s);
	CHECK(it && it->kind == STREAM_REPLY && it->len == 7);
	event_sub_close(s, "shutdown");
	CHECK_EQ_INT(event_sub_queued(s), 1);
	CHECK(!strcmp(event_sub_close_reason(s), "shutdown"));
	CHECK_EQ_INT(event_sub_peek(s)->kind, STREAM_CLOSED);
	event_sub_free(s);

	/* stopping closes every subscriber and refuses new ones */
	s = event_sub_new(&d, &all, 0, 0, wake, &o);
	event_streams_stop(&d);
	CHECK(event_sub_is_closed(s));
	CHECK(event_sub_new(&d, &all, 0, 0, wake, &o) == NULL);
	event_sub_free(s);                           /* frees the stopped hub */
	s = event_sub_new(&d, &all, 0, 0, wake, &o); /* a new one */
	CHECK(s != NULL);
	event_sub_free(s);
	daemon_teardown(&d);
}

int main(void)
{
	test_filters();
	test_since_parse();
	test_live_and_shared_texts();
	test_count_bound();
	test_byte_bound();
	test_replay_and_gap();
	test_long_replay_stays_bounded();
	test_close_and_own_messages();
	return check_done("test_event_stream");
}

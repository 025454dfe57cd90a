// SPDX-License-Identifier: MIT
/* The event bus: seq order, ring wrap, catching up with gaps, the JSON
 * envelope, subscribers, publication soon. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "eventbus.h"

struct seen {
	uint64_t seqs[64];
	size_t n;
};

static void collect(const struct event *ev, void *arg)
{
	struct seen *s = arg;

	if (s->n < 64)
		s->seqs[s->n++] = ev->seq;
}

static void test_ring(void)
{
	struct eventbus *eb = eventbus_new(4);
	struct eventbus_read r;
	struct seen s = {0};
	uint64_t prev = 0;

	CHECK(eb != NULL);
	CHECK_EQ_INT(eventbus_last_seq(eb), 0);
	for (int i = 0; i < 10; i++) {
		uint64_t seq = eventbus_publish(eb, "test.tick", i,
						json_pack("{s:i}", "i", i));

		CHECK(seq > prev);
		CHECK_EQ_INT(seq, i + 1);
		prev = seq;
	}
	CHECK_EQ_INT(eventbus_last_seq(eb), 10);
	CHECK_EQ_INT(eventbus_oldest_seq(eb), 7);

	eventbus_read(eb, 0, 0, collect, &s, &r);
	CHECK_EQ_INT(r.gap, 1);
	CHECK_EQ_INT(r.missed, 6);
	CHECK_EQ_INT(r.count, 4);
	CHECK_EQ_INT(s.seqs[0], 7);
	CHECK_EQ_INT(s.seqs[3], 10);
	CHECK_EQ_INT(r.last, 10);

	s.n = 0;
	eventbus_read(eb, 6, 0, collect, &s, &r);
	CHECK_EQ_INT(r.gap, 0);
	CHECK_EQ_INT(r.count, 4);

	s.n = 0;
	eventbus_read(eb, 8, 0, collect, &s, &r);
	CHECK_EQ_INT(r.gap, 0);
	CHECK_EQ_INT(r.count, 2);
	CHECK_EQ_INT(s.seqs[0], 9);
	CHECK_EQ_INT(s.seqs[1], 10);

	s.n = 0;
	eventbus_read(eb, 10, 0, collect, &s, &r);
	CHECK_EQ_INT(r.count, 0);
	CHECK_EQ_INT(r.last, 10);

	s.n = 0;
	eventbus_read(eb, 6, 3, collect, &s, &r);
	CHECK_EQ_INT(r.count, 3);
	CHECK_EQ_INT(r.more, 1);
	CHECK_EQ_INT(r.last, 9);
	eventbus_free(eb);
}

static const struct event *kept;

static void keep_first(const struct event *ev, void *arg)
{
	(void)arg;
	if (!kept)
		kept = event_get(ev);
}

/* An event longer than the serialiser's stack buffer: whole, and its
 * length right. */
static void test_json_large(void)
{
	struct eventbus *eb = eventbus_new(2);
	char big[6000];
	json_t *o;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	eventbus_publish(eb, "scan.done", 2, json_pack("{s:s}", "note", big));
	kept = NULL;
	eventbus_read(eb, 0, 1, keep_first, NULL, NULL);
	CHECK(kept != NULL);
	CHECK_EQ_INT(kept->json_len, strlen(kept->json));
	CHECK(kept->json_len > sizeof(big));
	o = json_loads(kept->json, 0, NULL);
	CHECK(o &&
	      strcmp(json_string_value(json_object_get(o, "note")), big) == 0);
	json_decref(o);
	event_put(kept);
	kept = NULL;
	eventbus_free(eb);
}

static void test_json(void)
{
	struct eventbus *eb = eventbus_new(2);
	json_error_t jerr;
	const char *time;
	json_t *o;

	CHECK_EQ_INT(eventbus_set_box(eb, "box \"1\""), 0);
	eventbus_publish(eb, "tuner.tune", 3,
			 json_pack("{s:s,s:i,s:s,s:s,s:i,s:f}", "origin", "api",
				   "seq", 99, "type", "forged", "box", "other",
				   "tuner", 7, "level", -50.2));
	eventbus_publish(eb, "stub.connected", EVENTBUS_NO_TUNER, NULL);
	eventbus_read(eb, 0, 1, keep_first, NULL, NULL);
	CHECK(kept != NULL);
	/* The kept event outlives the ring's wrap. */
	eventbus_publish(eb, "x", 1, NULL);
	eventbus_publish(eb, "y", 1, NULL);
	o = json_loads(kept->json, 0, &jerr);
	CHECK(o != NULL);
	CHECK_EQ_INT(json_integer_value(json_object_get(o, "seq")), 1);
	CHECK(strcmp(json_string_value(json_object_get(o, "type")),
		     "tuner.tune") == 0);
	CHECK_EQ_INT(json_integer_value(json_object_get(o, "tuner")), 3);
	CHECK(strcmp(json_string_value(json_object_get(o, "box")),
		     "box \"1\"") == 0);
	CHECK(strcmp(json_string_value(json_object_get(o, "origin")), "api") ==
	      0);
	/* The envelope comes first, in the contract's order, and numbers
	 * print as the REST answers print them. */
	CHECK(strncmp(kept->json, "{\"seq\":1,\"time\":\"", 17) == 0);
	CHECK(strstr(kept->json,
		     "Z\",\"box\":\"box \\\"1\\\"\","
		     "\"type\":\"tuner.tune\",\"tuner\":3,"
		     "\"origin\":\"api\",\"level\":-50.2}") != NULL);
	time = json_string_value(json_object_get(o, "time"));
	CHECK(time && strlen(time) == 24 && time[10] == 'T' &&
	      time[19] == '.' && time[23] == 'Z');
	CHECK_EQ_INT(kept->tuner, 3);
	CHECK(strcmp(kept->type, "tuner.tune") == 0);
	CHECK_EQ_INT(kept->json_len, strlen(kept->json));
	json_decref(o);
	event_put(kept);

	kept = NULL;
	eventbus_read(eb, 3, 1, keep_first, NULL, NULL);
	CHECK(kept && strstr(kept->json, "\"tuner\":1"));
	event_put(kept);
	eventbus_free(eb);

	/* No tuner: no "tuner" key; no name yet: no "box" key. */
	eb = eventbus_new(2);
	eventbus_publish(eb, "stub.connected", EVENTBUS_NO_TUNER, NULL);
	eventbus_set_box(eb, "b2");
	eventbus_publish(eb, "stub.connected", EVENTBUS_NO_TUNER, NULL);
	kept = NULL;
	eventbus_read(eb, 0, 0, keep_first, NULL, NULL);
	CHECK(kept && !strstr(kept->json, "\"tuner\"") &&
	      !strstr(kept->json, "\"box\""));
	event_put(kept);
	kept = NULL;
	eventbus_read(eb, 1, 0, keep_first, NULL, NULL);
	CHECK(kept && !strstr(kept->json, "\"tuner\"") &&
	      strstr(kept->json, "\"box\":\"b2\",\"type\""));
	event_put(kept);
	kept = NULL;
	eventbus_free(eb);
	test_json_large();
}

struct sub_state {
	struct eventbus *eb;
	long self_id;
	int calls;
	uint64_t last_seq;
	int order_ok;
};

static void sub_a(const struct event *ev, void *arg)
{
	struct sub_state *s = arg;

	if (ev->seq != s->last_seq + 1)
		s->order_ok = 0;
	s->last_seq = ev->seq;
	s->calls++;
}

/* Unsubscribes itself on its second event. */
static void sub_once_more(const struct event *ev, void *arg)
{
	struct sub_state *s = arg;

	(void)ev;
	if (++s->calls == 2)
		eventbus_unsubscribe(s->eb, s->self_id);
}

static void test_subscribers(void)
{
	struct eventbus *eb = eventbus_new(8);
	struct sub_state a = {.eb = eb, .order_ok = 1};
	struct sub_state b = {.eb = eb};
	long ida;

	ida = eventbus_subscribe(eb, sub_a, &a);
	b.self_id = eventbus_subscribe(eb, sub_once_more, &b);
	CHECK(ida > 0 && b.self_id > 0 && ida != b.self_id);
	for (int i = 0; i < 5; i++)
		eventbus_publish(eb, "t", EVENTBUS_NO_TUNER, NULL);
	CHECK_EQ_INT(a.calls, 5);
	CHECK_EQ_INT(a.order_ok, 1);
	CHECK_EQ_INT(b.calls, 2);
	eventbus_unsubscribe(eb, ida);
	eventbus_publish(eb, "t", EVENTBUS_NO_TUNER, NULL);
	CHECK_EQ_INT(a.calls, 5);
	eventbus_free(eb);
}

static void count_in_order(const struct event *ev, void *arg)
{
	uint64_t *next = arg;

	if (ev->seq == *next)
		(*next)++;
}

/* The ring grows past its first array, in order, up to its count; the
 * bytes bound drops the oldest; so does the age bound. */
static void test_retention(void)
{
	struct eventbus *eb = eventbus_new(5000);
	struct eventbus_read r;
	uint64_t next = 1, first_kept;
	size_t limit;
	int64_t t0;

	for (int i = 0; i < 3000; i++)
		eventbus_publish(eb, "t.x", 1, NULL);
	CHECK_EQ_INT(eventbus_oldest_seq(eb), 1);
	eventbus_read(eb, 0, 0, count_in_order, &next, &r);
	CHECK_EQ_INT(r.count, 3000);
	CHECK_EQ_INT(next, 3001);
	/* by bytes: what 1,000 events take, at most */
	limit = eventbus_ring_bytes(eb) / 3;
	eventbus_set_retention(eb, 0, limit);
	eventbus_publish(eb, "t.x", 1, NULL);
	CHECK(eventbus_ring_bytes(eb) <= limit);
	first_kept = eventbus_oldest_seq(eb);
	CHECK(first_kept > 1900 && first_kept < 2100);
	next = first_kept;
	eventbus_read(eb, first_kept - 1, 0, count_in_order, &next, &r);
	CHECK_EQ_INT(next, 3002);
	CHECK_EQ_INT(r.gap, 0);
	/* by age: 1 ms, with the clock moved on by 2 */
	eventbus_set_retention(eb, 1, 0);
	t0 = eventbus_now_ms();
	while (eventbus_now_ms() < t0 + 2)
		;
	eventbus_publish(eb, "t.x", 1, NULL);
	CHECK_EQ_INT(eventbus_oldest_seq(eb), 3002);
	eventbus_free(eb);
}

/* Events published soon: the hook hears of each batch's first; nothing
 * reaches a subscriber before the flush; then all, in the order of the
 * calls, an immediate publish behind them; reads flush first. */
struct soon_state {
	struct eventbus *eb;
	int hooks;
	char types[16][32];
	int n;                /* types kept */
	int total;            /* events heard */
	int publish_from_sub; /* publish "c.sub" when "b" comes */
};

static void soon_hook(void *arg)
{
	((struct soon_state *)arg)->hooks++;
}

static void soon_seen(const struct event *ev, void *arg)
{
	struct soon_state *st = arg;

	st->total++;
	if (st->n < 16)
		snprintf(st->types[st->n++], sizeof(st->types[0]), "%s",
			 ev->type);
	if (st->publish_from_sub && !strcmp(ev->type, "b")) {
		st->publish_from_sub = 0;
		eventbus_publish(st->eb, "c.sub", 1, NULL);
	}
}

static int soon_order(const struct soon_state *st, const char *const *want,
		      int n)
{
	if (st->n != n)
		return 0;
	for (int i = 0; i < n; i++)
		if (strcmp(st->types[i], want[i]))
			return 0;
	return 1;
}

static void test_soon(void)
{
	struct eventbus *eb = eventbus_new(256);
	struct soon_state st = {.eb = eb, .publish_from_sub = 1};
	const char *const flushed[] = {"a", "b", "c.sub", "d"};
	const char *const read[] = {"a", "b", "c.sub", "d", "e", "f"};
	struct eventbus_read r;
	struct seen s = {0};

	eventbus_subscribe(eb, soon_seen, &st);
	/* no hook: soon is now */
	eventbus_publish_soon(eb, "now", 1, NULL);
	CHECK_EQ_INT(st.n, 1);
	st.n = 0;
	eventbus_set_flush_hook(eb, soon_hook, &st);
	eventbus_publish_soon(eb, "a", 1, json_pack("{s:i}", "x", 1));
	eventbus_publish_soon(eb, "b", 2, NULL);
	CHECK_EQ_INT(st.hooks, 1);
	CHECK_EQ_INT(st.n, 0);
	/* an immediate publish goes behind the queued ones; one published
	 * by a subscriber meanwhile goes behind the one it heard */
	eventbus_publish(eb, "d", 1, NULL);
	CHECK(soon_order(&st, flushed, 4));
	/* a read flushes first: a reader never misses what came before */
	eventbus_publish_soon(eb, "e", 1, NULL);
	eventbus_publish_soon(eb, "f", 1, NULL);
	CHECK_EQ_INT(st.hooks, 2);
	eventbus_read(eb, 1, 0, collect, &s, &r);
	CHECK_EQ_INT(r.count, 6);
	CHECK(soon_order(&st, read, 6));
	CHECK_EQ_INT(eventbus_last_seq(eb), 7);
	/* a full queue flushes on its own */
	st.total = 0;
	for (int i = 0; i < EVENTBUS_SOON_MAX + 1; i++)
		eventbus_publish_soon(eb, "g", 1, NULL);
	CHECK_EQ_INT(st.total, EVENTBUS_SOON_MAX);
	eventbus_flush(eb);
	CHECK_EQ_INT(st.total, EVENTBUS_SOON_MAX + 1);
	/* what is still queued at the end is freed with the bus (ASan) */
	eventbus_publish_soon(eb, "h", 1, json_pack("{s:s}", "k", "v"));
	eventbus_free(eb);
}

int main(void)
{
	test_ring();
	test_soon();
	test_retention();
	test_json();
	test_subscribers();
	return check_done("test_eventbus");
}

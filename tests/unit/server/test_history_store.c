// SPDX-License-Identifier: MIT
/* The history's SQLite store: seconds in, the minutes rolled up exactly,
 * queries at any step and field set, the tiers chosen by range and step,
 * expiry by age, marks, bad ranges, and everything back after a
 * reopen. */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "history_store.h"
#include "log.h"
#include "unit_tmpdir.h"

/* A fixed "now" on a minute boundary: 2026-01-01T00:00:00Z. */
#define NOW 1767225600000LL
#define SEC HISTORY_TIER0_STEP_MS
#define MIN HISTORY_TIER1_STEP_MS

static char db_path[PATH_MAX];

/* Second i of tuner: signal -50 dBm +- (i % 3) dB, CNR 30 dB, locked
 * unless i % 4 == 3, two samples each. */
static struct history_row row_at(uint32_t tuner, int64_t t, int i)
{
	struct history_row r = {.tuner = tuner, .time_ms = t, .samples = 2};
	int64_t sig = -50000 + (i % 3) * 1000;

	r.locked = i % 4 == 3 ? 0 : 2;
	r.f[HIST_SIGNAL] =
	    (struct history_agg){2, sig - 500, sig + 500, 2 * sig};
	r.f[HIST_CNR] = (struct history_agg){2, 30000, 30000, 60000};
	return r;
}

/* Seconds [start, start + n) of tuner, written in one append. */
static int append_seconds(struct history_store *s, uint32_t tuner,
			  int64_t start, int n, int64_t now)
{
	struct history_row *rows = calloc((size_t)n, sizeof(*rows));
	int err;

	for (int i = 0; i < n; i++)
		rows[i] = row_at(tuner, start + i * SEC, i);
	err = history_store_append(s, rows, (size_t)n, NULL, 0, now);
	free(rows);
	return err;
}

static json_t *query(struct history_store *s, uint32_t tuner, int64_t from,
		     int64_t to, int64_t step, unsigned int fields, int64_t now)
{
	struct history_query q = {tuner, from, to, step, fields, now};
	json_t *out = NULL;

	CHECK_EQ_INT(history_store_query(s, &q, &out), 0);
	return out;
}

static double num(json_t *o, const char *field, const char *what)
{
	return json_number_value(
	    json_object_get(json_object_get(o, field), what));
}

static void test_seconds_and_minutes(struct history_store *s)
{
	json_t *a, *p;

	/* 3 minutes, 180 seconds, in three appends (a minute rolled up
	 * again as its seconds come) */
	for (int m = 0; m < 3; m++)
		CHECK_EQ_INT(
		    append_seconds(s, 1, NOW - 3 * MIN + m * MIN, 60, NOW), 0);
	a = query(s, 1, NOW - 3 * MIN, NOW, SEC, 1u << HIST_SIGNAL, NOW);
	CHECK_EQ_INT(json_integer_value(json_object_get(a, "step_ms")), SEC);
	CHECK_EQ_INT(json_integer_value(json_object_get(a, "tier_ms")), SEC);
	CHECK_EQ_INT(json_array_size(json_object_get(a, "points")), 180);
	p = json_array_get(json_object_get(a, "points"), 1);
	CHECK_EQ_INT(json_integer_value(json_object_get(p, "time")),
		     NOW - 3 * MIN + SEC);
	CHECK(num(p, "signal", "avg") == -49.0);
	CHECK(num(p, "signal", "min") == -49.5);
	CHECK(num(p, "signal", "max") == -48.5);
	CHECK(!json_object_get(p, "cnr")); /* not asked for */
	json_decref(a);

	/* the minutes: 60 seconds x 2 samples, 15 of 60 seconds unlocked */
	a = query(s, 1, NOW - 3 * MIN, NOW, MIN, ~0u, NOW);
	CHECK_EQ_INT(json_integer_value(json_object_get(a, "tier_ms")), MIN);
	CHECK_EQ_INT(json_array_size(json_object_get(a, "points")), 3);
	p = json_array_get(json_object_get(a, "points"), 0);
	CHECK_EQ_INT(json_integer_value(json_object_get(p, "samples")), 120);
	CHECK(json_real_value(json_object_get(p, "lock")) == 0.75);
	CHECK(num(p, "signal", "min") == -50.5);
	CHECK(num(p, "signal", "max") == -47.5);
	CHECK(num(p, "signal", "avg") == -49.0);
	CHECK(num(p, "cnr", "avg") == 30.0);
	CHECK(json_is_null(json_object_get(p, "bitrate")));
	json_decref(a);

	/* a 90 s step over the seconds: buckets on multiples of 90 s */
	a = query(s, 1, NOW - 3 * MIN, NOW, 90 * SEC, 1u << HIST_CNR, NOW);
	CHECK_EQ_INT(json_array_size(json_object_get(a, "points")), 2);
	json_decref(a);
	/* another tuner has nothing */
	a = query(s, 2, NOW - 3 * MIN, NOW, 0, ~0u, NOW);
	CHECK_EQ_INT(json_array_size(json_object_get(a, "points")), 0);
	json_decref(a);
}

static void test_tier_choice_and_bounds(struct history_store *s)
{
	struct history_query q = {
	    1, NOW - 30LL * 24 * 3600 * 1000, NOW, SEC, ~0u, NOW};
	json_t *a = NULL;

	/* a day asked at 1 s: from the minutes, and too many points for
	 * them at a 1 s step?  No: the step becomes the tier's (1 min) */
	a = query(s, 1, NOW - 24LL * 3600 * 1000, NOW, SEC, ~0u, NOW);
	CHECK_EQ_INT(json_integer_value(json_object_get(a, "step_ms")), MIN);
	json_decref(a);
	/* no step: at most 1,000 points */
	a = query(s, 1, NOW - 3600 * SEC, NOW, 0, ~0u, NOW);
	CHECK_EQ_INT(json_integer_value(json_object_get(a, "step_ms")),
		     4 * SEC);
	json_decref(a);
	/* 30 days at a minute: 43,200 points, over the bound */
	CHECK_EQ_INT(history_store_query(s, &q, &a), -ERANGE);
	q.step_ms = 0;
	CHECK_EQ_INT(history_store_query(s, &q, &a), 0);
	json_decref(a);
	q.from_ms = NOW;
	CHECK_EQ_INT(history_store_query(s, &q, &a), -EINVAL);
}

static void test_expiry(struct history_store *s)
{
	int64_t later = NOW + 2 * 3600 * SEC; /* two hours on */
	json_t *a;

	/* written now, pruned by a write two hours later (once a minute per
	 * tuner: tuner 1 was pruned at NOW, and is again at `later`) */
	CHECK_EQ_INT(append_seconds(s, 1, later - 10 * SEC, 10, later), 0);
	/* the seconds from NOW are gone (asked as if it were NOW + 1 min,
	 * when they would still be in the seconds' tier) */
	a = query(s, 1, NOW - 3 * MIN, NOW, SEC, ~0u, NOW + MIN);
	CHECK_EQ_INT(json_integer_value(json_object_get(a, "tier_ms")), SEC);
	CHECK_EQ_INT(json_array_size(json_object_get(a, "points")), 0);
	json_decref(a);
	/* their minutes stay for 30 days */
	a = query(s, 1, NOW - 3 * MIN, NOW, MIN, ~0u, later);
	CHECK_EQ_INT(json_array_size(json_object_get(a, "points")), 3);
	json_decref(a);
	/* and go after them */
	later = NOW + HISTORY_TIER1_KEEP_MS + MIN;
	CHECK_EQ_INT(append_seconds(s, 1, later - 10 * SEC, 10, later), 0);
	a = query(s, 1, NOW - 3 * MIN, NOW, MIN, ~0u, later);
	CHECK_EQ_INT(json_array_size(json_object_get(a, "points")), 0);
	json_decref(a);
}

static void test_marks(struct history_store *s)
{
	struct history_mark m[3] = {
	    {3, NOW - 2 * SEC, "{\"type\":\"tuner.tune\",\"result\":\"ok\"}"},
	    {3, NOW - SEC, "{\"type\":\"tuner.lock\",\"locked\":true}"},
	    {4, NOW - SEC, "{\"type\":\"tuner.lock\",\"locked\":false}"}};
	struct history_row r = row_at(3, NOW - SEC, 0);
	json_t *a, *marks;

	CHECK_EQ_INT(history_store_append(s, &r, 1, m, 3, NOW), 0);
	a = query(s, 3, NOW - MIN, NOW, 0, ~0u, NOW);
	marks = json_object_get(a, "marks");
	CHECK_EQ_INT(json_array_size(marks), 2);
	CHECK(!strcmp(json_string_value(
			  json_object_get(json_array_get(marks, 0), "type")),
		      "tuner.tune"));
	CHECK_EQ_INT(json_integer_value(
			 json_object_get(json_array_get(marks, 0), "time")),
		     NOW - 2 * SEC);
	CHECK(
	    json_is_true(json_object_get(json_array_get(marks, 1), "locked")));
	json_decref(a);
}

static void test_reopen(void)
{
	struct history_store *s = NULL;
	json_t *a;

	CHECK_EQ_INT(history_store_open(db_path, NOW, &s), 0);
	if (!s)
		return;
	a = query(s, 3, NOW - MIN, NOW, 0, ~0u, NOW);
	CHECK_EQ_INT(json_array_size(json_object_get(a, "points")), 1);
	CHECK_EQ_INT(json_array_size(json_object_get(a, "marks")), 2);
	json_decref(a);
	CHECK(history_store_bytes(s) > 0);
	history_store_close(s);
	/* on a connection of its own, as the daemon's threadpool reads */
	{
		struct history_query q = {3, NOW - MIN, NOW, 0, ~0u, NOW};

		CHECK_EQ_INT(history_store_query_file(db_path, &q, &a), 0);
		CHECK_EQ_INT(json_array_size(json_object_get(a, "marks")), 2);
		json_decref(a);
	}
}

static void test_fields(void)
{
	CHECK_EQ_INT(history_field_parse("cnr", 3), HIST_CNR);
	CHECK_EQ_INT(history_field_parse("signalx", 7), -1);
	CHECK_EQ_INT(history_field_parse("signal,cnr", 6), HIST_SIGNAL);
	CHECK(!strcmp(history_field_name(HIST_ERRORS), "errors"));
}

int main(void)
{
	char tmpl[] = "/tmp/tunerd-history-XXXXXX";
	struct history_store *s = NULL;

	log_set_level(LL_ERR - 1); /* the bad path's line is expected */
	if (!mkdtemp(tmpl))
		return 1;
	snprintf(db_path, sizeof(db_path), "%s/%s", tmpl, HISTORY_DB_NAME);
	CHECK_EQ_INT(history_store_open(db_path, NOW, &s), 0);
	if (s) {
		test_seconds_and_minutes(s);
		test_tier_choice_and_bounds(s);
		test_expiry(s);
		test_marks(s);
		history_store_close(s);
	}
	test_reopen();
	test_fields();
	CHECK_EQ_INT(history_store_open("/nonexistent/dir/h.db", NOW, &s),
		     -EIO);
	unit_tmpdir_remove(tmpl);
	return check_done("test_history_store");
}

// SPDX-License-Identifier: MIT
/*
 * The history's SQLite store (history_store.h).  Column names are made
 * from the field names, so the table, the rollup and the query are
 * written once for all fields.  Statements the writer runs every second
 * are prepared once; the reader's query is prepared per request (a few
 * microseconds beside the rows it reads).
 */
#include "history_store.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define COLS_MAX       2048
#define TUNERD_STR2(x) #x
#define TUNERD_STR(x)  TUNERD_STR2(x)
/* Samples in a query's auto step: the answer stays small for a plot. */
#define HISTORY_AUTO_POINTS 1000

enum { ST_INSERT, ST_ROLLUP, ST_MARK, ST_PRUNE0, ST_PRUNE1, ST_PRUNEM, ST_N };

struct prune_at {
	uint32_t tuner;
	int64_t at_ms;
};

struct history_store {
	sqlite3 *wdb, *rdb;
	sqlite3_stmt *st[ST_N];
	struct prune_at *pruned; /* writer only: when each tuner was pruned */
	size_t npruned;
};

static const char *const field_names[HIST_NFIELDS] = {"signal", "cnr", "afc",
						      "bitrate", "errors"};

const char *history_field_name(enum history_field f)
{
	return f < HIST_NFIELDS ? field_names[f] : "?";
}

int history_field_parse(const char *name, size_t len)
{
	for (int f = 0; f < HIST_NFIELDS; f++)
		if (strlen(field_names[f]) == len &&
		    !strncmp(name, field_names[f], len))
			return f;
	return -1;
}

/* "signal_count, signal_min, ..." with each of the four columns of each
 * field put through fmt (one %s for the field name per column). */
static void field_cols(char *buf, size_t len, const char *const fmt[4])
{
	size_t at = 0;

	buf[0] = '\0';
	for (int f = 0; f < HIST_NFIELDS; f++)
		for (int c = 0; c < 4 && at < len; c++) {
			at += (size_t)snprintf(buf + at, len - at, ", ");
			if (at < len)
				at += (size_t)snprintf(buf + at, len - at,
						       fmt[c], field_names[f],
						       field_names[f]);
		}
}

static int sql_fail(sqlite3 *db, const char *what)
{
	log_err("history: %s: %s", what, db ? sqlite3_errmsg(db) : "?");
	return db && sqlite3_errcode(db) == SQLITE_FULL ? -ENOSPC : -EIO;
}

static int exec(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK
		   ? 0
		   : sql_fail(db, sql);
}

static int create_tables(sqlite3 *db)
{
	static const char *const def[4] = {"%s_count INTEGER NOT NULL",
					   "%s_min INTEGER", "%s_max INTEGER",
					   "%s_sum INTEGER"};
	char cols[COLS_MAX], sql[COLS_MAX + 256];
	int err = 0;

	field_cols(cols, sizeof(cols), def);
	for (int tier = 0; tier < 2 && !err; tier++) {
		snprintf(sql, sizeof(sql),
			 "CREATE TABLE IF NOT EXISTS tier%d (tuner INTEGER "
			 "NOT NULL, t INTEGER NOT NULL, samples INTEGER NOT "
			 "NULL, locked INTEGER NOT NULL%s, PRIMARY KEY (tuner, "
			 "t)) WITHOUT ROWID",
			 tier, cols);
		err = exec(db, sql);
	}
	if (!err)
		err = exec(db, "CREATE TABLE IF NOT EXISTS marks (seq INTEGER "
			       "PRIMARY KEY, tuner INTEGER NOT NULL, t INTEGER "
			       "NOT NULL, mark TEXT NOT NULL)");
	if (!err)
		err = exec(db, "CREATE INDEX IF NOT EXISTS marks_by_tuner ON "
			       "marks (tuner, t)");
	return err;
}

static int prepare(struct history_store *s)
{
	static const char *const sum[4] = {"sum(%s_count)", "min(%s_min)",
					   "max(%s_max)", "sum(%s_sum)"};
	char cols[COLS_MAX], sql[ST_N][COLS_MAX + 512];
	char marks[HIST_NFIELDS * 4 * 4] = "";

	for (int i = 0; i < HIST_NFIELDS * 4; i++)
		strcat(marks, ", ?");
	snprintf(sql[ST_INSERT], sizeof(sql[0]),
		 "INSERT OR REPLACE INTO tier0 VALUES (?, ?, ?, ?%s)", marks);
	field_cols(cols, sizeof(cols), sum);
	snprintf(sql[ST_ROLLUP], sizeof(sql[0]),
		 "INSERT OR REPLACE INTO tier1 SELECT tuner, t / %d * %d, "
		 "sum(samples), sum(locked)%s FROM tier0 WHERE tuner = ?1 AND "
		 "t >= ?2 AND t < ?3 GROUP BY t / %d",
		 HISTORY_TIER1_STEP_MS, HISTORY_TIER1_STEP_MS, cols,
		 HISTORY_TIER1_STEP_MS);
	snprintf(sql[ST_MARK], sizeof(sql[0]),
		 "INSERT INTO marks (tuner, t, mark) VALUES (?, ?, ?)");
	snprintf(sql[ST_PRUNE0], sizeof(sql[0]),
		 "DELETE FROM tier0 WHERE tuner = ?1 AND t < ?2");
	snprintf(sql[ST_PRUNE1], sizeof(sql[0]),
		 "DELETE FROM tier1 WHERE tuner = ?1 AND t < ?2");
	snprintf(sql[ST_PRUNEM], sizeof(sql[0]),
		 "DELETE FROM marks WHERE tuner = ?1 AND (t < ?2 OR seq <= "
		 "(SELECT seq FROM marks WHERE tuner = ?1 ORDER BY seq DESC "
		 "LIMIT 1 OFFSET %d))",
		 HISTORY_MARKS_KEEP);
	for (int i = 0; i < ST_N; i++)
		if (sqlite3_prepare_v3(s->wdb, sql[i], -1,
				       SQLITE_PREPARE_PERSISTENT, &s->st[i],
				       NULL) != SQLITE_OK)
			return sql_fail(s->wdb, "prepare");
	return 0;
}

static int open_db(const char *path, int writer, sqlite3 **db)
{
	int flags = writer ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
			   : SQLITE_OPEN_READONLY;
	char sql[128];

	/* Each connection is used by one thread at a time: no mutexes. */
	if (sqlite3_open_v2(path, db, flags | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK)
		return sql_fail(*db, path);
	sqlite3_busy_timeout(*db, 1000);
	if (!writer)
		return 0;
	snprintf(sql, sizeof(sql),
		 "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
		 "PRAGMA journal_size_limit = %d; PRAGMA max_page_count = %lld",
		 4 << 20, HISTORY_DB_MAX_BYTES / 4096);
	return exec(*db, "PRAGMA page_size = 4096") ?: exec(*db, sql);
}

/* Every tuner's expired rows, also of tuners that are gone: a full scan,
 * once per start. */
static int prune_all(struct history_store *s, int64_t now_ms)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "DELETE FROM tier0 WHERE t < %lld; DELETE FROM tier1 WHERE "
		 "t < %lld; DELETE FROM marks WHERE t < %lld",
		 (long long)(now_ms - HISTORY_TIER0_KEEP_MS),
		 (long long)(now_ms - HISTORY_TIER1_KEEP_MS),
		 (long long)(now_ms - HISTORY_TIER1_KEEP_MS));
	return exec(s->wdb, sql);
}

int history_store_open(const char *path, int64_t now_ms,
		       struct history_store **out)
{
	struct history_store *s = calloc(1, sizeof(*s));
	int err;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	err = open_db(path, 1, &s->wdb);
	if (!err)
		err = create_tables(s->wdb);
	if (!err)
		err = prepare(s);
	if (!err)
		err = prune_all(s, now_ms);
	if (!err)
		err = open_db(path, 0, &s->rdb);
	if (err) {
		history_store_close(s);
		return err;
	}
	*out = s;
	return 0;
}

void history_store_close(struct history_store *s)
{
	if (!s)
		return;
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->rdb);
	sqlite3_close(s->wdb);
	free(s->pruned);
	free(s);
}

static int step_done(struct history_store *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : sql_fail(s->wdb, "write");
}

static int insert_row(struct history_store *s, const struct history_row *r)
{
	sqlite3_stmt *st = s->st[ST_INSERT];
	int col = 5;

	sqlite3_bind_int64(st, 1, r->tuner);
	sqlite3_bind_int64(st, 2, r->time_ms);
	sqlite3_bind_int64(st, 3, r->samples);
	sqlite3_bind_int64(st, 4, r->locked);
	for (int f = 0; f < HIST_NFIELDS; f++, col += 4) {
		const struct history_agg *a = &r->f[f];

		sqlite3_bind_int64(st, col, a->count);
		if (!a->count)
			continue; /* min, max, sum stay NULL */
		sqlite3_bind_int64(st, col + 1, a->min);
		sqlite3_bind_int64(st, col + 2, a->max);
		sqlite3_bind_int64(st, col + 3, a->sum);
	}
	return step_done(s, st);
}

static int run3(struct history_store *s, int which, uint32_t tuner, int64_t a,
		int64_t b)
{
	sqlite3_stmt *st = s->st[which];

	sqlite3_bind_int64(st, 1, tuner);
	sqlite3_bind_int64(st, 2, a);
	if (which == ST_ROLLUP)
		sqlite3_bind_int64(st, 3, b);
	return step_done(s, st);
}

/* Prune tuner's expired rows if it was not pruned this minute. */
static int prune_tuner(struct history_store *s, uint32_t tuner, int64_t now)
{
	struct prune_at *p = NULL;
	int64_t old1 = now - HISTORY_TIER1_KEEP_MS;

	for (size_t i = 0; i < s->npruned && !p; i++)
		if (s->pruned[i].tuner == tuner)
			p = &s->pruned[i];
	if (!p) {
		p = realloc(s->pruned, (s->npruned + 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->pruned = p;
		p = &s->pruned[s->npruned++];
		*p = (struct prune_at){tuner, 0};
	}
	if (now - p->at_ms < HISTORY_TIER1_STEP_MS)
		return 0;
	p->at_ms = now;
	return run3(s, ST_PRUNE0, tuner, now - HISTORY_TIER0_KEEP_MS, 0)
		   ?: run3(s, ST_PRUNE1, tuner, old1, 0)
		   ?: run3(s, ST_PRUNEM, tuner, old1, 0);
}

/* Roll the minutes rows touched up again, one statement per run of rows
 * of the same tuner (the daemon hands them grouped by tuner). */
static int rollup(struct history_store *s, const struct history_row *rows,
		  size_t n, int64_t now_ms)
{
	const int64_t m = HISTORY_TIER1_STEP_MS;
	int err = 0;

	for (size_t i = 0; i < n && !err;) {
		uint32_t tuner = rows[i].tuner;
		int64_t lo = rows[i].time_ms, hi = rows[i].time_ms;

		for (; i < n && rows[i].tuner == tuner; i++) {
			lo = rows[i].time_ms < lo ? rows[i].time_ms : lo;
			hi = rows[i].time_ms > hi ? rows[i].time_ms : hi;
		}
		err = run3(s, ST_ROLLUP, tuner, lo / m * m, (hi / m + 1) * m);
		if (!err)
			err = prune_tuner(s, tuner, now_ms);
	}
	return err;
}

static int insert_mark(struct history_store *s, const struct history_mark *k)
{
	sqlite3_stmt *st = s->st[ST_MARK];

	sqlite3_bind_int64(st, 1, k->tuner);
	sqlite3_bind_int64(st, 2, k->time_ms);
	sqlite3_bind_text(st, 3, k->json, -1, SQLITE_STATIC);
	return step_done(s, st);
}

int history_store_append(struct history_store *s,
			 const struct history_row *rows, size_t nrows,
			 const struct history_mark *marks, size_t nmarks,
			 int64_t now_ms)
{
	int err = exec(s->wdb, "BEGIN");

	for (size_t i = 0; i < nrows && !err; i++)
		err = insert_row(s, &rows[i]);
	for (size_t i = 0; i < nmarks && !err; i++)
		err = insert_mark(s, &marks[i]);
	if (!err)
		err = rollup(s, rows, nrows, now_ms);
	if (!err)
		return exec(s->wdb, "COMMIT");
	sqlite3_exec(s->wdb, "ROLLBACK", NULL, NULL, NULL);
	return err;
}

int history_store_query_file(const char *path, const struct history_query *q,
			     json_t **out)
{
	struct history_store s = {0};
	int err = open_db(path, 0, &s.rdb);

	*out = NULL;
	if (!err)
		err = history_store_query(&s, q, out);
	sqlite3_close(s.rdb);
	return err;
}

int64_t history_store_bytes(struct history_store *s)
{
	sqlite3_stmt *st;
	int64_t pages = 0, size = 0;

	if (sqlite3_prepare_v2(s->rdb,
			       "SELECT * FROM pragma_page_count(), "
			       "pragma_page_size()",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		pages = sqlite3_column_int64(st, 0);
		size = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return pages * size;
}

/* ---- queries (reader connection) ---- */

/* The step a query is answered at and the tier its rows come from: the
 * seconds while the range is still in them and the step is under a
 * minute, else the minutes; the step rounded up to the tier's. */
static int choose_step(const struct history_query *q, int64_t *step, int *tier)
{
	int64_t range = q->to_ms - q->from_ms;
	int64_t s = q->step_ms, base;
	/* A client's "an hour ago" is a little older than ours. */
	int64_t tier0_from = q->now_ms - HISTORY_TIER0_KEEP_MS - 60000;

	if (range <= 0 || q->step_ms < 0)
		return -EINVAL;
	if (!s)
		s = (range + HISTORY_AUTO_POINTS - 1) / HISTORY_AUTO_POINTS;
	*tier = s < HISTORY_TIER1_STEP_MS && q->from_ms >= tier0_from ? 0 : 1;
	base = *tier ? HISTORY_TIER1_STEP_MS : HISTORY_TIER0_STEP_MS;
	s = (s + base - 1) / base * base;
	if ((range + s - 1) / s > HISTORY_MAX_POINTS)
		return -ERANGE;
	*step = s;
	return 0;
}

static double rounded(double v, double scale)
{
	return round(v / scale * 100.0) / 100.0;
}

/* {"min","avg","max"} of field f from the query's columns at col, or
 * null when no sample in the point carried it. */
static json_t *agg_json(sqlite3_stmt *st, int col, enum history_field f)
{
	double scale = f == HIST_SIGNAL || f == HIST_CNR ? 1000.0 : 1.0;
	int64_t count = sqlite3_column_int64(st, col);

	if (!count)
		return json_null();
	return json_pack(
	    "{s:f,s:f,s:f}", "min",
	    rounded((double)sqlite3_column_int64(st, col + 1), scale), "avg",
	    rounded((double)sqlite3_column_int64(st, col + 3) / (double)count,
		    scale),
	    "max", rounded((double)sqlite3_column_int64(st, col + 2), scale));
}

static json_t *point_json(sqlite3_stmt *st, int64_t step, unsigned int fields)
{
	int64_t n = sqlite3_column_int64(st, 1);
	double lock = n ? (double)sqlite3_column_int64(st, 2) / (double)n : 0;
	json_t *p = json_pack("{s:I,s:I,s:f}", "time",
			      (json_int_t)(sqlite3_column_int64(st, 0) * step),
			      "samples", (json_int_t)n, "lock",
			      round(lock * 1000.0) / 1000.0);

	for (int f = 0; p && f < HIST_NFIELDS; f++)
		if (fields & (1u << f))
			json_object_set_new(
			    p, field_names[f],
			    agg_json(st, 3 + 4 * f, (enum history_field)f));
	return p;
}

static int bind_range(sqlite3_stmt *st, const struct history_query *q)
{
	return sqlite3_bind_int64(st, 1, q->tuner) ||
	       sqlite3_bind_int64(st, 2, q->from_ms) ||
	       sqlite3_bind_int64(st, 3, q->to_ms);
}

static int query_points(struct history_store *s, const struct history_query *q,
			int64_t step, int tier, json_t *points)
{
	static const char *const sum[4] = {"sum(%s_count)", "min(%s_min)",
					   "max(%s_max)", "sum(%s_sum)"};
	char cols[COLS_MAX], sql[COLS_MAX + 256];
	sqlite3_stmt *st;
	int rc;

	field_cols(cols, sizeof(cols), sum);
	snprintf(sql, sizeof(sql),
		 "SELECT t / %lld AS b, sum(samples), sum(locked)%s FROM "
		 "tier%d WHERE tuner = ?1 AND t >= ?2 AND t < ?3 GROUP BY b "
		 "ORDER BY b",
		 (long long)step, cols, tier);
	if (sqlite3_prepare_v2(s->rdb, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(s->rdb, "query");
	if (bind_range(st, q)) {
		sqlite3_finalize(st);
		return sql_fail(s->rdb, "query");
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(points, point_json(st, step, q->fields));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_fail(s->rdb, "query");
}

/* The newest HISTORY_MAX_MARKS marks of the range, oldest first. */
static int query_marks(struct history_store *s, const struct history_query *q,
		       json_t *marks)
{
	static const char sql[] =
	    "SELECT t, mark FROM marks WHERE tuner = ?1 AND t >= ?2 AND t < ?3 "
	    "ORDER BY t DESC, seq DESC LIMIT " TUNERD_STR(HISTORY_MAX_MARKS);
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->rdb, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(s->rdb, "marks");
	if (bind_range(st, q)) {
		sqlite3_finalize(st);
		return sql_fail(s->rdb, "marks");
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(st, 1);
		json_t *m = text ? json_loads(text, 0, NULL) : NULL;

		if (!json_is_object(m)) {
			json_decref(m);
			continue;
		}
		json_object_set_new(m, "time",
				    json_integer(sqlite3_column_int64(st, 0)));
		json_array_insert_new(marks, 0, m);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_fail(s->rdb, "marks");
}

int history_store_query(struct history_store *s, const struct history_query *q,
			json_t **out)
{
	json_t *points = json_array(), *marks = json_array();
	int64_t step = 0;
	int tier = 0;
	int err = choose_step(q, &step, &tier);

	*out = NULL;
	if (!err)
		err = points && marks ? query_points(s, q, step, tier, points)
				      : -ENOMEM;
	if (!err)
		err = query_marks(s, q, marks);
	if (!err)
		*out = json_pack("{s:I,s:I,s:I,s:I,s:I,s:o,s:o}", "tuner",
				 (json_int_t)q->tuner, "from",
				 (json_int_t)q->from_ms, "to",
				 (json_int_t)q->to_ms, "step_ms",
				 (json_int_t)step, "tier_ms",
				 (json_int_t)(tier ? HISTORY_TIER1_STEP_MS
						   : HISTORY_TIER0_STEP_MS),
				 "points", points, "marks", marks);
	else {
		json_decref(points);
		json_decref(marks);
	}
	if (!err && !*out)
		err = -ENOMEM;
	return err;
}

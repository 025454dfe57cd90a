// SPDX-License-Identifier: MIT
/*
 * bench_history [--dir DIR] [--tuners T] [--big B] [--seconds S]
 *
 * What the history costs: (1) one second's write of T tuners (default 4)
 * and of B tuners (default 256), the threadpool job the daemon runs once
 * a second (insert the seconds, roll their minutes up, prune), p50/p99/
 * max over S simulated seconds (default 7200: two hours, so the pruning
 * of the seconds runs); (2) the disk per tuner, from SQLite's dbstat:
 * bytes per row of each tier, times the rows a tier keeps; (3) queries
 * on the loop: the last hour at the default step (900 points) and at
 * 1 s (3,600 points), a day of minutes.
 *
 * Baseline: the same rows inserted in one transaction per second into a
 * bare table with the same columns (same pragmas, no rollup, no prune),
 * in the same directory; the write figures are printed as a ratio to
 * it.  Simulated time: the clock is the second being written.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_proc.h"
#include "history_store.h"
#include "log.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00Z */

struct figures {
	uint64_t *ns;
	size_t n;
};

static uint64_t pct(struct figures *f, int p)
{
	qsort(f->ns, f->n, sizeof(*f->ns), bench_cmp_u64);
	return f->n ? f->ns[(f->n - 1) * (size_t)p / 100] : 0;
}

static void fill(struct history_row *rows, int tuners, int64_t t, int i)
{
	for (int k = 0; k < tuners; k++) {
		struct history_row *r = &rows[k];
		int64_t sig = -50000 + (i * 37 + k * 11) % 1000;

		memset(r, 0, sizeof(*r));
		r->tuner = (uint32_t)k + 1;
		r->time_ms = t;
		r->samples = r->locked = 1;
		r->f[HIST_SIGNAL] = (struct history_agg){1, sig, sig, sig};
		r->f[HIST_CNR] = (struct history_agg){1, 30000, 30000, 30000};
		r->f[HIST_AFC] = (struct history_agg){1, 0, 0, 0};
	}
}

static sqlite3 *bare_open(const char *path)
{
	sqlite3 *db = NULL;
	char cols[1024] = "", sql[1400];

	for (int f = 0; f < HIST_NFIELDS; f++)
		for (int c = 0; c < 4; c++)
			snprintf(cols + strlen(cols),
				 sizeof(cols) - strlen(cols),
				 ", c%d_%d INTEGER", f, c);
	snprintf(sql, sizeof(sql),
		 "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; CREATE "
		 "TABLE t (tuner INTEGER, t INTEGER, samples INTEGER, locked "
		 "INTEGER%s, PRIMARY KEY (tuner, t)) WITHOUT ROWID",
		 cols);
	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		exit(1);
	return db;
}

static void bare_append(sqlite3 *db, sqlite3_stmt *st,
			const struct history_row *rows, int n)
{
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	for (int i = 0; i < n; i++) {
		int col = 5;

		sqlite3_bind_int64(st, 1, rows[i].tuner);
		sqlite3_bind_int64(st, 2, rows[i].time_ms);
		sqlite3_bind_int64(st, 3, rows[i].samples);
		sqlite3_bind_int64(st, 4, rows[i].locked);
		for (int f = 0; f < HIST_NFIELDS; f++, col += 4) {
			sqlite3_bind_int64(st, col, rows[i].f[f].count);
			sqlite3_bind_int64(st, col + 1, rows[i].f[f].min);
			sqlite3_bind_int64(st, col + 2, rows[i].f[f].max);
			sqlite3_bind_int64(st, col + 3, rows[i].f[f].sum);
		}
		sqlite3_step(st);
		sqlite3_reset(st);
	}
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
}

/* S seconds of T tuners into the store and the bare table, alternating. */
static void run_writes(const char *dir, int tuners, int seconds)
{
	char path[512], bpath[512], sql[256] = "INSERT INTO t VALUES (?,?,?,?";
	struct history_row *rows = calloc((size_t)tuners, sizeof(*rows));
	struct figures h = {calloc((size_t)seconds, 8), 0};
	struct figures b = {calloc((size_t)seconds, 8), 0};
	struct history_store *s;
	sqlite3_stmt *st;
	sqlite3 *bare;

	snprintf(path, sizeof(path), "%s/w%d.sqlite3", dir, tuners);
	snprintf(bpath, sizeof(bpath), "%s/b%d.sqlite3", dir, tuners);
	if (history_store_open(path, T0, &s))
		exit(1);
	bare = bare_open(bpath);
	for (int i = 0; i < HIST_NFIELDS * 4; i++)
		strcat(sql, ",?");
	strcat(sql, ")");
	sqlite3_prepare_v2(bare, sql, -1, &st, NULL);
	for (int i = 0; i < seconds; i++) {
		int64_t t = T0 + (int64_t)i * 1000;
		uint64_t t1;

		fill(rows, tuners, t, i);
		t1 = bench_now_ns();
		history_store_append(s, rows, (size_t)tuners, NULL, 0,
				     t + 1000);
		h.ns[h.n++] = bench_now_ns() - t1;
		t1 = bench_now_ns();
		bare_append(bare, st, rows, tuners);
		b.ns[b.n++] = bench_now_ns() - t1;
	}
	printf("write of one second, %3d tuners: p50 %7.3f ms  p99 %7.3f ms  "
	       "max %7.3f ms | bare p50 %7.3f ms (x%.1f)\n",
	       tuners, pct(&h, 50) / 1e6, pct(&h, 99) / 1e6, pct(&h, 100) / 1e6,
	       pct(&b, 50) / 1e6,
	       (double)pct(&h, 50) / (double)(pct(&b, 50) ? pct(&b, 50) : 1));
	sqlite3_finalize(st);
	sqlite3_close(bare);
	history_store_close(s);
	free(rows);
	free(h.ns);
	free(b.ns);
}

static double bytes_per_row(sqlite3 *db, const char *table)
{
	char sql[256];
	sqlite3_stmt *st;
	double bytes = 0, rows = 0;

	snprintf(sql, sizeof(sql),
		 "SELECT (SELECT sum(pgsize) FROM dbstat WHERE name = '%s'), "
		 "(SELECT count(*) FROM %s)",
		 table, table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		bytes = sqlite3_column_double(st, 0);
		rows = sqlite3_column_double(st, 1);
	}
	sqlite3_finalize(st);
	return rows ? bytes / rows : 0;
}

static void report_disk(const char *dir, int tuners)
{
	char path[512];
	sqlite3 *db;
	double r0, r1;

	snprintf(path, sizeof(path), "%s/w%d.sqlite3", dir, tuners);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return;
	r0 = bytes_per_row(db, "tier0");
	r1 = bytes_per_row(db, "tier1");
	printf("disk per tuner: seconds %.0f B/row x 3600 = %.2f MB; minutes "
	       "%.0f B/row x 43200 = %.2f MB; total %.2f MB (+ marks)\n",
	       r0, r0 * 3600 / 1e6, r1, r1 * 43200 / 1e6,
	       (r0 * 3600 + r1 * 43200) / 1e6);
	sqlite3_close(db);
}

static void time_query(struct history_store *s, const char *what, int64_t from,
		       int64_t to, int64_t step, int64_t now)
{
	struct history_query q = {1, from, to, step, ~0u, now};
	uint64_t ns[21];
	size_t points = 0;

	for (int i = 0; i < 21; i++) {
		json_t *a = NULL;
		uint64_t t1 = bench_now_ns();

		history_store_query(s, &q, &a);
		ns[i] = bench_now_ns() - t1;
		points = json_array_size(json_object_get(a, "points"));
		json_decref(a);
	}
	qsort(ns, 21, sizeof(ns[0]), bench_cmp_u64);
	printf("query %-28s %5zu points: p50 %7.3f ms  max %7.3f ms\n", what,
	       points, ns[10] / 1e6, ns[20] / 1e6);
}

static void run_queries(const char *dir, int tuners, int seconds)
{
	char path[512];
	struct history_store *s;
	int64_t now = T0 + (int64_t)seconds * 1000;

	snprintf(path, sizeof(path), "%s/w%d.sqlite3", dir, tuners);
	if (history_store_open(path, now, &s))
		return;
	time_query(s, "the last hour, default step", now - 3600000, now, 0,
		   now);
	time_query(s, "the last hour at 1 s", now - 3600000, now, 1000, now);
	time_query(s, "a day of minutes", now - 86400000, now, 60000, now);
	history_store_close(s);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"dir", required_argument, NULL, 'd'},
	    {"tuners", required_argument, NULL, 't'},
	    {"big", required_argument, NULL, 'b'},
	    {"seconds", required_argument, NULL, 's'},
	    {NULL, 0, NULL, 0}};
	char dir[256] = "";
	int made = 0;
	int tuners = 4, big = 256, seconds = 7200, c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'd')
			snprintf(dir, sizeof(dir), "%s", optarg);
		else if (c == 't')
			tuners = atoi(optarg);
		else if (c == 'b')
			big = atoi(optarg);
		else if (c == 's')
			seconds = atoi(optarg);
		else
			return 2;
	}
	if (!*dir) {
		snprintf(dir, sizeof(dir), "/var/tmp/bench-history-XXXXXX");
		if (!mkdtemp(dir))
			return 1;
		made = 1;
	}
	log_set_level(LL_ERR);
	run_writes(dir, tuners, seconds);
	report_disk(dir, tuners);
	run_queries(dir, tuners, seconds);
	run_writes(dir, big, seconds / 10);
	if (made)
		bench_remove_tree(dir);
	return 0;
}

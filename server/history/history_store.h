/* SPDX-License-Identifier: MIT */
/*
 * history_store.h - the tuners' measurements over time, in SQLite
 * (DIR/history.sqlite3 in the state directory), in two tiers:
 *
 *   tier 0: one row per tuner and second, kept HISTORY_TIER0_KEEP_MS (1 h)
 *   tier 1: one row per tuner and minute, kept HISTORY_TIER1_KEEP_MS (30 d)
 *
 * A row is an aggregate, not a sample: how many samples fell into it, how
 * many of them were locked, and per field (signal, CNR, AFC, bitrate,
 * errors) how many carried it with their min, max and sum.  So a minute
 * is the exact rollup of its seconds (the SQL sums the sums), a query at
 * any step the exact rollup of its rows, and nothing is averaged twice.
 * Tier 1 is made from tier 0 in the same transaction that adds the
 * seconds: the current minute is always up to date, also after a
 * restart, and no rollup state lives outside the database.
 *
 * Lock gained/lost and tunes are kept beside as marks (JSON text per
 * mark), HISTORY_MARKS_KEEP per tuner at most, for as long as tier 1.
 *
 * Two connections: a writer, used by one thread at a time (the daemon
 * runs history_store_append() on libuv's threadpool, one call in flight),
 * and a reader for queries on the caller's thread.  WAL mode lets the
 * reader run beside a write; synchronous=NORMAL means a commit does not
 * fsync (a power cut loses at most the last commits, never the
 * database's integrity), which is what makes a commit per second cheap.
 * Bounded: rows expire by age (pruned once a minute per tuner written,
 * and for every tuner at open), marks by count, and the file by
 * HISTORY_DB_MAX_BYTES (max_page_count: a write past it fails, is
 * logged, and the next prune makes room).
 */
#ifndef TUNERD_HISTORY_STORE_H
#define TUNERD_HISTORY_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define HISTORY_TIER0_STEP_MS 1000
#define HISTORY_TIER1_STEP_MS 60000
#define HISTORY_TIER0_KEEP_MS (3600LL * 1000)
#define HISTORY_TIER1_KEEP_MS (30LL * 24 * 3600 * 1000)
#define HISTORY_MARKS_KEEP    10000
#define HISTORY_DB_MAX_BYTES  (1LL << 30)
/* Points one query may return; more is a 400 (ask a larger step). */
#define HISTORY_MAX_POINTS 10000
/* Marks one query may return (the newest of its range). */
#define HISTORY_MAX_MARKS 1000
#define HISTORY_DB_NAME   "history.sqlite3"

/* The fields, in the order of their columns. */
enum history_field {
	HIST_SIGNAL,  /* mdBm */
	HIST_CNR,     /* mdB */
	HIST_AFC,     /* Hz */
	HIST_BITRATE, /* bit/s of the stream, while one is open */
	HIST_ERRORS,  /* continuity + TEI errors per second, idem */
	HIST_NFIELDS
};

struct history_agg {
	uint32_t count; /* samples that carried the field */
	int64_t min, max, sum;
};

/* One second (tier 0) of one tuner. */
struct history_row {
	uint32_t tuner;
	int64_t time_ms; /* start of the second, ms since the epoch */
	uint32_t samples, locked;
	struct history_agg f[HIST_NFIELDS];
};

struct history_mark {
	uint32_t tuner;
	int64_t time_ms;
	char *json; /* the mark's object without "time" (malloc'd) */
};

struct history_query {
	uint32_t tuner;
	int64_t from_ms, to_ms; /* [from, to) */
	int64_t step_ms;        /* 0: chosen from the range */
	unsigned int fields;    /* bits 1 << enum history_field */
	int64_t now_ms;         /* decides which tier still has the range */
};

struct history_store;

/* The field's API name ("signal", ...), and back (-1: unknown). */
const char *history_field_name(enum history_field f);
int history_field_parse(const char *name, size_t len);

/* Open (creating) path.  0 or -errno (-EIO: SQLite refused; logged). */
int history_store_open(const char *path, int64_t now_ms,
		       struct history_store **out);
void history_store_close(struct history_store *s);

/*
 * One transaction: the seconds, their minutes rolled up again, the
 * marks, and (once a minute per tuner) the expired rows pruned.  Writer
 * connection: one caller at a time, any thread.  0 or -errno.
 */
int history_store_append(struct history_store *s,
			 const struct history_row *rows, size_t nrows,
			 const struct history_mark *marks, size_t nmarks,
			 int64_t now_ms);

/*
 * The answer of GET .../history for q (reader connection):
 * {"tuner","from","to","step_ms","tier_ms","points":[...],"marks":[...]}.
 * 0 with *out, -ERANGE when the range would need more than
 * HISTORY_MAX_POINTS points at q's step, -EINVAL for a bad range, -EIO.
 */
int history_store_query(struct history_store *s, const struct history_query *q,
			json_t **out);

/* The same on a connection of its own to path, opened and closed for
 * the query: safe on any thread, beside the store's own use. */
int history_store_query_file(const char *path, const struct history_query *q,
			     json_t **out);

/* Bytes the database uses now (pages in use x page size). */
int64_t history_store_bytes(struct history_store *s);

#endif /* TUNERD_HISTORY_STORE_H */

/* SPDX-License-Identifier: MIT */
/*
 * history.h - the daemon's side of the tuners' history: samples folded
 * into seconds on the loop, lock and tune events turned into marks, and
 * every second the finished seconds and marks written to the store
 * (history_store.h) on libuv's threadpool, one write in flight; what
 * comes in meanwhile waits for the next one.  Queries run on the
 * threadpool too, each on a read connection of its own (WAL: beside the
 * write), at most HISTORY_QUERIES_MAX at once.  So the loop never waits
 * for SQLite: an hour of seconds is tens of milliseconds of SQL on a
 * busy machine (bench/bench_history).
 *
 * Who samples: the status sampler's consumer in the network layer calls
 * history_sample() for every status read it gets (at least once a second:
 * the history asks the sampler for a 1 s cadence whoever else listens).
 * Loop thread only.
 */
#ifndef TUNERD_HISTORY_H
#define TUNERD_HISTORY_H

#include <jansson.h>
#include <stdint.h>

#include "history_store.h"
#include "tuner_stub.h"

struct history;
struct loop;
struct eventbus;

/* What a tuner's stream adds to a sample while one is open. */
struct history_stream {
	uint64_t bitrate_bps;
	uint64_t errors; /* continuity + TEI errors so far (a counter) */
};

/* Open DIR/history.sqlite3 and start.  NULL when it cannot (logged): the
 * daemon runs without history. */
struct history *history_open(struct loop *loop, struct eventbus *events,
			     const char *dir);
/* One status read of tuner at time_ms (realtime); stream NULL: none. */
void history_sample(struct history *h, uint32_t tuner, int64_t time_ms,
		    const struct tstub_status *st,
		    const struct history_stream *stream);
#define HISTORY_QUERIES_MAX 16

/* The answer of a query: err 0 with answer (the callee's reference), or
 * history_store_query()'s -errno.  On the loop. */
typedef void (*history_answer_fn)(int err, json_t *answer, void *arg);
/* Start the query of GET .../history (history_store_query()); done comes
 * later from the loop, never from inside.  0, or -EBUSY when
 * HISTORY_QUERIES_MAX run already, -ENOMEM. */
int history_query_start(struct history *h, const struct history_query *q,
			history_answer_fn done, void *arg);
/* Wait for the queries in flight (their done() still comes) and the
 * write in flight, at most max_ms in all, write what is waiting, close
 * the store, free. */
void history_close(struct history *h, unsigned int max_ms);
/* Tests and bench: write what is finished now (as the timer would). */
void history_flush_now(struct history *h);
/* Writes done and the time they took on the threadpool (ns). */
void history_write_stats(const struct history *h, uint64_t *writes,
			 uint64_t *total_ns, uint64_t *max_ns);

#endif /* TUNERD_HISTORY_H */

/* SPDX-License-Identifier: MIT */
/*
 * worker_priv.h - private to a tuner's worker process: worker.c (the
 * commands) and worker_after.c (what follows them: the status read after
 * a tune, the report to the daemon, the lock watch).
 */
#ifndef TUNERD_WORKER_PRIV_H
#define TUNERD_WORKER_PRIV_H

#include <signal.h>
#include <stdint.h>
#include <time.h>

#include "tuner.h"
#include "worker.h"
#include "worker_host.h"
#include "worker_proto.h"

/* The lock watch paces its reads at this fraction of the time since the
 * tune began: a lock is seen at most 1/128 (0.8%) of the wait late (at
 * 1/32 the lateness alone was 1.5% of a QT1010 tune), and a chip that
 * never locks costs at most about a thousand reads over a 10 s wait
 * (half of them in its first 100 ms, 13 a second by its end) rather
 * than a busy bus. */
#define WORKER_LOCK_PACE_DIV    128
#define WORKER_LOCK_READ_MIN_NS 50000ull

/*
 * The reports of the stub's commands are held while the stub keeps the
 * worker busy, and go together once it has been quiet for
 * WORKER_OWED_QUIET_NS or WORKER_HELD_MAX are held; any other report
 * (the daemon's commands, BEGIN, LOCK) sends them first, so the daemon
 * reads every report in order.  Trade-off: the daemon learns of a
 * kernel's tune or status read up to a quiet period (or WORKER_HELD_MAX
 * commands) later, and in exchange a burst of kernel requests wakes it
 * once instead of once per request: on two cores the daemon woken per
 * request costs the kernel's own caller a cross-CPU wake-up on most
 * round trips (bench_stub: 6x the round trip on a KVM guest).
 *
 * The quiet period is watched by a timerfd in the worker's wait
 * (worker.c), not by the wait's own timeout: a sub-millisecond timeout
 * is the earliest timer of its CPU, armed and cancelled on every
 * command, and on a virtual machine each such reprogramming of the CPU's
 * timer traps to the hypervisor (bench_stub --cpu 0, MT2060: 38 us a
 * tune with the timeout, 22 us without).  The timerfd is armed lazily:
 * while commands come it fires once per quiet period and is re-armed
 * then, so the deferred work runs 0.2 ms after the last command.
 */
#define WORKER_HELD_MAX      8
#define WORKER_OWED_QUIET_NS 200000ull

/*
 * The lock watch: a chip has no lock interrupt, so after a tune that left
 * it unlocked while a caller waits for lock, the worker reads the status
 * between commands until it shows lock (reported at once, WMSG_LOCK) or
 * the caller's wait ends.  A new tune, init or sleep ends it; status and
 * the kernel's other reads do not.
 */
struct lock_watch {
	uint64_t until_ns; /* 0: no watch */
	uint64_t since_ns; /* the tune began */
	uint64_t next_ns;  /* the next read */
	uint64_t req_id;
	uint32_t reads;
};

/* One command, whichever side asked for it. */
struct worker_cmd {
	enum tuner_origin origin;
	enum tuner_op op;
	uint64_t req_id;
	struct tstub_params params; /* TUNE */
	uint64_t deadline_ns;
	uint64_t lock_deadline_ns; /* TUNE: someone waits for lock */
	uint64_t t0, t1;           /* began, ended (0: at the report) */
	int began;                 /* its BEGIN was sent */
	int err;
	struct tstub_status status;
	int have_status;
	struct tstub_freq freq;
};

struct worker {
	const struct worker_args *a;
	void *priv;
	struct tstub_params cur; /* last params set successfully */
	int have_cur;
	struct worker_ctx ctx;
	struct lock_watch watch;
	/* A stub's tune already answered whose status read and report wait
	 * until the stub is quiet (owed_at_ns), so the kernel's next request
	 * never queues behind them. */
	struct worker_cmd owed;
	uint64_t owed_at_ns; /* 0: none owed */
	/* The stub's commands' reports, held until the stub is quiet. */
	union wmsg held[WORKER_HELD_MAX];
	unsigned int nheld;
	uint64_t held_until_ns; /* the stub quiet since the last one held */
	union wmsg begin;       /* the running command's start, if reported */
	volatile sig_atomic_t begin_armed; /* not yet reported: the timer may */
	volatile sig_atomic_t began;
	volatile uint64_t late_at_ns;         /* when BEGIN is due */
	volatile sig_atomic_t late_timer_set; /* the timer will fire */
	timer_t late_timer;
	int have_late_timer;
	int quiet_fd;            /* timerfd of the deferred work; -1: none */
	uint64_t quiet_armed_ns; /* when it expires; 0: not armed */
};

/*
 * A stub's command that runs longer reports its start (BEGIN): far below
 * any deadline the daemon's hang watch keeps, above what a burst queues
 * a command for.  64 tunes at once on two cores take ~4 ms; at 1 ms the
 * burst's later commands were signalled mid-command to report starts the
 * daemon then published (bench_stub: 5.6 ms for the burst at 1 ms,
 * 4.3-4.8 ms at 10 ms).
 */
#define WORKER_BEGIN_LATE_NS 10000000ull

/* How a stub's tune owed its status gets it. */
enum worker_owed {
	WORKER_OWED_READ = 1, /* read it now */
	WORKER_OWED_NONE,     /* the stub is busy again: none (null) */
};

/* worker_after.c */
int worker_read_status(struct worker *wk, struct tstub_status *st,
		       int ask_chip);
/* Report m to the daemon; a stub's command's DONE is held (above). */
void worker_report(struct worker *wk, union wmsg *m);
/* Send the held reports now.  Async-signal-safe (send() only). */
void worker_flush_held(struct worker *wk);
/* Report c to the daemon: after a good tune, notify the stub when asked
 * and read the status first (the API's tunes answer with it). */
void worker_finish(struct worker *wk, struct worker_cmd *c, int notify_stub);
/* A stub's good tune, answered: its status read and report wait until
 * the stub is quiet or a command comes. */
void worker_finish_later(struct worker *wk, struct worker_cmd *c);
/* Send the owed report: with a fresh read, none, or the status st of a
 * read that came first (the kernel's own, right after the tune). */
void worker_settle_owed(struct worker *wk, enum worker_owed how,
			const struct tstub_status *st);
/* The time the next deferred work is due (0: none), and doing it. */
uint64_t worker_next_due_ns(const struct worker *wk);
void worker_run_due(struct worker *wk);
/* Right before every wait (never from the signal handler): the deferred
 * work now held or owed, whichever path left it, is timed by the
 * timerfd; with none, the stub has been quiet. */
void worker_time_deferred(struct worker *wk);
/* worker.c: wake the worker's wait at at_ns for the deferred work (the
 * timerfd's; without one, worker_next_due_ns() bounds the wait), and the
 * stub quiet with nothing left to do (the late timer is disarmed). */
void worker_wake_at(struct worker *wk, uint64_t at_ns);
void worker_quiet_reached(struct worker *wk);
/* A new tune, init or sleep makes the watched params history. */
void worker_watch_stop(struct worker *wk);

#endif /* TUNERD_WORKER_PRIV_H */

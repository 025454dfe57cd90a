/* SPDX-License-Identifier: MIT */
/*
 * worker_zygote.h - where worker processes come from.
 *
 * A worker forked from the running daemon shares its pages copy-on-write
 * and soon owns private copies of whatever it touches in the daemon's
 * heap (about 150-450 KiB each; 256 workers cost more than the daemon).
 * The zygote is forked once at start, before the daemon grows: it holds
 * nothing but the program and libc's state, and forks each worker on
 * request.  Each worker is made with CLONE_PARENT, so it is the daemon's
 * child as before: the daemon waits for it, kills it and reads its exit
 * status exactly as for a worker it forked itself, and PR_SET_PDEATHSIG
 * ties the worker to the daemon.
 *
 * Without a zygote (never started, or gone) workers are forked from the
 * daemon, as the unit tests do.  One that is gone is forked again at a
 * later spawn (at most every 10 s), from the grown daemon: it then costs
 * one daemon's worth of pages once, where each worker forked from the
 * daemon would copy what it touches.
 */
#ifndef TUNERD_WORKER_ZYGOTE_H
#define TUNERD_WORKER_ZYGOTE_H

#include <sys/types.h>

#include "worker.h"

/* How long the daemon waits for the zygote to answer a spawn. */
#define WORKER_ZYGOTE_WAIT_MS 2000

/* Fork the zygote (once, early in main).  0 or a negative errno; without
 * it workers are forked from the daemon. */
int worker_zygote_start(void);
/* Stop and reap the zygote (the daemon's end). */
void worker_zygote_stop(void);
/* A worker for a (a->daemon_fd is sent along and stays the caller's to
 * close).  The worker's pid, -ECHILD when there is no zygote (fork the
 * worker yourself), or another negative errno. */
pid_t worker_zygote_spawn(const struct worker_args *a);

/* The child's side of any spawn: tie the process to the daemon (parent),
 * drop every fd but a->daemon_fd, reset signals, run the worker. */
void worker_become(const struct worker_args *a, pid_t parent)
    __attribute__((noreturn));

#endif /* TUNERD_WORKER_ZYGOTE_H */

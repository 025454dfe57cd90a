/* SPDX-License-Identifier: MIT */
/*
 * bench_proc.h - what every benchmark program needs around its
 * measurements: a monotonic clock, a u64 comparator for qsort(), a free
 * loopback port, child processes that log to a file and die with the
 * bench, the program's own directory, and removing a run's work
 * directory.
 */
#ifndef BENCH_PROC_H
#define BENCH_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* CLOCK_MONOTONIC, in nanoseconds and in seconds. */
uint64_t bench_now_ns(void);
double bench_now_s(void);

/* qsort() comparator of uint64_t, ascending. */
int bench_cmp_u64(const void *a, const void *b);

/* A TCP port on 127.0.0.1 free right now (bound, read back, closed), or
 * -1.  Another process may take it before the caller does: fine on a
 * bench machine, not for anything that must not fail. */
int bench_free_port(void);

/*
 * Runs argv[0] (a path, no PATH search) with stdout and stderr to log,
 * truncated.  The child gets SIGKILL when the bench dies, so an
 * interrupted run leaves nothing behind.  Returns the child's pid, or -1.
 */
pid_t bench_spawn(char *const argv[], const char *log);

/* The directory of the running program (tunerd and the box sit beside
 * the benches in build/bin); 0, or -1 when it cannot be read. */
int bench_self_dir(char *dir, size_t len);

/* SIGTERM, then waits for it; pid <= 0 is ignored. */
void bench_stop(pid_t pid);

/* Removes dir and everything under it (symlinks not followed). */
void bench_remove_tree(const char *dir);

#endif

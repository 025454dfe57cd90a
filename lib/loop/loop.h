/* SPDX-License-Identifier: MIT */
/*
 * loop.h - the event loop of the daemon and of the simulated box: a thin
 * layer over libuv that keeps the callers' shape (an fd is watched by
 * number, a timer is an id that may be stale) and adds precise timers.
 *
 * libuv owns the loop; this layer only maps fds and ids to libuv handles.
 * Code that speaks libuv (the WebSocket writer's prepare and idle
 * handles) gets the uv_loop_t from loop_uv() and adds its own handles
 * beside ours.
 *
 * Single-threaded: every function belongs to the thread running the loop,
 * and every callback runs in it.
 */
#ifndef TUNERD_LOOP_H
#define TUNERD_LOOP_H

#include <stdint.h>
#include <time.h>
#include <uv.h>

struct loop;

#define LOOP_READ  0x1
#define LOOP_WRITE 0x2
/* Reported together with LOOP_READ to a watch that asks for LOOP_READ:
 * the peer hung up (also half-closed) or the fd errored.  Never asked for
 * explicitly.  A watch without LOOP_READ learns of a hang-up from the
 * write that fails. */
#define LOOP_HUP 0x4

/* A timer callback returns the delay until it runs again (ms for
 * loop_add_timer, ns for loop_add_timer_ns), or LOOP_TIMER_DONE. */
#define LOOP_TIMER_DONE (-1L)

typedef void (*loop_fd_fn)(struct loop *l, int fd, unsigned int events,
			   void *arg);
typedef long (*loop_timer_fn)(struct loop *l, uint64_t id, void *arg);

struct loop *loop_new(void);
/* Closes every handle still registered (without calling it) and frees the
 * loop; the callers close their own descriptors.  Handles that other
 * libraries added to loop_uv() must be closed before. */
void loop_free(struct loop *l);
/* The libuv loop underneath, to embed libraries that run on libuv. */
uv_loop_t *loop_uv(struct loop *l);

/* Watch fd for mask (LOOP_READ | LOOP_WRITE, or 0 to keep it registered
 * but quiet).  Level-triggered.  One watch per fd.  libuv makes the fd
 * non-blocking (O_NONBLOCK), also for what else reads it.  Returns 0 or a
 * negative errno. */
int loop_add_fd(struct loop *l, int fd, unsigned int mask, loop_fd_fn fn,
		void *arg);
int loop_set_fd_mask(struct loop *l, int fd, unsigned int mask);
/* Safe from inside any callback, also for an fd whose event is pending:
 * it is not called again.  Call it before closing the fd. */
void loop_del_fd(struct loop *l, int fd);

/* Run fn after ms milliseconds (libuv's timers: 1 ms resolution).  Returns
 * the timer id (never 0), or 0 on allocation failure. */
uint64_t loop_add_timer(struct loop *l, uint64_t ms, loop_timer_fn fn,
			void *arg);
/* Run fn after ns nanoseconds, to the kernel's timer precision (a timerfd),
 * for delays below a millisecond: modelled bus times, for instance. */
uint64_t loop_add_timer_ns(struct loop *l, uint64_t ns, loop_timer_fn fn,
			   void *arg);
/* Deleting an unknown, finished or stale id, or 0, is a no-op; a callback
 * may delete any timer, itself included. */
void loop_del_timer(struct loop *l, uint64_t id);

/* Run until loop_stop().  Returns 0, or a negative errno. */
int loop_run(struct loop *l);
/*
 * One round: wait at most max_wait_ms (-1: no limit, 0: poll) for fds or
 * timers, then dispatch what is ready.  Returns the number of callbacks
 * run, or a negative errno.
 */
int loop_run_once(struct loop *l, int max_wait_ms);
void loop_stop(struct loop *l);

/*
 * For a host that embeds the loop in its own poll(): poll loop_fd() for
 * POLLIN with loop_next_timeout_ms() as the timeout (-1: none), then call
 * loop_run_once(l, 0).  The fd is readable when watched fds or precise
 * timers are ready; the timeout covers millisecond timers, and is 0 while
 * watches added or changed since the last round are not yet in the fd's
 * set (libuv enters them at the start of a round), so polling the fd
 * alone can miss them.
 */
int loop_fd(const struct loop *l);
int loop_next_timeout_ms(const struct loop *l);

/* CLOCK_MONOTONIC in milliseconds and nanoseconds. */
uint64_t loop_now_ms(void);
uint64_t loop_now_ns(void);

/* ns as a struct timespec: a timer's value, a sleep, a wait's bound. */
static inline struct timespec loop_timespec(uint64_t ns)
{
	return (struct timespec){.tv_sec = (time_t)(ns / 1000000000ull),
				 .tv_nsec = (long)(ns % 1000000000ull)};
}

#endif /* TUNERD_LOOP_H */

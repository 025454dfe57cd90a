/* SPDX-License-Identifier: MIT */
/*
 * loop.h - the daemon's event loop: file descriptors (epoll), timers and
 * work posted from other threads.  Every callback runs in the loop thread.
 *
 * Other threads (an HTTP server's, for instance) call only loop_post() and
 * loop_stop(); everything else belongs to the loop thread.
 */
#ifndef TUNERD_LOOP_H
#define TUNERD_LOOP_H

#include <stdint.h>

struct loop;

#define LOOP_READ  0x1
#define LOOP_WRITE 0x2
/* Reported together with LOOP_READ: the peer hung up or the fd errored. */
#define LOOP_HUP 0x4

/* A timer callback returns the delay until it runs again, in ms, or
 * LOOP_TIMER_DONE to end. */
#define LOOP_TIMER_DONE (-1L)

typedef void (*loop_fd_fn)(struct loop *l, int fd, unsigned int events,
			   void *arg);
typedef long (*loop_timer_fn)(struct loop *l, uint64_t id, void *arg);
typedef void (*loop_work_fn)(void *arg);

struct loop *loop_new(void);
void loop_free(struct loop *l);

/* Watch fd for mask (LOOP_READ | LOOP_WRITE).  Level-triggered.
 * Returns 0 or a negative errno. */
int loop_add_fd(struct loop *l, int fd, unsigned int mask, loop_fd_fn fn,
		void *arg);
int loop_set_fd_mask(struct loop *l, int fd, unsigned int mask);
/* Safe from inside any callback, also for an fd whose event is pending. */
void loop_del_fd(struct loop *l, int fd);

/* Run fn after ms milliseconds.  Returns the timer id (never 0), or 0 on
 * allocation failure. */
uint64_t loop_add_timer(struct loop *l, uint64_t ms, loop_timer_fn fn,
			void *arg);
/* Deleting an unknown or finished id, or 0, is a no-op. */
void loop_del_timer(struct loop *l, uint64_t id);

/* Any thread: run fn(arg) in the loop thread soon.  Returns 0 or
 * -ENOMEM / -ESHUTDOWN (loop freed or stopping). */
int loop_post(struct loop *l, loop_work_fn fn, void *arg);

/* Run until loop_stop().  Returns 0, or a negative errno if epoll fails. */
int loop_run(struct loop *l);
/* One round: wait at most max_wait_ms (or until the nearest timer) for
 * fds, dispatch them, run due timers.  For tests and nested waits.
 * Returns 0 or a negative errno. */
int loop_run_once(struct loop *l, int max_wait_ms);
/* Any thread. */
void loop_stop(struct loop *l);
/* 1 when called from the thread running (or that created) the loop. */
int loop_in_thread(const struct loop *l);

/* CLOCK_MONOTONIC in milliseconds and nanoseconds. */
uint64_t loop_now_ms(void);
uint64_t loop_now_ns(void);

#endif /* TUNERD_LOOP_H */

/* SPDX-License-Identifier: MIT */
/*
 * loop.h - the simulated box's event loop: file descriptors and timers
 * behind one epoll fd, so that a host program can poll the box like any
 * other descriptor and run it a step at a time.
 *
 * Single-threaded: every function belongs to the thread running the loop.
 */
#ifndef SIM_LOOP_H
#define SIM_LOOP_H

#include <stdint.h>

struct sim_loop;
struct sim_loop_watch;

/* events: EPOLLIN, EPOLLOUT, EPOLLHUP, EPOLLERR, EPOLLRDHUP as epoll gives
 * them. */
typedef void (*sim_loop_fd_fn)(struct sim_loop *l, int fd, uint32_t events,
			       void *arg);
typedef void (*sim_loop_timer_fn)(struct sim_loop *l, uint64_t id, void *arg);

struct sim_loop *sim_loop_new(void);
/* Frees the watches and timers still registered (without calling them);
 * the caller closes its own descriptors. */
void sim_loop_free(struct sim_loop *l);

/* The epoll fd: readable when a watched fd is ready or a timer is due. */
int sim_loop_fd(const struct sim_loop *l);

/* Watch fd (level-triggered).  NULL on failure with errno set. */
struct sim_loop_watch *sim_loop_watch_add(struct sim_loop *l, int fd,
					  uint32_t events, sim_loop_fd_fn fn,
					  void *arg);
int sim_loop_watch_mod(struct sim_loop *l, struct sim_loop_watch *w,
		       uint32_t events);
/* Safe from any callback, also for a watch whose event is pending in the
 * current round: it is not called again.  NULL is a no-op. */
void sim_loop_watch_del(struct sim_loop *l, struct sim_loop_watch *w);

/* Call fn once, delay_ns from now.  Returns the id (never 0) or 0 when
 * out of memory. */
uint64_t sim_loop_timer_add(struct sim_loop *l, uint64_t delay_ns,
			    sim_loop_timer_fn fn, void *arg);
/* Unknown, fired or 0 ids are a no-op. */
void sim_loop_timer_del(struct sim_loop *l, uint64_t id);

/*
 * Wait at most timeout_ms (-1: no limit, 0: poll) for events, then
 * dispatch the ready descriptors and the due timers.  Returns the number
 * of callbacks run, or a negative errno when epoll fails.
 */
int sim_loop_run_once(struct sim_loop *l, int timeout_ms);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t sim_loop_now_ns(void);

#endif /* SIM_LOOP_H */

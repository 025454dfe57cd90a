// SPDX-License-Identifier: MIT
/*
 * loop.c - epoll plus one timerfd.
 *
 * Trade-offs:
 * - Timers live in one list sorted by deadline.  The next deadline is the
 *   head (O(1)); inserting walks from the tail, which is O(1) for the usual
 *   case of requests with equal timeouts; cancelling by id walks the list
 *   (O(N)).  N is the number of requests and delayed replies in flight, a
 *   few hundred at most, so a heap or a timing wheel would not pay.
 * - The earliest deadline is programmed into a timerfd inside the epoll
 *   set, so the epoll fd alone tells a host program when the box needs to
 *   run: no separate "next timeout" to query.  It costs one
 *   timerfd_settime() whenever the head of the list changes.
 * - Watches are freed only at the end of a round: a callback may delete a
 *   watch whose event is still pending in the same epoll batch.
 */
#include "loop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define LOOP_BATCH 64

struct sim_loop_watch {
	struct sim_loop_watch *next; /* live list, then the graveyard */
	struct sim_loop_watch *prev;
	int fd;
	bool dead;
	sim_loop_fd_fn fn;
	void *arg;
};

struct sim_loop_timer {
	struct sim_loop_timer *prev, *next;
	uint64_t id;
	uint64_t when_ns;
	sim_loop_timer_fn fn;
	void *arg;
};

struct sim_loop {
	int epfd;
	int tfd;
	uint64_t armed_ns; /* deadline in the timerfd, 0 = disarmed */
	uint64_t next_id;
	struct sim_loop_timer *head, *tail;
	struct sim_loop_watch *watches;
	struct sim_loop_watch *graveyard;
};

uint64_t sim_loop_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct sim_loop *sim_loop_new(void)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	struct sim_loop *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (l->epfd < 0 || l->tfd < 0)
		goto err;
	/* data.ptr NULL marks the timerfd: no watch is ever NULL. */
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->tfd, &ev) < 0)
		goto err;
	return l;
err:
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->tfd >= 0)
		close(l->tfd);
	free(l);
	return NULL;
}

static void loop_free_watches(struct sim_loop_watch *w)
{
	while (w) {
		struct sim_loop_watch *next = w->next;

		free(w);
		w = next;
	}
}

void sim_loop_free(struct sim_loop *l)
{
	struct sim_loop_timer *t;

	if (!l)
		return;
	while ((t = l->head)) {
		l->head = t->next;
		free(t);
	}
	loop_free_watches(l->watches);
	loop_free_watches(l->graveyard);
	close(l->tfd);
	close(l->epfd);
	free(l);
}

int sim_loop_fd(const struct sim_loop *l)
{
	return l->epfd;
}

struct sim_loop_watch *sim_loop_watch_add(struct sim_loop *l, int fd,
					  uint32_t events, sim_loop_fd_fn fn,
					  void *arg)
{
	struct sim_loop_watch *w = calloc(1, sizeof(*w));
	struct epoll_event ev = {.events = events};

	if (!w)
		return NULL;
	w->fd = fd;
	w->fn = fn;
	w->arg = arg;
	ev.data.ptr = w;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = errno;

		free(w);
		errno = e;
		return NULL;
	}
	w->next = l->watches;
	if (l->watches)
		l->watches->prev = w;
	l->watches = w;
	return w;
}

int sim_loop_watch_mod(struct sim_loop *l, struct sim_loop_watch *w,
		       uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	if (w->dead)
		return -EBADF;
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0 ? -errno : 0;
}

void sim_loop_watch_del(struct sim_loop *l, struct sim_loop_watch *w)
{
	if (!w || w->dead)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->dead = true;
	if (w->prev)
		w->prev->next = w->next;
	else
		l->watches = w->next;
	if (w->next)
		w->next->prev = w->prev;
	w->prev = NULL;
	w->next = l->graveyard;
	l->graveyard = w;
}

/* Program the timerfd for the head of the list if it changed. */
static void loop_arm(struct sim_loop *l)
{
	uint64_t when = l->head ? l->head->when_ns : 0;
	struct itimerspec its = {0};

	if (when == l->armed_ns)
		return;
	/* An absolute time of 0 would disarm: a due timer needs >= 1 ns. */
	its.it_value.tv_sec = (time_t)(when / 1000000000ull);
	its.it_value.tv_nsec = (long)(when % 1000000000ull);
	if (when && !its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	l->armed_ns = when;
}

static void loop_timer_unlink(struct sim_loop *l, struct sim_loop_timer *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		l->head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	else
		l->tail = t->prev;
}

uint64_t sim_loop_timer_add(struct sim_loop *l, uint64_t delay_ns,
			    sim_loop_timer_fn fn, void *arg)
{
	struct sim_loop_timer *t = calloc(1, sizeof(*t));
	struct sim_loop_timer *after;

	if (!t)
		return 0;
	t->id = ++l->next_id;
	t->when_ns = sim_loop_now_ns() + delay_ns;
	t->fn = fn;
	t->arg = arg;
	after = l->tail;
	while (after && after->when_ns > t->when_ns)
		after = after->prev;
	t->prev = after;
	t->next = after ? after->next : l->head;
	if (t->next)
		t->next->prev = t;
	else
		l->tail = t;
	if (after)
		after->next = t;
	else
		l->head = t;
	loop_arm(l);
	return t->id;
}

void sim_loop_timer_del(struct sim_loop *l, uint64_t id)
{
	struct sim_loop_timer *t;

	if (!id)
		return;
	for (t = l->head; t; t = t->next) {
		if (t->id == id) {
			loop_timer_unlink(l, t);
			free(t);
			loop_arm(l);
			return;
		}
	}
}

/*
 * Timers added by the callbacks of this round wait for the next one (ids
 * above max_id), so a callback re-adding itself with no delay cannot
 * starve the descriptors.
 */
static int loop_fire_timers(struct sim_loop *l)
{
	uint64_t now = sim_loop_now_ns();
	uint64_t max_id = l->next_id;
	struct sim_loop_timer *t;
	int n = 0;

	while ((t = l->head) && t->when_ns <= now && t->id <= max_id) {
		sim_loop_timer_fn fn = t->fn;
		void *arg = t->arg;
		uint64_t id = t->id;

		loop_timer_unlink(l, t);
		free(t);
		fn(l, id, arg);
		n++;
	}
	return n;
}

static void loop_drain_timerfd(struct sim_loop *l)
{
	uint64_t expirations;

	if (read(l->tfd, &expirations, sizeof(expirations)) < 0)
		return;  /* EAGAIN: re-armed before we read it */
	l->armed_ns = 0; /* fired: re-arm even for the same deadline */
}

int sim_loop_run_once(struct sim_loop *l, int timeout_ms)
{
	struct epoll_event evs[LOOP_BATCH];
	int n, ran = 0;

	n = epoll_wait(l->epfd, evs, LOOP_BATCH, timeout_ms);
	if (n < 0) {
		if (errno != EINTR)
			return -errno;
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		struct sim_loop_watch *w = evs[i].data.ptr;

		if (!w) {
			loop_drain_timerfd(l);
			continue;
		}
		if (w->dead)
			continue;
		w->fn(l, w->fd, evs[i].events, w->arg);
		ran++;
	}
	ran += loop_fire_timers(l);
	loop_free_watches(l->graveyard);
	l->graveyard = NULL;
	loop_arm(l);
	return ran;
}

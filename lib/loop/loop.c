// SPDX-License-Identifier: MIT
/*
 * The loop on libuv (loop.h).
 *
 * Watches: one uv_poll_t per fd, found through a table indexed by the fd
 * number, so callers keep speaking of fds.  A deleted watch is stopped and
 * closed at once: libuv then drops its pending events, and the handle's
 * memory goes back in the close callback.
 *
 * Timers: a slot table with a generation per slot, so an id is (slot,
 * generation) and a stale id is recognised in O(1) without a search.
 * Slots keep their libuv handles initialised while free: a timer-heavy
 * caller (a bus model arms one per transfer) then costs no allocation and
 * no handle setup per timer.
 *
 * Precise timers: libuv counts time in milliseconds, too coarse for a
 * modelled I2C transfer of a few hundred microseconds.  Those timers are
 * kernel timerfds watched like any other fd, so the kernel orders them and
 * no timer queue is kept here; the price is two system calls per timer
 * (arm, read), paid only by the callers that ask for precision.  A slot's
 * timerfd stays in libuv's epoll set while the slot is free (disarmed, so
 * quiet), which keeps epoll_ctl() out of the per-timer cost.
 */
#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define LOOP_SLOT_BITS 32

struct loop_watch {
	uv_poll_t poll;
	struct loop *l;
	int fd;
	unsigned int mask;
	loop_fd_fn fn;
	void *arg;
};

struct loop_timer {
	uv_timer_t timer; /* coarse timers */
	uv_poll_t poll;   /* precise timers: watches tfd */
	int tfd;          /* -1 until the slot first serves a precise timer */
	struct loop *l;
	uint32_t index;
	uint32_t gen;
	int armed;
	int precise;
	loop_timer_fn fn;
	void *arg;
	struct loop_timer *next_free;
};

struct loop {
	uv_loop_t uv;
	struct loop_watch **watches; /* by fd */
	int nwatches;
	struct loop_timer **timers; /* by slot */
	uint32_t ntimers;
	struct loop_timer *free_timers;
	uv_timer_t wake; /* bounds loop_run_once()'s wait */
	unsigned long dispatched;
	int stop;
};

uint64_t loop_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t loop_now_ms(void)
{
	return loop_now_ns() / 1000000ull;
}

uv_loop_t *loop_uv(struct loop *l)
{
	return &l->uv;
}

struct loop *loop_new(void)
{
	struct loop *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	if (uv_loop_init(&l->uv) < 0) {
		free(l);
		return NULL;
	}
	uv_timer_init(&l->uv, &l->wake);
	uv_unref((uv_handle_t *)&l->wake);
	return l;
}

static void close_handle(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	for (int fd = 0; fd < l->nwatches; fd++)
		loop_del_fd(l, fd);
	/* Timer slots are freed below, once libuv let go of their handles. */
	uv_walk(&l->uv, close_handle, NULL);
	uv_run(&l->uv, UV_RUN_DEFAULT);
	uv_loop_close(&l->uv);
	for (uint32_t i = 0; i < l->ntimers; i++) {
		if (l->timers[i]->tfd >= 0)
			close(l->timers[i]->tfd);
		free(l->timers[i]);
	}
	free(l->timers);
	free(l->watches);
	free(l);
}

/* ---- fds ---- */

/* A hang-up is asked for with LOOP_READ only: a half-closed peer stays
 * half-closed (EPOLLRDHUP is level-triggered), so a watch that only
 * writes would be woken in every round until its socket has room.  A
 * writer learns of a full hang-up from its failing write. */
static int uv_events_of(unsigned int mask)
{
	return (mask & LOOP_READ ? UV_READABLE | UV_DISCONNECT : 0) |
	       (mask & LOOP_WRITE ? UV_WRITABLE : 0);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	struct loop_watch *w = p->data;
	unsigned int got = 0;

	if (status < 0)
		got = LOOP_READ | LOOP_HUP;
	if (events & UV_READABLE)
		got |= LOOP_READ;
	if (events & UV_WRITABLE)
		got |= LOOP_WRITE;
	if (events & UV_DISCONNECT)
		got |= LOOP_READ | LOOP_HUP;
	if (!(got & (w->mask | LOOP_HUP)))
		return;
	w->l->dispatched++;
	w->fn(w->l, w->fd, got & (w->mask | LOOP_HUP), w->arg);
}

static int watch_apply(struct loop_watch *w, unsigned int mask)
{
	int err;

	w->mask = mask;
	/* A quiet watch stays registered but asks libuv for nothing: a hang
	 * up is then noticed on the next mask that asks for something. */
	if (!mask)
		return uv_poll_stop(&w->poll);
	err = uv_poll_start(&w->poll, uv_events_of(mask), on_poll);
	return err < 0 ? err : 0;
}

static int watch_table_fit(struct loop *l, int fd)
{
	struct loop_watch **grown;
	int n;

	if (fd < l->nwatches)
		return 0;
	n = l->nwatches ? l->nwatches : 64;
	while (n <= fd)
		n *= 2;
	grown = realloc(l->watches, (size_t)n * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	memset(grown + l->nwatches, 0,
	       (size_t)(n - l->nwatches) * sizeof(*grown));
	l->watches = grown;
	l->nwatches = n;
	return 0;
}

int loop_add_fd(struct loop *l, int fd, unsigned int mask, loop_fd_fn fn,
		void *arg)
{
	struct loop_watch *w;
	int err;

	if (fd < 0 || !fn)
		return -EINVAL;
	if (watch_table_fit(l, fd) < 0)
		return -ENOMEM;
	if (l->watches[fd])
		return -EEXIST;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	err = uv_poll_init(&l->uv, &w->poll, fd);
	if (err < 0) {
		free(w);
		return err;
	}
	*w = (struct loop_watch){
	    .poll = w->poll, .l = l, .fd = fd, .fn = fn, .arg = arg};
	w->poll.data = w;
	err = watch_apply(w, mask);
	if (err < 0) {
		uv_close((uv_handle_t *)&w->poll, (uv_close_cb)free);
		return err;
	}
	l->watches[fd] = w;
	return 0;
}

int loop_set_fd_mask(struct loop *l, int fd, unsigned int mask)
{
	if (fd < 0 || fd >= l->nwatches || !l->watches[fd])
		return -ENOENT;
	if (l->watches[fd]->mask == mask)
		return 0;
	return watch_apply(l->watches[fd], mask);
}

void loop_del_fd(struct loop *l, int fd)
{
	struct loop_watch *w;

	if (fd < 0 || fd >= l->nwatches || !(w = l->watches[fd]))
		return;
	l->watches[fd] = NULL;
	uv_close((uv_handle_t *)&w->poll, (uv_close_cb)free);
}

/* ---- timers ---- */

static uint64_t timer_id(const struct loop_timer *t)
{
	return (uint64_t)t->gen << LOOP_SLOT_BITS | (t->index + 1);
}

static struct loop_timer *timer_lookup(struct loop *l, uint64_t id)
{
	uint64_t slot = id & ((1ull << LOOP_SLOT_BITS) - 1);
	struct loop_timer *t;

	if (!slot || slot > l->ntimers)
		return NULL;
	t = l->timers[slot - 1];
	return t->armed && timer_id(t) == id ? t : NULL;
}

static struct loop_timer *timer_slot_new(struct loop *l)
{
	struct loop_timer **grown, *t;

	if (l->free_timers) {
		t = l->free_timers;
		l->free_timers = t->next_free;
		return t;
	}
	t = calloc(1, sizeof(*t));
	grown =
	    t ? realloc(l->timers, (l->ntimers + 1) * sizeof(*grown)) : NULL;
	if (!grown) {
		free(t);
		return NULL;
	}
	l->timers = grown;
	t->l = l;
	t->tfd = -1;
	t->index = l->ntimers;
	uv_timer_init(&l->uv, &t->timer);
	t->timer.data = t;
	l->timers[l->ntimers++] = t;
	return t;
}

static void timer_release(struct loop_timer *t)
{
	t->armed = 0;
	t->gen++; /* every id handed out for this use is stale now */
	t->next_free = t->l->free_timers;
	t->l->free_timers = t;
}

static void on_coarse_timer(uv_timer_t *h);
static void on_precise_timer(uv_poll_t *p, int status, int events);

static int timer_arm(struct loop_timer *t, uint64_t delay)
{
	struct itimerspec its = {0};

	if (!t->precise)
		return uv_timer_start(&t->timer, on_coarse_timer, delay, 0);
	/* A zero it_value disarms a timerfd: "now" is one nanosecond. */
	its.it_value = loop_timespec(delay ? delay : 1);
	if (timerfd_settime(t->tfd, 0, &its, NULL) < 0)
		return -errno;
	uv_ref((uv_handle_t *)&t->poll);
	return 0;
}

/* expired: the timer fired and was not re-armed.  Both kinds are
 * one-shot, and a fired precise one's timerfd was read and is quiet: it
 * needs no system call to disarm, only to stop holding the loop. */
static void timer_disarm(struct loop_timer *t, int expired)
{
	static const struct itimerspec off;

	if (!t->precise) {
		uv_timer_stop(&t->timer);
		return;
	}
	uv_unref((uv_handle_t *)&t->poll);
	if (!expired)
		timerfd_settime(t->tfd, 0, &off, NULL);
}

/* Runs the callback; afterwards the slot is re-armed, released, or was
 * already deleted (and maybe reused) by the callback itself. */
static void timer_fire(struct loop_timer *t)
{
	uint64_t id = timer_id(t);
	long again;

	t->l->dispatched++;
	again = t->fn(t->l, id, t->arg);
	if (!t->armed || timer_id(t) != id)
		return;
	if (again < 0 || timer_arm(t, (uint64_t)again) < 0) {
		timer_disarm(t, 1);
		timer_release(t);
	}
}

static void on_coarse_timer(uv_timer_t *h)
{
	timer_fire(h->data);
}

static void on_precise_timer(uv_poll_t *p, int status, int events)
{
	struct loop_timer *t = p->data;
	uint64_t expirations;

	(void)status;
	(void)events;
	if (read(t->tfd, &expirations, sizeof(expirations)) < 0 &&
	    errno == EAGAIN)
		return; /* disarmed and re-armed since the wake-up */
	if (t->armed && t->precise)
		timer_fire(t);
}

static int timer_make_precise(struct loop *l, struct loop_timer *t)
{
	if (t->tfd >= 0)
		return 0;
	t->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->tfd < 0)
		return -errno;
	if (uv_poll_init(&l->uv, &t->poll, t->tfd) < 0) {
		close(t->tfd);
		t->tfd = -1;
		return -ENOMEM;
	}
	t->poll.data = t;
	/* Watched for good, referenced only while armed: a disarmed timerfd
	 * never wakes the loop, and re-arming it costs no epoll_ctl(). */
	uv_poll_start(&t->poll, UV_READABLE, on_precise_timer);
	uv_unref((uv_handle_t *)&t->poll);
	return 0;
}

static uint64_t timer_add(struct loop *l, uint64_t delay, int precise,
			  loop_timer_fn fn, void *arg)
{
	struct loop_timer *t = timer_slot_new(l);

	if (!t)
		return 0;
	if (!t->gen)
		t->gen = 1;
	if (precise && timer_make_precise(l, t) < 0) {
		timer_release(t);
		return 0;
	}
	t->precise = precise;
	t->fn = fn;
	t->arg = arg;
	t->armed = 1;
	if (timer_arm(t, delay) < 0) {
		timer_release(t);
		return 0;
	}
	return timer_id(t);
}

uint64_t loop_add_timer(struct loop *l, uint64_t ms, loop_timer_fn fn,
			void *arg)
{
	/* From now, not from the start of the last round: a host that
	 * embeds the loop may add timers long after it. */
	uv_update_time(&l->uv);
	return timer_add(l, ms, 0, fn, arg);
}

uint64_t loop_add_timer_ns(struct loop *l, uint64_t ns, loop_timer_fn fn,
			   void *arg)
{
	return timer_add(l, ns, 1, fn, arg);
}

void loop_del_timer(struct loop *l, uint64_t id)
{
	struct loop_timer *t = timer_lookup(l, id);

	if (!t)
		return;
	timer_disarm(t, 0);
	timer_release(t);
}

/* ---- running ---- */

int loop_run(struct loop *l)
{
	l->stop = 0;
	while (!l->stop)
		if (!uv_run(&l->uv, UV_RUN_DEFAULT) && !l->stop)
			return -EDEADLK; /* nothing left that could wake us */
	return 0;
}

static void on_wake(uv_timer_t *h)
{
	(void)h;
}

int loop_run_once(struct loop *l, int max_wait_ms)
{
	unsigned long before = l->dispatched;

	if (max_wait_ms == 0) {
		uv_run(&l->uv, UV_RUN_NOWAIT);
	} else if (max_wait_ms < 0) {
		uv_run(&l->uv, UV_RUN_ONCE);
	} else {
		/* The bound is a timer on libuv's clock, which stands at the
		 * start of the last round: update it, or the timer is already
		 * due, runs before the poll phase, and leaves the poll without
		 * a bound.  Repeating covers a round that starts late. */
		uv_update_time(&l->uv);
		uv_ref((uv_handle_t *)&l->wake);
		uv_timer_start(&l->wake, on_wake, (uint64_t)max_wait_ms,
			       (uint64_t)max_wait_ms);
		uv_run(&l->uv, UV_RUN_ONCE);
		uv_timer_stop(&l->wake);
		uv_unref((uv_handle_t *)&l->wake);
	}
	return (int)(l->dispatched - before);
}

void loop_stop(struct loop *l)
{
	l->stop = 1;
	uv_stop(&l->uv);
}

int loop_fd(const struct loop *l)
{
	return uv_backend_fd(&l->uv);
}

int loop_next_timeout_ms(const struct loop *l)
{
	return uv_backend_timeout(&l->uv);
}

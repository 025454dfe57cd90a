// SPDX-License-Identifier: MIT
/*
 * A small epoll loop in the manner of redis' ae.c.
 *
 * File events live in an array indexed by the fd, so lookup is O(1) and a
 * handler deleted while its event is pending is simply skipped (its mask
 * is 0).  Timers are an unsorted list: finding the nearest is O(N), which
 * is cheaper than keeping a heap for the few dozen timers a daemon with a
 * handful of tuners ever has (per-tuner deadlines, restarts, reconnect).
 * Deleted timers are only marked and are unlinked by the next pass, so a
 * callback may delete any timer, itself included.
 *
 * Work from other threads goes on a mutex-protected list and an eventfd
 * wakes the loop: the only lock in here, held for a few pointer moves.
 */
#include "loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* In loop_file.mask: the fd is registered, even if watched for nothing. */
#define LOOP_REGISTERED 0x100

struct loop_file {
	unsigned int mask;
	loop_fd_fn fn;
	void *arg;
};

struct loop_timer {
	uint64_t id; /* 0: deleted, unlinked on the next pass */
	uint64_t when_ms;
	loop_timer_fn fn;
	void *arg;
	struct loop_timer *next;
};

struct loop_work {
	loop_work_fn fn;
	void *arg;
	struct loop_work *next;
};

struct loop {
	int epfd;
	int wakefd;
	struct loop_file *files;
	int nfiles;
	struct loop_timer *timers;
	uint64_t next_timer_id;
	pthread_mutex_t lock; /* posted work and the stop flag */
	struct loop_work *work_head, *work_tail;
	int stop;
	pthread_t thread;
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

static void loop_wake_read(struct loop *l, int fd, unsigned int events,
			   void *arg);

struct loop *loop_new(void)
{
	struct loop *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0)
		goto err_free;
	l->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->wakefd < 0)
		goto err_ep;
	pthread_mutex_init(&l->lock, NULL);
	l->thread = pthread_self();
	if (loop_add_fd(l, l->wakefd, LOOP_READ, loop_wake_read, NULL) < 0)
		goto err_wake;
	return l;

err_wake:
	pthread_mutex_destroy(&l->lock);
	close(l->wakefd);
err_ep:
	close(l->epfd);
err_free:
	free(l->files);
	free(l);
	return NULL;
}

void loop_free(struct loop *l)
{
	struct loop_timer *t, *tn;
	struct loop_work *w, *wn;

	if (!l)
		return;
	for (t = l->timers; t; t = tn) {
		tn = t->next;
		free(t);
	}
	for (w = l->work_head; w; w = wn) {
		wn = w->next;
		free(w);
	}
	pthread_mutex_destroy(&l->lock);
	close(l->wakefd);
	close(l->epfd);
	free(l->files);
	free(l);
}

static uint32_t epoll_mask(unsigned int mask)
{
	return (mask & LOOP_READ ? EPOLLIN : 0) |
	       (mask & LOOP_WRITE ? EPOLLOUT : 0);
}

static int loop_grow(struct loop *l, int fd)
{
	struct loop_file *f;
	int n = l->nfiles ? l->nfiles : 64;

	while (n <= fd)
		n *= 2;
	if (n == l->nfiles)
		return 0;
	f = realloc(l->files, (size_t)n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	memset(f + l->nfiles, 0, (size_t)(n - l->nfiles) * sizeof(*f));
	l->files = f;
	l->nfiles = n;
	return 0;
}

int loop_add_fd(struct loop *l, int fd, unsigned int mask, loop_fd_fn fn,
		void *arg)
{
	struct epoll_event ev = {.events = epoll_mask(mask), .data.fd = fd};
	int ret;

	if (fd < 0 || !fn)
		return -EINVAL;
	ret = loop_grow(l, fd);
	if (ret)
		return ret;
	if (l->files[fd].mask)
		return -EEXIST;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	l->files[fd] = (struct loop_file){mask | LOOP_REGISTERED, fn, arg};
	return 0;
}

int loop_set_fd_mask(struct loop *l, int fd, unsigned int mask)
{
	struct epoll_event ev = {.events = epoll_mask(mask), .data.fd = fd};

	if (fd < 0 || fd >= l->nfiles || !l->files[fd].mask)
		return -ENOENT;
	if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
		return -errno;
	l->files[fd].mask = mask | LOOP_REGISTERED;
	return 0;
}

void loop_del_fd(struct loop *l, int fd)
{
	if (fd < 0 || fd >= l->nfiles || !l->files[fd].mask)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	l->files[fd] = (struct loop_file){0};
}

uint64_t loop_add_timer(struct loop *l, uint64_t ms, loop_timer_fn fn,
			void *arg)
{
	struct loop_timer *t = calloc(1, sizeof(*t));

	if (!t)
		return 0;
	t->id = ++l->next_timer_id;
	t->when_ms = loop_now_ms() + ms;
	t->fn = fn;
	t->arg = arg;
	t->next = l->timers;
	l->timers = t;
	return t->id;
}

void loop_del_timer(struct loop *l, uint64_t id)
{
	if (!id)
		return;
	for (struct loop_timer *t = l->timers; t; t = t->next)
		if (t->id == id) {
			t->id = 0;
			return;
		}
}

/* Milliseconds until the nearest live timer, -1 if none (O(N)). */
static int loop_next_timeout(const struct loop *l)
{
	uint64_t now = loop_now_ms(), best = UINT64_MAX;

	for (const struct loop_timer *t = l->timers; t; t = t->next)
		if (t->id && t->when_ms < best)
			best = t->when_ms;
	if (best == UINT64_MAX)
		return -1;
	if (best <= now)
		return 0;
	return best - now > 60000 ? 60000 : (int)(best - now);
}

static void loop_run_timers(struct loop *l)
{
	uint64_t max_id = l->next_timer_id, now = loop_now_ms();
	struct loop_timer **pp = &l->timers, *t;

	/* Timers added by a callback wait for the next pass (id > max_id). */
	for (t = l->timers; t; t = t->next) {
		uint64_t id = t->id;
		long again;

		if (!id || id > max_id || t->when_ms > now)
			continue;
		again = t->fn(l, id, t->arg);
		if (t->id != id)
			continue; /* deleted by its own callback */
		if (again == LOOP_TIMER_DONE)
			t->id = 0;
		else
			t->when_ms = loop_now_ms() + (uint64_t)again;
	}
	while ((t = *pp)) {
		if (t->id) {
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		free(t);
	}
}

int loop_post(struct loop *l, loop_work_fn fn, void *arg)
{
	struct loop_work *w = malloc(sizeof(*w));
	uint64_t one = 1;
	int stopping;

	if (!w)
		return -ENOMEM;
	*w = (struct loop_work){fn, arg, NULL};
	pthread_mutex_lock(&l->lock);
	stopping = l->stop;
	if (!stopping) {
		if (l->work_tail)
			l->work_tail->next = w;
		else
			l->work_head = w;
		l->work_tail = w;
	}
	pthread_mutex_unlock(&l->lock);
	if (stopping) {
		free(w);
		return -ESHUTDOWN;
	}
	if (write(l->wakefd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, the loop wakes. */
	}
	return 0;
}

static void loop_wake_read(struct loop *l, int fd, unsigned int events,
			   void *arg)
{
	struct loop_work *w, *next;
	uint64_t n;

	(void)events;
	(void)arg;
	if (read(fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: another wakeup already drained it. */
	}
	pthread_mutex_lock(&l->lock);
	w = l->work_head;
	l->work_head = l->work_tail = NULL;
	pthread_mutex_unlock(&l->lock);
	for (; w; w = next) {
		next = w->next;
		w->fn(w->arg);
		free(w);
	}
}

void loop_stop(struct loop *l)
{
	uint64_t one = 1;

	pthread_mutex_lock(&l->lock);
	l->stop = 1;
	pthread_mutex_unlock(&l->lock);
	if (write(l->wakefd, &one, sizeof(one)) < 0) {
		/* The loop is already awake. */
	}
}

int loop_in_thread(const struct loop *l)
{
	return pthread_equal(l->thread, pthread_self());
}

static int loop_stopping(struct loop *l)
{
	int stop;

	pthread_mutex_lock(&l->lock);
	stop = l->stop;
	pthread_mutex_unlock(&l->lock);
	return stop;
}

static void loop_dispatch(struct loop *l, const struct epoll_event *ev)
{
	int fd = ev->data.fd;
	unsigned int got = 0;
	struct loop_file *f;

	if (fd >= l->nfiles || !l->files[fd].mask)
		return; /* deleted by an earlier callback of this batch */
	f = &l->files[fd];
	if (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP))
		got |= LOOP_READ;
	if (ev->events & EPOLLOUT)
		got |= LOOP_WRITE;
	if (ev->events & (EPOLLHUP | EPOLLERR))
		got |= LOOP_HUP;
	if (got & (f->mask | LOOP_HUP))
		f->fn(l, fd, got, f->arg);
}

int loop_run_once(struct loop *l, int max_wait_ms)
{
	struct epoll_event evs[32];
	int timeout = loop_next_timeout(l), n;

	if (timeout < 0 || (max_wait_ms >= 0 && max_wait_ms < timeout))
		timeout = max_wait_ms;
	n = epoll_wait(l->epfd, evs, 32, timeout);
	if (n < 0 && errno != EINTR)
		return -errno;
	for (int i = 0; i < n; i++)
		loop_dispatch(l, &evs[i]);
	loop_run_timers(l);
	return 0;
}

int loop_run(struct loop *l)
{
	int err = 0;

	l->thread = pthread_self();
	while (!err && !loop_stopping(l))
		err = loop_run_once(l, -1);
	return err;
}

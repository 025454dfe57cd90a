// SPDX-License-Identifier: MIT
/*
 * AvahiPoll on lib/loop.  libdbus watches its one socket twice (a read
 * watch and a write watch), and lib/loop (like libuv underneath) takes one
 * watch per fd, so watches are grouped per fd: the fd's loop mask is the
 * union of its watches' events and each event goes to the watches that
 * asked for it.  A handful of watches exist at a time, so the groups are
 * a plain list.
 */
#include "avahi_loop.h"

#include <stdlib.h>
#include <sys/time.h>

#include "loop.h"

struct AvahiWatch {
	struct avahi_loop *al;
	int fd;
	AvahiWatchEvent want, got;
	AvahiWatchCallback fn;
	void *arg;
	int dead; /* freed inside a callback: unlinked after it */
	AvahiWatch *next;
};

struct AvahiTimeout {
	struct avahi_loop *al;
	uint64_t timer; /* 0: disabled */
	AvahiTimeoutCallback fn;
	void *arg;
};

struct avahi_loop {
	AvahiPoll api;
	struct loop *loop;
	AvahiWatch *watches;
	int dispatching; /* inside fd_ready(): frees are deferred */
};

static unsigned int watched_mask(struct avahi_loop *al, int fd)
{
	unsigned int mask = 0;

	for (AvahiWatch *w = al->watches; w; w = w->next)
		if (w->fd == fd && !w->dead) {
			mask |= (w->want & AVAHI_WATCH_IN) ? LOOP_READ : 0;
			mask |= (w->want & AVAHI_WATCH_OUT) ? LOOP_WRITE : 0;
		}
	return mask;
}

static int fd_watched(struct avahi_loop *al, int fd, const AvahiWatch *but)
{
	for (AvahiWatch *w = al->watches; w; w = w->next)
		if (w != but && w->fd == fd && !w->dead)
			return 1;
	return 0;
}

static void reap(struct avahi_loop *al)
{
	for (AvahiWatch **p = &al->watches; *p;) {
		AvahiWatch *w = *p;

		if (w->dead) {
			*p = w->next;
			free(w);
		} else {
			p = &w->next;
		}
	}
}

static void fd_ready(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct avahi_loop *al = arg;
	AvahiWatchEvent ev = 0;

	(void)l;
	ev |= (events & LOOP_READ) ? AVAHI_WATCH_IN : 0;
	ev |= (events & LOOP_WRITE) ? AVAHI_WATCH_OUT : 0;
	ev |= (events & LOOP_HUP) ? AVAHI_WATCH_HUP : 0;
	al->dispatching++;
	for (AvahiWatch *w = al->watches; w; w = w->next) {
		AvahiWatchEvent mine =
		    ev & (w->want | AVAHI_WATCH_HUP | AVAHI_WATCH_ERR);

		if (w->fd != fd || w->dead || !mine)
			continue;
		w->got = mine;
		w->fn(w, fd, mine, w->arg);
		w->got = 0;
	}
	if (--al->dispatching == 0)
		reap(al);
}

static void fd_rearm(struct avahi_loop *al, int fd)
{
	loop_set_fd_mask(al->loop, fd, watched_mask(al, fd));
}

static AvahiWatch *watch_new(const AvahiPoll *api, int fd,
			     AvahiWatchEvent event, AvahiWatchCallback fn,
			     void *arg)
{
	struct avahi_loop *al = api->userdata;
	AvahiWatch *w = calloc(1, sizeof(*w));
	int first = !fd_watched(al, fd, NULL);

	if (!w)
		return NULL;
	*w = (AvahiWatch){al, fd, event, 0, fn, arg, 0, al->watches};
	al->watches = w;
	if (first &&
	    loop_add_fd(al->loop, fd, watched_mask(al, fd), fd_ready, al)) {
		al->watches = w->next;
		free(w);
		return NULL;
	}
	fd_rearm(al, fd);
	return w;
}

static void watch_update(AvahiWatch *w, AvahiWatchEvent event)
{
	w->want = event;
	fd_rearm(w->al, w->fd);
}

static AvahiWatchEvent watch_get_events(AvahiWatch *w)
{
	return w->got;
}

static void watch_free(AvahiWatch *w)
{
	struct avahi_loop *al = w->al;

	w->dead = 1;
	if (fd_watched(al, w->fd, w))
		fd_rearm(al, w->fd);
	else
		loop_del_fd(al->loop, w->fd);
	if (!al->dispatching)
		reap(al);
}

static long timeout_fired(struct loop *l, uint64_t id, void *arg)
{
	AvahiTimeout *t = arg;

	(void)l;
	(void)id;
	t->timer = 0; /* one shot: the callback may re-arm it */
	t->fn(t, t->arg);
	return LOOP_TIMER_DONE;
}

static void timeout_update(AvahiTimeout *t, const struct timeval *tv)
{
	struct timeval now;
	int64_t ms;

	loop_del_timer(t->al->loop, t->timer);
	t->timer = 0;
	if (!tv)
		return;
	gettimeofday(&now, NULL);
	ms = (int64_t)(tv->tv_sec - now.tv_sec) * 1000 +
	     (tv->tv_usec - now.tv_usec + 999) / 1000;
	t->timer = loop_add_timer(t->al->loop, ms > 0 ? (uint64_t)ms : 0,
				  timeout_fired, t);
}

static AvahiTimeout *timeout_new(const AvahiPoll *api, const struct timeval *tv,
				 AvahiTimeoutCallback fn, void *arg)
{
	AvahiTimeout *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	*t = (AvahiTimeout){api->userdata, 0, fn, arg};
	timeout_update(t, tv);
	return t;
}

static void timeout_free(AvahiTimeout *t)
{
	loop_del_timer(t->al->loop, t->timer);
	free(t);
}

struct avahi_loop *avahi_loop_new(struct loop *loop)
{
	struct avahi_loop *al = calloc(1, sizeof(*al));

	if (!al)
		return NULL;
	al->loop = loop;
	al->api = (AvahiPoll){
	    al,         watch_new,   watch_update,   watch_get_events,
	    watch_free, timeout_new, timeout_update, timeout_free};
	return al;
}

const AvahiPoll *avahi_loop_poll(struct avahi_loop *al)
{
	return &al->api;
}

void avahi_loop_free(struct avahi_loop *al)
{
	if (!al)
		return;
	reap(al);
	free(al);
}

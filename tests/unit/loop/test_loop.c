// SPDX-License-Identifier: MIT
/*
 * test_loop - lib/loop: precise timers in deadline order, timers deleting
 * themselves and others from their callbacks, stale ids, repeating
 * timers, fd watches deleted while their event is pending, hang-ups,
 * loop_fd() for a host's poll(), loop_run_once()'s count and bound.
 *
 * Every wait is bounded and waits for an event; no assertion is about
 * how long something took.
 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "loop.h"

#define MS 1000000ull
/* Upper bound of every wait for something that must happen. */
#define WAIT_MS    5000
#define MAX_ROUNDS 1000

struct log {
	int order[8];
	int n;
};

struct item {
	struct log *log;
	int tag;
	uint64_t self;   /* its own id, to delete itself */
	uint64_t cancel; /* a timer it deletes when it fires */
	long again;      /* what it returns */
	int repeats;     /* runs left before it returns LOOP_TIMER_DONE */
};

static long on_timer(struct loop *l, uint64_t id, void *arg)
{
	struct item *it = arg;

	if (it->log->n < 8)
		it->log->order[it->log->n++] = it->tag;
	loop_del_timer(l, it->cancel);
	if (it->self) {
		CHECK(it->self == id);
		loop_del_timer(l, id);
	}
	if (it->repeats > 0) {
		it->repeats--;
		return it->again;
	}
	return it->self ? it->again : LOOP_TIMER_DONE;
}

/* Run rounds until the log holds n entries or the bound is reached. */
static void run_until(struct loop *l, const struct log *log, int n)
{
	for (int i = 0; i < MAX_ROUNDS && log->n < n; i++)
		loop_run_once(l, WAIT_MS);
}

static void test_timer_order(void)
{
	struct loop *l = loop_new();
	struct log log = {0};
	struct item a = {&log, 1}, b = {&log, 2}, c = {&log, 3}, d = {&log, 4};

	CHECK(l != NULL);
	/* Added out of deadline order, run in deadline order. */
	CHECK(loop_add_timer_ns(l, 30 * MS, on_timer, &b) != 0);
	CHECK(loop_add_timer_ns(l, 1 * MS, on_timer, &a) != 0);
	c.self = loop_add_timer_ns(l, 60 * MS, on_timer, &c);
	d.self = loop_add_timer_ns(l, 45 * MS, on_timer, &d);
	CHECK(c.self != 0 && d.self != 0);
	/* d deletes c and itself; its return value must not re-arm it. */
	d.cancel = c.self;
	d.again = 0;
	run_until(l, &log, 3);
	CHECK_EQ_INT(log.n, 3);
	CHECK_EQ_INT(log.order[0], 1);
	CHECK_EQ_INT(log.order[1], 2);
	CHECK_EQ_INT(log.order[2], 4);
	/* Nothing is left: a round that polls returns at once, with 0. */
	CHECK_EQ_INT(loop_run_once(l, 0), 0);
	CHECK_EQ_INT(log.n, 3);
	loop_free(l);
}

/* Two timers due at once, each deleting the other: only one runs, even
 * when both are ready in the same round. */
static void test_timer_delete_pending(void)
{
	struct loop *l = loop_new();
	struct log log = {0};
	struct item a = {&log, 1}, b = {&log, 2}, z = {&log, 9};

	a.cancel = loop_add_timer_ns(l, 1 * MS, on_timer, &b);
	b.cancel = loop_add_timer_ns(l, 1 * MS, on_timer, &a);
	CHECK(a.cancel != 0 && b.cancel != 0);
	run_until(l, &log, 1);
	/* A third timer bounds the wait for a wrong second call. */
	CHECK(loop_add_timer_ns(l, 20 * MS, on_timer, &z) != 0);
	run_until(l, &log, 2);
	CHECK_EQ_INT(log.n, 2);
	CHECK_EQ_INT(log.order[1], 9);
	loop_free(l);
}

/* A fired timer's id is stale: its slot serves the next timer, which a
 * delete of the old id must not touch. */
static void test_stale_ids(void)
{
	struct loop *l = loop_new();
	struct log log = {0};
	struct item a = {&log, 1}, b = {&log, 2};
	uint64_t ida, idb;

	ida = loop_add_timer_ns(l, 1 * MS, on_timer, &a);
	run_until(l, &log, 1);
	idb = loop_add_timer_ns(l, 1 * MS, on_timer, &b);
	CHECK(ida != 0 && idb != 0 && ida != idb);
	loop_del_timer(l, ida);
	loop_del_timer(l, 0);
	loop_del_timer(l, ~0ull);
	loop_del_timer(l, idb + 12345);
	run_until(l, &log, 2);
	CHECK_EQ_INT(log.n, 2);
	CHECK_EQ_INT(log.order[1], 2);
	loop_del_timer(l, idb); /* fired: a no-op */
	loop_del_fd(l, 12345);  /* never watched: a no-op */
	CHECK_EQ_INT(loop_set_fd_mask(l, 12345, LOOP_READ), -ENOENT);
	loop_free(l);
}

/* The return value re-arms: 2 more runs, in ns and in ms. */
static void test_repeat(void)
{
	struct loop *l = loop_new();
	struct log log = {0};
	struct item p = {&log, 1, .again = 1 * MS, .repeats = 2};
	struct item m = {&log, 2, .again = 1, .repeats = 2};

	CHECK(loop_add_timer_ns(l, 1 * MS, on_timer, &p) != 0);
	run_until(l, &log, 3);
	CHECK_EQ_INT(log.n, 3);
	CHECK(loop_add_timer(l, 1, on_timer, &m) != 0);
	run_until(l, &log, 6);
	CHECK_EQ_INT(log.n, 6);
	for (int i = 0; i < 6; i++)
		CHECK_EQ_INT(log.order[i], i < 3 ? 1 : 2);
	CHECK_EQ_INT(p.repeats, 0);
	CHECK_EQ_INT(m.repeats, 0);
	loop_free(l);
}

/* A 1 ms timer runs before a 30 ms one, whichever kind each is. */
static void test_mixed_kinds(void)
{
	struct loop *l = loop_new();
	struct log log = {0};
	struct item a = {&log, 1}, b = {&log, 2}, c = {&log, 3}, d = {&log, 4};

	CHECK(loop_add_timer(l, 30, on_timer, &b) != 0);
	CHECK(loop_add_timer_ns(l, 1 * MS, on_timer, &a) != 0);
	run_until(l, &log, 2);
	CHECK(loop_add_timer_ns(l, 30 * MS, on_timer, &d) != 0);
	CHECK(loop_add_timer(l, 1, on_timer, &c) != 0);
	run_until(l, &log, 4);
	CHECK_EQ_INT(log.n, 4);
	for (int i = 0; i < 4; i++)
		CHECK_EQ_INT(log.order[i], i + 1);
	loop_free(l);
}

/* ---- fds ---- */

struct watcher {
	struct loop *loop;
	int fds[2]; /* the watched ends */
	int calls;
	unsigned int events; /* of the last call */
	int peer_delete;     /* delete both watches on the first call */
};

static void on_fd(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct watcher *w = arg;
	char buf[64];

	w->calls++;
	w->events = events;
	if (events & LOOP_READ)
		while (read(fd, buf, sizeof(buf)) > 0)
			;
	if (w->peer_delete) {
		loop_del_fd(l, w->fds[0]);
		loop_del_fd(l, w->fds[1]);
	}
}

static void socketpairs(int a[2], int b[2])
{
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, a) == 0);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, b) == 0);
}

static void close_pairs(int a[2], int b[2])
{
	for (int i = 0; i < 2; i++) {
		if (a[i] >= 0)
			close(a[i]);
		if (b[i] >= 0)
			close(b[i]);
	}
}

/* Both fds are ready in the same round; whichever runs first deletes
 * both: the other is not called.  Also loop_run_once()'s count. */
static void test_fd_delete_pending(void)
{
	struct watcher w = {.loop = loop_new(), .peer_delete = 1};
	struct watcher v = {.loop = w.loop};
	int s1[2], s2[2];

	socketpairs(s1, s2);
	w.fds[0] = s1[0];
	w.fds[1] = s2[0];
	/* Two plain watches first: one round runs both, and counts 2. */
	CHECK_EQ_INT(loop_add_fd(w.loop, s1[0], LOOP_READ, on_fd, &v), 0);
	CHECK_EQ_INT(loop_add_fd(w.loop, s2[0], LOOP_READ, on_fd, &v), 0);
	CHECK_EQ_INT(loop_add_fd(w.loop, s2[0], LOOP_READ, on_fd, &v), -EEXIST);
	CHECK(write(s1[1], "x", 1) == 1);
	CHECK(write(s2[1], "y", 1) == 1);
	CHECK_EQ_INT(loop_run_once(w.loop, WAIT_MS), 2);
	CHECK_EQ_INT(v.calls, 2);
	CHECK_EQ_INT(loop_run_once(w.loop, 0), 0);
	loop_del_fd(w.loop, s1[0]);
	loop_del_fd(w.loop, s2[0]);
	/* Now the deleting ones. */
	CHECK_EQ_INT(loop_add_fd(w.loop, s1[0], LOOP_READ, on_fd, &w), 0);
	CHECK_EQ_INT(loop_add_fd(w.loop, s2[0], LOOP_READ, on_fd, &w), 0);
	CHECK(write(s1[1], "x", 1) == 1);
	CHECK(write(s2[1], "y", 1) == 1);
	CHECK_EQ_INT(loop_run_once(w.loop, WAIT_MS), 1);
	CHECK_EQ_INT(loop_run_once(w.loop, 0), 0);
	CHECK_EQ_INT(w.calls, 1);
	loop_free(w.loop);
	close_pairs(s1, s2);
}

static void run_until_called(struct watcher *w, int calls)
{
	for (int i = 0; i < MAX_ROUNDS && w->calls < calls; i++)
		loop_run_once(w->loop, WAIT_MS);
}

/* A reader learns of a half-close and of a close as LOOP_HUP. */
static void test_fd_hangup(void)
{
	struct watcher w = {.loop = loop_new()};
	int s1[2], s2[2];

	socketpairs(s1, s2);
	CHECK_EQ_INT(loop_add_fd(w.loop, s1[0], LOOP_READ, on_fd, &w), 0);
	CHECK(shutdown(s1[1], SHUT_WR) == 0);
	run_until_called(&w, 1);
	CHECK_EQ_INT(w.events, LOOP_READ | LOOP_HUP);
	loop_del_fd(w.loop, s1[0]);
	w.calls = 0;
	CHECK_EQ_INT(loop_add_fd(w.loop, s2[0], LOOP_READ, on_fd, &w), 0);
	close(s2[1]);
	s2[1] = -1;
	run_until_called(&w, 1);
	CHECK_EQ_INT(w.events, LOOP_READ | LOOP_HUP);
	loop_free(w.loop);
	close_pairs(s1, s2);
}

/*
 * A watch that only writes is not woken by the peer's half-close (it
 * would be in every round: the half-close is level-triggered), only by
 * room in its socket.
 */
static void test_fd_writer_half_closed(void)
{
	struct watcher w = {.loop = loop_new()};
	struct watcher r = {.loop = w.loop};
	int s1[2], s2[2];
	char buf[4096] = {0};

	socketpairs(s1, s2);
	while (write(s1[0], buf, sizeof(buf)) > 0)
		;
	CHECK(shutdown(s1[1], SHUT_WR) == 0);
	CHECK_EQ_INT(loop_add_fd(w.loop, s1[0], LOOP_WRITE, on_fd, &w), 0);
	/* The peer drains the socket once the loop has run a round. */
	CHECK_EQ_INT(loop_add_fd(w.loop, s1[1], 0, on_fd, &r), 0);
	CHECK_EQ_INT(loop_run_once(w.loop, 0), 0);
	CHECK_EQ_INT(loop_run_once(w.loop, 0), 0);
	CHECK_EQ_INT(w.calls, 0);
	CHECK_EQ_INT(loop_set_fd_mask(w.loop, s1[1], LOOP_READ), 0);
	run_until_called(&w, 1);
	CHECK_EQ_INT(w.calls, 1);
	CHECK_EQ_INT(w.events, LOOP_WRITE);
	CHECK(r.calls >= 1);
	loop_free(w.loop);
	close_pairs(s1, s2);
}

/* ---- embedding ---- */

struct host {
	int stalls; /* polls that waited out their whole bound */
};

/* What a host does: poll loop_fd() with loop_next_timeout_ms(), run. */
static int host_round(struct loop *l, struct host *h)
{
	struct pollfd pfd = {.fd = loop_fd(l), .events = POLLIN};
	int timeout = loop_next_timeout_ms(l);
	int bounded = timeout < 0 || timeout > WAIT_MS ? WAIT_MS : timeout;

	if (poll(&pfd, 1, bounded) == 0 && bounded == WAIT_MS)
		h->stalls++;
	return loop_run_once(l, 0);
}

static void test_embed(void)
{
	struct loop *l = loop_new();
	struct log log = {0};
	struct item a = {&log, 1}, b = {&log, 2};
	struct watcher w = {.loop = l};
	struct pollfd pfd = {.fd = loop_fd(l), .events = POLLIN};
	struct host h = {0};
	int s1[2], s2[2];

	/* A new timer and a new watch: the host loop serves both. */
	socketpairs(s1, s2);
	CHECK(loop_add_timer_ns(l, 1 * MS, on_timer, &a) != 0);
	CHECK_EQ_INT(loop_add_fd(l, s1[0], LOOP_READ, on_fd, &w), 0);
	CHECK(write(s1[1], "x", 1) == 1);
	for (int i = 0; i < 100 && (log.n < 1 || w.calls < 1); i++)
		host_round(l, &h);
	CHECK_EQ_INT(log.n, 1);
	CHECK_EQ_INT(w.calls, 1);
	CHECK_EQ_INT(h.stalls, 0);
	/* Nothing changed since the last round: the fd alone wakes the host
	 * for a precise timer, and for a watched fd. */
	CHECK(loop_add_timer_ns(l, 1 * MS, on_timer, &b) != 0);
	CHECK_EQ_INT(loop_next_timeout_ms(l), -1);
	CHECK_EQ_INT(poll(&pfd, 1, WAIT_MS), 1);
	CHECK_EQ_INT(loop_run_once(l, 0), 1);
	CHECK_EQ_INT(log.n, 2);
	CHECK(write(s1[1], "y", 1) == 1);
	CHECK_EQ_INT(poll(&pfd, 1, WAIT_MS), 1);
	CHECK_EQ_INT(loop_run_once(l, 0), 1);
	CHECK_EQ_INT(w.calls, 2);
	/* Nothing ready: the fd is quiet. */
	CHECK_EQ_INT(poll(&pfd, 1, 0), 0);
	loop_free(l);
	close_pairs(s1, s2);
}

/* ---- waiting ---- */

/* Let time pass without running the loop, as a host does between rounds:
 * libuv's clock, read at the start of a round, then lags.  Not a wait for
 * anything. */
static void let_clock_lag(uint64_t ms)
{
	uint64_t until = loop_now_ms() + ms;

	while (loop_now_ms() < until)
		;
}

/* loop_run_once() keeps its bound after the loop sat idle, and a ms timer
 * added then counts from the time it is added. */
static void test_wait_after_idle(void)
{
	struct loop *l = loop_new();
	struct log log = {0};
	struct item a = {&log, 1}, b = {&log, 2}, stop = {&log, 3};
	struct watcher w = {.loop = l};
	int s1[2], s2[2];

	socketpairs(s1, s2);
	/* A watch that never fires, and a timer that ends a wait that
	 * would otherwise have no bound. */
	CHECK_EQ_INT(loop_add_fd(l, s1[0], LOOP_READ, on_fd, &w), 0);
	CHECK(loop_add_timer_ns(l, WAIT_MS * MS, on_timer, &stop) != 0);
	CHECK_EQ_INT(loop_run_once(l, 0), 0);
	let_clock_lag(5);
	CHECK_EQ_INT(loop_run_once(l, 1), 0);
	CHECK_EQ_INT(log.n, 0);
	let_clock_lag(30);
	CHECK(loop_add_timer(l, 20, on_timer, &b) != 0);
	CHECK(loop_add_timer_ns(l, 1 * MS, on_timer, &a) != 0);
	run_until(l, &log, 2);
	CHECK_EQ_INT(log.n, 2);
	CHECK_EQ_INT(log.order[0], 1);
	CHECK_EQ_INT(log.order[1], 2);
	CHECK_EQ_INT(w.calls, 0);
	loop_free(l);
	close_pairs(s1, s2);
}

int main(void)
{
	test_timer_order();
	test_timer_delete_pending();
	test_stale_ids();
	test_repeat();
	test_mixed_kinds();
	test_fd_delete_pending();
	test_fd_hangup();
	test_fd_writer_half_closed();
	test_embed();
	test_wait_after_idle();
	return check_done("test_loop");
}

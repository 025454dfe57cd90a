// SPDX-License-Identifier: MIT
/*
 * test_box_loop - the box's event loop: timers in deadline order,
 * cancelling, the epoll fd readable when a timer is due, and watches
 * deleted while their event is pending.
 */
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "loop.h"

struct log {
	int order[8];
	int n;
};

struct item {
	struct log *log;
	int tag;
	uint64_t cancel; /* a timer this one cancels when it fires */
};

static void on_timer(struct sim_loop *l, uint64_t id, void *arg)
{
	struct item *it = arg;

	(void)id;
	it->log->order[it->log->n++] = it->tag;
	sim_loop_timer_del(l, it->cancel);
}

static void run_for(struct sim_loop *l, int ms)
{
	uint64_t end = sim_loop_now_ns() + (uint64_t)ms * 1000000;

	while (sim_loop_now_ns() < end)
		sim_loop_run_once(l, 1);
}

static void test_timers(void)
{
	struct sim_loop *l = sim_loop_new();
	struct log log = {0};
	struct item a = {&log, 1}, b = {&log, 2}, c = {&log, 3}, d = {&log, 4};
	struct pollfd pfd;
	uint64_t idc;

	CHECK(l != NULL);
	/* Added out of order, fired in deadline order. */
	sim_loop_timer_add(l, 30000000, on_timer, &b);
	sim_loop_timer_add(l, 10000000, on_timer, &a);
	idc = sim_loop_timer_add(l, 50000000, on_timer, &c);
	sim_loop_timer_add(l, 40000000, on_timer, &d);
	d.cancel = idc; /* d fires first and cancels c */
	CHECK(idc != 0);
	/* Nothing due yet: the epoll fd is quiet. */
	pfd = (struct pollfd){.fd = sim_loop_fd(l), .events = POLLIN};
	CHECK_EQ_INT(poll(&pfd, 1, 0), 0);
	/* ... and readable once the first timer is due. */
	CHECK_EQ_INT(poll(&pfd, 1, 1000), 1);
	run_for(l, 80);
	CHECK_EQ_INT(log.n, 3);
	CHECK_EQ_INT(log.order[0], 1);
	CHECK_EQ_INT(log.order[1], 2);
	CHECK_EQ_INT(log.order[2], 4);
	sim_loop_timer_del(l, idc); /* fired or cancelled: no-op */
	sim_loop_timer_del(l, 0);
	sim_loop_free(l);
}

struct pair {
	struct sim_loop *loop;
	struct sim_loop_watch *w[2];
	int calls;
};

/* Whichever runs first deletes the other, whose event is pending too. */
static void on_ready(struct sim_loop *l, int fd, uint32_t events, void *arg)
{
	struct pair *p = arg;
	char c;

	(void)events;
	if (read(fd, &c, 1) != 1)
		return;
	p->calls++;
	sim_loop_watch_del(l, p->w[0]);
	sim_loop_watch_del(l, p->w[1]);
}

static void test_watch_delete(void)
{
	struct pair p = {.loop = sim_loop_new()};
	int s1[2], s2[2];

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, s1) == 0);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, s2) == 0);
	p.w[0] = sim_loop_watch_add(p.loop, s1[0], EPOLLIN, on_ready, &p);
	p.w[1] = sim_loop_watch_add(p.loop, s2[0], EPOLLIN, on_ready, &p);
	CHECK(p.w[0] && p.w[1]);
	CHECK(write(s1[1], "x", 1) == 1);
	CHECK(write(s2[1], "y", 1) == 1);
	sim_loop_run_once(p.loop, 100);
	sim_loop_run_once(p.loop, 10);
	CHECK_EQ_INT(p.calls, 1);
	sim_loop_free(p.loop);
	close(s1[0]);
	close(s1[1]);
	close(s2[0]);
	close(s2[1]);
}

int main(void)
{
	test_timers();
	test_watch_delete();
	return check_done("test_box_loop");
}

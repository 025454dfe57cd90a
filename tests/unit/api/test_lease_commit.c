// SPDX-License-Identifier: MIT
/*
 * The lease table's group commit, with a writer the test controls (it
 * counts, fails, or blocks until released): the changes of one turn
 * share one write and are all told after it; changes made while a write
 * is in flight share the next one; a failed write tells every pending
 * change and leaves the table as the disk has it; the loop goes on
 * while a write blocks; events come only once a change is saved; a stop
 * waits for the write in flight.
 *
 * The blocking writer runs on libuv's threadpool: the test waits for it
 * with semaphores (it posts "started", waits for "release"), never with
 * a sleep.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "eventbus.h"
#include "lease.h"
#include "lease_told.h"
#include "log.h"
#include "loop.h"
#include "state_file.h"
#include "unit_tmpdir.h"

static struct loop *lp;
static struct eventbus *bus;

/* The writer, called on a pool thread. */
static struct {
	atomic_int writes;   /* calls */
	atomic_int fail;     /* -errno to return instead of writing */
	atomic_int blocking; /* wait for release before writing */
	sem_t started, release;
} wr;

static int test_writer(struct state_dir *sd, const char *name, const char *text,
		       void *arg)
{
	int fail;

	(void)arg;
	wr.writes++;
	if (wr.blocking) {
		sem_post(&wr.started);
		while (sem_wait(&wr.release) < 0 && errno == EINTR)
			;
	}
	fail = wr.fail;
	return fail ? fail : state_file_write_text(sd, name, text);
}

/* Run the loop until t was told. */
static void until_told(struct told *t)
{
	for (int i = 0; i < 1000 && !t->calls; i++)
		loop_run_once(lp, 1000);
	CHECK_EQ_INT(t->calls, 1);
}

/* The blocking writer has begun a write (it is on its pool thread). */
static void wait_started(void)
{
	while (sem_wait(&wr.started) < 0 && errno == EINTR)
		;
}

/* A client's bytes arrived (as a REST request's would). */
static void readable(struct loop *l, int fd, unsigned int events, void *arg)
{
	char c;

	(void)l;
	(void)events;
	if (read(fd, &c, 1) == 1)
		(*(int *)arg)++;
}

/* The table as a restarted daemon would find it has the same leases
 * (tuner and id) as lt. */
static void check_as_on_disk(struct state_dir *sd, struct lease_table *lt)
{
	struct lease_table *disk = lease_table_new(lp, NULL);
	struct lease a, b;

	CHECK_EQ_INT(lease_table_keep(disk, sd), 0);
	for (long tuner = 1; tuner <= 9; tuner++) {
		int in_mem = lease_get(lt, tuner, &a);

		CHECK_EQ_INT(lease_get(disk, tuner, &b), in_mem);
		if (in_mem)
			CHECK(!strcmp(a.id, b.id) &&
			      a.expires_wall == b.expires_wall);
	}
	lease_table_free(disk);
}

/* Three changes in one turn: one write, all three told after it, their
 * events published only then. */
static void test_one_turn(struct lease_table *lt)
{
	struct lease a, b, c, other;
	struct told t1, t2, t3;
	int writes;
	uint64_t seq;

	CHECK_EQ_INT(lease_acquire(lt, 1, "one", 10, 60, &a, &other, told(&t1)),
		     0);
	until_told(&t1);
	writes = wr.writes;
	seq = eventbus_last_seq(bus);
	CHECK_EQ_INT(lease_renew(lt, 1, a.id, 120, &a, &other, told(&t1)), 0);
	CHECK_EQ_INT(lease_acquire(lt, 2, "two", 10, 60, &b, &other, told(&t2)),
		     0);
	CHECK_EQ_INT(lease_acquire(lt, 3, "six", 10, 60, &c, &other, told(&t3)),
		     0);
	/* Made in the table at once: a second take of 2 conflicts. */
	CHECK_EQ_INT(lease_acquire(lt, 2, "late", 10, 60, &c, &other, NULL),
		     -EBUSY);
	CHECK_EQ_INT(t1.calls + t2.calls + t3.calls, 0);
	CHECK_EQ_INT(eventbus_last_seq(bus), seq); /* nothing saved yet */
	until_told(&t1);
	CHECK_EQ_INT(t2.calls, 1);
	CHECK_EQ_INT(t3.calls, 1);
	CHECK_EQ_INT(t1.err | t2.err | t3.err, 0);
	CHECK_EQ_INT(wr.writes - writes, 1);
	CHECK_EQ_INT(eventbus_last_seq(bus) - seq, 3);
}

/*
 * A write that blocks: the loop runs meanwhile (a timer fires, lookups
 * and refusals are answered), the changes made meanwhile wait for the
 * next write, which starts when the first ends, and a client that went
 * away is not told.
 */
static void test_in_flight(struct state_dir *sd, struct lease_table *lt)
{
	struct lease a, b, c, other;
	struct told t4, t5, t6, gone;
	int served = 0, writes = wr.writes, p[2];

	wr.blocking = 1;
	CHECK_EQ_INT(
	    lease_acquire(lt, 4, "four", 10, 60, &a, &other, told(&t4)), 0);
	loop_run_once(lp, 0); /* the turn ends: the write is queued */
	wait_started();
	/* The loop is free while the write blocks: a client is served. */
	CHECK_EQ_INT(pipe(p), 0);
	CHECK_EQ_INT(loop_add_fd(lp, p[0], LOOP_READ, readable, &served), 0);
	CHECK_EQ_INT(write(p[1], "x", 1), 1);
	while (!served)
		loop_run_once(lp, -1);
	loop_del_fd(lp, p[0]);
	close(p[0]);
	close(p[1]);
	CHECK_EQ_INT(lease_get(lt, 1, &b), 1);
	CHECK_EQ_INT(lease_acquire(lt, 1, "low", 1, 60, &b, &other, NULL),
		     -EBUSY);
	/* Changes meanwhile, one of them on the lease in flight. */
	CHECK_EQ_INT(
	    lease_acquire(lt, 5, "five", 10, 60, &b, &other, told(&t5)), 0);
	CHECK_EQ_INT(lease_renew(lt, 4, a.id, 90, &c, &other, told(&t6)), 0);
	CHECK_EQ_INT(
	    lease_acquire(lt, 7, "gone", 10, 60, &c, &other, told(&gone)), 0);
	lease_waiter_cancel(&gone.w);
	for (int i = 0; i < 3; i++)
		loop_run_once(lp, 0);
	CHECK_EQ_INT(t4.calls + t5.calls + t6.calls, 0);
	CHECK_EQ_INT(wr.writes - writes, 1);

	sem_post(&wr.release); /* the first write ends... */
	until_told(&t4);
	CHECK_EQ_INT(t5.calls + t6.calls, 0);
	wait_started(); /* ...and the second, with all three, begins */
	wr.blocking = 0;
	sem_post(&wr.release);
	until_told(&t5);
	CHECK_EQ_INT(t6.calls, 1);
	CHECK_EQ_INT(gone.calls, 0);
	CHECK_EQ_INT(wr.writes - writes, 2);
	CHECK_EQ_INT(lease_get(lt, 7, &c), 1); /* saved all the same */
	check_as_on_disk(sd, lt);
}

/*
 * Failed writes: every change pending, the one in flight and the ones
 * gathered behind it, is told the error, and the table is the disk's.
 */
static void test_failures(struct state_dir *sd, struct lease_table *lt)
{
	struct lease a, b, c, other;
	struct told t1, t2, t3;
	uint64_t seq = eventbus_last_seq(bus);

	CHECK_EQ_INT(lease_get(lt, 1, &a), 1);
	wr.fail = -EIO;
	CHECK_EQ_INT(
	    lease_acquire(lt, 8, "eight", 10, 60, &b, &other, told(&t1)), 0);
	CHECK_EQ_INT(lease_release(lt, 1, a.id, &other, told(&t2)), 0);
	CHECK_EQ_INT(
	    lease_acquire(lt, 2, "urgent", 999, 60, &c, &other, told(&t3)), 1);
	until_told(&t1);
	CHECK_EQ_INT(t1.err, -EIO);
	CHECK_EQ_INT(t2.err, -EIO);
	CHECK_EQ_INT(t3.err, -EIO);
	CHECK_EQ_INT(lease_get(lt, 8, &b), 0);
	CHECK_EQ_INT(lease_get(lt, 1, &b), 1);
	CHECK(!strcmp(lease_get(lt, 2, &b) ? b.holder : "", "two"));
	check_as_on_disk(sd, lt);

	/* One in flight, one gathered behind it: both undone. */
	wr.blocking = 1;
	CHECK_EQ_INT(
	    lease_acquire(lt, 8, "eight", 10, 60, &b, &other, told(&t1)), 0);
	loop_run_once(lp, 0);
	wait_started();
	CHECK_EQ_INT(
	    lease_acquire(lt, 9, "nine", 10, 60, &b, &other, told(&t2)), 0);
	wr.blocking = 0;
	sem_post(&wr.release);
	until_told(&t1);
	CHECK_EQ_INT(t2.calls, 1);
	CHECK_EQ_INT(t1.err, -EIO);
	CHECK_EQ_INT(t2.err, -EIO);
	CHECK_EQ_INT(lease_get(lt, 8, &b) + lease_get(lt, 9, &b), 0);
	CHECK_EQ_INT(eventbus_last_seq(bus), seq); /* no event for them */
	wr.fail = 0;
	check_as_on_disk(sd, lt);
}

/* A stop waits for the write in flight and tells its changes. */
static void test_flush(struct state_dir *sd, struct lease_table *lt)
{
	struct lease a, other;
	struct told t;

	wr.blocking = 1;
	CHECK_EQ_INT(lease_acquire(lt, 9, "nine", 10, 60, &a, &other, told(&t)),
		     0);
	loop_run_once(lp, 0);
	wait_started();
	wr.blocking = 0;
	sem_post(&wr.release);
	CHECK_EQ_INT(lease_table_flush(lt, 10000), 0);
	CHECK_EQ_INT(t.calls, 1);
	CHECK_EQ_INT(t.err, 0);
	check_as_on_disk(sd, lt);
	/* Nothing in flight: a change still due is written at once. */
	CHECK_EQ_INT(lease_release(lt, 9, a.id, &other, told(&t)), 0);
	CHECK_EQ_INT(lease_table_flush(lt, 10000), 0);
	CHECK_EQ_INT(t.calls, 1);
	check_as_on_disk(sd, lt);
}

int main(void)
{
	char tmpl[] = "/tmp/tunerd-commit-XXXXXX";
	struct state_dir *sd = NULL;
	struct lease_table *lt;

	log_set_level(LL_ERR - 1); /* the failed writes' lines are expected */
	if (!mkdtemp(tmpl))
		return 1;
	sem_init(&wr.started, 0, 0);
	sem_init(&wr.release, 0, 0);
	lp = loop_new();
	bus = eventbus_new(64);
	CHECK_EQ_INT(state_dir_open(tmpl, &sd), 0);
	if (!sd || !lp || !bus)
		return check_done("test_lease_commit");
	state_dir_set_writer(sd, test_writer, NULL);
	lt = lease_table_new(lp, bus);
	CHECK_EQ_INT(lease_table_keep(lt, sd), 0);
	test_one_turn(lt);
	test_in_flight(sd, lt);
	test_failures(sd, lt);
	test_flush(sd, lt);
	lease_table_free(lt);
	state_dir_close(sd);
	eventbus_free(bus);
	loop_free(lp);
	sem_destroy(&wr.started);
	sem_destroy(&wr.release);
	unit_tmpdir_remove(tmpl);
	return check_done("test_lease_commit");
}

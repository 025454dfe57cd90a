// SPDX-License-Identifier: MIT
/*
 * test_box_lifecycle - deadlines, interrupts, per-client serialisation,
 * queueing until a bind, and what channel and daemon deaths do to the
 * requests in flight.
 */
#include "box_test.h"

/* The box dropped a reply to a request it no longer has. */
static int unknown_unique_seen(struct bt *t, void *arg)
{
	struct sim_box_stats st;

	(void)arg;
	sim_box_get_stats(t->box, &st);
	return st.unknown_uniques > 0;
}

static void test_deadline_and_interrupt(void)
{
	const struct tstub_interrupt *intr;
	struct tstub_status st = {.valid = TSTUB_ST_FE_STATUS};
	struct bt_result r = {0}, r2 = {0};
	struct sim_box_stats stats;
	union tstub_buf req, m;
	uint64_t t0, elapsed;
	int ctl, fd;

	bt_setup(&t_box, "mt2060");
	t_box.cfg.deadline_ms = 300;
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	t0 = bt_now_ms();
	CHECK_EQ_INT(
	    sim_box_request(t_box.box, 1, TSTUB_GET_STATUS, NULL, bt_done, &r),
	    0);
	CHECK(bt_expect(&t_box, fd, TSTUB_GET_STATUS, 0, &req) == 0);
	CHECK(bt_wait(&t_box, &r, 3000) == 0);
	elapsed = bt_now_ms() - t0;
	CHECK_EQ_INT(r.err, -ETIMEDOUT);
	/* A lower bound only: the deadline's timer cannot fire early, so no
	 * machine is too slow for it. */
	CHECK(elapsed >= 280);
	/* The daemon learns the request was given up. */
	CHECK(bt_expect(&t_box, fd, TSTUB_INTERRUPT, 0, &m) == 0);
	intr = tstub_body(&m.hdr);
	CHECK_EQ_INT(intr->unique, req.hdr.unique);
	CHECK_EQ_INT(m.hdr.unique, 0);
	CHECK_EQ_INT(m.hdr.client, 1);
	/* A late reply is dropped; the caller was answered once. */
	bt_reply(fd, &req.hdr, 0, &st, sizeof(st));
	CHECK(bt_pump_until(&t_box, unknown_unique_seen, NULL, BT_WAIT_MS) ==
	      0);
	CHECK_EQ_INT(r.done, 1);
	sim_box_get_stats(t_box.box, &stats);
	CHECK_EQ_INT(stats.timeouts, 1);
	CHECK_EQ_INT(stats.unknown_uniques, 1);

	/* Waiting for a bind that never comes also ends at the deadline,
	 * without an INTERRUPT: the daemon never saw it. */
	close(fd);
	bt_pump(&t_box, 10);
	t0 = bt_now_ms();
	sim_box_request(t_box.box, 1, TSTUB_TUNER_INIT, NULL, bt_done, &r2);
	CHECK(bt_wait(&t_box, &r2, 3000) == 0);
	CHECK_EQ_INT(r2.err, -ETIMEDOUT);
	CHECK(bt_now_ms() - t0 >= 280);
	close(ctl);
	bt_stop(&t_box);
}

static void test_one_in_flight_per_client(void)
{
	struct bt_result r1 = {0}, r2 = {0}, r3 = {0};
	union tstub_buf a, b, c, m;
	int ctl, fd1, fd2;

	bt_setup(&t_box, "mt2060,mt2060");
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd1 = bt_bind(&t_box, 1, NULL);
	fd2 = bt_bind(&t_box, 2, NULL);
	sim_box_request(t_box.box, 1, TSTUB_TUNER_INIT, NULL, bt_done, &r1);
	sim_box_request(t_box.box, 1, TSTUB_TUNER_SLEEP, NULL, bt_done, &r2);
	sim_box_request(t_box.box, 2, TSTUB_TUNER_SLEEP, NULL, bt_done, &r3);
	CHECK(bt_expect(&t_box, fd1, TSTUB_TUNER_INIT, 0, &a) == 0);
	/* The other client is not held up by the first. */
	CHECK(bt_expect(&t_box, fd2, TSTUB_TUNER_SLEEP, 0, &c) == 0);
	/* The second request of client 1 waits for the first's reply. */
	CHECK_EQ_INT(bt_recv(&t_box, fd1, &m, 150), -ETIMEDOUT);
	bt_reply(fd1, &a.hdr, 0, NULL, 0);
	CHECK(bt_expect(&t_box, fd1, TSTUB_TUNER_SLEEP, 0, &b) == 0);
	CHECK(b.hdr.unique != a.hdr.unique);
	CHECK_EQ_INT(r1.done, 1);
	CHECK_EQ_INT(r2.done, 0);
	bt_reply(fd1, &b.hdr, -EIO, NULL, 0);
	bt_reply(fd2, &c.hdr, 0, NULL, 0);
	CHECK(bt_wait(&t_box, &r2, 1000) == 0);
	CHECK(bt_wait(&t_box, &r3, 1000) == 0);
	CHECK_EQ_INT(r2.err, -EIO);
	CHECK_EQ_INT(r3.err, 0);
	close(fd1);
	close(fd2);
	close(ctl);
	bt_stop(&t_box);
}

static void test_queue_until_bind(void)
{
	struct tstub_params p = bt_dvbt(474000000), back;
	struct bt_result r = {0}, extra = {0};
	union tstub_buf m;
	int ctl, fd, i, rc = 0;

	bt_setup(&t_box, "mt2060");
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	CHECK_EQ_INT(
	    sim_box_request(t_box.box, 1, TSTUB_SET_PARAMS, &p, bt_done, &r),
	    0);
	bt_pump(&t_box, 50);
	CHECK(!r.done);
	/* The queue is bounded. */
	for (i = 1; i < SIM_BOX_QUEUE_MAX && !rc; i++)
		rc = sim_box_request(t_box.box, 1, TSTUB_GET_STATUS, NULL,
				     bt_done, &extra);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(sim_box_request(t_box.box, 1, TSTUB_GET_STATUS, NULL,
				     bt_done, &extra),
		     -EBUSY);
	/* The bind reply comes first, then the request queued before it. */
	fd = bt_bind(&t_box, 1, &back);
	CHECK(fd >= 0);
	CHECK_EQ_INT(back.flags & TSTUB_PARAMS_VALID, 0);
	CHECK(bt_expect(&t_box, fd, TSTUB_SET_PARAMS, 0, &m) == 0);
	bt_reply(fd, &m.hdr, 0, NULL, 0);
	CHECK(bt_wait(&t_box, &r, 1000) == 0);
	CHECK_EQ_INT(r.err, 0);
	close(fd);
	close(ctl);
	bt_stop(&t_box);
}

static void test_tuner_channel_close(void)
{
	struct bt_result r1 = {0}, r2 = {0};
	struct sim_box_stats st;
	union tstub_buf m;
	int ctl, fd;

	bt_setup(&t_box, "mt2060");
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	sim_box_request(t_box.box, 1, TSTUB_TUNER_INIT, NULL, bt_done, &r1);
	sim_box_request(t_box.box, 1, TSTUB_GET_FREQUENCY, NULL, bt_done, &r2);
	CHECK(bt_expect(&t_box, fd, TSTUB_TUNER_INIT, 0, &m) == 0);
	close(fd); /* the worker crashed */
	CHECK(bt_wait(&t_box, &r1, 1000) == 0);
	CHECK_EQ_INT(r1.err, -ECONNABORTED);
	/* The request it had not read yet waits for the next worker. */
	bt_pump(&t_box, 20);
	CHECK(!r2.done);
	fd = bt_bind(&t_box, 1, NULL);
	CHECK(bt_expect(&t_box, fd, TSTUB_GET_FREQUENCY, 0, &m) == 0);
	bt_reply(fd, &m.hdr, 0, &(struct tstub_freq){.frequency = 474000000},
		 sizeof(struct tstub_freq));
	CHECK(bt_wait(&t_box, &r2, 1000) == 0);
	CHECK_EQ_INT(r2.err, 0);
	CHECK_EQ_INT(((struct tstub_freq *)r2.body)->frequency, 474000000);
	sim_box_get_stats(t_box.box, &st);
	CHECK_EQ_INT(st.aborted, 1);
	close(fd);
	close(ctl);
	bt_stop(&t_box);
}

/* Tune client 1 through a whole round trip so the box caches params. */
static void tune_once(int fd, uint32_t freq)
{
	struct tstub_params p = bt_dvbt(freq);
	struct bt_result r = {0};
	union tstub_buf m;

	sim_box_request(t_box.box, 1, TSTUB_SET_PARAMS, &p, bt_done, &r);
	CHECK(bt_expect(&t_box, fd, TSTUB_SET_PARAMS, 0, &m) == 0);
	bt_reply(fd, &m.hdr, 0, NULL, 0);
	CHECK(bt_wait(&t_box, &r, 1000) == 0);
	CHECK_EQ_INT(r.err, 0);
}

static void test_control_close_and_restart(void)
{
	struct bt_result r1 = {0}, r2 = {0};
	struct tstub_params back;
	struct sim_box_stats st;
	union tstub_buf m;
	int ctl, fd1, fd2;

	bt_setup(&t_box, "mt2060,qt1010");
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd1 = bt_bind(&t_box, 1, NULL);
	fd2 = bt_bind(&t_box, 2, NULL);
	tune_once(fd1, 474000000);
	sim_box_request(t_box.box, 1, TSTUB_TUNER_INIT, NULL, bt_done, &r1);
	CHECK(bt_expect(&t_box, fd1, TSTUB_TUNER_INIT, 0, &m) == 0);
	sim_box_request(t_box.box, 2, TSTUB_TUNER_INIT, NULL, bt_done, &r2);

	close(ctl); /* the daemon died */
	CHECK(bt_wait(&t_box, &r1, 1000) == 0);
	CHECK(bt_wait(&t_box, &r2, 1000) == 0);
	CHECK_EQ_INT(r1.err, -ECONNABORTED);
	CHECK_EQ_INT(r2.err, -ECONNABORTED);
	CHECK(!sim_box_daemon_ready(t_box.box));
	CHECK_EQ_INT(
	    sim_box_request(t_box.box, 1, TSTUB_TUNER_INIT, NULL, NULL, NULL),
	    -ENOTCONN);
	/* Its workers' channels end with it. */
	CHECK_EQ_INT(bt_recv(&t_box, fd1, &m, 1000), 0);
	CHECK(bt_expect(&t_box, fd2, TSTUB_TUNER_INIT, 0, &m) == 0);
	CHECK_EQ_INT(bt_recv(&t_box, fd2, &m, 1000), 0);
	close(fd1);
	close(fd2);

	/* A new daemon learns every tuner again and gets the params back. */
	ctl = bt_daemon(&t_box);
	CHECK(ctl >= 0);
	CHECK(sim_box_daemon_ready(t_box.box));
	sim_box_get_stats(t_box.box, &st);
	CHECK_EQ_INT(st.daemon_sessions, 2);
	CHECK_EQ_INT(st.aborted, 2);
	fd1 = bt_bind(&t_box, 1, &back);
	CHECK(fd1 >= 0);
	CHECK(back.flags & TSTUB_PARAMS_VALID);
	CHECK_EQ_INT(back.frequency, 474000000);
	tune_once(fd1, 490000000);
	close(fd1);
	close(ctl);
	bt_stop(&t_box);
}

static void test_init_refusals(void)
{
	struct tstub_init bad = {.major = TSTUB_MAJOR + 1};
	union tstub_buf m;
	int fd, ctl, late;

	bt_setup(&t_box, "mt2060");
	t_box.cfg.deadline_ms = 300;
	CHECK(bt_start(&t_box) == 0);
	/* -EPROTO from the daemon: the box closes the channel. */
	fd = bt_connect(&t_box);
	CHECK(bt_expect(&t_box, fd, TSTUB_INIT, 0, &m) == 0);
	bt_reply(fd, &m.hdr, -EPROTO, NULL, 0);
	CHECK_EQ_INT(bt_recv(&t_box, fd, &m, 1000), 0);
	close(fd);
	/* A daemon that claims another major is not believed either. */
	fd = bt_connect(&t_box);
	CHECK(bt_expect(&t_box, fd, TSTUB_INIT, 0, &m) == 0);
	bt_reply(fd, &m.hdr, 0, &bad, sizeof(bad));
	CHECK_EQ_INT(bt_recv(&t_box, fd, &m, 1000), 0);
	close(fd);
	/* An INIT never answered ends at the deadline. */
	fd = bt_connect(&t_box);
	CHECK(bt_expect(&t_box, fd, TSTUB_INIT, 0, &m) == 0);
	CHECK_EQ_INT(bt_recv(&t_box, fd, &m, 2000), 0);
	close(fd);
	CHECK(!sim_box_daemon_ready(t_box.box));

	/* A channel that waits while a daemon holds the control channel
	 * becomes the control channel once that daemon is gone. */
	ctl = bt_daemon(&t_box);
	late = bt_connect(&t_box);
	bt_pump(&t_box, 100);
	close(ctl);
	CHECK(bt_expect(&t_box, late, TSTUB_INIT, 0, &m) == 0);
	close(late);
	bt_stop(&t_box);
}

static void test_free_with_requests_pending(void)
{
	struct bt_result r = {0};
	int ctl, fd;

	bt_setup(&t_box, "mt2060");
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	sim_box_request(t_box.box, 1, TSTUB_TUNER_INIT, NULL, bt_done, &r);
	sim_box_request(t_box.box, 1, TSTUB_TUNER_SLEEP, NULL, bt_done, &r);
	bt_pump(&t_box, 10);
	bt_stop(&t_box); /* no callback, no leak (ASan checks) */
	CHECK_EQ_INT(r.done, 0);
	close(fd);
	close(ctl);
}

int main(void)
{
	test_deadline_and_interrupt();
	test_one_in_flight_per_client();
	test_queue_until_bind();
	test_tuner_channel_close();
	test_control_close_and_restart();
	test_init_refusals();
	test_free_with_requests_pending();
	return check_done("test_box_lifecycle");
}

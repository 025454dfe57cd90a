// SPDX-License-Identifier: MIT
/*
 * test_box_protocol - the simulated box against a hand-played daemon:
 * the INIT handshake, the LOAD_PLUGIN/ATTACH resend, BIND, and a
 * kernel-side SET_PARAMS served with real I2C transfers on the chip model.
 */
#include "box_test.h"

/* A channel that opens first gets INIT; a BIND on it instead is a
 * worker's, refused until a daemon completed INIT. */
static void worker_before_daemon(void)
{
	union tstub_buf m;
	int fd = bt_connect(&t_box);

	CHECK(bt_expect(&t_box, fd, TSTUB_INIT, 0, &m) == 0);
	bt_send(fd, TSTUB_BIND, 0, 1, 0, 1, &(struct tstub_client){.client = 1},
		sizeof(struct tstub_client));
	CHECK(bt_expect(&t_box, fd, TSTUB_BIND, 1, &m) == 0);
	CHECK_EQ_INT(m.hdr.error, -ENOTCONN);
	close(fd);
}

/* The INIT offer, answered.  Returns the control channel. */
static int init_offer(void)
{
	struct tstub_init reply = {.major = TSTUB_MAJOR, .minor = TSTUB_MINOR};
	const struct tstub_init *init;
	union tstub_buf m;
	int ctl = bt_connect(&t_box);

	CHECK(bt_expect(&t_box, ctl, TSTUB_INIT, 0, &m) == 0);
	init = tstub_body(&m.hdr);
	CHECK(m.hdr.unique != 0);
	CHECK_EQ_INT(m.hdr.client, 0);
	CHECK_EQ_INT(init->major, TSTUB_MAJOR);
	CHECK_EQ_INT(init->kind, TSTUB_KIND_SIM);
	CHECK_EQ_INT(init->settle_permille, 500);
	CHECK_EQ_INT(init->max_clients, 2);
	CHECK_EQ_INT(init->max_msg, TSTUB_MSG_MAX);
	CHECK_EQ_INT(init->flags, TSTUB_CAP_RESEND | TSTUB_CAP_INTERRUPT |
				      TSTUB_CAP_DEMOD_STATUS);
	CHECK(!sim_box_daemon_ready(t_box.box));
	reply.flags = init->flags;
	bt_reply(ctl, &m.hdr, 0, &reply, sizeof(reply));
	return ctl;
}

static uint32_t load_chip(const union tstub_buf *m)
{
	return ((const struct tstub_load *)tstub_body(&m->hdr))->chip_id;
}

/* LOAD_PLUGIN for every client; ATTACH after a successful LOAD only. */
static void resend(int ctl)
{
	struct tstub_chip_info info = bt_chip_info(TSTUB_CHIP_MT2060);
	struct sim_box_client_info ci;
	union tstub_buf m, load1, load2;
	const struct tstub_attach *a;

	CHECK(bt_expect(&t_box, ctl, TSTUB_LOAD_PLUGIN, 0, &load1) == 0);
	CHECK(bt_expect(&t_box, ctl, TSTUB_LOAD_PLUGIN, 0, &load2) == 0);
	CHECK(sim_box_daemon_ready(t_box.box));
	CHECK_EQ_INT(load_chip(&load1), TSTUB_CHIP_MT2060);
	CHECK_EQ_INT(load_chip(&load2), TSTUB_CHIP_QT1010);
	CHECK(load1.hdr.unique != load2.hdr.unique);
	bt_reply(ctl, &load2.hdr, -ENOENT, NULL, 0);
	bt_reply(ctl, &load1.hdr, 0, &info, sizeof(info));
	CHECK(bt_expect(&t_box, ctl, TSTUB_ATTACH, 0, &m) == 0);
	a = tstub_body(&m.hdr);
	CHECK_EQ_INT(a->client, 1);
	CHECK_EQ_INT(a->chip_id, TSTUB_CHIP_MT2060);
	CHECK_EQ_INT(a->adapter, 0);
	CHECK_EQ_INT(a->i2c_addr, 0x60);
	CHECK(strcmp(a->bridge, "sim-bridge0") == 0);
	bt_reply(ctl, &m.hdr, 0, &info, sizeof(info));
	CHECK_EQ_INT(bt_recv(&t_box, ctl, &m, 200), -ETIMEDOUT);
	sim_box_client_info(t_box.box, 1, &ci);
	CHECK(ci.attached);
	CHECK(strcmp(ci.info.name, "CHIP3") == 0);
	sim_box_client_info(t_box.box, 2, &ci);
	CHECK(!ci.attached);
}

/* A second daemon's channel: INIT reply -EBUSY, then closed. */
static void second_daemon_refused(void)
{
	struct sim_box_stats st;
	union tstub_buf m;
	int fd = bt_connect(&t_box);

	CHECK_EQ_INT(bt_recv(&t_box, fd, &m, 3000), sizeof(struct tstub_hdr));
	CHECK_EQ_INT(m.hdr.opcode, TSTUB_INIT);
	CHECK(m.hdr.flags & TSTUB_F_REPLY);
	CHECK_EQ_INT(m.hdr.error, -EBUSY);
	CHECK_EQ_INT(bt_recv(&t_box, fd, &m, 1000), 0);
	close(fd);
	sim_box_get_stats(t_box.box, &st);
	CHECK_EQ_INT(st.daemon_sessions, 1);
	CHECK(sim_box_daemon_ready(t_box.box));
}

static void test_init_handshake(void)
{
	int ctl;

	bt_setup(&t_box, "mt2060,qt1010");
	t_box.cfg.settle_scale = 0.5;
	CHECK(bt_start(&t_box) == 0);
	worker_before_daemon();
	ctl = init_offer();
	resend(ctl);
	second_daemon_refused();
	close(ctl);
	bt_stop(&t_box);
}

static void test_bind(void)
{
	struct tstub_params p = {.flags = 0xffff};
	struct sim_box_client_info ci;
	union tstub_buf m;
	int ctl, fd1;

	bt_setup(&t_box, "mt2060,qt1010");
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	CHECK(ctl >= 0);
	CHECK_EQ_INT(bt_bind(&t_box, 9, NULL), -ENOENT);
	CHECK_EQ_INT(bt_bind(&t_box, 0, NULL), -ENOENT);
	fd1 = bt_bind(&t_box, 1, &p);
	CHECK(fd1 >= 0);
	CHECK_EQ_INT(p.flags & TSTUB_PARAMS_VALID, 0);
	/* One channel per client, one client per channel. */
	CHECK_EQ_INT(bt_bind(&t_box, 1, NULL), -EBUSY);
	bt_send(fd1, TSTUB_BIND, 0, ++t_box.unique, 0, 2,
		&(struct tstub_client){.client = 2},
		sizeof(struct tstub_client));
	CHECK(bt_expect(&t_box, fd1, TSTUB_BIND, 1, &m) == 0);
	CHECK_EQ_INT(m.hdr.error, -EBUSY);
	/* The control channel cannot become a tuner channel. */
	bt_send(ctl, TSTUB_BIND, 0, ++t_box.unique, 0, 2,
		&(struct tstub_client){.client = 2},
		sizeof(struct tstub_client));
	CHECK(bt_expect(&t_box, ctl, TSTUB_BIND, 1, &m) == 0);
	CHECK(m.hdr.error != 0);
	sim_box_client_info(t_box.box, 1, &ci);
	CHECK(ci.bound);
	sim_box_client_info(t_box.box, 2, &ci);
	CHECK(!ci.bound);
	/* After the channel closes the client can bind again. */
	close(fd1);
	CHECK(bt_pump_until(&t_box, bt_client_unbound, &(uint32_t){1},
			    BT_WAIT_MS) == 0);
	fd1 = bt_bind(&t_box, 1, NULL);
	CHECK(fd1 >= 0);
	close(fd1);
	close(ctl);
	bt_stop(&t_box);
}

static void check_demod(int fd, uint32_t want_lock, double want_dbm)
{
	const struct tstub_status *st;
	union tstub_buf m;

	bt_send(fd, TSTUB_DEMOD_STATUS, 0, ++t_box.unique, 0, 1, NULL, 0);
	CHECK(bt_expect(&t_box, fd, TSTUB_DEMOD_STATUS, 1, &m) == 0);
	CHECK_EQ_INT(m.hdr.error, 0);
	CHECK_EQ_INT(m.hdr.unique, t_box.unique);
	st = tstub_body(&m.hdr);
	CHECK(st->valid & TSTUB_ST_FE_STATUS);
	CHECK_EQ_INT(st->fe_status & TSTUB_FE_HAS_LOCK, want_lock);
	if (want_dbm < 0) {
		CHECK(st->valid & TSTUB_ST_STRENGTH_DBM);
		CHECK(st->strength_mdbm > (want_dbm - 1.5) * 1000 &&
		      st->strength_mdbm < (want_dbm + 1.5) * 1000);
	}
}

/* The worker's plugin programs the chip over the bridge while the
 * SET_PARAMS request waits for its reply. */
static void play_plugin(int fd)
{
	union tstub_buf m;
	uint8_t id = 0;

	check_demod(fd, 0, 1); /* nothing tuned yet: no lock */
	CHECK_EQ_INT(bt_i2c_write(&t_box, fd, 1, 0x60, bt_mt2060_474,
				  sizeof(bt_mt2060_474)),
		     0);
	CHECK_EQ_INT(bt_i2c_read(&t_box, fd, 1, 0x60, 0x00, &id, 1), 0);
	CHECK_EQ_INT(id, 0x63);
	check_demod(fd, TSTUB_FE_HAS_LOCK, -50.0);
	bt_send(fd, TSTUB_BRIDGE_CTRL, 0, ++t_box.unique, 0, 1,
		&(struct tstub_ctrl){.cmd = TSTUB_CTRL_TUNER_RESET},
		sizeof(struct tstub_ctrl));
	CHECK(bt_expect(&t_box, fd, TSTUB_BRIDGE_CTRL, 1, &m) == 0);
	CHECK_EQ_INT(m.hdr.error, 0);
}

/* Returns the request's unique. */
static uint64_t set_params_served(int fd)
{
	struct tstub_params p = bt_dvbt(474000000);
	const struct tstub_params *sent;
	struct sim_box_client_info ci;
	struct bt_result r = {0};
	union tstub_buf req;

	CHECK_EQ_INT(
	    sim_box_request(t_box.box, 1, TSTUB_SET_PARAMS, &p, bt_done, &r),
	    0);
	CHECK(!r.done); /* never completed from inside the call */
	CHECK(bt_expect(&t_box, fd, TSTUB_SET_PARAMS, 0, &req) == 0);
	sent = tstub_body(&req.hdr);
	CHECK(req.hdr.unique != 0);
	CHECK_EQ_INT(req.hdr.client, 1);
	CHECK_EQ_INT(sent->frequency, 474000000);
	CHECK_EQ_INT(sent->delsys, TSTUB_DELSYS_DVBT);
	CHECK_EQ_INT(sent->bandwidth, 8000000);
	play_plugin(fd);
	CHECK(!r.done);
	bt_reply(fd, &req.hdr, 0, NULL, 0);
	CHECK(bt_wait(&t_box, &r, 1000) == 0);
	CHECK_EQ_INT(r.err, 0);
	sim_box_client_info(t_box.box, 1, &ci);
	CHECK(ci.params.flags & TSTUB_PARAMS_VALID);
	CHECK_EQ_INT(ci.params.frequency, 474000000);
	CHECK(ci.tuned.valid);
	CHECK_EQ_INT(ci.tuned.frequency, 474000000);
	CHECK(ci.tuned.pll_locked);
	return req.hdr.unique;
}

/* Whether the box cached these params for client 1 (PARAMS_CHANGED). */
static int params_cached(struct bt *t, void *arg)
{
	const struct tstub_params *p = arg;
	struct sim_box_client_info ci;

	return !sim_box_client_info(t->box, 1, &ci) &&
	       (ci.params.flags & TSTUB_PARAMS_VALID) &&
	       ci.params.frequency == p->frequency;
}

static void test_set_params_roundtrip(void)
{
	struct tstub_status status = {.valid = TSTUB_ST_FE_STATUS,
				      .fe_status = TSTUB_FE_HAS_LOCK,
				      .frequency = 474000000};
	struct tstub_params p = bt_dvbt(490000000), back;
	struct bt_result r = {0};
	union tstub_buf m;
	uint64_t first;
	int ctl, fd;

	bt_setup(&t_box, "mt2060");
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	CHECK(fd >= 0);
	first = set_params_served(fd);

	/* The next request: a fresh unique, and the reply body comes back. */
	CHECK_EQ_INT(
	    sim_box_request(t_box.box, 1, TSTUB_GET_STATUS, NULL, bt_done, &r),
	    0);
	CHECK(bt_expect(&t_box, fd, TSTUB_GET_STATUS, 0, &m) == 0);
	CHECK(m.hdr.unique != first);
	bt_reply(fd, &m.hdr, 0, &status, sizeof(status));
	CHECK(bt_wait(&t_box, &r, 1000) == 0);
	CHECK_EQ_INT(r.err, 0);
	CHECK_EQ_INT(r.len, sizeof(status));
	CHECK(memcmp(r.body, &status, sizeof(status)) == 0);

	/* A tune from the network API: the box's cached params follow, and a
	 * restarted worker gets them back in its BIND reply. */
	bt_send(fd, TSTUB_PARAMS_CHANGED, 0, 0, 0, 1, &p, sizeof(p));
	CHECK(bt_pump_until(&t_box, params_cached, &p, BT_WAIT_MS) == 0);
	close(fd);
	CHECK(bt_pump_until(&t_box, bt_client_unbound, &(uint32_t){1},
			    BT_WAIT_MS) == 0);
	fd = bt_bind(&t_box, 1, &back);
	CHECK(fd >= 0);
	CHECK(back.flags & TSTUB_PARAMS_VALID);
	CHECK_EQ_INT(back.frequency, 490000000);
	close(fd);
	close(ctl);
	bt_stop(&t_box);
}

static void test_api_refusals(void)
{
	struct tstub_params p = bt_dvbt(474000000);
	struct sim_box_stats st;
	int ctl;

	bt_setup(&t_box, "mt2060");
	CHECK(bt_start(&t_box) == 0);
	CHECK_EQ_INT(
	    sim_box_request(t_box.box, 1, TSTUB_TUNER_INIT, NULL, NULL, NULL),
	    -ENOTCONN);
	ctl = bt_daemon(&t_box);
	CHECK_EQ_INT(
	    sim_box_request(t_box.box, 2, TSTUB_TUNER_INIT, NULL, NULL, NULL),
	    -ENOENT);
	CHECK_EQ_INT(
	    sim_box_request(t_box.box, 1, TSTUB_SET_PARAMS, NULL, NULL, NULL),
	    -EINVAL);
	p.delsys = TSTUB_DELSYS_NONE;
	CHECK_EQ_INT(
	    sim_box_request(t_box.box, 1, TSTUB_SET_PARAMS, &p, NULL, NULL),
	    -EINVAL);
	CHECK_EQ_INT(
	    sim_box_request(t_box.box, 1, TSTUB_BIND, NULL, NULL, NULL),
	    -EINVAL);
	CHECK_EQ_INT(
	    sim_box_set_fault(t_box.box, 3, &(struct sim_box_fault){0}),
	    -ENOENT);
	CHECK_EQ_INT(sim_box_set_fault(t_box.box, 1,
				       &(struct sim_box_fault){.nak_rate = 2}),
		     -EINVAL);
	sim_box_get_stats(t_box.box, &st);
	CHECK_EQ_INT(st.refused, 1);
	close(ctl);
	bt_stop(&t_box);
}

static void test_bad_config(void)
{
	char err[256] = "";
	struct sim_box *box;

	bt_setup(&t_box, "mt2060,nosuchchip");
	box = sim_box_new(&t_box.cfg, err, sizeof(err));
	CHECK(box == NULL);
	CHECK(strstr(err, "nosuchchip") != NULL);
	/* Nothing left behind: the socket path is free again. */
	t_box.cfg.nbridges = 1;
	CHECK(bt_start(&t_box) == 0);
	/* A second box on the same socket is refused. */
	box = sim_box_new(&t_box.cfg, err, sizeof(err));
	CHECK(box == NULL);
	sim_box_free(box);
	bt_stop(&t_box);
}

int main(void)
{
	test_init_handshake();
	test_bind();
	test_set_params_roundtrip();
	test_api_refusals();
	test_bad_config();
	return check_done("test_box_protocol");
}

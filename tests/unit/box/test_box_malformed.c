// SPDX-License-Identifier: MIT
/*
 * test_box_malformed - what the box does with messages it must refuse:
 * it logs and drops them, answers nothing, keeps the channel, and keeps
 * answering the valid messages that follow.
 */
#include <stddef.h>

#include "box_test.h"

static int send_bytes(int fd, const void *buf, size_t len)
{
	return send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

static size_t build_xfer(uint8_t *buf, uint32_t nsegs,
			 const struct tstub_i2c_seg *segs, size_t nwr,
			 uint64_t unique)
{
	struct tstub_hdr h = {
	    .opcode = TSTUB_I2C_XFER, .unique = unique, .client = 1};
	struct tstub_i2c_xfer x = {.nsegs = nsegs};
	size_t len = sizeof(h) + sizeof(x) + nwr;

	memcpy(x.segs, segs, sizeof(x.segs));
	h.len = (uint32_t)len;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &x, sizeof(x));
	memset(buf + sizeof(h) + sizeof(x), 0x01, nwr);
	return len;
}

/* Returns how many bad messages were sent. */
static int send_bad_headers(int fd)
{
	uint8_t big[3000] = {0};
	struct tstub_hdr h = {.len = sizeof(h),
			      .opcode = TSTUB_DEMOD_STATUS,
			      .unique = 900,
			      .client = 1};
	struct {
		struct tstub_hdr h;
		uint64_t extra;
	} longer = {.h = h};
	int n = 0;

	n += !send_bytes(fd, &h, 10); /* shorter than a header */
	n += !send_bytes(fd, "", 0);  /* empty */
	h.len = sizeof(big);
	memcpy(big, &h, sizeof(h));
	n += !send_bytes(fd, big, sizeof(big)); /* oversized */
	h.len = sizeof(h) + 8;
	n += !send_bytes(fd, &h, sizeof(h)); /* len says more */
	h.len = sizeof(h);
	h.opcode = 0x99;
	n += !send_bytes(fd, &h, sizeof(h)); /* unknown opcode */
	h.opcode = 0;
	n += !send_bytes(fd, &h, sizeof(h)); /* zeroed memory */
	h.opcode = TSTUB_DEMOD_STATUS;
	h.flags = 0x8000;
	n += !send_bytes(fd, &h, sizeof(h)); /* unknown flag */
	h.flags = 0;
	h.error = -5;
	n += !send_bytes(fd, &h, sizeof(h)); /* request with an error */
	longer.h.len = sizeof(longer);
	n += !send_bytes(fd, &longer, sizeof(longer)); /* wrong body size */
	h.error = 0;
	h.opcode = TSTUB_BIND;
	n += !send_bytes(fd, &h, sizeof(h)); /* BIND without a body */
	return n;
}

static int send_bad_i2c(int fd)
{
	uint8_t buf[TSTUB_MSG_MAX + 64];
	struct tstub_i2c_seg w1[TSTUB_I2C_SEGS_MAX] = {
	    {.addr = 0x60, .len = 1}};
	struct tstub_i2c_seg s[TSTUB_I2C_SEGS_MAX];
	int n = 0;

	n += !send_bytes(fd, buf, build_xfer(buf, 0, w1, 1, 901)); /* 0 segs */
	n += !send_bytes(fd, buf, build_xfer(buf, 5, w1, 1, 902)); /* 5 segs */
	memcpy(s, w1, sizeof(s));
	s[0].len = 0;
	n += !send_bytes(fd, buf, build_xfer(buf, 1, s, 0, 903)); /* len 0 */
	s[0] = (struct tstub_i2c_seg){.addr = 0x80, .len = 1};
	n += !send_bytes(fd, buf, build_xfer(buf, 1, s, 1, 904)); /* 8-bit */
	s[0] = (struct tstub_i2c_seg){.addr = 0x60, .flags = 0x10, .len = 1};
	n += !send_bytes(fd, buf, build_xfer(buf, 1, s, 1, 905));  /* flag */
	n += !send_bytes(fd, buf, build_xfer(buf, 1, w1, 3, 906)); /* 3 != 1 */
	n += !send_bytes(fd, buf, build_xfer(buf, 1, w1, 0, 907)); /* 0 != 1 */
	s[0] = (struct tstub_i2c_seg){.addr = 0x60, .len = 1};
	s[1] = (struct tstub_i2c_seg){
	    .addr = 0x60, .flags = TSTUB_I2C_RD, .len = 1024};
	n += !send_bytes(fd, buf, build_xfer(buf, 2, s, 1, 908)); /* > 1024 */
	return n;
}

/* After the bad ones, the first message back answers the good one. */
static void check_still_answers(int fd, uint64_t unique)
{
	union tstub_buf m;

	bt_send(fd, TSTUB_DEMOD_STATUS, 0, unique, 0, 1, NULL, 0);
	CHECK(bt_expect(&t_box, fd, TSTUB_DEMOD_STATUS, 1, &m) == 0);
	CHECK_EQ_INT(m.hdr.unique, unique);
	CHECK_EQ_INT(m.hdr.error, 0);
}

/* Whether the box's counter (a const uint64_t * into its stats, by
 * offset) reached the value the test waits for. */
struct stat_wait {
	size_t offset;
	uint64_t want;
};

static int stat_reached(struct bt *t, void *arg)
{
	const struct stat_wait *w = arg;
	struct sim_box_stats st;
	uint64_t v;

	sim_box_get_stats(t->box, &st);
	memcpy(&v, (const char *)&st + w->offset, sizeof(v));
	return v >= w->want;
}

static void test_dropped_and_alive(void)
{
	struct sim_box_stats before, after;
	int ctl, fd, sent;

	bt_setup(&t_box, "mt2060");
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	CHECK(fd >= 0);
	sim_box_get_stats(t_box.box, &before);
	sent = send_bad_headers(fd);
	CHECK_EQ_INT(sent, 10);
	check_still_answers(fd, 1000);
	sent += send_bad_i2c(fd);
	CHECK_EQ_INT(sent, 18);
	check_still_answers(fd, 1001);
	/* The control channel survives garbage too. */
	CHECK_EQ_INT(send_bad_headers(ctl), 10);
	sent += 10;
	CHECK(bt_pump_until(&t_box, stat_reached,
			    &(struct stat_wait){
				offsetof(struct sim_box_stats, bad_messages),
				before.bad_messages + (uint64_t)sent},
			    BT_WAIT_MS) == 0);
	sim_box_get_stats(t_box.box, &after);
	CHECK_EQ_INT(after.bad_messages - before.bad_messages, sent);
	CHECK_EQ_INT(after.i2c_transfers, before.i2c_transfers);
	CHECK(sim_box_daemon_ready(t_box.box));
	check_still_answers(fd, 1002);
	close(fd);
	close(ctl);
	bt_stop(&t_box);
}

static void test_unknown_and_misdirected(void)
{
	struct sim_box_stats st;
	struct tstub_params p = bt_dvbt(474000000);
	struct bt_result r = {0};
	union tstub_buf m, req;
	int ctl, fd, other;

	bt_setup(&t_box, "mt2060");
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);

	/* A reply to nothing outstanding is dropped. */
	bt_send(fd, TSTUB_SET_PARAMS, TSTUB_F_REPLY, 12345, 0, 1, NULL, 0);
	bt_send(ctl, TSTUB_ATTACH, TSTUB_F_REPLY, 777, -ENODEV, 0, NULL, 0);
	CHECK(bt_pump_until(
		  &t_box, stat_reached,
		  &(struct stat_wait){
		      offsetof(struct sim_box_stats, unknown_uniques), 2},
		  BT_WAIT_MS) == 0);
	sim_box_get_stats(t_box.box, &st);
	CHECK_EQ_INT(st.unknown_uniques, 2);

	/* A reply with the right unique but the wrong opcode completes
	 * nothing. */
	sim_box_request(t_box.box, 1, TSTUB_SET_PARAMS, &p, bt_done, &r);
	CHECK(bt_expect(&t_box, fd, TSTUB_SET_PARAMS, 0, &req) == 0);
	bt_send(fd, TSTUB_GET_STATUS, TSTUB_F_REPLY, req.hdr.unique, -EIO, 1,
		NULL, 0);
	bt_pump(&t_box, 20);
	CHECK(!r.done);
	bt_reply(fd, &req.hdr, -EINVAL, NULL, 0);
	CHECK(bt_wait(&t_box, &r, 1000) == 0);
	CHECK_EQ_INT(r.err, -EINVAL);

	/* Stub-side opcodes sent as requests by the daemon are refused. */
	bt_send(fd, TSTUB_SET_PARAMS, 0, 55, 0, 1, &p, sizeof(p));
	CHECK(bt_expect(&t_box, fd, TSTUB_SET_PARAMS, 1, &m) == 0);
	CHECK_EQ_INT(m.hdr.error, -EOPNOTSUPP);

	/* Tuner requests on an unbound channel. */
	other = bt_connect(&t_box);
	bt_send(other, TSTUB_DEMOD_STATUS, 0, 56, 0, 1, NULL, 0);
	CHECK(bt_expect(&t_box, other, TSTUB_DEMOD_STATUS, 1, &m) == 0);
	CHECK_EQ_INT(m.hdr.error, -ENOTCONN);
	CHECK_EQ_INT(bt_i2c_write(&t_box, other, 1, 0x60, bt_mt2060_474,
				  sizeof(bt_mt2060_474)),
		     -ENOTCONN);
	close(other);
	close(fd);
	close(ctl);
	bt_stop(&t_box);
}

static void test_nak_and_chip_errors(void)
{
	struct tstub_i2c_seg segs[3] = {
	    {.addr = 0x60, .len = 1},
	    {.addr = 0x61, .len = 1},
	    {.addr = 0x60, .flags = TSTUB_I2C_RD, .len = 1},
	};
	const uint8_t bad_reg[] = {0x30, 0x00};
	const uint8_t two[] = {0x00, 0x00};
	struct sim_box_stats st;
	uint8_t rd[4];
	int ctl, fd;

	bt_setup(&t_box, "mt2060");
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	/* Nobody at 0x61 on this adapter. */
	CHECK_EQ_INT(bt_i2c_write(&t_box, fd, 1, 0x61, two, 1), -EREMOTEIO);
	/* The chip itself NAKs a register it does not have. */
	CHECK_EQ_INT(bt_i2c_write(&t_box, fd, 1, 0x60, bad_reg, 2), -EREMOTEIO);
	/* A NAK in the middle stops the transfer. */
	CHECK_EQ_INT(bt_i2c(&t_box, fd, 1, segs, 3, two, 2, rd, BT_WAIT_MS),
		     -EREMOTEIO);
	sim_box_get_stats(t_box.box, &st);
	CHECK_EQ_INT(st.i2c_transfers, 3);
	CHECK_EQ_INT(st.i2c_naks, 3);
	CHECK_EQ_INT(st.i2c_segments, 4);
	close(fd);
	close(ctl);
	bt_stop(&t_box);
}

int main(void)
{
	test_dropped_and_alive();
	test_unknown_and_misdirected();
	test_nak_and_chip_errors();
	return check_done("test_box_malformed");
}

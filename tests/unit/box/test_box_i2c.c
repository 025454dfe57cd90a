// SPDX-License-Identifier: MIT
/*
 * test_box_i2c - the bridge side of the box: modeled bus time (counted
 * from the transfer's send, as /dev/tuner's write() runs it), the trace
 * file, the NAK/hang/never-lock faults, and what the demodulator reports
 * for what the chip's registers really hold.
 */
#include <ctype.h>

#include "box_test.h"

static int tune_mt2060(int fd, uint32_t rf_hz)
{
	uint8_t regs[6];

	bt_mt2060_regs(rf_hz, regs);
	return bt_i2c_write(&t_box, fd, 1, 0x60, regs, sizeof(regs));
}

static struct tstub_status demod(int fd, uint32_t client)
{
	struct tstub_status st = {0};
	union tstub_buf m;

	bt_send(fd, TSTUB_DEMOD_STATUS, 0, ++t_box.unique, 0, client, NULL, 0);
	if (bt_expect(&t_box, fd, TSTUB_DEMOD_STATUS, 1, &m) == 0 &&
	    !m.hdr.error)
		memcpy(&st, tstub_body(&m.hdr), sizeof(st));
	return st;
}

/*
 * The demodulator's view once it shows these fe_status bits, asked again
 * until then (the LO settles in modeled time); at most BT_WAIT_MS, which
 * only fails a model that never gets there.
 */
static struct tstub_status demod_until(int fd, uint32_t bits)
{
	uint64_t end = bt_now_ms() + BT_WAIT_MS;
	struct tstub_status s;

	do
		s = demod(fd, 1);
	while ((s.fe_status & bits) != bits && bt_now_ms() < end);
	return s;
}

/* Milliseconds that `count` register reads of 20 bytes take. */
static uint64_t time_reads(unsigned int khz, int count)
{
	uint8_t buf[20];
	uint64_t t0, elapsed;
	int ctl, fd, fails = 0;

	bt_setup(&t_box, "mt2060");
	t_box.cfg.i2c_khz = khz;
	if (bt_start(&t_box))
		return 0;
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	t0 = bt_now_ms();
	for (int i = 0; i < count; i++)
		fails += bt_i2c_read(&t_box, fd, 1, 0x60, 0x00, buf,
				     sizeof(buf)) != 0;
	elapsed = bt_now_ms() - t0;
	CHECK_EQ_INT(fails, 0);
	close(fd);
	close(ctl);
	bt_stop(&t_box);
	return elapsed;
}

static void test_bus_time(void)
{
	/* 1 + (2 * 9 + 1) + (21 * 9 + 1) = 210 bit times: 2.1 ms at 100 kHz */
	uint64_t instant = time_reads(0, 20);
	uint64_t slow = time_reads(100, 20);

	printf("20 transfers: %llu ms at 0 kHz, %llu ms at 100 kHz\n",
	       (unsigned long long)instant, (unsigned long long)slow);
	/* A lower bound only: the model's timers cannot fire early, so no
	 * machine is too slow for it; how fast a busy machine is, is not
	 * checked (no upper bound, no comparison with the instant bus). */
	CHECK(slow >= 34);
}

/*
 * A transfer's bus time counts from its send, not from when the box got
 * round to reading it: a box that reads a transfer once that time has
 * passed answers it in the same run, with no timer.  The test lets the
 * bus time pass on the clock before the box runs at all, so no machine
 * is too slow for it; with the bus counted from the read, the reply
 * would wait for a 390 us timer and not be there.
 */
static void test_bus_time_from_send(void)
{
	const struct tstub_i2c_seg segs[2] = {
	    {.addr = 0x60, .len = 1},
	    {.addr = 0x60, .flags = TSTUB_I2C_RD, .len = 1},
	};
	uint8_t body[sizeof(struct tstub_i2c_xfer) + 1];
	struct tstub_i2c_xfer x = {.nsegs = 2};
	/* 1 + (2 * 9 + 1) * 2 = 39 bit times: 390 us at 100 kHz */
	const uint64_t bus_ns = 390000;
	union tstub_buf m;
	uint64_t sent;
	ssize_t n;
	int ctl, fd;

	bt_setup(&t_box, "mt2060");
	t_box.cfg.i2c_khz = 100;
	if (bt_start(&t_box))
		return;
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	memcpy(x.segs, segs, sizeof(segs));
	memcpy(body, &x, sizeof(x));
	body[sizeof(x)] = 0x00; /* register 0: the part number */
	sent = bt_now_ns();
	CHECK_EQ_INT(bt_send(fd, TSTUB_I2C_XFER, 0, ++t_box.unique, 0, 1, body,
			     sizeof(body)),
		     0);
	/* The condition under test is time passing, not another party. */
	while (bt_now_ns() < sent + 2 * bus_ns) {
		struct timespec ts = {.tv_nsec = (long)bus_ns};

		nanosleep(&ts, NULL);
	}
	sim_box_run(t_box.box, 0);
	n = recv(fd, m.bytes, sizeof(m), MSG_DONTWAIT);
	CHECK(n > 0);
	if (n > 0) {
		CHECK_EQ_INT(m.hdr.opcode, TSTUB_I2C_XFER);
		CHECK(m.hdr.unique == t_box.unique);
		CHECK_EQ_INT(m.hdr.error, 0);
	}
	close(fd);
	close(ctl);
	bt_stop(&t_box);
}

static int hex2(const char *s)
{
	for (int i = 0; i < 2; i++)
		if (!isxdigit((unsigned char)s[i]) ||
		    isupper((unsigned char)s[i]))
			return 0;
	return 1;
}

/* "i2c-N 0xaa W|R", then " hh" per byte, then " NAK" or nothing. */
static int trace_line_ok(const char *line)
{
	unsigned int adapter;
	int n = 0;

	if (sscanf(line, "i2c-%u%n", &adapter, &n) != 1)
		return 0;
	line += n;
	if (strncmp(line, " 0x", 3) || !hex2(line + 3) || line[5] != ' ' ||
	    (line[6] != 'W' && line[6] != 'R'))
		return 0;
	line += 7;
	while (line[0] == ' ' && hex2(line + 1) &&
	       (line[3] == ' ' || line[3] == '\0'))
		line += 3;
	return strcmp(line, "") == 0 || strcmp(line, " NAK") == 0;
}

static void test_trace(void)
{
	static const char *const want[] = {
	    "i2c-0 0x60 W 01 6e 69 03 fb 93",
	    "i2c-0 0x60 W 00",
	    "i2c-0 0x60 R 63",
	    "i2c-0 0x61 W 00 NAK",
	    "i2c-1 0x62 W 29",
	    "i2c-1 0x62 R 39",
	    "i2c-0 0x60 W 01 NAK",
	};
	char line[256];
	uint8_t id, zero = 0;
	size_t n = 0;
	int ctl, fd1, fd2, bad = 0;
	FILE *f;

	bt_setup(&t_box, "mt2060,qt1010");
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd1 = bt_bind(&t_box, 1, NULL);
	fd2 = bt_bind(&t_box, 2, NULL);
	CHECK_EQ_INT(bt_i2c_write(&t_box, fd1, 1, 0x60, bt_mt2060_474,
				  sizeof(bt_mt2060_474)),
		     0);
	CHECK_EQ_INT(bt_i2c_read(&t_box, fd1, 1, 0x60, 0x00, &id, 1), 0);
	CHECK_EQ_INT(bt_i2c_write(&t_box, fd1, 1, 0x61, &zero, 1), -EREMOTEIO);
	CHECK_EQ_INT(bt_i2c_read(&t_box, fd2, 2, 0x62, 0x29, &id, 1), 0);
	CHECK_EQ_INT(id, 0x39);
	sim_box_set_fault(t_box.box, 1, &(struct sim_box_fault){.nak_rate = 1});
	CHECK_EQ_INT(bt_i2c_read(&t_box, fd1, 1, 0x60, 0x01, &id, 1),
		     -EREMOTEIO);
	f = fopen(t_box.trace, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		bad += !trace_line_ok(line);
		if (n < sizeof(want) / sizeof(want[0]) && strcmp(line, want[n]))
			fprintf(stderr, "trace line %zu: '%s', want '%s'\n", n,
				line, want[n]);
		CHECK(n >= sizeof(want) / sizeof(want[0]) ||
		      strcmp(line, want[n]) == 0);
		n++;
	}
	if (f)
		fclose(f);
	CHECK_EQ_INT(n, sizeof(want) / sizeof(want[0]));
	CHECK_EQ_INT(bad, 0);
	close(fd1);
	close(fd2);
	close(ctl);
	bt_stop(&t_box);
}

static void test_nak_rate(void)
{
	struct sim_box_fault f = {.nak_rate = -1};
	uint8_t reg = 0;
	int ctl, fd, naks = 0;

	bt_setup(&t_box, "mt2060");
	t_box.cfg.nak_rate = 1.0;
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	/* The box-wide rate, then a client's own rate over it. */
	CHECK_EQ_INT(bt_i2c_write(&t_box, fd, 1, 0x60, &reg, 1), -EREMOTEIO);
	f.nak_rate = 0;
	sim_box_set_fault(t_box.box, 1, &f);
	CHECK_EQ_INT(bt_i2c_write(&t_box, fd, 1, 0x60, &reg, 1), 0);
	f.nak_rate = 0.5;
	sim_box_set_fault(t_box.box, 1, &f);
	for (int i = 0; i < 200; i++)
		naks +=
		    bt_i2c_write(&t_box, fd, 1, 0x60, &reg, 1) == -EREMOTEIO;
	printf("NAK rate 0.5: %d of 200\n", naks);
	CHECK(naks > 50 && naks < 150);
	sim_box_get_fault(t_box.box, 1, &f);
	CHECK(f.nak_rate == 0.5);
	close(fd);
	close(ctl);
	bt_stop(&t_box);
}

static void test_hang_and_never_lock(void)
{
	struct sim_box_fault f = {.nak_rate = -1, .hang = true};
	struct sim_box_client_info ci;
	struct sim_box_stats st;
	struct tstub_status s;
	uint8_t reg = 0;
	int ctl, fd;

	bt_setup(&t_box, "mt2060");
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	sim_box_set_fault(t_box.box, 1, &f);
	CHECK_EQ_INT(bt_i2c(&t_box, fd, 1,
			    &(struct tstub_i2c_seg){.addr = 0x60, .len = 1}, 1,
			    &reg, 1, NULL, 300),
		     -ETIMEDOUT);
	sim_box_get_stats(t_box.box, &st);
	CHECK_EQ_INT(st.i2c_hung, 1);
	/* The bus answers again; the hung transfer stays unanswered. */
	f.hang = false;
	f.never_lock = true;
	sim_box_set_fault(t_box.box, 1, &f);
	CHECK_EQ_INT(tune_mt2060(fd, 474000000), 0);
	s = demod(fd, 1);
	CHECK_EQ_INT(s.fe_status & TSTUB_FE_HAS_LOCK, 0);
	sim_box_client_info(t_box.box, 1, &ci);
	CHECK(ci.tuned.valid);
	CHECK(!ci.tuned.pll_locked);
	f.never_lock = false;
	sim_box_set_fault(t_box.box, 0, &f); /* every client */
	s = demod(fd, 1);
	CHECK(s.fe_status & TSTUB_FE_HAS_LOCK);
	close(fd);
	close(ctl);
	bt_stop(&t_box);
}

static void test_demod_view(void)
{
	struct tstub_params t2 = {.delsys = TSTUB_DELSYS_DVBT2,
				  .frequency = 474000000,
				  .bandwidth = 8000000};
	struct tstub_status s;
	int ctl, fd, fd2;

	bt_setup(&t_box, "mt2060,qt1010");
	t_box.cfg.settle_scale = 50; /* 500 ms for the MT2060 to lock */
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	fd2 = bt_bind(&t_box, 2, NULL);
	/* Nothing tuned: no lock, nothing measured. */
	s = demod(fd2, 2);
	CHECK_EQ_INT(s.fe_status, 0);
	CHECK_EQ_INT(s.valid & TSTUB_ST_STRENGTH_DBM, 0);

	CHECK_EQ_INT(tune_mt2060(fd, 474000000), 0);
	s = demod(fd, 1); /* the LO has not settled yet */
	CHECK_EQ_INT(s.fe_status & TSTUB_FE_HAS_LOCK, 0);
	s = demod_until(fd, TSTUB_FE_HAS_LOCK);
	CHECK(s.fe_status & TSTUB_FE_HAS_LOCK);
	CHECK_EQ_INT(s.frequency, 474000000);
	CHECK(s.cnr_mdb > 28500 && s.cnr_mdb < 31500);

	/* The params say DVB-T2: a DVB-T carrier does not lock. */
	bt_send(fd, TSTUB_PARAMS_CHANGED, 0, 0, 0, 1, &t2, sizeof(t2));
	s = demod(fd, 1);
	CHECK_EQ_INT(s.fe_status & TSTUB_FE_HAS_LOCK, 0);
	t2.delsys = TSTUB_DELSYS_DVBT;
	bt_send(fd, TSTUB_PARAMS_CHANGED, 0, 0, 0, 1, &t2, sizeof(t2));

	/* Weak carrier: signal without lock.  Empty channel: noise. */
	CHECK_EQ_INT(tune_mt2060(fd, 506000000), 0);
	s = demod_until(fd, TSTUB_FE_HAS_SIGNAL);
	CHECK(s.fe_status & TSTUB_FE_HAS_SIGNAL);
	CHECK_EQ_INT(s.fe_status & TSTUB_FE_HAS_LOCK, 0);
	CHECK(s.strength_mdbm > -89500 && s.strength_mdbm < -86500);
	CHECK_EQ_INT(tune_mt2060(fd, 530000000), 0);
	bt_pump(&t_box, 600);
	s = demod(fd, 1);
	CHECK_EQ_INT(s.fe_status & TSTUB_FE_HAS_LOCK, 0);
	CHECK(s.strength_mdbm < -95000);
	close(fd);
	close(fd2);
	close(ctl);
	bt_stop(&t_box);
}

int main(void)
{
	test_bus_time();
	test_bus_time_from_send();
	test_trace();
	test_nak_rate();
	test_hang_and_never_lock();
	test_demod_view();
	return check_done("test_box_i2c");
}

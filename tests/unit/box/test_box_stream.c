// SPDX-License-Identifier: MIT
/*
 * test_box_stream - a tuner's transport stream socket: nothing while the
 * demodulator has no lock (untuned, empty channel), whole packets from a
 * packet boundary once it locks, a reader that does not read loses
 * packets while one that reads keeps a perfect continuity count, and the
 * socket is gone after the box.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "box_test.h"
#include "ts_pkt.h"

static int tune(int fd, uint32_t rf_hz)
{
	uint8_t regs[6];

	bt_mt2060_regs(rf_hz, regs);
	return bt_i2c_write(&t_box, fd, 1, 0x60, regs, sizeof(regs));
}

static int ts_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	char path[160];

	snprintf(path, sizeof(path), "%s.ts1", t_box.stub);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		close(fd);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

static struct sim_box_stream_stats stats(void)
{
	struct sim_box_stream_stats st = {0};

	sim_box_stream_stats(t_box.box, 1, &st);
	return st;
}

static int checks_reached(struct bt *t, void *arg)
{
	(void)t;
	return stats().lock_checks >= *(uint64_t *)arg;
}

/* Run the box while it looks at the demodulator ten more times. */
static void ten_lock_checks(void)
{
	uint64_t want = stats().lock_checks + 10;

	CHECK_EQ_INT(bt_pump_until(&t_box, checks_reached, &want, 5000), 0);
}

static int nothing_to_read(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

/* A reader that reads: whole packets, counted, continuity checked. */
struct reader {
	int fd;
	uint8_t buf[64 * TS_PACKET];
	size_t have;
	uint64_t packets, cc_gaps, bad_sync;
	int last_cc[8192];
};

static void reader_drain(struct reader *r)
{
	ssize_t n;

	while ((n = recv(r->fd, r->buf + r->have, sizeof(r->buf) - r->have,
			 MSG_DONTWAIT)) > 0) {
		size_t whole = (r->have + (size_t)n) / TS_PACKET;

		for (size_t i = 0; i < whole; i++) {
			const uint8_t *p = r->buf + i * TS_PACKET;
			uint16_t pid = ts_pid(p);

			r->packets++;
			r->bad_sync += p[0] != TS_SYNC;
			if (pid == TS_PID_NULL || !ts_has_payload(p))
				continue;
			if (r->last_cc[pid] >= 0 &&
			    ts_cc(p) != ((r->last_cc[pid] + 1) & 15))
				r->cc_gaps++;
			r->last_cc[pid] = ts_cc(p);
		}
		r->have = (r->have + (size_t)n) % TS_PACKET;
		memmove(r->buf, r->buf + whole * TS_PACKET, r->have);
	}
}

static int fast_reads_slow_drops(struct bt *t, void *arg)
{
	struct reader *r = arg;

	(void)t;
	reader_drain(r);
	return stats().dropped > 0 && r->packets > 20000;
}

static int got_packets(struct bt *t, void *arg)
{
	struct reader *r = arg;

	(void)t;
	reader_drain(r);
	return r->packets >= 1000;
}

static void test_stream(void)
{
	static struct reader fast;
	int ctl, fd, slow;
	struct stat st;

	bt_setup(&t_box, "mt2060");
	t_box.cfg.no_card = true;
	CHECK(bt_start(&t_box) == 0);
	ctl = bt_daemon(&t_box);
	fd = bt_bind(&t_box, 1, NULL);
	fast.fd = ts_connect();
	CHECK(fast.fd >= 0);
	for (int i = 0; i < 8192; i++)
		fast.last_cc[i] = -1;

	/* untuned, then an empty channel: nothing, the connection stays */
	ten_lock_checks();
	CHECK(nothing_to_read(fast.fd));
	CHECK_EQ_INT(tune(fd, 530000000), 0);
	ten_lock_checks();
	CHECK(nothing_to_read(fast.fd));
	CHECK_EQ_INT(stats().packets, 0);
	CHECK(!stats().locked);

	/* the strong multiplex: packets at its bitrate */
	CHECK_EQ_INT(tune(fd, 474000000), 0);
	CHECK_EQ_INT(bt_pump_until(&t_box, got_packets, &fast, 5000), 0);
	CHECK(stats().locked);
	CHECK_EQ_INT(stats().bitrate, 24128342);
	CHECK_EQ_INT(fast.bad_sync, 0);

	/* a reader that never reads loses packets, the other none */
	slow = ts_connect();
	CHECK(slow >= 0);
	CHECK_EQ_INT(bt_pump_until(&t_box, fast_reads_slow_drops, &fast, 20000),
		     0);
	CHECK_EQ_INT(stats().connections, 2);
	CHECK_EQ_INT(fast.cc_gaps, 0);
	CHECK_EQ_INT(fast.bad_sync, 0);
	CHECK_EQ_INT(stats().cc_errors + stats().tei_packets, 0);

	close(slow);
	close(fast.fd);
	close(fd);
	close(ctl);
	char path[160];
	snprintf(path, sizeof(path), "%s.ts1", t_box.stub);
	CHECK_EQ_INT(stat(path, &st), 0);
	bt_stop(&t_box);
	CHECK(stat(path, &st) < 0 && errno == ENOENT);
}

int main(void)
{
	test_stream();
	return check_done("test_box_stream");
}

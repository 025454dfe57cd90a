// SPDX-License-Identifier: MIT
/*
 * Transport stream checks: `ktest ts PID MIN` reads a TS on stdin (e.g. from
 * the network API's stream), `ktest dvr ADAPTER PID MIN` reads one straight
 * from dvr0 through a demux0 PES filter on every PID.  Both pass when every
 * packet has the sync byte and at least MIN packets of PID arrived, each
 * with the next continuity counter and, in its first four payload bytes,
 * the next packet counter (what the virtual bridge feeds).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/dvb/dmx.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ktest.h"

#define TS_SIZE    188
#define TS_READ_MS 15000 /* a bounded wait for the whole read */

struct ts_check {
	unsigned pid;
	unsigned long packets, pid_packets, sync_errors, cc_errors, gaps;
	int last_cc;
	uint32_t last_counter;
};

static void ts_packet(struct ts_check *c, const uint8_t *p)
{
	c->packets++;
	if (p[0] != 0x47) {
		c->sync_errors++;
		return;
	}
	if ((((unsigned)p[1] & 0x1f) << 8 | p[2]) != c->pid || !(p[3] & 0x10))
		return;
	int cc = p[3] & 0x0f;
	uint32_t counter = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 |
			   (uint32_t)p[6] << 8 | p[7];
	if (c->pid_packets) {
		c->cc_errors += cc != ((c->last_cc + 1) & 0x0f);
		c->gaps += counter != c->last_counter + 1;
	}
	c->pid_packets++;
	c->last_cc = cc;
	c->last_counter = counter;
}

static int ts_verdict(const struct ts_check *c, unsigned long min)
{
	printf("ts: %lu packets, %lu on PID 0x%04x (counter %u..), "
	       "%lu sync errors, %lu CC errors, %lu counter gaps\n",
	       c->packets, c->pid_packets, c->pid,
	       (unsigned)(c->last_counter -
			  (c->pid_packets ? c->pid_packets - 1 : 0)),
	       c->sync_errors, c->cc_errors, c->gaps);
	return c->pid_packets >= min && !c->sync_errors && !c->cc_errors &&
		       !c->gaps
		   ? 0
		   : 1;
}

/* Reads fd until MIN packets of the PID, end of file or the deadline. */
static int ts_read(int fd, struct ts_check *c, unsigned long min)
{
	static uint8_t buf[TS_SIZE * 64];
	size_t have = 0;
	uint64_t end = ktest_now_ms() + TS_READ_MS;

	while (c->pid_packets < min) {
		uint64_t now = ktest_now_ms();
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (now >= end || poll(&pfd, 1, (int)(end - now)) <= 0)
			return -ETIMEDOUT;
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0 && errno == EOVERFLOW) {
			fprintf(stderr, "ts: read: buffer overflow\n");
			return -EOVERFLOW;
		}
		if (n <= 0)
			return n < 0 ? -errno : 0;
		have += (size_t)n;
		size_t off = 0;
		for (; have - off >= TS_SIZE; off += TS_SIZE)
			ts_packet(c, buf + off);
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	return 0;
}

static int ts_args(int argc, char **argv, int first, struct ts_check *c,
		   unsigned long *min)
{
	if (argc != first + 2)
		return -1;
	memset(c, 0, sizeof(*c));
	c->pid = (unsigned)strtoul(argv[first], NULL, 0);
	*min = strtoul(argv[first + 1], NULL, 0);
	return c->pid < 0x2000 && *min > 0 ? 0 : -1;
}

int ktest_ts_main(int argc, char **argv)
{
	struct ts_check c;
	unsigned long min;

	if (ts_args(argc, argv, 1, &c, &min)) {
		fprintf(stderr, "usage: ktest ts PID MIN < stream.ts\n");
		return 2;
	}
	int r = ts_read(0, &c, min);
	if (r < 0)
		fprintf(stderr, "ts: stdin: %s\n", strerror(-r));
	return ts_verdict(&c, min);
}

int ktest_dvr_main(int argc, char **argv)
{
	struct ts_check c;
	unsigned long min;
	char path[64];

	if (ts_args(argc, argv, 2, &c, &min)) {
		fprintf(stderr, "usage: ktest dvr ADAPTER PID MIN\n");
		return 2;
	}
	struct dmx_pes_filter_params pes = {
	    .pid = 0x2000, /* every PID */
	    .input = DMX_IN_FRONTEND,
	    .output = DMX_OUT_TS_TAP,
	    .pes_type = DMX_PES_OTHER,
	    .flags = DMX_IMMEDIATE_START,
	};
	snprintf(path, sizeof(path), "/dev/dvb/adapter%s/demux0", argv[1]);
	int dmx = open(path, O_RDWR | O_NONBLOCK);
	snprintf(path, sizeof(path), "/dev/dvb/adapter%s/dvr0", argv[1]);
	int dvr = open(path, O_RDONLY | O_NONBLOCK);
	if (dmx < 0 || dvr < 0 || ioctl(dmx, DMX_SET_PES_FILTER, &pes) < 0) {
		fprintf(stderr, "dvr: adapter %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	int r = ts_read(dvr, &c, min);
	if (r < 0)
		fprintf(stderr, "dvr: %s: %s\n", path, strerror(-r));
	close(dvr);
	close(dmx);
	return ts_verdict(&c, min);
}

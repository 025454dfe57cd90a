// SPDX-License-Identifier: MIT
/*
 * ABI checks of /dev/tuner: the handshake and its refusals, malformed
 * writes and their errnos, binds that must fail.
 *   ktest abi nodaemon   no daemon may be connected (the checks take the
 *                        control channel and give it back)
 *   ktest abi daemon     a daemon is connected and serves client 1
 *   ktest busy           exit 0 when the stub refuses a second daemon
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../check.h"
#include "ktest.h"

static int write_raw(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) < 0 ? -errno : 0;
}

static int read_raw(int fd, union tstub_buf *m)
{
	ssize_t n = read(fd, m->bytes, sizeof(m->bytes));

	return n < 0 ? -errno : (int)n;
}

static int poll_in(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) == 1 ? p.revents : 0;
}

/* Messages the stub must refuse, whatever the channel's state. */
static void check_malformed(int fd)
{
	union tstub_buf m;
	uint8_t big[TSTUB_MSG_MAX + 8];
	struct tstub_i2c_xfer x = {.nsegs = 5};

	memset(big, 0, sizeof(big));
	CHECK_EQ_INT(write_raw(fd, big, 10), -EMSGSIZE);
	CHECK_EQ_INT(write_raw(fd, big, sizeof(big)), -EMSGSIZE);
	tstub_build(&m, TSTUB_BIND, 0, 7, 0, 1, NULL, 0);
	m.hdr.len += 4;
	CHECK_EQ_INT(write_raw(fd, m.bytes, sizeof(m.hdr)), -EBADMSG);
	tstub_build(&m, 0x99, 0, 7, 0, 1, NULL, 0);
	CHECK_EQ_INT(write_raw(fd, m.bytes, m.hdr.len), -EOPNOTSUPP);
	tstub_build(&m, TSTUB_BIND, 0x8000, 7, 0, 1, "\0\0\0\0\0\0\0\0", 8);
	CHECK_EQ_INT(write_raw(fd, m.bytes, m.hdr.len), -EBADMSG);
	tstub_build(&m, TSTUB_BIND, 0, 7, 0, 1, "\1\0\0\0", 4);
	CHECK_EQ_INT(write_raw(fd, m.bytes, m.hdr.len), -EBADMSG);
	tstub_build(&m, TSTUB_I2C_XFER, 0, 7, 0, 1, &x, sizeof(x));
	CHECK_EQ_INT(write_raw(fd, m.bytes, m.hdr.len), -EBADMSG);
	x.nsegs = 1;
	x.segs[0] = (struct tstub_i2c_seg){0x60, TSTUB_I2C_RD, 1100, 0};
	tstub_build(&m, TSTUB_I2C_XFER, 0, 7, 0, 1, &x, sizeof(x));
	CHECK_EQ_INT(write_raw(fd, m.bytes, m.hdr.len), -EBADMSG);
	tstub_build(&m, TSTUB_GET_STATUS, TSTUB_F_REPLY, 7, 0, 1, "x", 1);
	CHECK_EQ_INT(write_raw(fd, m.bytes, m.hdr.len), -EBADMSG);
	tstub_build(&m, TSTUB_BIND, 0, 0, 0, 1, "\1\0\0\0\0\0\0\0", 8);
	CHECK_EQ_INT(write_raw(fd, m.bytes, m.hdr.len), -EBADMSG);
}

static void check_init_body(const union tstub_buf *m, int n)
{
	const struct tstub_init *in = tstub_body(&m->hdr);

	CHECK_EQ_INT(n, sizeof(struct tstub_hdr) + sizeof(*in));
	CHECK_EQ_INT(m->hdr.opcode, TSTUB_INIT);
	CHECK(m->hdr.unique != 0);
	CHECK_EQ_INT(in->major, TSTUB_MAJOR);
	CHECK_EQ_INT(in->kind, TSTUB_KIND_KERNEL);
	CHECK_EQ_INT(in->max_msg, TSTUB_MSG_MAX);
	CHECK_EQ_INT(in->settle_permille, 1000);
	CHECK(in->max_clients >= 1);
	CHECK(in->flags & TSTUB_CAP_RESEND);
}

/* Refuse LOAD_PLUGIN for every client the resend announces. */
static int drain_resend(int fd)
{
	union tstub_buf m, r;
	int refused = 0;
	struct pollfd p = {.fd = fd, .events = POLLIN};

	while (poll(&p, 1, 500) == 1 && read_raw(fd, &m) > 0) {
		if (m.hdr.opcode != TSTUB_LOAD_PLUGIN)
			continue;
		tstub_build_reply(&r, &m.hdr, -ENOENT, NULL, 0);
		CHECK_EQ_INT(write_raw(fd, r.bytes, r.hdr.len), 0);
		refused++;
	}
	return refused;
}

static int abi_nodaemon(void)
{
	union tstub_buf m, r;
	struct tstub_init in;
	int a, b, n;

	a = open(KTEST_DEV, O_RDWR | O_NONBLOCK);
	b = open(KTEST_DEV, O_RDWR | O_NONBLOCK);
	CHECK(a >= 0 && b >= 0);
	check_malformed(a);
	/* Unbound, no daemon: a reply or a request other than BIND. */
	tstub_build(&m, TSTUB_GET_STATUS, 0, 9, 0, 1, NULL, 0);
	CHECK_EQ_INT(write_raw(a, m.bytes, m.hdr.len), -ENOTCONN);
	tstub_build(&m, TSTUB_TUNER_INIT, TSTUB_F_REPLY, 9, 0, 1, NULL, 0);
	CHECK_EQ_INT(write_raw(a, m.bytes, m.hdr.len), -ENOTCONN);
	CHECK(poll_in(a) & POLLIN);
	CHECK_EQ_INT(read_raw(a, &m) > 0 ? 0 : -1, 0);
	check_init_body(&m, (int)m.hdr.len);
	CHECK_EQ_INT(read_raw(b, &r), -EBUSY);
	CHECK(poll_in(b) & POLLERR);
	CHECK_EQ_INT(read_raw(a, &r), -EAGAIN);
	CHECK_EQ_INT(poll_in(a) & POLLIN, 0);
	tstub_build(&r, TSTUB_TUNER_INIT, TSTUB_F_REPLY, 9, 0, 1, NULL, 0);
	CHECK_EQ_INT(write_raw(b, r.bytes, r.hdr.len), -EBUSY);
	/* A daemon of another major: the stub closes the channel. */
	memcpy(&in, tstub_body(&m.hdr), sizeof(in));
	in.major = TSTUB_MAJOR + 1;
	tstub_build_reply(&r, &m.hdr, 0, &in, sizeof(in));
	CHECK_EQ_INT(write_raw(a, r.bytes, r.hdr.len), 0);
	CHECK_EQ_INT(read_raw(a, &r), 0);
	/* The control channel is free again: b gets INIT and answers. */
	n = read_raw(b, &m);
	check_init_body(&m, n);
	in.major = TSTUB_MAJOR;
	tstub_build_reply(&r, &m.hdr, 0, &in, sizeof(in));
	CHECK_EQ_INT(write_raw(b, r.bytes, r.hdr.len), 0);
	CHECK_EQ_INT(write_raw(b, r.bytes, r.hdr.len), -ENOENT);
	printf("abi: %d LOAD_PLUGIN refused after INIT\n", drain_resend(b));
	/* A reply nothing waits for. */
	tstub_build(&r, TSTUB_ATTACH, TSTUB_F_REPLY, 123456, -EIO, 0, NULL, 0);
	CHECK_EQ_INT(write_raw(b, r.bytes, r.hdr.len), -ENOENT);
	close(a);
	close(b);
	return check_done("ktest abi nodaemon");
}

static int bind_result(int fd, uint32_t client)
{
	struct tstub_client cl = {.client = client};
	union tstub_buf m;

	tstub_build(&m, TSTUB_BIND, 0, 5, 0, client, &cl, sizeof(cl));
	if (write_raw(fd, m.bytes, m.hdr.len))
		return -EIO;
	if (read_raw(fd, &m) <= 0 || !(m.hdr.flags & TSTUB_F_REPLY) ||
	    m.hdr.unique != 5)
		return -EPROTO;
	return m.hdr.error;
}

static int abi_daemon(void)
{
	int fd = open(KTEST_DEV, O_RDWR);

	CHECK(fd >= 0);
	check_malformed(fd);
	CHECK_EQ_INT(bind_result(fd, 999), -ENOENT);
	CHECK_EQ_INT(bind_result(fd, 1), -EBUSY);
	close(fd);
	return check_done("ktest abi daemon");
}

int ktest_abi_main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "nodaemon"))
		return abi_nodaemon();
	if (argc > 1 && !strcmp(argv[1], "daemon"))
		return abi_daemon();
	fprintf(stderr, "usage: ktest abi nodaemon|daemon\n");
	return 2;
}

int ktest_busy_main(int argc, char **argv)
{
	union tstub_buf m;
	int fd = open(argc > 1 ? argv[1] : KTEST_DEV, O_RDWR), n;

	if (fd < 0) {
		perror("ktest busy: open");
		return 1;
	}
	n = read_raw(fd, &m);
	close(fd);
	printf("ktest busy: read -> %s\n", n < 0 ? strerror(-n) : "a message");
	return n == -EBUSY ? 0 : 1;
}

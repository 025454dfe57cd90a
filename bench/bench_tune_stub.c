// SPDX-License-Identifier: MIT
/*
 * bench_tune_stub.c - bench_tune's second baseline: the transport a
 * worker has to a box, without tunerd.  The bench is the daemon of a box
 * process of its own (INIT, LOAD_PLUGIN, ATTACH answered; one tuner
 * channel bound per client), and a chip's plugin in the bench makes its
 * I2C transfers and bridge requests as round trips on that channel, each
 * command bracketed by CMD_BEGIN and CMD_END when the stub offers them,
 * as a worker brackets its own.  The difference between this and the
 * driver on the model is what the box's process hop costs; the
 * difference between REST and this is tunerd's own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bench_tune.h"
#include "tstub_codec.h"

#define STUB_WAIT_MS 5000 /* a box that never answers fails the bench */

/* A channel whose receives wait at most STUB_WAIT_MS: set once, so a
 * round trip is a send() and a recv(), as a worker's. */
static int stub_connect(const char *sock)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = STUB_WAIT_MS / 1000};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* One message, waited for at most STUB_WAIT_MS; 0 or -errno. */
static int stub_recv(int fd, union tstub_buf *m)
{
	ssize_t n = recv(fd, m->bytes, sizeof(*m), 0);

	if (n < 0)
		return -errno;
	return tstub_validate(m, (size_t)n);
}

static int stub_answer(int fd, const struct tstub_hdr *req, const void *body,
		       size_t len)
{
	union tstub_buf m;
	int n = tstub_build_reply(&m, req, 0, body, len);

	if (n < 0)
		return n;
	return send(fd, m.bytes, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -EIO;
}

/* LOAD_PLUGIN and ATTACH answered as a daemon that has every plugin. */
static int stub_serve_attach(int ctl, unsigned int nclients)
{
	unsigned int attached = 0;
	union tstub_buf m;

	while (attached < nclients) {
		struct tstub_chip_info ci = {.plugin_version = 1};
		int err = stub_recv(ctl, &m);

		if (err)
			return err;
		if (m.hdr.opcode == TSTUB_LOAD_PLUGIN) {
			ci.chip_id =
			    ((const struct tstub_load *)tstub_body(&m.hdr))
				->chip_id;
		} else if (m.hdr.opcode == TSTUB_ATTACH) {
			ci.chip_id =
			    ((const struct tstub_attach *)tstub_body(&m.hdr))
				->chip_id;
			attached++;
		} else {
			continue;
		}
		snprintf(ci.name, sizeof(ci.name), "bench");
		err = stub_answer(ctl, &m.hdr, &ci, sizeof(ci));
		if (err)
			return err;
	}
	return 0;
}

int bench_stub_session(const char *sock, unsigned int nclients, uint64_t *caps)
{
	struct tstub_init reply = {.major = TSTUB_MAJOR,
				   .minor = TSTUB_MINOR,
				   .max_msg = TSTUB_MSG_MAX};
	union tstub_buf m;
	int ctl = stub_connect(sock), err;

	if (ctl < 0)
		return ctl;
	err = stub_recv(ctl, &m);
	if (!err && m.hdr.opcode != TSTUB_INIT)
		err = -EPROTO;
	if (!err) {
		reply.flags =
		    ((const struct tstub_init *)tstub_body(&m.hdr))->flags;
		*caps = reply.flags;
		err = stub_answer(ctl, &m.hdr, &reply, sizeof(reply));
	}
	if (!err)
		err = stub_serve_attach(ctl, nclients);
	if (err) {
		close(ctl);
		return err;
	}
	return ctl;
}

int bench_stub_bind(struct bench_stub_chan *c, const char *sock,
		    uint32_t client)
{
	struct tstub_client body = {.client = client};
	union tstub_buf m;
	int err;

	c->fd = stub_connect(sock);
	c->client = client;
	c->unique = 0;
	if (c->fd < 0)
		return c->fd;
	err = bench_stub_call(c, TSTUB_BIND, &body, sizeof(body), &m);
	if (err) {
		close(c->fd);
		c->fd = -1;
	}
	return err;
}

int bench_stub_call(struct bench_stub_chan *c, uint16_t opcode,
		    const void *body, size_t len, union tstub_buf *reply)
{
	uint64_t unique = ++c->unique;
	int n = tstub_build(reply, opcode, 0, unique, 0, c->client, body, len);
	int err;

	if (n < 0)
		return n;
	if (send(c->fd, reply->bytes, (size_t)n, MSG_NOSIGNAL) != n)
		return -EIO;
	if (opcode == TSTUB_PARAMS_CHANGED)
		return 0; /* a notification: no reply */
	do
		err = stub_recv(c->fd, reply);
	while (!err && reply->hdr.unique != unique);
	return err ? err : reply->hdr.error;
}

static int stub_i2c_call(void *ctx, const void *body, size_t len,
			 union tstub_buf *reply)
{
	return bench_stub_call(ctx, TSTUB_I2C_XFER, body, len, reply);
}

int bench_stub_i2c(struct bench_stub_chan *c, struct tunerd_i2c_msg *msgs,
		   unsigned int n)
{
	return tstub_i2c_transfer(msgs, n, stub_i2c_call, c);
}

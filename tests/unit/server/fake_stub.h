/* SPDX-License-Identifier: MIT */
/* The stub side of a channel, for tests: raw ABI messages with timeouts. */
#ifndef TEST_FAKE_STUB_H
#define TEST_FAKE_STUB_H

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include "tstub_codec.h"

/* One validated message within timeout_ms: its length, 0 EOF, -ETIMEDOUT
 * or the validation error. */
static inline int fake_recv(int fd, union tstub_buf *m, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t n;

	if (poll(&p, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	n = recv(fd, m->bytes, sizeof(m->bytes), 0);
	if (n <= 0)
		return (int)n;
	n = tstub_validate(m->bytes, (size_t)n) ?: n;
	return (int)n;
}

static inline int fake_send(int fd, uint16_t opcode, uint16_t flags,
			    uint64_t unique, int32_t error, uint32_t client,
			    const void *body, size_t len)
{
	union tstub_buf m;
	int n =
	    tstub_build(&m, opcode, flags, unique, error, client, body, len);

	if (n < 0)
		return n;
	return send(fd, m.bytes, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -errno;
}

static inline int fake_reply(int fd, const struct tstub_hdr *req, int32_t error,
			     const void *body, size_t len)
{
	return fake_send(fd, req->opcode, TSTUB_F_REPLY, req->unique, error,
			 req->client, error ? NULL : body, error ? 0 : len);
}

#endif /* TEST_FAKE_STUB_H */

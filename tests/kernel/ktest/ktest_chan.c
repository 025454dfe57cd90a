// SPDX-License-Identifier: MIT
/* A message channel on /dev/tuner, seen from a daemon. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ktest.h"

uint64_t ktest_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int kchan_open(struct kchan *ch, const char *dev, int nonblock)
{
	memset(ch, 0, sizeof(*ch));
	ch->next_unique = 1;
	ch->fd = open(dev, O_RDWR | O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
	return ch->fd < 0 ? -errno : 0;
}

void kchan_close(struct kchan *ch)
{
	if (ch->fd >= 0)
		close(ch->fd);
	ch->fd = -1;
}

int kchan_send(struct kchan *ch, const union tstub_buf *m)
{
	ssize_t n = write(ch->fd, m->bytes, m->hdr.len);

	if (n < 0)
		return -errno;
	return n == (ssize_t)m->hdr.len ? 0 : -EIO;
}

static int kchan_read(struct kchan *ch, union tstub_buf *m, int timeout_ms)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	ssize_t n;
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return -ETIMEDOUT;
	n = read(ch->fd, m->bytes, sizeof(m->bytes));
	if (n < 0)
		return -errno;
	if (n > 0 && tstub_validate(m->bytes, (size_t)n))
		return -EBADMSG;
	return (int)n;
}

int kchan_recv(struct kchan *ch, union tstub_buf *m, int timeout_ms)
{
	if (ch->nstash > 0) {
		*m = ch->stash[0];
		memmove(&ch->stash[0], &ch->stash[1],
			(size_t)(ch->nstash - 1) * sizeof(ch->stash[0]));
		ch->nstash--;
		return (int)m->hdr.len;
	}
	return kchan_read(ch, m, timeout_ms);
}

int kchan_call(struct kchan *ch, uint16_t opcode, uint32_t client,
	       const void *body, size_t len, union tstub_buf *reply)
{
	union tstub_buf req;
	uint64_t unique = ch->next_unique++;
	int n;

	n = tstub_build(&req, opcode, 0, unique, 0, client, body, len);
	if (n < 0)
		return n;
	n = kchan_send(ch, &req);
	if (n)
		return n;
	for (;;) {
		n = kchan_read(ch, reply, 5000);
		if (n < 0)
			return n;
		if (n == 0)
			return -ECONNRESET;
		if ((reply->hdr.flags & TSTUB_F_REPLY) &&
		    reply->hdr.unique == unique)
			return reply->hdr.error;
		if (ch->nstash == KTEST_STASH)
			return -ENOBUFS;
		ch->stash[ch->nstash++] = *reply;
	}
}

int kchan_reply(struct kchan *ch, const struct tstub_hdr *req, int32_t error,
		const void *body, size_t len)
{
	union tstub_buf m;
	int n = tstub_build_reply(&m, req, error, body, len);

	return n < 0 ? n : kchan_send(ch, &m);
}

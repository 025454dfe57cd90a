// SPDX-License-Identifier: MIT
/*
 * A stream written by the daemon itself (rest_stream.h): once
 * libmicrohttpd parsed the request and every check passed, the connection
 * is suspended in MHD for the stream's whole life and the daemon writes a
 * fixed head and then the reader's ring with writev() on a duplicate of
 * its socket, straight from the ring: no copy into MHD's buffer, no
 * chunk framing, writes as large as the ring holds, and no MHD run per
 * batch.  A whole-multiplex reader that keeps up is written straight
 * from the source's buffer, with no copy at all (direct_write()).  The
 * body ends with the connection (HTTP/1.0 style, "Connection: close"),
 * as a live stream has no length.  When the stream ends, the
 * duplicate is closed and the connection resumed: the access handler
 * then refuses it and MHD closes it, so the front's count, MHD's state
 * and the socket end together.
 *
 * The socket is watched for reading too: a client that closes while no
 * packets flow (no lock) is noticed at once, and anything it sends is
 * discarded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

#include "http_front.h"
#include "log.h"
#include "loop.h"
#include "net_api.h"
#include "rest_stream.h"

static const char direct_head[] = "HTTP/1.1 200 OK\r\n"
				  "Content-Type: video/mp2t\r\n"
				  "Cache-Control: no-store\r\n"
				  "Connection: close\r\n\r\n";

static void direct_end(struct rest_stream *s, enum stream_end why)
{
	if (s->done)
		return;
	s->done = 1;
	loop_del_fd(s->net->loop, s->fd);
	close(s->fd);
	s->fd = -1;
	stream_reader_close(s->reader, why);
	s->reader = NULL;
	MHD_resume_connection(s->conn);
	http_front_kick_soon(s->net->front);
}

static void direct_mask(struct rest_stream *s, unsigned int mask)
{
	if (s->mask != mask && !loop_set_fd_mask(s->net->loop, s->fd, mask))
		s->mask = mask;
}

/* Write what the ring holds; 0, or -1 when the client is gone. */
static int direct_flush(struct rest_stream *s)
{
	struct iovec iov[3];
	ssize_t n;
	int niov, k = 0;

	for (;;) {
		if (s->head_off < sizeof(direct_head) - 1)
			iov[k++] = (struct iovec){
			    (char *)direct_head + s->head_off,
			    sizeof(direct_head) - 1 - s->head_off};
		if (!stream_reader_peek(s->reader, iov + k, &niov) && !k)
			break;
		n = writev(s->fd, iov, k + niov);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if (k) {
			size_t h = (size_t)n < iov[0].iov_len ? (size_t)n
							      : iov[0].iov_len;

			s->head_off += h;
			n -= (ssize_t)h;
			k = 0;
		}
		stream_reader_consume(s->reader, (size_t)n);
	}
	return 0;
}

/* After a flush: wait for room, end, or wait for packets. */
static void direct_go_on(struct rest_stream *s)
{
	struct iovec iov[2];
	enum stream_end end = stream_reader_ended(s->reader);
	int niov;
	size_t left = stream_reader_peek(s->reader, iov, &niov);

	if (end == STREAM_END_SLOW || (end && !left)) {
		direct_end(s, end);
		return;
	}
	direct_mask(s, left || s->head_off < sizeof(direct_head) - 1
			   ? LOOP_READ | LOOP_WRITE
			   : LOOP_READ);
}

static void direct_fd(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct rest_stream *s = arg;
	char sink[512];
	ssize_t n;

	(void)l;
	if (events & LOOP_READ) {
		n = read(fd, sink, sizeof(sink));
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			direct_end(s, STREAM_END_CLIENT);
			return;
		}
	}
	if (direct_flush(s)) {
		direct_end(s, STREAM_END_CLIENT);
		return;
	}
	direct_go_on(s);
}

/* The hub's write at once (stream_write_fn), once the head is out; a
 * failure is left to the next flush, which ends the stream. */
static ssize_t direct_write(void *owner, const void *buf, size_t len)
{
	struct rest_stream *s = owner;
	ssize_t n;

	if (s->done || s->head_off < sizeof(direct_head) - 1)
		return 0;
	n = write(s->fd, buf, len);
	return n < 0 ? 0 : n;
}

void rest_stream_direct_wake(struct rest_stream *s)
{
	if (s->done)
		return;
	if (stream_reader_ended(s->reader) != STREAM_END_SLOW &&
	    direct_flush(s)) {
		direct_end(s, STREAM_END_CLIENT);
		return;
	}
	direct_go_on(s);
}

void rest_stream_direct_stop(struct rest_stream *s)
{
	direct_end(s, STREAM_END_CLIENT);
}

enum MHD_Result rest_stream_direct_start(struct rest_req *r,
					 struct rest_stream *s)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);

	s->fd = ci ? fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 3) : -1;
	if (s->fd < 0 || loop_add_fd(s->net->loop, s->fd,
				     LOOP_READ | LOOP_WRITE, direct_fd, s)) {
		log_warn("stream: cannot take the connection over: %s",
			 s->fd < 0 ? "no socket" : "no watch");
		if (s->fd >= 0)
			close(s->fd);
		s->fd = -1;
		return MHD_NO;
	}
	s->mask = LOOP_READ | LOOP_WRITE;
	stream_reader_set_writer(s->reader, direct_write);
	r->stream = s;
	MHD_suspend_connection(r->conn);
	return MHD_YES;
}

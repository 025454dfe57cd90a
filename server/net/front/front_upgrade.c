// SPDX-License-Identifier: MIT
/*
 * A WebSocket upgrade that libmicrohttpd read (http_front.h).
 *
 * The front peeks at a connection's first request head only: an upgrade
 * there goes to the WebSocket server with its head still in the socket.
 * Any later head on the connection (after a plain request kept it alive,
 * or pipelined behind one) is libmicrohttpd's to read, so an upgrade
 * there reaches the REST handler, which hands it here.  The connection
 * then moves to libwebsockets with the head MHD parsed, rebuilt from the
 * request line and the header lines as MHD read them, as lws's first
 * read (lws_adopt_socket_vhost_readbuf()): lws checks the upgrade,
 * answers 101 with its accept key and serves the stream exactly as it
 * does a first head.
 *
 * The choices, and why:
 *  - MHD's own upgrade (MHD_create_response_for_upgrade) sends the 101
 *    itself, so the handshake (Sec-WebSocket-Accept, the subprotocol)
 *    would be written here, and lws 4.1 cannot take a connection whose
 *    handshake is done;
 *  - keeping every connection in the front's peek until each head is
 *    complete would take every request away from MHD, which cannot be
 *    handed a connection with bytes it should have read;
 *  - so the socket is dup'ed and the dup goes to lws, while MHD is told
 *    to drop its copy (the handler returns MHD_NO) without a word: MHD
 *    runs with MHD_USE_TURBO, under which 0.9.75 closes a connection
 *    without shutdown(), so its close() of its descriptor leaves the
 *    connection to lws.  The cost is one dup and a rebuilt head of at
 *    most HTTP_FRONT_PEEK_MAX bytes, on upgrades that follow another
 *    request only.
 * Whatever a client sent after the upgrade head before the 101 is lost
 * with MHD's buffer; a WebSocket client waits for the 101 first.
 */
#define _GNU_SOURCE /* F_DUPFD_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdint.h>
#include <string.h>

#include "http_front_priv.h"
#include "ws.h"

struct head_buf {
	char *p;
	size_t len, cap;
	int over;
};

static void head_put(struct head_buf *h, const char *s)
{
	size_t n = strlen(s);

	if (h->over || h->len + n > h->cap) {
		h->over = 1;
		return;
	}
	memcpy(h->p + h->len, s, n);
	h->len += n;
}

static enum MHD_Result head_header(void *cls, enum MHD_ValueKind kind,
				   const char *key, const char *value)
{
	struct head_buf *h = cls;

	(void)kind;
	head_put(h, key);
	head_put(h, ": ");
	head_put(h, value ? value : "");
	head_put(h, "\r\n");
	return h->over ? MHD_NO : MHD_YES;
}

int http_front_upgrade(struct http_front *f, struct MHD_Connection *c,
		       const char *target, const char *version)
{
	char head[HTTP_FRONT_PEEK_MAX];
	struct head_buf h = {head, 0, sizeof(head), 0};
	void **sc = front_mhd_socket_ctx(c);
	int fd = front_mhd_conn_fd(c), nfd;

	head_put(&h, "GET ");
	head_put(&h, target);
	head_put(&h, " ");
	head_put(&h, version);
	head_put(&h, "\r\n");
	MHD_get_connection_values(c, MHD_HEADER_KIND, head_header, &h);
	head_put(&h, "\r\n");
	if (h.over)
		return -E2BIG;
	if (!f || !sc || fd < 0)
		return -EINVAL;
	if (front_to_stream(f))
		return -EBUSY;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0) {
		int err = -errno;

		front_to_requests(f);
		return err;
	}
	if ((uintptr_t)*sc & MHD_CONN_IN_FLIGHT)
		f->busy_reqs--;
	*sc = (void *)(uintptr_t)MHD_CONN_MOVED;
	front_peer_move(f, fd, nfd);
	if (ws_adopt(f->ws, nfd, head, h.len) < 0)
		front_conn_gone(f, FRONT_STREAMS, nfd);
	return 0;
}

int http_front_stream_begin(struct http_front *f, struct MHD_Connection *c)
{
	void **sc = front_mhd_socket_ctx(c);

	if (!f || !sc)
		return -EINVAL;
	if ((uintptr_t)*sc & MHD_CONN_STREAM)
		return 0; /* counted already */
	if (front_to_stream(f))
		return -EBUSY;
	*sc = (void *)((uintptr_t)*sc | MHD_CONN_STREAM);
	return 0;
}

char *http_front_streams_full(const struct http_front *f)
{
	return front_full_body(f, FRONT_STREAMS);
}

// SPDX-License-Identifier: MIT
/*
 * bench_fanout's baseline (bench_fanout.h): a bare WebSocket server made
 * of the daemon's libraries on the daemon's libuv loop, fed by
 * eventbus_publish() on a bus of its own, which writes each event's
 * serialised text, the very bytes tunerd's hub sends, to every
 * connection.  libmicrohttpd parses the upgrade and sends the 101 (its
 * own upgrade, the accept key from ws_accept_key()), wslay frames: what the
 * daemon does, without its checks, classes, queues, batching and turns.
 * Each event is queued to wslay and sent at once on every connection;
 * wslay's send callback writes each frame part with send() (the header
 * with MSG_MORE, as wslay flags it), the plain way to drive wslay.
 */
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <wslay/wslay.h>

#include "bench_fanout.h"
#include "eventbus.h"
#include "loop.h"
#include "ws.h"

/* More than bench_fanout's largest --subscribers. */
#define BASE_CONNS_MAX 8192

struct base_conn {
	int fd;
	struct MHD_UpgradeResponseHandle *urh;
	wslay_event_context_ptr ws;
	struct base_conn *prev, *next;
};

struct base {
	struct loop *loop;
	struct MHD_Daemon *mhd;
	int mhd_ep;
	struct eventbus *bus;
	struct base_conn *conns;
};

static struct base Base;

static void base_mhd_run(void)
{
	MHD_run(Base.mhd);
}

static void base_mhd_ready(struct loop *l, int fd, unsigned int ev, void *arg)
{
	(void)l;
	(void)fd;
	(void)ev;
	(void)arg;
	base_mhd_run();
}

/* ---- a connection ---- */

static void base_close(struct base_conn *bc)
{
	if (bc->prev)
		bc->prev->next = bc->next;
	else
		Base.conns = bc->next;
	if (bc->next)
		bc->next->prev = bc->prev;
	loop_del_fd(Base.loop, bc->fd);
	wslay_event_context_free(bc->ws);
	MHD_upgrade_action(bc->urh, MHD_UPGRADE_ACTION_CLOSE);
	free(bc);
	base_mhd_run(); /* MHD closes the socket when it runs */
}

static ssize_t base_send(wslay_event_context_ptr ctx, const uint8_t *data,
			 size_t len, int flags, void *user)
{
	struct base_conn *bc = user;
	ssize_t n = send(bc->fd, data, len,
			 MSG_DONTWAIT | MSG_NOSIGNAL |
			     (flags & WSLAY_MSG_MORE ? MSG_MORE : 0));

	if (n < 0)
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
	return n;
}

static ssize_t base_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
			 int flags, void *user)
{
	struct base_conn *bc = user;
	ssize_t n = recv(bc->fd, buf, len, MSG_DONTWAIT);

	(void)flags;
	if (n <= 0)
		wslay_event_set_error(ctx, n == 0 ? WSLAY_ERR_CALLBACK_FAILURE
						  : WSLAY_ERR_WOULDBLOCK);
	return n > 0 ? n : -1;
}

static const struct wslay_event_callbacks base_callbacks = {
    .recv_callback = base_recv,
    .send_callback = base_send,
};

static void base_io(struct loop *l, int fd, unsigned int ev, void *arg)
{
	struct base_conn *bc = arg;

	(void)l;
	(void)fd;
	(void)ev;
	if (wslay_event_recv(bc->ws) || wslay_event_send(bc->ws) ||
	    (!wslay_event_want_read(bc->ws) && !wslay_event_want_write(bc->ws)))
		base_close(bc);
}

static void base_upgraded(void *cls, struct MHD_Connection *c, void *req_cls,
			  const char *extra, size_t extra_len, MHD_socket sock,
			  struct MHD_UpgradeResponseHandle *urh)
{
	struct base_conn *bc = calloc(1, sizeof(*bc));

	(void)cls;
	(void)c;
	(void)req_cls;
	(void)extra; /* the subscribers wait for the 101 */
	(void)extra_len;
	if (!bc ||
	    wslay_event_context_server_init(&bc->ws, &base_callbacks, bc)) {
		free(bc);
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		return;
	}
	bc->fd = sock;
	bc->urh = urh;
	bc->next = Base.conns;
	if (bc->next)
		bc->next->prev = bc;
	Base.conns = bc;
	loop_add_fd(Base.loop, sock, LOOP_READ, base_io, bc);
}

/* Any request with a key is upgraded: the bare server checks nothing. */
static enum MHD_Result base_request(void *cls, struct MHD_Connection *c,
				    const char *url, const char *method,
				    const char *version, const char *data,
				    size_t *data_len, void **req_cls)
{
	const char *key = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      "Sec-WebSocket-Key");
	char accept[WS_ACCEPT_LEN + 1];
	struct MHD_Response *r;
	enum MHD_Result ret;

	(void)cls;
	(void)url;
	(void)method;
	(void)version;
	(void)data;
	(void)data_len;
	(void)req_cls;
	if (ws_accept_key(key, accept))
		return MHD_NO;
	r = MHD_create_response_for_upgrade(base_upgraded, NULL);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_UPGRADE, "websocket");
	MHD_add_response_header(r, "Sec-WebSocket-Accept", accept);
	MHD_add_response_header(r, "Sec-WebSocket-Protocol", "tunerd.v1");
	ret = MHD_queue_response(c, MHD_HTTP_SWITCHING_PROTOCOLS, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- the server ---- */

/* The bus hands over the serialised event: every connection sends it. */
static void base_on_event(const struct event *ev, void *arg)
{
	struct wslay_event_msg msg = {WSLAY_TEXT_FRAME,
				      (const uint8_t *)ev->json, ev->json_len};
	struct base_conn *bc, *next;

	(void)arg;
	for (bc = Base.conns; bc; bc = next) {
		next = bc->next;
		if (wslay_event_queue_msg(bc->ws, &msg) ||
		    wslay_event_send(bc->ws))
			base_close(bc);
	}
}

int fanout_base_start(struct loop *l)
{
	const union MHD_DaemonInfo *info;

	Base.loop = l;
	Base.mhd = MHD_start_daemon(
	    MHD_USE_NO_LISTEN_SOCKET | MHD_USE_EPOLL | MHD_ALLOW_UPGRADE |
		MHD_USE_TURBO,
	    0, NULL, NULL, base_request, NULL, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned int)BASE_CONNS_MAX, MHD_OPTION_END);
	info = Base.mhd
		   ? MHD_get_daemon_info(Base.mhd, MHD_DAEMON_INFO_EPOLL_FD)
		   : NULL;
	if (!info ||
	    loop_add_fd(l, info->epoll_fd, LOOP_READ, base_mhd_ready, NULL))
		return -1;
	Base.mhd_ep = info->epoll_fd;
	Base.bus = eventbus_new(64);
	if (!Base.bus || eventbus_set_box(Base.bus, "bench"))
		return -1;
	return eventbus_subscribe(Base.bus, base_on_event, NULL) < 0 ? -1 : 0;
}

void fanout_base_stop(struct loop *l)
{
	(void)l;
	while (Base.conns)
		base_close(Base.conns);
	if (Base.mhd) {
		loop_del_fd(Base.loop, Base.mhd_ep);
		MHD_stop_daemon(Base.mhd);
	}
	eventbus_free(Base.bus);
}

int fanout_base_adopt(int fd)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);

	if (getpeername(fd, (struct sockaddr *)&peer, &len) < 0 ||
	    MHD_add_connection(Base.mhd, fd, (struct sockaddr *)&peer, len) !=
		MHD_YES)
		return -1;
	base_mhd_run();
	return 0;
}

struct eventbus *fanout_base_bus(void)
{
	return Base.bus;
}

// SPDX-License-Identifier: MIT
/*
 * The event stream over WebSocket (ws.h): wslay on a socket that
 * libmicrohttpd upgraded.
 *
 * libmicrohttpd parses the request and sends the 101 (ws_handshake.c
 * says yes or no first); its upgrade handler, ws_upgraded(), hands over
 * the socket and whatever it read past the head.  From there wslay's
 * event API does the protocol: it reads frames through ws_recv_cb(),
 * checks them (a client frame without a mask, reserved bits, a bad
 * opcode or bad UTF-8 in a text message: it queues the close with its
 * status, 1002 or 1007, and stops reading), answers pings and the
 * client's close, and frames what is queued into ws_send_cb()
 * (ws_write.c), which collects the frames for one write.  This file owns
 * the connection's life: the socket on the loop, the messages read, the
 * keepalive and the closes.
 *
 * wslay runs without buffering messages: the payload of a data message
 * is collected here, up to WS_MSG_MAX, so a bigger one costs nothing
 * more than its reading and gets its error reply (events.md), while
 * wslay still checks its frames and its UTF-8.
 *
 * A connection ends by going back to libmicrohttpd
 * (MHD_UPGRADE_ACTION_CLOSE): MHD closes the socket on its next run (the
 * front is kicked for it) and reports it closed to the front, which
 * counts it out of the stream class.  The connection's memory is
 * reference-counted: the REST request that queued the 101 holds it until
 * MHD is done with the request (ws_conn_put()), the server while it
 * serves the stream.
 */
#include "ws.h"

#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <wslay/wslay.h>

#include "daemon.h"
#include "json_api.h"
#include "log.h"
#include "loop.h"
#include "ws_priv.h"

/* Ping after this much silence, hang up after this much (api.md). */
#define WS_PING_S 30
#define WS_IDLE_S 60
/* How often the keepalive looks at the connections. */
#define WS_SWEEP_MS 1000
/* Kernel buffering per stream: bounds memory and lets a stalled client
 * show as a slow consumer within seconds. */
#define WS_SNDBUF (128 * 1024)
/* Control frames (pongs, the close) wslay may hold for a client that
 * sends pings and does not read: more is a flood, and the end. */
#define WS_CTRL_QUEUED_MAX 64
/* What is read and dropped before the socket goes back to MHD: unread
 * bytes would make its close() a reset, which may cost the client the
 * close frame still on its way. */
#define WS_DRAIN_MAX (64 * 1024)

struct ws_server {
	struct daemon *d;
	struct loop *loop;
	struct ws_conn *conns; /* served, and prepared by a handshake */
	ws_kick_fn kick;
	void *kick_arg;
	uint64_t keepalive;
	struct log_budget refusals;
	struct ws_writer writer; /* ws_write.c */
};

struct ws_writer *ws_writer_of(struct ws_server *srv)
{
	return &srv->writer;
}

struct log_budget *ws_refusal_budget(struct ws_server *srv)
{
	return &srv->refusals;
}

void ws_server_stats(const struct ws_server *srv, struct ws_stats *out)
{
	*out = srv->writer.stats;
}

/* ---- connections ---- */

static void ws_conn_link(struct ws_server *srv, struct ws_conn *c)
{
	c->next = srv->conns;
	if (c->next)
		c->next->prev = c;
	srv->conns = c;
}

static void ws_conn_unlink(struct ws_conn *c)
{
	struct ws_server *srv = c->srv;

	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

struct ws_conn *ws_conn_new(struct ws_server *srv)
{
	struct ws_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->srv = srv;
	c->d = srv->d;
	c->refs = 1;
	c->fd = -1;
	ws_conn_link(srv, c);
	return c;
}

void ws_conn_put(void *p)
{
	struct ws_conn *c = p;

	if (!c || --c->refs > 0)
		return;
	if (c->srv) /* prepared, never served */
		ws_conn_unlink(c);
	ws_requests_forget(c);
	free(c->extra);
	free(c->rx);
	free(c->out);
	free(c);
}

void ws_watch(struct ws_conn *c, unsigned int mask)
{
	if (c->fd < 0 || !c->ws || c->mask == mask)
		return;
	c->mask = mask;
	loop_set_fd_mask(c->srv->loop, c->fd, mask);
}

static void ws_drain_input(int fd)
{
	char sink[4096];
	size_t total = 0;
	ssize_t n;

	while (total < WS_DRAIN_MAX &&
	       (n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
		total += (size_t)n;
}

void ws_release(struct ws_conn *c)
{
	struct ws_server *srv = c->srv;

	if (!srv || !c->ws)
		return;
	log_debug("ws: connection %d closed", c->fd);
	loop_del_fd(srv->loop, c->fd);
	loop_del_timer(srv->loop, c->close_timer);
	c->close_timer = 0;
	ws_writer_forget(&srv->writer, c);
	ws_conn_unlink(c);
	c->srv = NULL;
	ws_requests_forget(c);
	event_sub_free(c->sub);
	c->sub = NULL;
	wslay_event_context_free(c->ws);
	c->ws = NULL;
	ws_drain_input(c->fd);
	MHD_upgrade_action(c->urh, MHD_UPGRADE_ACTION_CLOSE);
	if (srv->kick)
		srv->kick(srv->kick_arg);
	ws_conn_put(c); /* the server's reference */
}

/* ---- closing ---- */

static long ws_close_due(struct loop *l, uint64_t id, void *arg)
{
	struct ws_conn *c = arg;

	(void)l;
	(void)id;
	c->close_timer = 0;
	log_debug("ws: connection %d: no close within %d s", c->fd,
		  WS_CLOSE_FLUSH_S);
	ws_release(c);
	return LOOP_TIMER_DONE;
}

/* The close gets WS_CLOSE_FLUSH_S: for a stalled client to take its last
 * message and close frame, and to answer the close. */
void ws_close_deadline(struct ws_conn *c)
{
	if (!c->close_timer)
		c->close_timer = loop_add_timer(
		    c->srv->loop, WS_CLOSE_FLUSH_S * 1000, ws_close_due, c);
}

/* Close politely: the close frame follows what is queued, then wslay
 * waits for the client's; ws_flush() gives the socket back when both
 * went (or the deadline does). */
static void ws_close_with(struct ws_conn *c, uint16_t code, const char *why)
{
	if (c->closing)
		return;
	c->closing = 1;
	wslay_event_queue_close(c->ws, code, (const uint8_t *)why, strlen(why));
	ws_close_deadline(c);
}

void ws_close_stream(struct ws_conn *c)
{
	const char *why = event_sub_close_reason(c->sub);

	if (why && !strcmp(why, "slow_consumer"))
		ws_close_with(c, WSLAY_CODE_POLICY_VIOLATION, "slow consumer");
	else
		ws_close_with(c, WSLAY_CODE_GOING_AWAY, "shutting down");
}

void ws_reply_push(struct ws_conn *c, char *text, size_t len)
{
	if (c->sub)
		event_sub_push_text(c->sub, STREAM_REPLY, text, len);
	else
		free(text);
}

/* ---- reading ---- */

static ssize_t ws_recv_cb(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
			  int flags, void *user)
{
	struct ws_conn *c = user;
	ssize_t n;

	(void)flags;
	if (c->extra_off < c->extra_len) {
		size_t left = c->extra_len - c->extra_off;

		n = (ssize_t)(left < len ? left : len);
		memcpy(buf, c->extra + c->extra_off, (size_t)n);
		c->extra_off += (size_t)n;
		return n;
	}
	n = recv(c->fd, buf, len, MSG_DONTWAIT);
	if (n > 0) {
		c->last_rx_ms = loop_now_ms();
		c->ping_sent = 0;
		return n;
	}
	if (n < 0 &&
	    (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
	else /* the client hung up, or the socket failed */
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

static void ws_frame_start(wslay_event_context_ptr ctx,
			   const struct wslay_event_on_frame_recv_start_arg *a,
			   void *user)
{
	struct ws_conn *c = user;

	(void)ctx;
	c->rx_ctrl = (a->opcode & 0x8) != 0;
}

static void ws_frame_chunk(wslay_event_context_ptr ctx,
			   const struct wslay_event_on_frame_recv_chunk_arg *a,
			   void *user)
{
	struct ws_conn *c = user;

	(void)ctx;
	if (c->rx_ctrl || c->closing || c->rx_too_big || !a->data_length)
		return;
	if (c->rx_len + a->data_length > WS_MSG_MAX) {
		c->rx_too_big = 1;
		return;
	}
	if (!c->rx && !(c->rx = malloc(WS_MSG_MAX + 1))) {
		c->rx_too_big = 1; /* answered as too big: nothing kept */
		return;
	}
	memcpy(c->rx + c->rx_len, a->data, a->data_length);
	c->rx_len += a->data_length;
}

/* A whole message came (wslay answered pings and a close itself). */
static void ws_message(wslay_event_context_ptr ctx,
		       const struct wslay_event_on_msg_recv_arg *a, void *user)
{
	struct ws_conn *c = user;

	(void)ctx;
	if (a->opcode != WSLAY_TEXT_FRAME && a->opcode != WSLAY_BINARY_FRAME)
		return;
	if (c->closing)
		; /* the stream ended: nothing more is answered */
	else if (a->opcode == WSLAY_BINARY_FRAME)
		ws_reply(c, NULL, NULL,
			 api_error_json("bad_request",
					"requests are JSON text messages",
					NULL));
	else if (c->rx_too_big)
		ws_reply(c, NULL, NULL,
			 api_error_json("body_too_large",
					"a message may have 16384 bytes at "
					"most",
					json_pack("{s:i}", "max", WS_MSG_MAX)));
	else
		ws_request_handle(c, c->rx ? c->rx : "", c->rx_len);
	c->rx_len = 0;
	c->rx_too_big = 0;
}

static const struct wslay_event_callbacks ws_callbacks = {
    .recv_callback = ws_recv_cb,
    .send_callback = ws_send_cb,
    .on_frame_recv_start_callback = ws_frame_start,
    .on_frame_recv_chunk_callback = ws_frame_chunk,
    .on_msg_recv_callback = ws_message,
};

static void ws_read(struct ws_conn *c)
{
	if (wslay_event_recv(c->ws) != 0 ||
	    wslay_event_get_queued_msg_count(c->ws) > WS_CTRL_QUEUED_MAX) {
		ws_release(c); /* hung up, out of memory, or flooding */
		return;
	}
	ws_flush(c); /* pongs, the close's answer; releases when done */
}

static void ws_io(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct ws_conn *c = arg;

	(void)l;
	(void)fd;
	if (events & LOOP_WRITE)
		ws_flush(c); /* room again: the rest of the buffer */
	if (c->ws && (events & (LOOP_READ | LOOP_HUP)))
		ws_read(c);
}

/* ---- the upgrade ---- */

/* The stream begins: bytes MHD read past the head go to wslay first. */
static int ws_start(struct ws_conn *c, const char *extra, size_t len)
{
	int sndbuf = WS_SNDBUF, one = 1;

	if (len) {
		c->extra = malloc(len);
		if (!c->extra)
			return -1;
		memcpy(c->extra, extra, len);
		c->extra_len = len;
	}
	if (wslay_event_context_server_init(&c->ws, &ws_callbacks, c))
		return -1;
	wslay_event_config_set_no_buffering(c->ws, 1);
	c->sub =
	    event_sub_new(c->d, &c->filter, c->has_since, c->since, ws_wake, c);
	setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	/* Whole batches go out at once: Nagle would only delay them. */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->mask = LOOP_READ;
	if (loop_add_fd(c->srv->loop, c->fd, LOOP_READ, ws_io, c) < 0) {
		wslay_event_context_free(c->ws);
		c->ws = NULL;
		return -1;
	}
	c->refs++; /* the server's, until ws_release() */
	c->last_rx_ms = loop_now_ms();
	log_debug("ws: event stream %d open (%s)", c->fd, role_name(c->role));
	if (!c->sub) {
		ws_close_with(c, WSLAY_CODE_GOING_AWAY, "unavailable");
		ws_flush(c);
		return 0;
	}
	ws_wake(c); /* the catch-up, if any */
	if (c->extra_len)
		ws_read(c); /* those bytes will not make the socket readable */
	return 0;
}

/* MHD sent the 101 (from inside MHD_run()): the socket is the stream's. */
void ws_upgraded(void *cls, struct MHD_Connection *mc, void *req_cls,
		 const char *extra_in, size_t extra_in_size, int sock,
		 struct MHD_UpgradeResponseHandle *urh)
{
	struct ws_conn *c = cls;

	(void)mc;
	(void)req_cls;
	c->fd = sock;
	c->urh = urh;
	if (c->srv && ws_start(c, extra_in, extra_in_size) == 0)
		return;
	log_warn("ws: could not serve event stream %d", sock);
	event_sub_free(c->sub);
	c->sub = NULL;
	MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
	if (c->srv && c->srv->kick)
		c->srv->kick(c->srv->kick_arg);
}

unsigned int ws_server_busy(const struct ws_server *srv)
{
	unsigned int n = 0;

	for (const struct ws_conn *c = srv ? srv->conns : NULL; c; c = c->next)
		n += c->ws && !(c->closing && c->out_off == c->out_len &&
				!wslay_event_want_write(c->ws));
	return n;
}

/* ---- keepalive ---- */

static void ws_keepalive_one(struct ws_conn *c, uint64_t now)
{
	static const struct wslay_event_msg ping = {WSLAY_PING, NULL, 0};
	uint64_t idle = now - c->last_rx_ms;

	if (idle >= (uint64_t)WS_IDLE_S * 1000) {
		log_debug("ws: connection %d silent for %d s", c->fd,
			  WS_IDLE_S);
		ws_release(c);
	} else if (idle >= (uint64_t)WS_PING_S * 1000 && !c->ping_sent) {
		c->ping_sent = 1;
		if (wslay_event_queue_msg(c->ws, &ping) == 0)
			ws_flush(c);
	}
}

void ws_server_keepalive(struct ws_server *srv, uint64_t now_ms)
{
	struct ws_conn *c, *next;

	for (c = srv->conns; c; c = next) {
		next = c->next;
		if (c->ws)
			ws_keepalive_one(c, now_ms);
	}
}

static long ws_keepalive(struct loop *l, uint64_t id, void *arg)
{
	(void)l;
	(void)id;
	ws_server_keepalive(arg, loop_now_ms());
	return WS_SWEEP_MS;
}

/* ---- the server ---- */

void ws_server_free(struct ws_server *srv)
{
	if (!srv)
		return;
	loop_del_timer(srv->loop, srv->keepalive);
	ws_writer_stop(&srv->writer);
	while (srv->conns) {
		struct ws_conn *c = srv->conns;

		if (c->ws) {
			ws_release(c);
		} else { /* prepared: its request still holds it */
			ws_conn_unlink(c);
			c->srv = NULL;
		}
	}
	free(srv);
}

struct ws_server *ws_server_new(struct daemon *d, ws_kick_fn kick, void *arg)
{
	struct ws_server *srv = calloc(1, sizeof(*srv));

	if (!srv)
		return NULL;
	srv->d = d;
	srv->loop = d->loop;
	srv->kick = kick;
	srv->kick_arg = arg;
	srv->refusals = (struct log_budget)LOG_BUDGET_INIT(
	    "refused event streams", WS_REFUSE_LOG_MAX,
	    WS_REFUSE_LOG_WINDOW_MS);
	srv->keepalive =
	    loop_add_timer(srv->loop, WS_SWEEP_MS, ws_keepalive, srv);
	if (srv->keepalive && ws_writer_start(&srv->writer, srv->loop) == 0)
		return srv;
	log_err("ws: cannot start the WebSocket server");
	ws_server_free(srv);
	errno = ENOMEM;
	return NULL;
}

// SPDX-License-Identifier: MIT
/*
 * The event stream over WebSocket (ws.h) on libwebsockets 4.1.
 *
 * The HTTP front accepted the socket and only peeked at the request head;
 * lws adopts the socket in HTTP mode and parses the upgrade itself.
 *
 * Driving lws from the daemon's loop, without a thread: Debian's lws 4.1
 * is built without LWS_WITH_EXTERNAL_POLL, so it never says which fds it
 * polls for what.  But every socket it serves came through ws_adopt(), so
 * the loop watches those fds, and readiness leads to a non-blocking
 * lws_service(ctx, -1): lws polls its own table with its real interests,
 * services what is ready and runs its due timers.  The ready fds of one
 * loop turn share one service (a 0 ms timer).  Watching level-triggered
 * would spin if lws chose not to act on a ready fd (a connection being
 * closed, for instance), so an interest the service did not act upon
 * (the bytes waiting did not change; no WRITEABLE came) is paused until
 * the next tick.  A tick (every second, faster while something is
 * paused) runs lws's timers: handshake timeouts, ping and idle.
 */
#include "ws.h"

#include <errno.h>
#include <libwebsockets.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "http_front.h"
#include "json_api.h"
#include "log.h"
#include "loop.h"
#include "ws_priv.h"

#define WS_TICK_MS        1000
#define WS_PAUSED_TICK_MS 200
/* Messages written per WRITEABLE callback, so one client cannot hold
 * the loop while the others wait. */
#define WS_WRITES_PER_TURN 32
/* Ping after this much silence, hang up after this much (api.md). */
#define WS_PING_S 30
#define WS_IDLE_S 60
/* A closed stream's last message gets this long to drain. */
#define WS_CLOSE_FLUSH_S 20
/* Kernel buffering per stream: bounds memory and lets a stalled client
 * show as a slow consumer within seconds. */
#define WS_SNDBUF (128 * 1024)
/* The front's peek bound: a head it passed fits here too. */
#define WS_HEADERS_MAX 8192
/* One read takes a whole message of WS_MSG_MAX. */
#define WS_SERV_BUF (32 * 1024)

struct ws_server {
	struct daemon *d;
	struct loop *loop;
	struct lws_context *ctx;
	struct lws_vhost *vh;
	struct ws_conn *conns;
	unsigned int nconns;
	struct ws_conn *ready; /* reported by the loop since the service */
	uint64_t service_timer, tick_timer;
	unsigned char *scratch;
	size_t scratch_cap;
};

/* One daemon per process; it belongs to the loop thread. */
static struct ws_server *the_server;

/* ---- driving lws ---- */

/* Bytes the kernel holds for the fd: received (FIONREAD) or not yet
 * sent (TIOCOUTQ). */
static int bytes_held(int fd, unsigned long what)
{
	int n = 0;

	return ioctl(fd, what, &n) < 0 ? -1 : n;
}

static void ws_sync_mask(struct ws_conn *c)
{
	unsigned int want = LOOP_READ;

	if (c->want_write || lws_partial_buffered(c->wsi))
		want |= LOOP_WRITE;
	want &= ~c->paused;
	if (want != c->mask && loop_set_fd_mask(c->srv->loop, c->fd, want) == 0)
		c->mask = want;
}

static long ws_service_fire(struct loop *l, uint64_t id, void *arg);

static void ws_schedule(struct ws_server *srv)
{
	if (!srv->service_timer)
		srv->service_timer =
		    loop_add_timer(srv->loop, 0, ws_service_fire, srv);
}

/* What the loop reported and lws did not act upon waits for the tick. */
static void ws_note_progress(struct ws_conn *c)
{
	if ((c->ready & LOOP_READ) &&
	    bytes_held(c->fd, FIONREAD) == c->readable_before)
		c->paused |= LOOP_READ;
	/* lws flushing what it kept counts as progress too. */
	if ((c->ready & LOOP_WRITE) && !c->wrote &&
	    bytes_held(c->fd, TIOCOUTQ) == c->unsent_before)
		c->paused |= LOOP_WRITE;
	c->ready = 0;
	c->in_ready = 0;
}

static void ws_service(struct ws_server *srv)
{
	struct ws_conn *c;

	for (c = srv->ready; c; c = c->ready_next) {
		c->readable_before = bytes_held(c->fd, FIONREAD);
		c->unsent_before = bytes_held(c->fd, TIOCOUTQ);
		c->wrote = 0;
	}
	lws_service(srv->ctx, -1);
	/* Connections closed meanwhile left the list. */
	for (c = srv->ready; c; c = c->ready_next)
		ws_note_progress(c);
	srv->ready = NULL;
	for (c = srv->conns; c; c = c->next)
		ws_sync_mask(c);
	/* lws holds data it has read but not handed over yet. */
	if (!lws_service_adjust_timeout(srv->ctx, 1, 0))
		ws_schedule(srv);
}

static long ws_service_fire(struct loop *l, uint64_t id, void *arg)
{
	struct ws_server *srv = arg;

	(void)l;
	(void)id;
	srv->service_timer = 0;
	ws_service(srv);
	return LOOP_TIMER_DONE;
}

static long ws_tick(struct loop *l, uint64_t id, void *arg)
{
	struct ws_server *srv = arg;
	int paused = 0;

	(void)l;
	(void)id;
	for (struct ws_conn *c = srv->conns; c; c = c->next)
		c->paused = 0;
	ws_service(srv);
	if (!srv->nconns) {
		srv->tick_timer = 0;
		return LOOP_TIMER_DONE;
	}
	for (struct ws_conn *c = srv->conns; c; c = c->next)
		paused |= c->paused != 0;
	return paused ? WS_PAUSED_TICK_MS : WS_TICK_MS;
}

static void ws_fd_ready(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct ws_conn *c = arg;

	(void)l;
	(void)fd;
	c->ready |= events & (LOOP_READ | LOOP_WRITE);
	if (!c->in_ready) {
		c->in_ready = 1;
		c->ready_next = c->srv->ready;
		c->srv->ready = c;
	}
	ws_schedule(c->srv);
}

/* ---- writing ---- */

static void ws_want_write(struct ws_conn *c)
{
	c->want_write = 1;
	c->paused &= ~LOOP_WRITE;
	lws_callback_on_writable(c->wsi);
	ws_schedule(c->srv);
}

static void ws_wake(void *owner)
{
	struct ws_conn *c = owner;

	ws_want_write(c);
	if (event_sub_is_closed(c->sub))
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_CLOSE_SEND,
				WS_CLOSE_FLUSH_S);
}

static unsigned char *ws_scratch(struct ws_server *srv, size_t len)
{
	unsigned char *p;

	if (LWS_PRE + len <= srv->scratch_cap)
		return srv->scratch;
	p = realloc(srv->scratch, LWS_PRE + len);
	if (!p)
		return NULL;
	srv->scratch = p;
	srv->scratch_cap = LWS_PRE + len;
	return p;
}

/* The stream ended (its last message went out): close with its code. */
static int ws_close_stream(struct ws_conn *c)
{
	const char *why = event_sub_close_reason(c->sub);
	int slow = why && !strcmp(why, "slow_consumer");
	const char *text = slow ? "slow consumer" : "shutting down";

	lws_close_reason(c->wsi,
			 slow ? LWS_CLOSE_STATUS_POLICY_VIOLATION
			      : LWS_CLOSE_STATUS_GOINGAWAY,
			 (unsigned char *)text, strlen(text));
	return -1;
}

/* 0 when written; -1 when the connection must close. */
static int ws_write_item(struct ws_conn *c, const struct stream_item *it)
{
	unsigned char *buf;
	const char *text;
	size_t len;

	text = event_sub_text(it, &len);
	buf = ws_scratch(c->srv, len);
	if (!buf)
		return -1;
	memcpy(buf + LWS_PRE, text, len);
	/* lws keeps what the socket did not take and sends it first. */
	return lws_write(c->wsi, buf + LWS_PRE, len, LWS_WRITE_TEXT) < (int)len
		   ? -1
		   : 0;
}

static int ws_writeable(struct ws_conn *c)
{
	const struct stream_item *it;

	c->wrote = 1;
	c->want_write = 0;
	if (!c->sub)
		return 0;
	for (int n = 0; n < WS_WRITES_PER_TURN; n++) {
		enum stream_item_kind kind;

		it = event_sub_peek(c->sub);
		if (!it)
			break;
		kind = it->kind;
		if (ws_write_item(c, it))
			return -1;
		event_sub_pop(c->sub);
		if (kind == STREAM_CLOSED)
			return ws_close_stream(c);
		/* The socket is full: lws keeps the rest, wait for room. */
		if (lws_partial_buffered(c->wsi))
			break;
	}
	if (event_sub_peek(c->sub))
		ws_want_write(c);
	else if (event_sub_is_closed(c->sub))
		return ws_close_stream(c); /* its closed message was lost */
	return 0;
}

/* ---- reading ---- */

static void ws_message_done(struct ws_conn *c)
{
	if (c->rx_binary)
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
	c->rx_too_big = c->rx_binary = 0;
}

static int ws_receive(struct ws_conn *c, const void *in, size_t len)
{
	if (lws_frame_is_binary(c->wsi))
		c->rx_binary = 1;
	if (c->rx_len + len > WS_MSG_MAX)
		c->rx_too_big = 1;
	if (!c->rx_too_big && !c->rx_binary && len) {
		if (!c->rx) {
			c->rx = malloc(WS_MSG_MAX + 1);
			if (!c->rx)
				return -1;
		}
		memcpy(c->rx + c->rx_len, in, len);
		c->rx_len += len;
	}
	if (lws_is_final_fragment(c->wsi) &&
	    !lws_remaining_packet_payload(c->wsi))
		ws_message_done(c);
	return 0;
}

/* ---- connections ---- */

static int ws_established(struct ws_conn *c)
{
	int sndbuf = WS_SNDBUF, one = 1;

	c->sub =
	    event_sub_new(c->d, &c->filter, c->has_since, c->since, ws_wake, c);
	if (!c->sub) {
		lws_close_reason(c->wsi, LWS_CLOSE_STATUS_GOINGAWAY,
				 (unsigned char *)"unavailable", 11);
		return -1;
	}
	setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	/* Whole messages go out at once: Nagle would only delay them. */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	log_debug("ws: event stream %d open (%s)", c->fd, role_name(c->role));
	ws_want_write(c);
	return 0;
}

static void ws_conn_unlink(struct ws_conn *c)
{
	struct ws_server *srv = c->srv;
	struct ws_conn **pp;

	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	srv->nconns--;
	for (pp = &srv->ready; *pp; pp = &(*pp)->ready_next)
		if (*pp == c) {
			*pp = c->ready_next;
			break;
		}
}

/* lws freed the connection (its fd is closed). */
static void ws_conn_gone(struct ws_conn *c, struct lws *wsi)
{
	struct daemon *d = c->d;

	lws_set_opaque_user_data(wsi, NULL);
	if (c->adopting) {
		c->destroyed = 1;
		return;
	}
	log_debug("ws: connection %d closed", c->fd);
	loop_del_fd(c->srv->loop, c->fd);
	ws_conn_unlink(c);
	ws_requests_forget(c);
	event_sub_free(c->sub);
	free(c->rx);
	free(c);
	http_front_conn_closed(d);
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason,
		       void *user, void *in, size_t len)
{
	struct ws_conn *c = lws_get_opaque_user_data(wsi);

	switch (reason) {
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		return c ? ws_handshake(c, wsi, in) : -1;
	case LWS_CALLBACK_HTTP:
		ws_refuse(wsi, 400, "bad_request",
			  "this connection asked for a WebSocket upgrade", NULL,
			  0);
		return -1;
	case LWS_CALLBACK_ESTABLISHED:
		return c ? ws_established(c) : -1;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return c ? ws_writeable(c) : 0;
	case LWS_CALLBACK_RECEIVE:
		return c ? ws_receive(c, in, len) : -1;
	case LWS_CALLBACK_WSI_DESTROY:
		if (c)
			ws_conn_gone(c, wsi);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

void ws_reply_push(struct ws_conn *c, char *text, size_t len)
{
	if (c->sub)
		event_sub_push_text(c->sub, STREAM_REPLY, text, len);
	else
		free(text);
}

/* ---- the lws context ---- */

static void ws_lws_log(int level, const char *line)
{
	size_t n = strlen(line);

	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		n--;
	/* Clients can make lws complain at will: never above debug. */
	(void)level;
	log_debug("ws: lws: %.*s", (int)n, line);
}

static const struct lws_protocols ws_protocols[] = {
    {"tunerd.v1", ws_callback, 0, 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static const lws_retry_bo_t ws_idle_policy = {
    .secs_since_valid_ping = WS_PING_S,
    .secs_since_valid_hangup = WS_IDLE_S,
};

static void ws_server_free(struct ws_server *srv)
{
	if (srv->ctx)
		lws_context_destroy(srv->ctx);
	loop_del_timer(srv->loop, srv->service_timer);
	loop_del_timer(srv->loop, srv->tick_timer);
	free(srv->scratch);
	if (the_server == srv)
		the_server = NULL;
	free(srv);
}

static struct ws_server *ws_server_get(struct daemon *d)
{
	struct lws_context_creation_info info;
	struct ws_server *srv = the_server;

	if (srv)
		return srv->d == d ? srv : NULL;
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return NULL;
	srv->d = d;
	srv->loop = d->loop;
	lws_set_log_level(LLL_ERR | LLL_WARN, ws_lws_log);
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
	info.gid = -1;
	info.uid = -1;
	info.user = srv;
	info.max_http_header_data = WS_HEADERS_MAX;
	info.pt_serv_buf_size = WS_SERV_BUF;
	srv->ctx = lws_create_context(&info);
	info.vhost_name = "tunerd";
	info.protocols = ws_protocols;
	info.retry_and_idle_policy = &ws_idle_policy;
	info.timeout_secs = 10;
	info.keepalive_timeout = 5;
	srv->vh = srv->ctx ? lws_create_vhost(srv->ctx, &info) : NULL;
	if (!srv->vh) {
		log_err("ws: cannot start libwebsockets");
		ws_server_free(srv);
		return NULL;
	}
	the_server = srv;
	return srv;
}

int ws_adopt(struct daemon *d, int fd)
{
	struct ws_server *srv = ws_server_get(d);
	struct ws_conn *c = srv ? calloc(1, sizeof(*c)) : NULL;
	lws_adopt_desc_t info = {0};

	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	*c = (struct ws_conn){.srv = srv, .d = d, .fd = fd, .adopting = 1};
	info.vh = srv->vh;
	info.type = LWS_ADOPT_SOCKET | LWS_ADOPT_HTTP;
	info.fd.sockfd = fd;
	info.opaque = c;
	c->wsi = lws_adopt_descriptor_vhost_via_info(&info);
	c->adopting = 0;
	if (!c->wsi || c->destroyed) {
		free(c); /* lws closed fd */
		return -EIO;
	}
	c->next = srv->conns;
	if (c->next)
		c->next->prev = c;
	srv->conns = c;
	srv->nconns++;
	if (loop_add_fd(srv->loop, fd, LOOP_READ, ws_fd_ready, c) == 0)
		c->mask = LOOP_READ;
	else
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK,
				LWS_TO_KILL_ASYNC);
	if (!srv->tick_timer)
		srv->tick_timer =
		    loop_add_timer(srv->loop, WS_TICK_MS, ws_tick, srv);
	/* The request head is already waiting. */
	ws_fd_ready(srv->loop, fd, LOOP_READ, c);
	return 0;
}

void ws_shutdown(struct daemon *d)
{
	struct ws_server *srv = the_server;

	if (!srv || srv->d != d)
		return;
	/* Let the final "closed" messages out, then close everything. */
	ws_service(srv);
	ws_server_free(srv);
}

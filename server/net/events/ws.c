// SPDX-License-Identifier: MIT
/*
 * The event stream over WebSocket (ws.h) on libwebsockets 4.1.
 *
 * libwebsockets runs on the daemon's libuv loop as a foreign loop
 * (LWS_SERVER_OPTION_LIBUV with info.foreign_loops): it keeps one
 * uv_poll_t per socket it serves with its real interests, a uv_timer_t
 * for its timeouts (handshake, ping, idle, close) and a uv_idle_t for
 * the data it has read but not handed over yet.  So this file only asks:
 * lws_callback_on_writable() when a stream has something to send, and
 * lws says WRITEABLE when the socket takes it.
 *
 * The front accepted the socket and only peeked at the request head;
 * lws adopts it in HTTP mode and parses the upgrade itself.  An upgrade
 * that libmicrohttpd read (a later request on the connection) comes with
 * its head, which lws takes as its first read: lws 4.1's adoption with a
 * read buffer has no opaque pointer and services that head at once, so
 * the connection being adopted is claimed by the first callback of a
 * wsi that has none (srv->adopting).
 *
 * Debian builds lws with LWS_WITH_EVLIB_PLUGINS: the libuv glue is a
 * plugin (package libwebsockets-evlib-uv) that lws 4.1 looks for in its
 * own LWS_INSTALL_LIBDIR only; there is no run-time search path to set.
 * A missing plugin is reported by name rather than as a failed context.
 *
 * Stopping (ws_server_free()): lws closes its libuv handles through the
 * loop, so the first lws_context_destroy() only starts; the loop then
 * runs until no handle is closing any more, and a second
 * lws_context_destroy() frees what is left (4.1's sequence for foreign
 * loops: lws never stops or frees a loop it does not own).
 */
#include "ws.h"

#include <errno.h>
#include <libwebsockets.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "json_api.h"
#include "log.h"
#include "loop.h"
#include "ws_priv.h"

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
/* Loop turns ws_server_free() allows lws to close its handles: it needs
 * two (the connections, then its own timer and idle handles). */
#define WS_FREE_TURNS_MAX 64
#define WS_EVLIB_UV       "libwebsockets-evlib_uv.so"

struct ws_server {
	struct daemon *d;
	struct loop *loop;
	struct lws_context *ctx; /* NULL once lws freed it (info.pcontext) */
	struct lws_vhost *vh;
	struct ws_conn *conns;
	unsigned int nconns;
	ws_closed_fn closed;
	void *closed_arg;
	struct ws_conn *adopting; /* inside an adoption with a head */
	struct log_budget refusals;
	unsigned char *scratch;
	size_t scratch_cap;
};

/* ---- writing ---- */

static void ws_wake(void *owner)
{
	struct ws_conn *c = owner;

	if (c->closing)
		return;
	lws_callback_on_writable(c->wsi);
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

static long ws_close_fire(struct loop *l, uint64_t id, void *arg)
{
	struct ws_conn *c = arg;

	(void)l;
	(void)id;
	c->close_timer = 0;
	/* Not inside this wsi's service now, as KILL_SYNC wants: lws sends
	 * the close frame with the reason set, then waits for the ack. */
	lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_SYNC);
	return LOOP_TIMER_DONE;
}

/*
 * Close with a code and reason, politely: lws sends a close frame, then
 * waits for the client's.  The close starts right after the current
 * callback rather than by a nonzero return from it: lws 4.1 built with
 * _DEBUG (as Debian's is) closes a wsi whose callback returned nonzero a
 * second time when it runs on libuv, and that second close kills the
 * connection before its close frame goes out.
 */
static int ws_close_with(struct ws_conn *c, enum lws_close_status code,
			 const char *text)
{
	if (c->closing)
		return 0;
	c->closing = 1;
	lws_close_reason(c->wsi, code, (unsigned char *)text, strlen(text));
	c->close_timer = loop_add_timer(c->srv->loop, 0, ws_close_fire, c);
	return c->close_timer ? 0 : -1;
}

/* The stream ended (its last message went out): close with its code. */
static int ws_close_stream(struct ws_conn *c)
{
	const char *why = event_sub_close_reason(c->sub);

	if (why && !strcmp(why, "slow_consumer"))
		return ws_close_with(c, LWS_CLOSE_STATUS_POLICY_VIOLATION,
				     "slow consumer");
	return ws_close_with(c, LWS_CLOSE_STATUS_GOINGAWAY, "shutting down");
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

	if (!c->sub || c->closing)
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
		lws_callback_on_writable(c->wsi);
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
	if (!c->sub)
		return ws_close_with(c, LWS_CLOSE_STATUS_GOINGAWAY,
				     "unavailable");
	setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	/* Whole messages go out at once: Nagle would only delay them. */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	log_debug("ws: event stream %d open (%s)", c->fd, role_name(c->role));
	lws_callback_on_writable(c->wsi);
	return 0;
}

static void ws_conn_link(struct ws_server *srv, struct ws_conn *c)
{
	c->next = srv->conns;
	if (c->next)
		c->next->prev = c;
	srv->conns = c;
	srv->nconns++;
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
	srv->nconns--;
}

static void ws_conn_free(struct ws_conn *c)
{
	loop_del_timer(c->srv->loop, c->close_timer);
	ws_conn_unlink(c);
	ws_requests_forget(c);
	event_sub_free(c->sub);
	free(c->rx);
	free(c);
}

/* lws freed the connection (its fd is closed). */
static void ws_conn_gone(struct ws_conn *c, struct lws *wsi)
{
	struct ws_server *srv = c->srv;
	int owed = !c->refused, fd = c->fd;

	lws_set_opaque_user_data(wsi, NULL);
	if (c->adopting) {
		c->destroyed = 1; /* ws_adopt() cleans up */
		return;
	}
	log_debug("ws: connection %d closed", fd);
	ws_conn_free(c);
	if (owed && srv->closed)
		srv->closed(srv->closed_arg, fd);
}

/* The upgrade request: a refusal is the connection's last message. */
static int ws_confirm(struct ws_conn *c, struct lws *wsi, const char *upgrade)
{
	int ret = ws_handshake(c, wsi, upgrade);

	c->closing = ret != 0;
	return ret;
}

struct log_budget *ws_refusal_budget(struct lws *wsi)
{
	struct ws_server *srv = lws_context_user(lws_get_context(wsi));

	return &srv->refusals; /* every wsi is of the server's context */
}

/* The wsi of the connection being adopted with its head, which
 * lws_adopt_socket_vhost_readbuf() cannot name: its first callback.
 * lws sets the wsi's opaque pointer (to NULL) after the first callbacks
 * of the adoption, so the claim is made again when it is lost. */
static struct ws_conn *ws_claim(struct lws *wsi)
{
	struct ws_server *srv = lws_context_user(lws_get_context(wsi));
	struct ws_conn *c = srv ? srv->adopting : NULL;

	if (!c || (c->wsi && c->wsi != wsi))
		return NULL;
	c->wsi = wsi;
	lws_set_opaque_user_data(wsi, c);
	return c;
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason,
		       void *user, void *in, size_t len)
{
	struct ws_conn *c = lws_get_opaque_user_data(wsi);

	if (!c)
		c = ws_claim(wsi);

	switch (reason) {
	case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		return c ? ws_confirm(c, wsi, in) : -1;
	case LWS_CALLBACK_HTTP:
		if (c)
			c->closing = 1;
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

int ws_adopt(struct ws_server *srv, int fd, const char *head, size_t len)
{
	struct ws_conn *c = calloc(1, sizeof(*c));
	lws_adopt_desc_t info = {0};

	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	*c = (struct ws_conn){.srv = srv, .d = srv->d, .fd = fd, .adopting = 1};
	ws_conn_link(srv, c);
	info.vh = srv->vh;
	info.type = LWS_ADOPT_SOCKET | LWS_ADOPT_HTTP;
	info.fd.sockfd = fd;
	info.opaque = c;
	if (head) {
		struct lws *wsi;

		srv->adopting = c;
		wsi = lws_adopt_socket_vhost_readbuf(srv->vh, fd, head, len);
		srv->adopting = NULL;
		if (wsi && !c->wsi && !c->destroyed) {
			c->wsi = wsi;
			lws_set_opaque_user_data(wsi, c);
		}
	} else {
		c->wsi = lws_adopt_descriptor_vhost_via_info(&info);
	}
	c->adopting = 0;
	if (c->wsi && !c->destroyed)
		return 0; /* lws reads the waiting head from the loop */
	/* lws closed fd.  A wsi it made may still be closing through the
	 * loop and call back: the connection stays listed until then (or
	 * until ws_server_free() when lws made none). */
	c->refused = 1;
	if (c->destroyed)
		ws_conn_free(c);
	return -EIO;
}

unsigned int ws_server_busy(const struct ws_server *srv)
{
	unsigned int n = 0;

	for (const struct ws_conn *c = srv ? srv->conns : NULL; c; c = c->next)
		n += !c->closing && !c->refused;
	return n;
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

static void count_closing(uv_handle_t *h, void *arg)
{
	*(int *)arg += uv_is_closing(h) != 0;
}

/* Run the loop while some handle of it is closing: lws's close callbacks
 * free its connections, and the last one closes lws's own handles. */
static void ws_let_lws_close(struct ws_server *srv)
{
	for (int turn = 0; turn < WS_FREE_TURNS_MAX; turn++) {
		int closing = 0;

		uv_walk(loop_uv(srv->loop), count_closing, &closing);
		if (!closing)
			return;
		loop_run_once(srv->loop, 0);
	}
	log_warn("ws: libwebsockets still closing after %d loop turns",
		 WS_FREE_TURNS_MAX);
}

void ws_server_free(struct ws_server *srv)
{
	if (!srv)
		return;
	if (srv->ctx) {
		lws_context_destroy(srv->ctx); /* closes every connection */
		ws_let_lws_close(srv);
	}
	/* Every handle is closed: this one frees the context. */
	if (srv->ctx && !srv->nconns)
		lws_context_destroy(srv->ctx);
	if (srv->ctx)
		log_warn("ws: libwebsockets did not finish; leaving it");
	while (srv->conns) /* adoptions lws refused without a wsi */
		ws_conn_free(srv->conns);
	free(srv->scratch);
	free(srv);
}

/* 0, or the negative errno of the missing libuv plugin. */
static int ws_evlib_present(void)
{
#if defined(LWS_WITH_EVLIB_PLUGINS) && defined(LWS_INSTALL_LIBDIR)
	if (access(LWS_INSTALL_LIBDIR "/" WS_EVLIB_UV, R_OK) < 0) {
		int err = -errno;

		log_err("ws: %s/%s: %s (package libwebsockets-evlib-uv)",
			LWS_INSTALL_LIBDIR, WS_EVLIB_UV, strerror(-err));
		return err;
	}
#endif
	return 0;
}

static int ws_context_start(struct ws_server *srv)
{
	struct lws_context_creation_info info;
	void *loops[1] = {loop_uv(srv->loop)};

	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	info.options =
	    LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_LIBUV;
	/* lws only reads the array while it creates the context. */
	info.foreign_loops = loops;
	info.pcontext = &srv->ctx;
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
	return srv->vh ? 0 : -1;
}

struct ws_server *ws_server_new(struct daemon *d, ws_closed_fn closed,
				void *arg)
{
	struct ws_server *srv;
	int err = ws_evlib_present();

	if (err) {
		errno = -err;
		return NULL;
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return NULL;
	srv->d = d;
	srv->loop = d->loop;
	srv->closed = closed;
	srv->closed_arg = arg;
	srv->refusals = (struct log_budget)LOG_BUDGET_INIT(
	    "refused event streams", WS_REFUSE_LOG_MAX,
	    WS_REFUSE_LOG_WINDOW_MS);
	lws_set_log_level(LLL_ERR | LLL_WARN, ws_lws_log);
	if (ws_context_start(srv) == 0)
		return srv;
	log_err("ws: cannot start libwebsockets on the libuv loop");
	ws_server_free(srv);
	errno = EPROTO;
	return NULL;
}

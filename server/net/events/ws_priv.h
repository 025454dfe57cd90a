/* SPDX-License-Identifier: MIT */
/*
 * ws_priv.h - private to ws.c, ws_write.c, ws_handshake.c and
 * ws_request.c: one WebSocket client of the event stream and the
 * server's writer.  Loop thread only.
 */
#ifndef TUNERD_WS_PRIV_H
#define TUNERD_WS_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "auth.h"
#include "command.h"
#include "event_stream.h"
#include "ws.h"

struct loop;
struct log_budget;
struct MHD_UpgradeResponseHandle;
struct wslay_event_context;
struct ws_pending;
typedef struct uv_prepare_s uv_prepare_t;
typedef struct uv_idle_s uv_idle_t;

/* Largest client message (api.md); bigger ones get an error reply. */
#define WS_MSG_MAX (16 * 1024)
/* Requests of one client waiting for a tuner at once. */
#define WS_PENDING_MAX 16
/* A closed stream's last message and close frame get this long to
 * drain, and the client this long to answer the close. */
#define WS_CLOSE_FLUSH_S 20

struct ws_conn {
	struct ws_server *srv; /* NULL until served, and once given back */
	struct daemon *d;
	int refs; /* the request's (ws_conn_put()) and the server's */
	int fd;   /* -1 until served */
	struct MHD_UpgradeResponseHandle *urh;
	struct wslay_event_context *ws;

	/* From the handshake. */
	struct event_filter filter;
	int has_since;
	uint64_t since;
	enum role role;
	const char *token_name; /* lives as long as the configuration */
	int subprotocol;        /* the client named tunerd.v1 */
	char accept[WS_ACCEPT_LEN + 1];

	struct event_sub *sub;
	int closing;          /* the stream's close frame is queued */
	uint64_t close_timer; /* the close's deadline (WS_CLOSE_FLUSH_S) */
	uint64_t last_rx_ms;  /* the client's last bytes (keepalive) */
	int ping_sent;

	/* Bytes libmicrohttpd read past the upgrade head: wslay's first. */
	char *extra;
	size_t extra_len, extra_off;

	/* The message being received (wslay does not buffer: the frames'
	 * payloads are collected here, up to WS_MSG_MAX). */
	char *rx;
	size_t rx_len;
	int rx_too_big, rx_ctrl;

	/* Frames wslay made, waiting to go out in one write (ws_write.c). */
	unsigned char *out;
	size_t out_len, out_off, out_cap;
	unsigned int mask; /* what the loop watches the socket for */

	/* Requests waiting for the command service. */
	struct command_client client;
	struct ws_pending *pending;

	/* In the FIFO of writers (ws_write.c). */
	int wq_queued;
	struct ws_conn *wq_prev, *wq_next;

	struct ws_conn *prev, *next;
};

/* The writing side of a server (ws_write.c): the per-turn budget and
 * the counters of ws_server_stats(). */
struct ws_writer {
	uv_prepare_t *turn; /* writes the turn's clients before each poll */
	uv_idle_t *idle;    /* keeps the poll from blocking while some wait */
	struct ws_conn *wq_head, *wq_tail; /* the FIFO of writers */
	struct ws_stats stats;
};

struct ws_writer *ws_writer_of(struct ws_server *srv);
/* Start the per-turn writes on l (0, or -1 when out of memory); stop
 * closes its handles through the loop. */
int ws_writer_start(struct ws_writer *w, struct loop *l);
void ws_writer_stop(struct ws_writer *w);
/* c goes away: out of the FIFO of writers. */
void ws_writer_forget(struct ws_writer *w, struct ws_conn *c);
/* The hub's wake-up for c (event_sub_wake_fn): c joins the FIFO. */
void ws_wake(void *owner);
/* wslay's send callback: frames are appended to c's out buffer. */
ssize_t ws_send_cb(struct wslay_event_context *ctx, const uint8_t *data,
		   size_t len, int flags, void *user);
/* Let wslay frame what it has queued (pongs, the close) and write c's
 * out buffer: 0, or -1 when the connection is gone (given back). */
int ws_flush(struct ws_conn *c);
/* The stream ended (its last message is queued): close politely with
 * its code (ws.c). */
void ws_close_stream(struct ws_conn *c);
/* The close's deadline: WS_CLOSE_FLUSH_S from now, once (ws.c). */
void ws_close_deadline(struct ws_conn *c);
/* Watch c's socket for mask (LOOP_READ, LOOP_WRITE). */
void ws_watch(struct ws_conn *c, unsigned int mask);
/* Give c back to libmicrohttpd now (ws.c); c may be freed. */
void ws_release(struct ws_conn *c);

/* The log budget of srv's refused upgrades (WS_REFUSE_LOG_MAX lines per
 * WS_REFUSE_LOG_WINDOW_MS). */
#define WS_REFUSE_LOG_MAX       20
#define WS_REFUSE_LOG_WINDOW_MS 10000
struct log_budget *ws_refusal_budget(struct ws_server *srv);
/* A client to be, owned by the caller (ws.c). */
struct ws_conn *ws_conn_new(struct ws_server *srv);
/* Serve c on sock (ws.c): MHD's upgrade handler. */
void ws_upgraded(void *cls, struct MHD_Connection *mc, void *req_cls,
		 const char *extra_in, size_t extra_in_size, int sock,
		 struct MHD_UpgradeResponseHandle *urh);

/* Queue a message of this client's stream (ws.c; takes text). */
void ws_reply_push(struct ws_conn *c, char *text, size_t len);
/* Queue a reply: result, or error as made by api_error_json() (takes the
 * references). */
void ws_reply(struct ws_conn *c, json_t *id, json_t *result, json_t *error);
/* Handle one complete text message from the client. */
void ws_request_handle(struct ws_conn *c, const char *text, size_t len);
/* The client went away: cancel its requests. */
void ws_requests_forget(struct ws_conn *c);

#endif /* TUNERD_WS_PRIV_H */

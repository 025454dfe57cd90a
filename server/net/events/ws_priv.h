/* SPDX-License-Identifier: MIT */
/*
 * ws_priv.h - private to ws.c and ws_request.c: one WebSocket client of
 * the event stream.  Loop thread only.
 */
#ifndef TUNERD_WS_PRIV_H
#define TUNERD_WS_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "command.h"
#include "event_stream.h"
#include "ws.h"

struct loop;
struct lws;
struct ws_server;
struct ws_pending;
typedef struct uv_prepare_s uv_prepare_t;
typedef struct uv_idle_s uv_idle_t;

/* Largest client message (api.md); bigger ones get an error reply. */
#define WS_MSG_MAX (16 * 1024)
/* Requests of one client waiting for a tuner at once. */
#define WS_PENDING_MAX 16

struct ws_conn {
	struct ws_server *srv;
	struct daemon *d;
	struct lws *wsi;
	int fd;
	int adopting;  /* inside lws_adopt_descriptor_vhost_via_info() */
	int destroyed; /* lws freed the wsi during the adoption */
	int refused;   /* the adoption failed: closed() is not owed */

	/* From the handshake. */
	struct event_filter filter;
	int has_since;
	uint64_t since;
	enum role role;
	const char *token_name; /* lives as long as the configuration */

	struct event_sub *sub;
	int closing;          /* the last message went to lws: it closes next */
	uint64_t close_timer; /* starts the close after the callback */

	/* The message being received. */
	char *rx;
	size_t rx_len;
	int rx_too_big, rx_binary;

	/* Requests waiting for the command service. */
	struct command_client client;
	struct ws_pending *pending;

	/* In the FIFO of writers (ws_write.c). */
	int wq_queued;
	struct ws_conn *wq_prev, *wq_next;

	struct ws_conn *prev, *next;
};

/* A closed stream's last message gets this long to drain. */
#define WS_CLOSE_FLUSH_S 20

/* The writing side of a server (ws_write.c): the scratch buffer lws
 * frames in, the per-turn budget and the counters of ws_server_stats(). */
struct ws_writer {
	unsigned char *scratch;
	size_t scratch_cap;
	uv_prepare_t *turn; /* arms the turn's writers before each poll */
	uv_idle_t *idle;    /* keeps the poll from blocking while some wait */
	struct ws_conn *wq_head, *wq_tail; /* the FIFO of writers */
	struct ws_stats stats;
};

struct ws_writer *ws_writer_of(struct ws_server *srv);
/* Start the per-turn arming on l (0, or -1 when out of memory); stop
 * closes its handles through the loop and frees the scratch buffer. */
int ws_writer_start(struct ws_writer *w, struct loop *l);
void ws_writer_stop(struct ws_writer *w);
/* c goes away: out of the FIFO of writers. */
void ws_writer_forget(struct ws_writer *w, struct ws_conn *c);
/* The hub's wake-up for c (event_sub_wake_fn): ask lws for WRITEABLE. */
void ws_wake(void *owner);
/* LWS_CALLBACK_SERVER_WRITEABLE: write a batch of c's queue.  0, or -1
 * when the connection must close. */
int ws_writeable(struct ws_conn *c);
/* The stream ended (its last message went out): close politely with its
 * code (ws.c).  0, or -1 when the close could not be scheduled. */
int ws_close_stream(struct ws_conn *c);

/* The log budget of the server serving wsi for its refused upgrades
 * (WS_REFUSE_LOG_MAX lines per WS_REFUSE_LOG_WINDOW_MS). */
#define WS_REFUSE_LOG_MAX       20
#define WS_REFUSE_LOG_WINDOW_MS 10000
struct log_budget *ws_refusal_budget(struct lws *wsi);

/* LWS_CALLBACK_HTTP_CONFIRM_UPGRADE (ws_request.c): check the path, the
 * token and the query (upgrade: the protocol asked for); 0 lets the upgrade go on, else the connection was
 * refused (> 0: an HTTP error answer went out). */
int ws_handshake(struct ws_conn *c, struct lws *wsi, const char *upgrade);
/* Answer an HTTP request on wsi with an API error (api_error_json; takes
 * details).  Returns 1, or -1 when even that failed. */
int ws_refuse(struct lws *wsi, unsigned int status, const char *code,
	      const char *message, json_t *details, int www_auth);
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

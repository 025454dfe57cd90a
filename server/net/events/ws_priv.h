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

struct lws;
struct ws_server;
struct ws_pending;

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

	struct ws_conn *prev, *next;
};

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

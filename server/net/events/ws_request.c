// SPDX-License-Identifier: MIT
/*
 * What a WebSocket client asks: the upgrade (path, filters, token) and,
 * once the stream is open, its requests {"id","op":"tune"|"status",...}.
 * A request is translated for the command service (which checks roles,
 * params and leases as for REST, and shapes the answer); its answer is
 * queued on the client's stream like any event, so the loop never waits.
 */
#include <errno.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "client_addr.h"
#include "daemon.h"
#include "json_api.h"
#include "log.h"
#include "loop.h"
#include "net_api.h"
#include "tuner.h"
#include "web_origin.h"
#include "ws_priv.h"

#define WS_PATH      "/api/v1/events"
#define WS_ARG_MAX   1024
#define WS_TOKEN_MAX 512
#define WS_URI_MAX   2048 /* as REST_URI_MAX */

/* A request waiting for its answer: the id it is answered with. */
struct ws_pending {
	struct ws_conn *c;
	json_t *id;
	struct ws_pending *prev, *next;
};

/* ---- the upgrade ---- */

int ws_refuse(struct lws *wsi, unsigned int status, const char *code,
	      const char *message, json_t *details, int www_auth)
{
	static const char realm[] = "Bearer realm=\"tunerd\"";
	unsigned char hdr[LWS_PRE + 1024], *p = hdr + LWS_PRE;
	unsigned char *end = hdr + sizeof(hdr);
	unsigned char body[LWS_PRE + 2048];
	size_t len = 0;
	char *text =
	    event_stream_dump(api_error_json(code, message, details), &len);

	/* Anyone can have upgrades refused: within the server's budget. */
	log_limited(ws_refusal_budget(wsi), loop_now_ms(), LL_INFO,
		    "ws: refused an event stream: %u %s: %s", status, code,
		    message);
	if (!text || len > sizeof(body) - LWS_PRE) {
		free(text);
		return -1;
	}
	memcpy(body + LWS_PRE, text, len);
	free(text);
	if (lws_add_http_header_status(wsi, status, &p, end) ||
	    lws_add_http_header_by_token(
		wsi, WSI_TOKEN_HTTP_CONTENT_TYPE,
		(const unsigned char *)"application/json", 16, &p, end) ||
	    lws_add_http_header_content_length(wsi, len, &p, end) ||
	    (www_auth &&
	     lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_WWW_AUTHENTICATE,
					  (const unsigned char *)realm,
					  sizeof(realm) - 1, &p, end)) ||
	    lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION,
					 (const unsigned char *)"close", 5, &p,
					 end) ||
	    lws_finalize_http_header(wsi, &p, end))
		return -1;
	if (lws_write(wsi, hdr + LWS_PRE, (size_t)(p - (hdr + LWS_PRE)),
		      LWS_WRITE_HTTP_HEADERS) < 0 ||
	    lws_write(wsi, body + LWS_PRE, len, LWS_WRITE_HTTP_FINAL) < 0)
		return -1;
	return 1;
}

/* The bearer token: "Authorization: Bearer <t>" or the subprotocol
 * "bearer.<t>".  NULL when none. */
static const char *ws_bearer(struct lws *wsi, char *buf, size_t len)
{
	char hdr[WS_TOKEN_MAX + 16];
	const char *t = NULL;

	if (lws_hdr_copy(wsi, hdr, sizeof(hdr), WSI_TOKEN_HTTP_AUTHORIZATION) >
		7 &&
	    !strncasecmp(hdr, "Bearer ", 7)) {
		size_t n;

		for (t = hdr + 7; *t == ' '; t++)
			;
		n = strnlen(t, len);
		if (n < len) {
			memcpy(buf, t, n + 1);
			t = buf;
		} else {
			t = NULL;
		}
	} else if (lws_hdr_copy(wsi, hdr, sizeof(hdr), WSI_TOKEN_PROTOCOL) >
		   0) {
		t = auth_token_from_ws_protocols(hdr, buf, len);
	}
	explicit_bzero(hdr, sizeof(hdr));
	return t;
}

/* A header into buf, or NULL when absent or longer than buf. */
static const char *ws_header(struct lws *wsi, enum lws_token_indexes h,
			     char *buf, size_t len)
{
	return lws_hdr_copy(wsi, buf, (int)len, h) > 0 ? buf : NULL;
}

/*
 * The client's address into *client (a trusted proxy's X-Forwarded-For
 * believed, client_addr.h); -1 when the upgrade comes from a web page
 * whose Origin may not use the API (web_origin.h).  A header too long
 * for the buffers counts as absent for X-Forwarded-For (the socket's
 * peer stands, or an unknown one) and as foreign for Origin.
 */
static int ws_client(struct ws_conn *c, struct lws *wsi,
		     const struct sockaddr *peer,
		     struct sockaddr_storage *client)
{
	const struct net_api *net = net_api_of(c->d);
	char xff[CLIENT_ADDR_XFF_MAX + 1], origin[WEB_ORIGIN_MAX + 1],
	    host[WEB_ORIGIN_MAX + 1];
	const char *o =
	    ws_header(wsi, WSI_TOKEN_ORIGIN, origin, sizeof(origin));

	client_addr_resolve(
	    net ? &net->cfg.trusted_proxies : NULL, peer,
	    ws_header(wsi, WSI_TOKEN_X_FORWARDED_FOR, xff, sizeof(xff)),
	    client);
	if (!o && lws_hdr_total_length(wsi, WSI_TOKEN_ORIGIN) > 0)
		return -1;
	return web_origin_allowed(
		   net ? &net->cfg : NULL, o,
		   ws_header(wsi, WSI_TOKEN_HOST, host, sizeof(host)))
		   ? 0
		   : -1;
}

static int ws_authorize(struct ws_conn *c, struct lws *wsi)
{
	char token[WS_TOKEN_MAX];
	struct sockaddr_storage peer, client;
	socklen_t plen = sizeof(peer);
	struct auth_result who;
	json_t *details = NULL;

	memset(&peer, 0, sizeof(peer));
	getpeername(c->fd, (struct sockaddr *)&peer, &plen);
	if (ws_client(c, wsi, (struct sockaddr *)&peer, &client))
		return ws_refuse(wsi, 403, "origin_not_allowed",
				 "web pages of this origin may not use the "
				 "API (list it in the config's cors.origins)",
				 NULL, 0);
	auth_check(c->d, ws_bearer(wsi, token, sizeof(token)),
		   (struct sockaddr *)&client, ROLE_VIEWER, &who);
	explicit_bzero(token, sizeof(token));
	if (who.ok) {
		c->role = who.role;
		c->token_name = who.token_name;
		struct net_api *net = net_api_of(c->d);

		/* Without the network API (a bench) requests are refused. */
		command_client_init(&c->client, net ? net->commands : NULL,
				    c->role, c->token_name, WS_PENDING_MAX);
		return 0;
	}
	if (who.http_status == 403 && who.role != ROLE_NONE)
		details = json_pack("{s:s,s:s}", "required_role",
				    role_name(ROLE_VIEWER), "role",
				    role_name(who.role));
	return ws_refuse(wsi, (unsigned int)who.http_status, who.code,
			 who.message, details, who.http_status == 401);
}

static const char *ws_arg(struct lws *wsi, const char *name, char *buf,
			  size_t len)
{
	return lws_get_urlarg_by_name(wsi, name, buf, (int)len);
}

/* Does the comma-separated header h list token (any case)?  -1 when the
 * header does not fit the buffer. */
static int header_lists(struct lws *wsi, enum lws_token_indexes h,
			const char *token)
{
	char v[1024];
	size_t n = strlen(token), m;

	if (lws_hdr_copy(wsi, v, sizeof(v), h) < 0)
		return lws_hdr_total_length(wsi, h) >= (int)sizeof(v) ? -1 : 0;
	for (const char *p = v; *p; p += m) {
		p += strspn(p, " \t,");
		m = strcspn(p, " \t,");
		if (m == n && !strncasecmp(p, token, n))
			return 1;
	}
	return 0;
}

/* A GET upgrade to WebSocket on WS_PATH, subprotocol tunerd.v1 (or none).
 * lws would just hang up on some of these: answer them. */
static int ws_check_request(struct lws *wsi, const char *upgrade)
{
	char path[256];

	if (!upgrade || strcasecmp(upgrade, "websocket") ||
	    !header_lists(wsi, WSI_TOKEN_CONNECTION, "upgrade") ||
	    !lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI))
		return ws_refuse(wsi, 400, "bad_request",
				 "a WebSocket upgrade is a GET with Upgrade: "
				 "websocket and Connection: Upgrade",
				 NULL, 0);
	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) +
		lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS) >
	    WS_URI_MAX)
		return ws_refuse(wsi, 414, "uri_too_long",
				 "the request URI is too long",
				 json_pack("{s:i}", "max", WS_URI_MAX), 0);
	if (lws_hdr_copy(wsi, path, sizeof(path), WSI_TOKEN_GET_URI) < 0 ||
	    strcmp(path, WS_PATH))
		return ws_refuse(wsi, 404, "not_found",
				 "WebSocket streams live at " WS_PATH,
				 json_pack("{s:s}", "path", WS_PATH), 0);
	if (lws_hdr_total_length(wsi, WSI_TOKEN_PROTOCOL) > 0 &&
	    !header_lists(wsi, WSI_TOKEN_PROTOCOL, "tunerd.v1"))
		return ws_refuse(
		    wsi, 400, "bad_request", "the subprotocol is tunerd.v1",
		    json_pack("{s:s}", "field", "Sec-WebSocket-Protocol"), 0);
	return 0;
}

/* LWS_CALLBACK_HTTP_CONFIRM_UPGRADE: 0 goes on; else refused. */
int ws_handshake(struct ws_conn *c, struct lws *wsi, const char *upgrade)
{
	char types[WS_ARG_MAX], tuners[WS_ARG_MAX], since[WS_ARG_MAX];
	struct api_error e = {0};
	const char *s;
	int ret;

	ret = ws_check_request(wsi, upgrade);
	if (!ret)
		ret = ws_authorize(c, wsi);
	if (ret)
		return ret;
	if (event_filter_parse(
		&c->filter, ws_arg(wsi, "types=", types, sizeof(types)),
		ws_arg(wsi, "tuner=", tuners, sizeof(tuners)), &e)) {
		ret = ws_refuse(wsi, (unsigned int)e.status, e.code, e.message,
				e.details, 0);
		e.details = NULL;
		return ret;
	}
	s = ws_arg(wsi, "since=", since, sizeof(since));
	if (s && event_since_parse(s, &c->since))
		return ws_refuse(wsi, 400, "bad_request",
				 "since: a sequence number",
				 json_pack("{s:s}", "field", "since"), 0);
	c->has_since = s != NULL;
	return 0;
}

/* ---- replies ---- */

void ws_reply(struct ws_conn *c, json_t *id, json_t *result, json_t *error)
{
	json_t *msg = json_pack("{s:s,s:O?,s:b}", "type", "reply", "id", id,
				"ok", error == NULL);
	size_t len;
	char *text;

	if (msg && error)
		json_object_set(msg, "error", json_object_get(error, "error"));
	else if (msg)
		json_object_set(msg, "result", result ? result : json_null());
	json_decref(result);
	json_decref(error);
	text = event_stream_dump(msg, &len);
	if (text)
		ws_reply_push(c, text, len);
}

static void ws_fail(struct ws_conn *c, json_t *id, struct api_error *e)
{
	ws_reply(c, id, NULL, api_error_to_json(e));
}

/* ---- requests ---- */

static void pending_unlink(struct ws_pending *p)
{
	struct ws_conn *c = p->c;

	if (p->prev)
		p->prev->next = p->next;
	else
		c->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
}

static void pending_free(struct ws_pending *p)
{
	json_decref(p->id);
	free(p);
}

static void ws_done(struct command_result *res, void *arg)
{
	struct ws_pending *p = arg;

	pending_unlink(p);
	if (res->status < 300)
		ws_reply(p->c, p->id, res->body, NULL);
	else
		ws_reply(p->c, p->id, NULL, res->body);
	pending_free(p);
}

void ws_requests_forget(struct ws_conn *c)
{
	struct ws_pending *p, *next;

	command_client_cancel(&c->client);
	for (p = c->pending; p; p = next) {
		next = p->next;
		pending_free(p);
	}
	c->pending = NULL;
}

static int bad_field(struct api_error *e, const char *field, const char *why)
{
	api_error_set(e, 400, "bad_request", json_pack("{s:s}", "field", field),
		      "%s: %s", field, why);
	return -1;
}

static int check_fields(json_t *msg, enum tuner_op op, struct api_error *e)
{
	const char *key;
	json_t *v;

	json_object_foreach(msg, key, v)
	{
		if (!strcmp(key, "id") || !strcmp(key, "op") ||
		    !strcmp(key, "tuner"))
			continue;
		if (op == TUNER_OP_TUNE &&
		    (!strcmp(key, "params") || !strcmp(key, "lease_id")))
			continue;
		return bad_field(e, key, "unknown field");
	}
	return 0;
}

/* The envelope is the WebSocket's own; the command is the service's.
 * Returns 0 when the request was answered or is waiting, -1 with e. */
static int ws_request_run(struct ws_conn *c, json_t *msg, json_t *id,
			  struct api_error *e)
{
	const char *name = json_string_value(json_object_get(msg, "op"));
	json_t *tv = json_object_get(msg, "tuner");
	struct command_request req = {.args_field = "params"};
	struct command_result res;
	struct ws_pending *p;

	if (name && (!strcmp(name, "tune") || !strcmp(name, "status")))
		req.op = name[0] == 't' ? TUNER_OP_TUNE : TUNER_OP_STATUS;
	if (!req.op)
		return bad_field(e, "op", "\"tune\" or \"status\"");
	if (check_fields(msg, req.op, e))
		return -1;
	if (!json_is_integer(tv) || json_integer_value(tv) < 0 ||
	    json_integer_value(tv) > UINT32_MAX)
		return bad_field(e, "tuner", "a tuner id");
	req.tuner = (uint32_t)json_integer_value(tv);
	req.args = json_object_get(msg, "params");
	req.lease_id = json_object_get(msg, "lease_id");
	p = calloc(1, sizeof(*p));
	if (!p) {
		api_error_set(e, 500, "internal", NULL, "out of memory");
		return -1;
	}
	*p = (struct ws_pending){.c = c, .id = json_incref(id)};
	if (command_submit(&c->client, &req, ws_done, p, &res)) {
		ws_reply(c, id, NULL, res.body);
		pending_free(p);
		return 0;
	}
	p->next = c->pending;
	if (p->next)
		p->next->prev = p;
	c->pending = p;
	return 0;
}

void ws_request_handle(struct ws_conn *c, const char *text, size_t len)
{
	json_error_t jerr;
	json_t *msg = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	struct api_error e = {0};
	json_t *id = json_object_get(msg, "id");

	if (id && !json_is_string(id) && !json_is_integer(id)) {
		id = NULL;
		bad_field(&e, "id", "a string or an integer");
	} else if (!msg) {
		api_error_set(&e, 400, "bad_json", NULL,
			      "the message is not JSON: %s", jerr.text);
	} else if (json_depth(msg) > API_JSON_MAX_DEPTH) {
		api_error_set(&e, 400, "bad_json", NULL,
			      "JSON deeper than %d levels", API_JSON_MAX_DEPTH);
	} else if (!json_is_object(msg)) {
		api_error_set(&e, 400, "bad_request", NULL,
			      "a request is a JSON object");
	} else if (!ws_request_run(c, msg, id, &e)) {
		json_decref(msg);
		return;
	}
	ws_fail(c, id, &e);
	json_decref(msg);
}

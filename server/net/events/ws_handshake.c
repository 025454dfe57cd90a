// SPDX-License-Identifier: MIT
/*
 * The WebSocket upgrade (ws.h): whether a request libmicrohttpd parsed
 * may become an event stream, and the 101 that makes it one.
 *
 * MHD parsed the request line and the headers; what is checked here is
 * what RFC 6455 (4.2.1) asks of an opening handshake and what the API
 * asks of a stream: HTTP/1.1, Upgrade: websocket, Connection listing
 * Upgrade, a Sec-WebSocket-Key of 16 bytes in base64, version 13, the
 * subprotocol tunerd.v1 when one is named, the Origin rule of browsers
 * (web_origin.h), the token (auth.h: the Authorization header or the
 * "bearer.<token>" subprotocol) and the query (types, tuner, since: as
 * the Server-Sent Events parse them).  A refusal is the API's JSON error
 * (the REST handler sends it and closes the connection), logged within
 * the server's budget since anyone can have upgrades refused.
 *
 * The 101 is MHD's own upgrade response (MHD_create_response_for_upgrade
 * adds "Connection: Upgrade"); its Sec-WebSocket-Accept is base64 of the
 * SHA-1 of the key and RFC 6455's GUID, both from OpenSSL's libcrypto.
 */
#include <microhttpd.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
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
#include "web_origin.h"
#include "ws_priv.h"

#define WS_TOKEN_MAX 512
#define WS_KEY_LEN   24 /* 16 bytes in base64 */
#define WS_GUID      "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_PROTOCOL  "tunerd.v1"

static const char *ws_header(struct MHD_Connection *mc, const char *name)
{
	return MHD_lookup_connection_value(mc, MHD_HEADER_KIND, name);
}

/* Does the comma-separated header h list token (any case)? */
static int header_lists(struct MHD_Connection *mc, const char *h,
			const char *token)
{
	const char *v = ws_header(mc, h);
	size_t n = strlen(token), m;

	for (const char *p = v; p && *p; p += m) {
		p += strspn(p, " \t,");
		m = strcspn(p, " \t,");
		if (m == n && !strncasecmp(p, token, n))
			return 1;
	}
	return 0;
}

static int key_ok(const char *key)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789+/";

	return key && strlen(key) == WS_KEY_LEN &&
	       strspn(key, b64) == WS_KEY_LEN - 2 &&
	       !strcmp(key + WS_KEY_LEN - 2, "==");
}

static int refuse(struct api_error *e, const char *field, const char *msg)
{
	api_error_set(e, 400, "bad_request",
		      field ? json_pack("{s:s}", "field", field) : NULL, "%s",
		      msg);
	return -1;
}

/* The handshake's own headers (RFC 6455 4.2.1). */
static int ws_check_request(struct ws_conn *c, struct MHD_Connection *mc,
			    const char *version, struct api_error *e)
{
	const char *v = ws_header(mc, "Sec-WebSocket-Version");

	if (!version || strcmp(version, "HTTP/1.1"))
		return refuse(e, NULL,
			      "a WebSocket upgrade is an HTTP/1.1 GET");
	if (!header_lists(mc, "Upgrade", "websocket") ||
	    !header_lists(mc, "Connection", "upgrade"))
		return refuse(e, NULL,
			      "a WebSocket upgrade is a GET with Upgrade: "
			      "websocket and Connection: Upgrade");
	if (!v || strcmp(v, "13"))
		return refuse(e, "Sec-WebSocket-Version",
			      "the WebSocket version spoken is 13");
	if (!key_ok(ws_header(mc, "Sec-WebSocket-Key")))
		return refuse(e, "Sec-WebSocket-Key",
			      "Sec-WebSocket-Key: 16 bytes in base64");
	if (ws_header(mc, "Sec-WebSocket-Protocol")) {
		if (!header_lists(mc, "Sec-WebSocket-Protocol", WS_PROTOCOL))
			return refuse(e, "Sec-WebSocket-Protocol",
				      "the subprotocol is " WS_PROTOCOL);
		c->subprotocol = 1;
	}
	return 0;
}

/* The bearer token: "Authorization: Bearer <t>" or the subprotocol
 * "bearer.<t>".  NULL when none (or longer than buf). */
static const char *ws_bearer(struct MHD_Connection *mc, char *buf, size_t len)
{
	const char *h = ws_header(mc, MHD_HTTP_HEADER_AUTHORIZATION);
	const char *p = ws_header(mc, "Sec-WebSocket-Protocol");

	if (h && !strncasecmp(h, "Bearer ", 7)) {
		for (h += 7; *h == ' '; h++)
			;
		return strlen(h) < len ? h : NULL;
	}
	return p ? auth_token_from_ws_protocols(p, buf, len) : NULL;
}

/*
 * The client's address into *client (a trusted proxy's X-Forwarded-For
 * believed, client_addr.h); -1 when the upgrade comes from a web page
 * whose Origin may not use the API (web_origin.h).  A header longer than
 * those bounds counts as absent for X-Forwarded-For (the socket's peer
 * stands) and as foreign for Origin.
 */
static int ws_client(struct ws_conn *c, struct MHD_Connection *mc,
		     struct sockaddr_storage *client)
{
	const struct net_api *net = net_api_of(c->d);
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const char *xff = ws_header(mc, "X-Forwarded-For");
	const char *o = ws_header(mc, "Origin");
	const char *host = ws_header(mc, MHD_HTTP_HEADER_HOST);

	if (xff && strlen(xff) > CLIENT_ADDR_XFF_MAX)
		xff = NULL;
	client_addr_resolve(net ? &net->cfg.trusted_proxies : NULL,
			    ci ? ci->client_addr : NULL, xff, client);
	if (o && strlen(o) > WEB_ORIGIN_MAX)
		return -1;
	if (host && strlen(host) > WEB_ORIGIN_MAX)
		host = NULL;
	return web_origin_allowed(net ? &net->cfg : NULL, o, host) ? 0 : -1;
}

static int ws_authorize(struct ws_conn *c, struct MHD_Connection *mc,
			struct api_error *e, int *www_auth)
{
	char token[WS_TOKEN_MAX];
	struct sockaddr_storage client;
	struct auth_result who;
	struct net_api *net = net_api_of(c->d);

	if (ws_client(c, mc, &client)) {
		api_error_set(e, 403, "origin_not_allowed", NULL,
			      "web pages of this origin may not use the API "
			      "(list it in the config's cors.origins)");
		return -1;
	}
	auth_check(c->d, ws_bearer(mc, token, sizeof(token)),
		   (struct sockaddr *)&client, ROLE_VIEWER, &who);
	explicit_bzero(token, sizeof(token));
	if (!who.ok) {
		api_error_set(e, who.http_status, who.code,
			      who.http_status == 403 && who.role != ROLE_NONE
				  ? json_pack("{s:s,s:s}", "required_role",
					      role_name(ROLE_VIEWER), "role",
					      role_name(who.role))
				  : NULL,
			      "%s", who.message);
		*www_auth = who.http_status == 401;
		return -1;
	}
	c->role = who.role;
	c->token_name = who.token_name;
	/* Without the network API (a bench) requests are refused. */
	command_client_init(&c->client, net ? net->commands : NULL, c->role,
			    c->token_name, WS_PENDING_MAX);
	return 0;
}

static const char *ws_arg(struct MHD_Connection *mc, const char *name)
{
	return MHD_lookup_connection_value(mc, MHD_GET_ARGUMENT_KIND, name);
}

/* The stream's filters and position, as the SSE streams take them. */
static int ws_query(struct ws_conn *c, struct MHD_Connection *mc,
		    struct api_error *e)
{
	const char *since = ws_arg(mc, "since");

	if (event_filter_parse(&c->filter, ws_arg(mc, "types"),
			       ws_arg(mc, "tuner"), e))
		return -1;
	if (since && event_since_parse(since, &c->since))
		return refuse(e, "since", "since: a sequence number");
	c->has_since = since != NULL;
	return 0;
}

int ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1])
{
	unsigned char md[SHA_DIGEST_LENGTH];
	char in[WS_KEY_LEN + sizeof(WS_GUID)];
	int n = key ? snprintf(in, sizeof(in), "%s%s", key, WS_GUID) : -1;

	if (n < 0 || (size_t)n >= sizeof(in) ||
	    !EVP_Digest(in, (size_t)n, md, NULL, EVP_sha1(), NULL))
		return -1;
	return EVP_EncodeBlock((unsigned char *)out, md, sizeof(md)) ==
		       WS_ACCEPT_LEN
		   ? 0
		   : -1;
}

struct ws_conn *ws_handshake(struct ws_server *srv, struct MHD_Connection *mc,
			     const char *version, struct api_error *e,
			     int *www_auth)
{
	struct ws_conn *c = ws_conn_new(srv);

	*www_auth = 0;
	if (!c) {
		api_error_set(e, 503, "unavailable", NULL, "out of memory");
		return NULL;
	}
	if (!ws_check_request(c, mc, version, e) &&
	    !ws_authorize(c, mc, e, www_auth) && !ws_query(c, mc, e)) {
		if (!ws_accept_key(ws_header(mc, "Sec-WebSocket-Key"),
				   c->accept))
			return c;
		api_error_set(e, 500, "internal", NULL,
			      "cannot compute Sec-WebSocket-Accept");
	}
	log_limited(ws_refusal_budget(srv), loop_now_ms(), LL_INFO,
		    "ws: refused an event stream: %d %s: %s", e->status,
		    e->code, e->message);
	ws_conn_put(c);
	return NULL;
}

struct MHD_Response *ws_upgrade_response(struct ws_conn *c)
{
	struct MHD_Response *r =
	    MHD_create_response_for_upgrade(ws_upgraded, c);

	if (r &&
	    MHD_add_response_header(r, MHD_HTTP_HEADER_UPGRADE, "websocket") ==
		MHD_YES &&
	    MHD_add_response_header(r, "Sec-WebSocket-Accept", c->accept) ==
		MHD_YES &&
	    (!c->subprotocol ||
	     MHD_add_response_header(r, "Sec-WebSocket-Protocol",
				     WS_PROTOCOL) == MHD_YES))
		return r;
	if (r)
		MHD_destroy_response(r);
	return NULL;
}

// SPDX-License-Identifier: MIT
/*
 * The REST API v1 on libmicrohttpd: one request context per request,
 * bodies collected up to REST_BODY_MAX, routing, roles, answers.
 *
 * MHD calls the access handler once with the head, once per body chunk
 * and once more when the body is complete; a request that waits for a
 * tuner is suspended and MHD calls the handler again after its resume,
 * which is when the kept answer is queued.  Every answer is queued once
 * the request is complete: MHD 0.9.75 only accepts a response before the
 * body is read or after it, and an early answer to a body-carrying
 * request would leave the rest of the body to be parsed as a next
 * request.  The exceptions (a Content-Length over the limit, a URI over
 * REST_URI_MAX) make MHD close the connection after the answer.
 */
#include "rest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client_addr.h"
#include "daemon.h"
#include "hdhr_http.h"
#include "http_front.h"
#include "log.h"
#include "loop.h"
#include "net_api.h"
#include "sse_stream.h"

void *rest_uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct rest_req *r = calloc(1, sizeof(*r));

	if (r) {
		r->net = cls;
		r->conn = c;
		r->t0_ns = loop_now_ns();
		r->uri_len = uri ? strlen(uri) : 0;
		/* Only the event stream can be upgraded (rest_upgrade.c);
		 * the path as the client sent it, before MHD unescapes it. */
		r->upgradable = r->uri_len <= REST_URI_MAX &&
				!strncmp(uri, REST_EVENTS_PATH,
					 sizeof(REST_EVENTS_PATH) - 1) &&
				(uri[sizeof(REST_EVENTS_PATH) - 1] == '\0' ||
				 uri[sizeof(REST_EVENTS_PATH) - 1] == '?');
	}
	return r;
}

static void waiting_unlink(struct rest_req *r)
{
	if (!r->suspended)
		return;
	if (r->wprev)
		r->wprev->wnext = r->wnext;
	else
		r->net->waiting = r->wnext;
	if (r->wnext)
		r->wnext->wprev = r->wprev;
	r->wprev = r->wnext = NULL;
}

void rest_request_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			    enum MHD_RequestTerminationCode toe)
{
	struct rest_req *r = *req_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (!r)
		return;
	if (r->started)
		rest_metrics_request_done(r);
	/* A request only ends while suspended at shutdown; its command's
	 * answer must not find it afterwards. */
	command_client_cancel(&r->client);
	waiting_unlink(r);
	rest_stream_completed(r);
	if (r->ext_free)
		r->ext_free(r->ext);
	json_decref(r->reply);
	free(r->body);
	free(r);
	*req_cls = NULL;
}

/* ---- answers ---- */

void rest_add_header(struct rest_req *r, const char *name, const char *value)
{
	if (r->nhdr < 2) {
		r->hname[r->nhdr] = name;
		r->hval[r->nhdr] = value;
		r->nhdr++;
	}
}

enum MHD_Result rest_reply_typed(struct rest_req *r, unsigned int code,
				 char *text, size_t len, const char *type)
{
	struct MHD_Response *resp;

	resp =
	    MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	if (type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					type);
	return rest_queue_response(r, code, resp, 0);
}

enum MHD_Result rest_reply_text(struct rest_req *r, unsigned int code,
				char *text, size_t len)
{
	return rest_reply_typed(r, code, text, len,
				text ? "application/json" : NULL);
}

enum MHD_Result rest_queue_response(struct rest_req *r, unsigned int code,
				    struct MHD_Response *resp, int json)
{
	enum MHD_Result ret;

	if (json)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					"application/json");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
				"no-store");
	for (unsigned int i = 0; i < r->nhdr; i++)
		MHD_add_response_header(resp, r->hname[i], r->hval[i]);
	rest_cors_headers(r->net, r->conn, resp);
	ret = MHD_queue_response(r->conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

enum MHD_Result rest_reply(struct rest_req *r, unsigned int code, json_t *body)
{
	char *text = NULL;

	if (body) {
		text = json_dumps(body, API_JSON_DUMP_FLAGS);
		json_decref(body);
		if (!text)
			return MHD_NO;
	}
	return rest_reply_text(r, code, text, text ? strlen(text) : 0);
}

enum MHD_Result rest_error(struct rest_req *r, unsigned int code,
			   const char *err_code, json_t *details,
			   const char *fmt, ...)
{
	char message[256];
	json_t *body;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	/* An error answer is never empty, even when the message (or the
	 * details) could not be a JSON string. */
	body = api_error_json(err_code, message, details);
	if (!body)
		body =
		    api_error_json(err_code, "the request was refused", NULL);
	return rest_reply(r, code, body);
}

enum MHD_Result rest_api_error(struct rest_req *r, struct api_error *e)
{
	unsigned int code = e->status ? (unsigned int)e->status : 500;

	return rest_reply(r, code, api_error_to_json(e));
}

void rest_finish(struct rest_req *r, unsigned int code, json_t *body)
{
	struct net_api *net = r->net;

	json_decref(r->reply);
	r->code = code;
	r->reply = body;
	r->finished = 1;
	if (!r->suspended)
		return;
	waiting_unlink(r);
	r->suspended = 0;
	MHD_resume_connection(r->conn);
	http_front_kick_soon(net->front);
}

void rest_finish_error(struct rest_req *r, struct api_error *e)
{
	rest_finish(r, e->status ? (unsigned int)e->status : 500,
		    api_error_to_json(e));
}

enum MHD_Result rest_suspend(struct rest_req *r)
{
	struct net_api *net = r->net;

	MHD_suspend_connection(r->conn);
	r->suspended = 1;
	r->wprev = NULL;
	r->wnext = net->waiting;
	if (net->waiting)
		net->waiting->wprev = r;
	net->waiting = r;
	return MHD_YES;
}

void rest_cancel_waiting(struct net_api *net)
{
	struct api_error e = {0};

	rest_status_cancel(net);
	while (net->waiting) {
		struct rest_req *r = net->waiting;

		command_client_cancel(&r->client);
		api_error_set(&e, 503, "unavailable", NULL,
			      "the daemon is shutting down");
		rest_finish_error(r, &e);
	}
}

/* ---- bodies ---- */

/*
 * MHD 0.9.75 takes no answer while a body is being read, so an oversized
 * chunked body is read to its end and then answered 413 (openapi.yaml).
 * Past REST_BODY_MAX nothing is kept: memory stays bounded, and the
 * client pays for every byte it makes the daemon skip.  Closing at some
 * larger size instead would trade the documented answer for nothing an
 * attacker could not get with a new connection.
 */
static int collect(struct rest_req *r, const char *data, size_t len)
{
	if (r->too_large || r->body_len + len > REST_BODY_MAX) {
		r->too_large = 1;
		return 0;
	}
	if (r->body_len + len + 1 > r->body_cap) {
		size_t cap = r->body_cap ? r->body_cap : 1024;
		char *b;

		while (cap < r->body_len + len + 1)
			cap *= 2;
		b = realloc(r->body, cap);
		if (!b)
			return -1;
		r->body = b;
		r->body_cap = cap;
	}
	memcpy(r->body + r->body_len, data, len);
	r->body_len += len;
	r->body[r->body_len] = '\0';
	return 0;
}

int rest_body_json(struct rest_req *r, json_t **out, struct api_error *e)
{
	json_error_t jerr;
	json_t *v;

	*out = NULL;
	if (!r->body_len)
		return 0;
	v = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &jerr);
	if (!v) {
		api_error_set(e, 400, "bad_json",
			      json_pack("{s:i, s:i}", "line", jerr.line,
					"column", jerr.column),
			      "the body is not valid JSON: %s", jerr.text);
		return -1;
	}
	if (json_depth(v) > API_JSON_MAX_DEPTH) {
		json_decref(v);
		api_error_set(
		    e, 400, "bad_json",
		    json_pack("{s:i}", "max_depth", API_JSON_MAX_DEPTH),
		    "the body nests deeper than %d levels", API_JSON_MAX_DEPTH);
		return -1;
	}
	*out = v;
	return 0;
}

/* ---- who is asking ---- */

static const char *bearer_of(struct rest_req *r)
{
	const char *h = MHD_lookup_connection_value(
	    r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);

	if (h && !strncasecmp(h, "Bearer ", 7)) {
		for (h += 7; *h == ' '; h++)
			;
		return h;
	}
	/* EventSource and media players cannot set headers. */
	if (r->route == ROUTE_EVENTS || r->route == ROUTE_STREAM)
		return MHD_lookup_connection_value(
		    r->conn, MHD_GET_ARGUMENT_KIND, "access_token");
	return NULL;
}

static const struct sockaddr *peer_of(struct rest_req *r)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
	    r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	client_addr_resolve(&r->net->cfg.trusted_proxies,
			    ci ? ci->client_addr : NULL,
			    MHD_lookup_connection_value(
				r->conn, MHD_HEADER_KIND, "X-Forwarded-For"),
			    &r->client_addr);
	return (const struct sockaddr *)&r->client_addr;
}

/* 0 when r may go on with role needed; else the answer is queued into
 * *ret. */
static int authorize(struct rest_req *r, enum role needed, enum MHD_Result *ret)
{
	const struct api_config *cfg = &r->net->cfg;
	json_t *details = NULL;

	if (needed == ROLE_NONE && cfg->ntokens) {
		/* Static files: a browser cannot send a bearer token for a
		 * page load; the API calls of the page carry it. */
		r->who = (struct auth_result){.ok = 1};
		return 0;
	}
	if (r->route == ROUTE_METRICS &&
	    rest_metrics_token_ok(r->net, bearer_of(r))) {
		r->who = (struct auth_result){.ok = 1, .role = ROLE_VIEWER};
		return 0;
	}
	auth_check(r->net->d, bearer_of(r), peer_of(r),
		   needed == ROLE_NONE ? ROLE_VIEWER : needed, &r->who);
	if (r->who.ok)
		return 0;
	if (r->who.http_status == 401)
		rest_add_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
				"Bearer realm=\"tunerd\"");
	else if (cfg->ntokens)
		details =
		    json_pack("{s:s, s:s}", "required_role", role_name(needed),
			      "role", role_name(r->who.role));
	*ret = rest_reply(r, (unsigned int)r->who.http_status,
			  api_error_json(r->who.code, r->who.message, details));
	return -1;
}

static int is_json_type(const char *ct)
{
	size_t n = strlen("application/json");

	if (!ct)
		return 0;
	while (*ct == ' ')
		ct++;
	return !strncasecmp(ct, "application/json", n) &&
	       (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

static enum MHD_Result route_call(struct rest_req *r, const char *url)
{
	switch (r->route) {
	case ROUTE_BOX:
		return rest_get_box(r);
	case ROUTE_TUNERS:
		return rest_get_tuners(r);
	case ROUTE_TUNER:
		return rest_get_tuner(r);
	case ROUTE_PLUGINS:
		return rest_get_plugins(r);
	case ROUTE_TUNE:
	case ROUTE_STATUS:
	case ROUTE_SLEEP:
	case ROUTE_INIT:
		return rest_tuner_command(r);
	case ROUTE_LEASE:
		return rest_lease(r);
	case ROUTE_EVENTS:
		if (!strcmp(r->method, "HEAD"))
			return sse_head(r->conn);
		r->sse = 1;
		return sse_handle(r->net->d, r->conn, &r->who);
	case ROUTE_STREAM:
		return rest_stream_get(r);
	case ROUTE_SCAN:
		return rest_scan(r);
	case ROUTE_CHANNELS:
		return rest_channels(r);
	case ROUTE_STATIC:
		return rest_static(r, url);
	case ROUTE_HISTORY:
		return rest_history_get(r);
	case ROUTE_METRICS:
		return rest_metrics_get(r);
	case ROUTE_NONE:
	case ROUTE_HDHR:
	case REST_ROUTES:
		break;
	}
	return rest_error(r, 404, "not_found", NULL, "no such path");
}

static enum MHD_Result dispatch(struct rest_req *r, const char *url,
				const char *method)
{
	const struct rest_route_info *ri;
	enum MHD_Result ret;
	const char *bad;

	if (r->net->stopping) {
		rest_add_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
		return rest_error(r, 503, "unavailable", NULL,
				  "the daemon is shutting down");
	}
	if (hdhr_http_route(r, url, method, &ret)) {
		r->route = ROUTE_HDHR;
		return ret;
	}
	r->route = rest_route_of(url, &r->tuner);
	ri = rest_route_info(r->route);
	if (!ri) {
		char text[192];

		rest_path_text(url, text, sizeof(text));
		return rest_error(r, 404, "not_found",
				  json_pack("{s:s}", "path", text),
				  "no such path: %s", text);
	}
	if (!strcmp(method, "OPTIONS"))
		return rest_options(r, ri->allow);
	if (rest_origin_refused(r, &ret))
		return ret;
	if (!rest_method_allowed(ri, method)) {
		rest_add_header(r, MHD_HTTP_HEADER_ALLOW, ri->allow);
		return rest_error(r, 405, "method_not_allowed",
				  json_pack("{s:s}", "allow", ri->allow),
				  "%s is not allowed here (allowed: %s)",
				  method, ri->allow);
	}
	if (authorize(r, ri->role, &ret))
		return ret;
	bad = rest_bad_query_param(r);
	if (bad)
		return rest_error(r, 400, "bad_request",
				  json_pack("{s:s}", "field", bad),
				  "unknown query parameter \"%s\"", bad);
	if (r->body_len && strcmp(method, "GET") && strcmp(method, "HEAD") &&
	    !rest_channels_text_body(r) &&
	    !is_json_type(MHD_lookup_connection_value(
		r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE)))
		return rest_error(r, 415, "unsupported_media_type", NULL,
				  "a request body must be application/json");
	return route_call(r, url);
}

static enum MHD_Result first_call(struct rest_req *r, const char *method,
				  const char *version)
{
	const char *cl = MHD_lookup_connection_value(
	    r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	r->started = 1;
	r->method = method;
	if (r->uri_len > REST_URI_MAX)
		return rest_error(r, 414, "uri_too_long",
				  json_pack("{s:i}", "max", REST_URI_MAX),
				  "the request URI is longer than %d bytes",
				  REST_URI_MAX);
	if (cl && strtoull(cl, NULL, 10) > REST_BODY_MAX)
		return rest_error(r, 413, "body_too_large",
				  json_pack("{s:i}", "max", REST_BODY_MAX),
				  "the body is larger than %d bytes",
				  REST_BODY_MAX);
	if (r->upgradable && !r->net->stopping && !strcmp(method, "GET") &&
	    rest_wants_websocket(r->conn))
		return rest_upgrade(r, version);
	return MHD_YES;
}

enum MHD_Result rest_access_handler(void *cls, struct MHD_Connection *c,
				    const char *url, const char *method,
				    const char *version,
				    const char *upload_data,
				    size_t *upload_data_size, void **req_cls)
{
	struct rest_req *r = *req_cls;

	(void)cls;
	if (!r)
		return MHD_NO; /* out of memory at the head */
	r->conn = c;
	if (!r->started)
		return first_call(r, method, version);
	if (*upload_data_size) {
		if (collect(r, upload_data, *upload_data_size) < 0)
			return MHD_NO;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (r->stream)
		return MHD_NO; /* a direct stream ended: close */
	if (r->finished && r->resumed) {
		enum MHD_Result (*fn)(struct rest_req *) = r->resumed;

		r->resumed = NULL;
		r->finished = 0;
		return fn(r);
	}
	if (r->finished)
		return rest_reply(r, r->code, json_incref(r->reply));
	if (r->sse)
		return sse_handle(r->net->d, c, &r->who);
	if (r->too_large)
		return rest_error(r, 413, "body_too_large",
				  json_pack("{s:i}", "max", REST_BODY_MAX),
				  "the body is larger than %d bytes",
				  REST_BODY_MAX);
	return dispatch(r, url, method);
}

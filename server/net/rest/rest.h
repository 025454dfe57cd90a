/* SPDX-License-Identifier: MIT */
/*
 * rest.h - private to the network layer: the REST API v1 on
 * libmicrohttpd (routing, bodies, answers) and its endpoint handlers.
 * Loop thread only.
 */
#ifndef TUNERD_REST_H
#define TUNERD_REST_H

#include <jansson.h>
#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "auth.h"
#include "command.h"
#include "json_api.h"
#include "tuner.h"

struct net_api;

/* Bodies kept up to this; an oversized chunked body (no Content-Length
 * to refuse it by) is read to its end and discarded, for its 413. */
#define REST_BODY_MAX (64 * 1024)
#define REST_URI_MAX  2048
/* The event stream, the one path a WebSocket upgrade may ask for. */
#define REST_EVENTS_PATH "/api/v1/events"

enum rest_route {
	ROUTE_NONE = 0,
	ROUTE_BOX,
	ROUTE_TUNERS,
	ROUTE_TUNER,
	ROUTE_TUNE,
	ROUTE_STATUS,
	ROUTE_SLEEP,
	ROUTE_INIT,
	ROUTE_LEASE,
	ROUTE_PLUGINS,
	ROUTE_EVENTS,
	ROUTE_STREAM,
	ROUTE_SCAN,
	ROUTE_CHANNELS,
	ROUTE_STATIC,
	ROUTE_HISTORY,
	ROUTE_METRICS,
	ROUTE_HDHR, /* a path the HDHomeRun face answered (hdhr_http.c) */
	REST_ROUTES /* keep last: the number of routes */
};

/* One HTTP request, from its head until MHD is done with it. */
struct rest_req {
	struct net_api *net;
	struct MHD_Connection *conn;
	size_t uri_len;
	int upgradable; /* the event stream's path: may ask for WebSocket */
	int started;    /* the head was seen */
	int sse;        /* handed to sse_handle() */
	char *body;
	size_t body_len, body_cap;
	int too_large;

	enum rest_route route;
	uint32_t tuner;
	struct auth_result who;
	const char *method;
	/* The client: the socket's peer, or the address a trusted proxy
	 * forwarded (client_addr.h); set by the auth check. */
	struct sockaddr_storage client_addr;
	uint64_t t0_ns; /* the head's arrival (rest_metrics.c) */

	/* A command waiting for the command service (the connection is
	 * suspended until its answer). */
	struct command_client client;
	int suspended, finished;

	/* The answer, queued on the next call of the access handler. */
	const char *hname[2], *hval[2]; /* static strings */
	unsigned int nhdr;
	unsigned int code;
	json_t *reply;
	struct rest_req *wprev, *wnext; /* net->waiting */
	/* A stream written directly (rest_stream_direct.c): the connection
	 * stays suspended until it ends, then MHD closes it. */
	struct rest_stream *stream;
	/* Another face's request (the HDHomeRun face): resumed() replaces
	 * the kept answer when the suspended request resumes, and ext is
	 * freed with the request, after its stream. */
	enum MHD_Result (*resumed)(struct rest_req *r);
	void *ext;
	void (*ext_free)(void *ext);
};

/* libmicrohttpd callbacks (http_front.c registers them; cls is the
 * struct net_api). */
enum MHD_Result rest_access_handler(void *cls, struct MHD_Connection *c,
				    const char *url, const char *method,
				    const char *version,
				    const char *upload_data,
				    size_t *upload_data_size, void **req_cls);
void *rest_uri_log(void *cls, const char *uri, struct MHD_Connection *c);
void rest_request_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			    enum MHD_RequestTerminationCode toe);
/* Does the request on c ask for "Upgrade: websocket"? (rest_upgrade.c) */
int rest_wants_websocket(struct MHD_Connection *c);
/* Answer r's upgrade (its path is the event stream's): MHD's 101, whose
 * socket the WebSocket server then serves, or the API's error. */
enum MHD_Result rest_upgrade(struct rest_req *r, const char *version);
/* Shutdown: cancel the command of every suspended request and resume it
 * with a 503. */
void rest_cancel_waiting(struct net_api *net);

/* ---- routing (rest_route.c) ---- */
struct rest_route_info {
	enum rest_route route;
	const char *allow; /* methods, for 405 */
	enum role role;    /* needed for the allowed methods */
};

/* The route's methods and role, or NULL for ROUTE_NONE. */
const struct rest_route_info *rest_route_info(enum rest_route rt);
/* The route of a path (tuner: the id in it, when it has one). */
enum rest_route rest_route_of(const char *url, uint32_t *tuner);
/* 1 when method (HEAD as GET) is one of the route's. */
int rest_method_allowed(const struct rest_route_info *ri, const char *method);
/* The first query parameter r's route does not take, or NULL. */
const char *rest_bad_query_param(struct rest_req *r);

/* ---- browsers (rest_cors.c) ---- */
/* Access-Control-Allow-Origin and Vary on resp for the request on c. */
void rest_cors_headers(const struct net_api *net, struct MHD_Connection *c,
		       struct MHD_Response *resp);
/* 0 when r's Origin (if any) may use the API; else 1 with a 403 queued
 * into *ret. */
int rest_origin_refused(struct rest_req *r, enum MHD_Result *ret);
/* OPTIONS on a route whose methods are allow: a CORS preflight from a
 * listed origin, or the Allow list. */
enum MHD_Result rest_options(struct rest_req *r, const char *allow);

/* ---- the history (rest_history.c) ---- */
/* Open the history in the state directory and have it sampled; 0 (also
 * without one: the daemon runs without history) or -errno. */
int rest_history_start(struct net_api *net);
/* Before the event streams stop (the sampler goes with them). */
void rest_history_stop(struct net_api *net);
enum MHD_Result rest_history_get(struct rest_req *r);

/* ---- answers (rest.c) ---- */
enum MHD_Result rest_reply(struct rest_req *r, unsigned int code, json_t *body);
/* An answer whose body is already JSON text (malloc'd, taken in every
 * case; NULL: no body). */
enum MHD_Result rest_reply_text(struct rest_req *r, unsigned int code,
				char *text, size_t len);
/* The same for a body of another type (Content-Type type; NULL: none). */
enum MHD_Result rest_reply_typed(struct rest_req *r, unsigned int code,
				 char *text, size_t len, const char *type);
/* Queue resp (its body JSON if json) with the headers every answer has;
 * resp is released. */
enum MHD_Result rest_queue_response(struct rest_req *r, unsigned int code,
				    struct MHD_Response *resp, int json);
enum MHD_Result rest_error(struct rest_req *r, unsigned int code,
			   const char *err_code, json_t *details,
			   const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
enum MHD_Result rest_api_error(struct rest_req *r, struct api_error *e);
/* The request body as JSON: NULL (no body, *err untouched) or a value.
 * Returns -1 with a 400 bad_json in e. */
int rest_body_json(struct rest_req *r, json_t **out, struct api_error *e);
/* An extra header for the answer being built (WWW-Authenticate, Allow);
 * both strings must be static. */
void rest_add_header(struct rest_req *r, const char *name, const char *value);
/* The answer of a suspended request: kept, and sent by MHD once the
 * request resumes (takes body). */
void rest_finish(struct rest_req *r, unsigned int code, json_t *body);
void rest_finish_error(struct rest_req *r, struct api_error *e);
/* Suspend r until rest_finish(), which always comes later: the command
 * service never answers from inside its submit. */
enum MHD_Result rest_suspend(struct rest_req *r);

/* ---- /metrics (rest_metrics.c) ---- */
enum MHD_Result rest_metrics_get(struct rest_req *r);
/* Count r's answer, as MHD is done with it (a WebSocket's 101 when its
 * stream ended). */
void rest_metrics_request_done(struct rest_req *r);
/* 1 when bearer is the configuration's scrape token. */
int rest_metrics_token_ok(const struct net_api *net, const char *bearer);

/* ---- endpoints ---- */
enum MHD_Result rest_get_box(struct rest_req *r);
enum MHD_Result rest_get_tuners(struct rest_req *r);
enum MHD_Result rest_get_tuner(struct rest_req *r);
enum MHD_Result rest_get_plugins(struct rest_req *r);
enum MHD_Result rest_tuner_command(struct rest_req *r);
enum MHD_Result rest_lease(struct rest_req *r);
enum MHD_Result rest_static(struct rest_req *r, const char *url);
/* GET/HEAD .../stream (rest_stream.c); a direct stream's end when MHD is
 * done with its request. */
enum MHD_Result rest_stream_get(struct rest_req *r);
/* .../scan and /api/v1/channels (rest_channels.c). */
enum MHD_Result rest_scan(struct rest_req *r);
enum MHD_Result rest_channels(struct rest_req *r);
/* 1 when r's body is a dvbv5 file (PUT /channels?format=dvbv5): it
 * need not be JSON. */
int rest_channels_text_body(struct rest_req *r);
void rest_stream_completed(struct rest_req *r);
/* Serve tuner's stream with filter f on r, read by "by" (events), as
 * GET .../stream does once its checks passed. */
struct stream_filter_spec;
enum MHD_Result rest_stream_serve(struct rest_req *r, uint32_t tuner,
				  const struct stream_filter_spec *f,
				  const char *by);
/* End r's stream now (its time is up): a direct stream closes, an MHD
 * one has its socket shut. */
void rest_stream_stop(struct rest_req *r);
/* url (percent-decoded by MHD: any bytes) as printable ASCII for an
 * error's message and details, other bytes as %XX; cut to fit buf. */
const char *rest_path_text(const char *url, char *buf, size_t len);

/* The Tuner JSON text of s (rest_cache.c): owned by the cache, valid
 * until the next call for the same tuner; NULL when out of memory. */
const char *rest_tuner_text(struct net_api *net, const struct tuner_snapshot *s,
			    size_t *len);
void rest_cache_free(struct net_api *net);
/* GET /api/v1/tuners: the whole list's text, made again only when a
 * tuner's text or the set of tuners changed (checked only when the
 * tuners', leases' or streams' version moved); every response sends the
 * one shared copy (reference-counted, no per-request copy). */
enum MHD_Result rest_reply_tuners(struct rest_req *r);

/* GET .../status: from the recent status (?max_age_ms) or through the
 * command service (rest_status.c); free the status texts at shutdown. */
enum MHD_Result rest_status_get(struct rest_req *r);
void rest_status_cancel(struct net_api *net);

/* The lease id a request carries beside its body (X-Tunerd-Lease or
 * ?lease_id=); NULL if none. */
const char *rest_lease_id(struct rest_req *r);

#endif /* TUNERD_REST_H */

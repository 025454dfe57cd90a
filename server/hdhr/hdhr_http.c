// SPDX-License-Identifier: MIT
/*
 * The HDHomeRun face's HTTP side: routing, who may ask, and the device
 * and lineup documents (hdhr_http.h).  The streams are
 * hdhr_http_stream.c's.
 *
 * Why the REST layer's libmicrohttpd serves it: the face needs exactly
 * what REST streams already have (suspend while a tune runs, the direct
 * stream delivery, the connection caps), and port 5004 is a second
 * listener of the same front, so a connection there is counted, capped,
 * peeked at and stopped like any other.  A second MHD daemon would have
 * needed its own caps, stop and stream delivery for no gain.
 *
 * The URLs it hands out use the host the client asked for (its Host
 * header, checked to be a plain host name or address), so a client
 * behind NAT or using a name gets URLs it can reach.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "channel_list.h"
#include "daemon.h"
#include "hdhr.h"
#include "hdhr_device.h"
#include "hdhr_http.h"
#include "http_front.h"
#include "log.h"
#include "net_api.h"
#include "rest.h"
#include "scan_job.h"

#define HDHR_HOST_MAX 256

struct hdhr_http {
	uint32_t device_id;  /* 0: not read yet (a valid id is never 0) */
	uint32_t scan_tuner; /* the lineup scan's tuner, 0: none yet */
};

int hdhr_http_start(struct net_api *net)
{
	const struct hdhr_config *h = &net->cfg.hdhomerun;
	char spec[300];
	const char *colon;

	net->hdhr_http = calloc(1, sizeof(*net->hdhr_http));
	if (!net->hdhr_http)
		return -ENOMEM;
	if (!h->enabled || !h->http_port)
		return 0;
	/* The main listener's address with the face's port. */
	colon = strrchr(net->listen, ':');
	snprintf(spec, sizeof(spec), "%.*s:%d",
		 colon ? (int)(colon - net->listen) : 0, net->listen,
		 h->http_port);
	return http_front_listen_extra(net->front, spec);
}

void hdhr_http_free(struct net_api *net)
{
	free(net->hdhr_http);
	net->hdhr_http = NULL;
}

/* ---- where the client came in ---- */

static int conn_local(struct rest_req *r, struct sockaddr_storage *ss)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	socklen_t len = sizeof(*ss);

	return ci && !getsockname(ci->connect_fd, (struct sockaddr *)ss, &len)
		   ? 0
		   : -1;
}

static int local_port(struct rest_req *r)
{
	struct sockaddr_storage ss;

	if (conn_local(r, &ss))
		return -1;
	return ss.ss_family == AF_INET6
		   ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
		   : ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* The Host header's host part when it is a plain name or address. */
static int host_from_header(struct rest_req *r, char *buf, size_t len)
{
	const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_HOST);
	size_t n;

	if (!h || !*h || strlen(h) >= len)
		return -1;
	if (strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789.-:[]") != strlen(h))
		return -1;
	if (h[0] == '[') {
		const char *end = strchr(h, ']');

		if (!end)
			return -1;
		n = (size_t)(end - h) + 1;
	} else {
		const char *c = strchr(h, ':');

		n = c ? (size_t)(c - h) : strlen(h);
		if (c && strchr(c + 1, ':'))
			return -1;
	}
	memcpy(buf, h, n);
	buf[n] = '\0';
	return n ? 0 : -1;
}

/* The host for URLs: the client's Host, else the address it reached. */
static void url_host(struct rest_req *r, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	char ip[INET6_ADDRSTRLEN];

	if (!host_from_header(r, buf, len))
		return;
	snprintf(buf, len, "127.0.0.1");
	if (conn_local(r, &ss))
		return;
	if (ss.ss_family == AF_INET &&
	    inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip,
		      sizeof(ip)))
		snprintf(buf, len, "%s", ip);
	else if (ss.ss_family == AF_INET6 &&
		 inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr,
			   ip, sizeof(ip)))
		snprintf(buf, len, "[%s]", ip);
}

/* "http://host:port" the client used; streams: the face's own port when
 * it has one, as real devices serve streams on 5004. */
static void base_url(struct rest_req *r, int streams, char *buf, size_t len)
{
	char host[HDHR_HOST_MAX];
	int port = streams ? http_front_extra_port(r->net->front) : 0;

	url_host(r, host, sizeof(host));
	snprintf(buf, len, "http://%s:%d", host, port ? port : local_port(r));
}

/* ---- documents ---- */

static enum MHD_Result discover_json(struct rest_req *r)
{
	char id[16], base[HDHR_HOST_MAX + 32], lineup[HDHR_HOST_MAX + 48];
	char name[160], auth[32];
	struct hdhr_http *hh = r->net->hdhr_http;

	/* Read (or made and kept) at the first use, so that a box that
	 * never enables the face has no HDHomeRun identity in its state. */
	if (!hh->device_id) {
		int ret = hdhr_device_id_load(r->net->d->state, &hh->device_id);

		if (ret)
			log_warn("hdhomerun: the device id is not kept: %s",
				 strerror(-ret));
	}
	hdhr_device_id_text(hh->device_id, id, sizeof(id));
	base_url(r, 0, base, sizeof(base));
	snprintf(lineup, sizeof(lineup), "%s/lineup.json", base);
	snprintf(name, sizeof(name), "tunerd %s", r->net->d->name);
	snprintf(auth, sizeof(auth), "tunerd%s", id);
	return rest_reply(
	    r, 200,
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:i}",
		      "FriendlyName", name, "ModelNumber", HDHR_HWMODEL,
		      "FirmwareName", HDHR_MODEL, "FirmwareVersion",
		      HDHR_FIRMWARE_VERSION, "DeviceID", id, "DeviceAuth", auth,
		      "BaseURL", base, "LineupURL", lineup, "TunerCount",
		      (int)hdhr_tuner_count(r->net->d)));
}

static json_t *lineup_entry(json_t *ch, const char *base)
{
	char guide[HDHR_GUIDE_MAX], url[HDHR_HOST_MAX + 64];
	const char *type = json_string_value(json_object_get(ch, "type"));
	json_t *e;

	hdhr_guide_number(ch, guide, sizeof(guide));
	if (!guide[0])
		return NULL;
	snprintf(url, sizeof(url), "%s/auto/v%s", base, guide);
	e = json_pack("{s:s, s:O, s:s}", "GuideNumber", guide, "GuideName",
		      json_object_get(ch, "name"), "URL", url);
	if (e && type && !strcmp(type, "hd"))
		json_object_set_new(e, "HD", json_integer(1));
	return e;
}

static enum MHD_Result lineup_json(struct rest_req *r)
{
	json_t *all =
	    r->net->channels ? channel_list_entries(r->net->channels) : NULL;
	char base[HDHR_HOST_MAX + 32];
	json_t *out = json_array(), *ch;
	size_t i;

	base_url(r, 1, base, sizeof(base));
	json_array_foreach(all, i, ch)
	{
		json_t *e = lineup_entry(ch, base);

		if (e)
			json_array_append_new(out, e);
	}
	return rest_reply(r, 200, out);
}

/* The lineup scan's job, or NULL (new reference). */
static json_t *scan_job(struct rest_req *r)
{
	struct command_result res = {0};
	json_t *job;

	if (!r->net->hdhr_http->scan_tuner || !r->net->scans)
		return NULL;
	scan_get(r->net->scans, r->net->hdhr_http->scan_tuner, &res);
	if (res.status != 200) {
		json_decref(res.body);
		return NULL;
	}
	job = json_incref(json_object_get(res.body, "scan"));
	json_decref(res.body);
	return job;
}

static json_t *lineup_status(struct rest_req *r)
{
	json_t *job = scan_job(r);
	json_int_t total, done;
	json_t *st;

	if (job &&
	    !strcmp(json_string_value(json_object_get(job, "state")) ?: "",
		    "running")) {
		total = json_integer_value(json_object_get(job, "total"));
		done = json_integer_value(json_object_get(job, "done"));
		st = json_pack(
		    "{s:i, s:I, s:I}", "ScanInProgress", 1, "Progress",
		    total > 0 ? done * 100 / total : (json_int_t)0, "Found",
		    json_integer_value(json_object_get(job, "found")));
	} else {
		st = json_pack("{s:i, s:i, s:s, s:[s]}", "ScanInProgress", 0,
			       "ScanPossible", 1, "Source", "Antenna",
			       "SourceList", "Antenna");
	}
	json_decref(job);
	return st;
}

/* The HDHomeRun clients' answer when no tuner is free: their 503 and
 * error header, plain text as the devices send it. */
enum MHD_Result hdhr_http_busy(struct rest_req *r, int one_tuner)
{
	const char *text =
	    one_tuner ? "804 Tuner In Use" : "805 All Tuners In Use";
	struct MHD_Response *resp = MHD_create_response_from_buffer(
	    strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain");
	MHD_add_response_header(resp, "X-HDHomeRun-Error", text);
	return rest_queue_response(r, 503, resp, 0);
}

static json_t *scan_body(struct rest_req *r)
{
	json_t *cfg = r->net->cfg.hdhomerun.scan;

	return cfg ? json_incref(cfg)
		   : json_pack("{s:s, s:s}", "band", "uhf", "region", "eu");
}

static enum MHD_Result lineup_post(struct rest_req *r)
{
	const char *scan =
	    MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "scan");
	struct scan_caller who = {.role = r->who.role};
	struct hdhr_http *hh = r->net->hdhr_http;
	struct command_result res = {0};
	uint32_t tuner;
	json_t *body;

	if (!scan || (strcmp(scan, "start") && strcmp(scan, "abort")))
		return rest_error(r, 400, "bad_request",
				  json_pack("{s:s}", "field", "scan"),
				  "scan: start or abort");
	if (!r->net->scans)
		return rest_error(r, 503, "unavailable", NULL, "no scans here");
	if (!strcmp(scan, "abort")) {
		if (hh->scan_tuner)
			scan_cancel(r->net->scans, hh->scan_tuner, &who, &res);
		json_decref(res.body);
		return rest_reply(r, 200, lineup_status(r));
	}
	tuner = hdhr_tuner_pick(r->net, NULL);
	if (!tuner)
		return hdhr_http_busy(r, 0);
	body = scan_body(r);
	scan_start(r->net->scans, tuner, body, &who, &res);
	json_decref(body);
	if (res.status != 202)
		return rest_reply(r, res.status, res.body);
	json_decref(res.body);
	hh->scan_tuner = tuner;
	return rest_reply(r, 200, lineup_status(r));
}

/* ---- routing ---- */

enum hdhr_path {
	HP_NONE,
	HP_DISCOVER,
	HP_LINEUP,
	HP_STATUS,
	HP_POST,
	HP_STREAM
};

static enum hdhr_path path_of(const char *url, uint32_t *tuner,
			      const char **what)
{
	char *end;
	unsigned long n;

	if (!strcmp(url, "/discover.json"))
		return HP_DISCOVER;
	if (!strcmp(url, "/lineup.json"))
		return HP_LINEUP;
	if (!strcmp(url, "/lineup_status.json"))
		return HP_STATUS;
	if (!strcmp(url, "/lineup.post"))
		return HP_POST;
	if (!strncmp(url, "/auto/", 6)) {
		*tuner = 0;
		*what = url + 6;
		return HP_STREAM;
	}
	/* /tuner<N>/: HDHomeRun numbers tuners from 0, tunerd from 1. */
	if (strncmp(url, "/tuner", 6) || url[6] < '0' || url[6] > '9')
		return HP_NONE;
	n = strtoul(url + 6, &end, 10);
	if (*end != '/' || n >= UINT32_MAX || end - (url + 6) > 9)
		return HP_NONE;
	*tuner = (uint32_t)n + 1;
	*what = end + 1;
	return HP_STREAM;
}

/* The face's own port: only its paths are there. */
static int on_face_port(struct rest_req *r)
{
	int port = http_front_extra_port(r->net->front);

	return port && local_port(r) == port;
}

static const struct sockaddr *peer_of(struct rest_req *r)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
	    r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	return ci ? ci->client_addr : NULL;
}

static enum MHD_Result not_found(struct rest_req *r, const char *url)
{
	char text[192];

	rest_path_text(url, text, sizeof(text));
	return rest_error(r, 404, "not_found", json_pack("{s:s}", "path", text),
			  "no such path: %s", text);
}

static enum MHD_Result serve(struct rest_req *r, enum hdhr_path p,
			     uint32_t tuner, const char *what)
{
	const char *allow = p == HP_POST ? "POST" : "GET, HEAD";
	int get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");

	if (p == HP_POST ? strcmp(r->method, "POST") != 0 : !get) {
		rest_add_header(r, MHD_HTTP_HEADER_ALLOW, allow);
		return rest_error(r, 405, "method_not_allowed",
				  json_pack("{s:s}", "allow", allow),
				  "%s is not allowed here (allowed: %s)",
				  r->method, allow);
	}
	switch (p) {
	case HP_DISCOVER:
		return discover_json(r);
	case HP_LINEUP:
		return lineup_json(r);
	case HP_STATUS:
		return rest_reply(r, 200, lineup_status(r));
	case HP_POST:
		return lineup_post(r);
	default:
		return hdhr_http_stream(r, tuner, what);
	}
}

int hdhr_http_route(struct rest_req *r, const char *url, const char *method,
		    enum MHD_Result *ret)
{
	const struct hdhr_config *h = &r->net->cfg.hdhomerun;
	const char *what = NULL;
	uint32_t tuner = 0;
	enum hdhr_path p = path_of(url, &tuner, &what);
	int face_port = on_face_port(r);

	if (p == HP_NONE || !h->enabled || !r->net->hdhr_http) {
		if (!face_port)
			return 0;
		*ret = not_found(r, url);
		return 1;
	}
	r->method = method;
	if (!addr_list_match(&h->allow, peer_of(r))) {
		*ret = rest_error(r, 403, "forbidden", NULL,
				  "the HDHomeRun face does not serve this "
				  "address (hdhomerun.allow)");
		return 1;
	}
	/* No tokens here: the configured role, never above operator. */
	r->who = (struct auth_result){
	    .ok = 1, .role = h->role < ROLE_OPERATOR ? h->role : ROLE_OPERATOR};
	*ret = serve(r, p, tuner, what);
	return 1;
}

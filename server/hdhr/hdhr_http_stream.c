// SPDX-License-Identifier: MIT
/*
 * The HDHomeRun face's streams: GET /auto/v<GuideNumber>,
 * /tuner<N>/v<GuideNumber> and /auto/ch<Hz>, with ?duration=<s>.
 *
 * A stream takes a free tuner (hdhr_http_tuners.c) with a lease held as
 * "hdhomerun:<IP>", tunes it through the command service carrying that
 * lease (so the tune is checked and reported like any other, with origin
 * "hdhomerun"), and then serves the tuner's stream exactly as
 * GET .../stream does (a channel: its service, as ?service= filters it;
 * a frequency: the whole multiplex).  The lease is renewed while the
 * stream runs and released when it ends, so a client that vanishes
 * frees the tuner at once, and a daemon that dies leaves a lease that
 * expires within HDHR_LEASE_TTL_S.  A lease that could not be renewed
 * (pre-empted by a higher priority, or expired) ends the stream.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "hdhr_http.h"
#include "json_api.h"
#include "loop.h"
#include "net_api.h"
#include "rest.h"
#include "stream.h"

struct hdhr_session {
	struct net_api *net;
	struct rest_req *r;
	uint32_t tuner;
	struct tstub_params params;
	struct stream_filter_spec filter;
	struct lease lease;
	int leased;
	json_t *lease_id;
	unsigned int duration_s; /* 0: until the client leaves */
	uint64_t renew_timer, end_timer;
	char holder[HDHR_HOLDER_MAX];
};

static void session_release(struct hdhr_session *s)
{
	struct lease other;

	if (s->leased && s->net->leases)
		lease_release(s->net->leases, s->tuner, s->lease.id, &other,
			      NULL);
	s->leased = 0;
}

/* Freed with its request, after the stream closed its reader. */
static void session_free(void *arg)
{
	struct hdhr_session *s = arg;

	loop_del_timer(s->net->loop, s->renew_timer);
	loop_del_timer(s->net->loop, s->end_timer);
	session_release(s);
	json_decref(s->lease_id);
	free(s);
}

static long session_renew(struct loop *l, uint64_t id, void *arg)
{
	struct hdhr_session *s = arg;
	struct lease out, other;

	(void)l;
	(void)id;
	if (lease_renew(s->net->leases, s->tuner, s->lease.id, 0, &out, &other,
			NULL) < 0) {
		s->leased = 0; /* not ours any more */
		s->renew_timer = 0;
		rest_stream_stop(s->r);
		return LOOP_TIMER_DONE;
	}
	return HDHR_LEASE_TTL_S * 1000 / 3;
}

static long session_end(struct loop *l, uint64_t id, void *arg)
{
	struct hdhr_session *s = arg;

	(void)l;
	(void)id;
	s->end_timer = 0;
	rest_stream_stop(s->r);
	return LOOP_TIMER_DONE;
}

/* The tune is done: the stream begins (in the access handler, where MHD
 * takes an answer). */
static enum MHD_Result stream_begin(struct rest_req *r)
{
	struct hdhr_session *s = r->ext;
	enum MHD_Result ret;

	ret = rest_stream_serve(r, s->tuner, &s->filter, s->holder);
	if (s->leased)
		s->renew_timer =
		    loop_add_timer(r->net->loop, HDHR_LEASE_TTL_S * 1000 / 3,
				   session_renew, s);
	if (s->duration_s)
		s->end_timer =
		    loop_add_timer(r->net->loop, (uint64_t)s->duration_s * 1000,
				   session_end, s);
	return ret;
}

static void tune_done(struct command_result *res, void *arg)
{
	struct hdhr_session *s = arg;

	if (res->status != 200) {
		session_release(s);
		rest_finish(s->r, res->status, res->body);
		return;
	}
	json_decref(res->body);
	s->r->resumed = stream_begin;
	rest_finish(s->r, 0, NULL);
}

/* "v<GuideNumber>": the channel's params and service; "ch<Hz>": the
 * multiplex there.  0, or the answer in *ret. */
static int stream_target(struct rest_req *r, struct hdhr_session *s,
			 const char *what, enum MHD_Result *ret)
{
	struct api_error e = {0};
	const char *why = NULL;
	char sid[16];
	json_t *ch;

	if (what[0] == 'c' && what[1] == 'h') {
		char *end;
		unsigned long hz = strtoul(what + 2, &end, 10);

		if (what[2] >= '0' && what[2] <= '9' && !*end &&
		    hz <= UINT32_MAX &&
		    !hdhr_params_for_frequency(r->net, (uint32_t)hz,
					       &s->params))
			return 0;
	} else if (what[0] == 'v' && strlen(what) < HDHR_GUIDE_MAX) {
		ch = hdhr_channel_by_guide(r->net, what + 1);
		if (ch && !params_from_json(json_object_get(ch, "params"), NULL,
					    &s->params, &e)) {
			snprintf(sid, sizeof(sid), "%lld",
				 (long long)json_integer_value(
				     json_object_get(ch, "service_id")));
			if (!stream_filter_parse_service(&s->filter, sid, &why))
				return 0;
		}
		api_error_clear(&e);
	}
	*ret =
	    rest_error(r, 404, "not_found", json_pack("{s:s}", "channel", what),
		       "no channel %s", what);
	return -1;
}

/* ?duration=<s>: 0 when absent; -1 (answered) when bad. */
static int stream_duration(struct rest_req *r, struct hdhr_session *s,
			   enum MHD_Result *ret)
{
	const char *d = MHD_lookup_connection_value(
	    r->conn, MHD_GET_ARGUMENT_KIND, "duration");
	char *end;
	unsigned long v;

	if (!d)
		return 0;
	v = strtoul(d, &end, 10);
	if (*d < '0' || *d > '9' || *end || v > HDHR_DURATION_MAX) {
		*ret = rest_error(r, 400, "bad_request",
				  json_pack("{s:s}", "field", "duration"),
				  "duration: seconds 0..%d", HDHR_DURATION_MAX);
		return -1;
	}
	s->duration_s = (unsigned int)v;
	return 0;
}

static const struct sockaddr *peer_of(struct rest_req *r)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
	    r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	return ci ? ci->client_addr : NULL;
}

/* The tuner: the one asked for if it is free, else any free one. */
static enum MHD_Result take_tuner(struct rest_req *r, struct hdhr_session *s,
				  uint32_t asked)
{
	if (asked && !tuner_find(r->net->d, asked))
		return rest_error(
		    r, 404, "not_found",
		    json_pack("{s:I}", "tuner", (json_int_t)asked),
		    "no tuner%u", asked - 1);
	s->tuner =
	    asked ? (hdhr_tuner_free(r->net, asked, &s->params) ? asked : 0)
		  : hdhr_tuner_pick(r->net, &s->params);
	hdhr_holder(peer_of(r), s->holder, sizeof(s->holder));
	if (!s->tuner ||
	    hdhr_lease_take(r->net, s->tuner, s->holder, &s->lease))
		return hdhr_http_busy(r, asked != 0);
	s->leased = 1;
	s->lease_id = json_string(s->lease.id);
	return MHD_YES;
}

/* HEAD: what a GET would get now, without tuning. */
static enum MHD_Result stream_head(struct rest_req *r, struct hdhr_session *s,
				   uint32_t asked)
{
	struct MHD_Response *resp;

	if (asked ? !hdhr_tuner_free(r->net, asked, &s->params)
		  : !hdhr_tuner_pick(r->net, &s->params))
		return hdhr_http_busy(r, asked != 0);
	resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"video/mp2t");
	return rest_queue_response(r, 200, resp, 0);
}

static enum MHD_Result tune_submit(struct rest_req *r, struct hdhr_session *s)
{
	struct command_request req = {.tuner = s->tuner,
				      .op = TUNER_OP_TUNE,
				      .params = &s->params,
				      .lease_id = s->lease_id,
				      .wait_lock_ms = HDHR_WAIT_LOCK_MS};
	struct command_result now = {0};

	command_client_init(&r->client, r->net->commands, r->who.role, NULL, 1);
	r->client.label = s->holder;
	if (command_submit(&r->client, &req, tune_done, s, &now)) {
		session_release(s);
		return rest_reply(r, now.status, now.body);
	}
	return rest_suspend(r);
}

enum MHD_Result hdhr_http_stream(struct rest_req *r, uint32_t tuner,
				 const char *what)
{
	struct hdhr_session *s;
	enum MHD_Result ret;

	if (r->who.role < ROLE_OPERATOR)
		return rest_error(r, 403, "forbidden",
				  json_pack("{s:s, s:s}", "required_role",
					    "operator", "role",
					    role_name(r->who.role)),
				  "a stream tunes: it needs the operator role "
				  "(hdhomerun.role)");
	if (!r->net->streams || !r->net->commands)
		return rest_error(r, 503, "unavailable", NULL,
				  "the daemon is shutting down");
	s = calloc(1, sizeof(*s));
	if (!s)
		return rest_error(r, 500, "internal", NULL, "out of memory");
	s->net = r->net;
	s->r = r;
	r->ext = s;
	r->ext_free = session_free;
	if (stream_target(r, s, what, &ret) || stream_duration(r, s, &ret))
		return ret;
	if (!strcmp(r->method, "HEAD"))
		return stream_head(r, s, tuner);
	ret = take_tuner(r, s, tuner);
	if (!s->leased)
		return ret;
	return tune_submit(r, s);
}

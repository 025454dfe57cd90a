// SPDX-License-Identifier: MIT
/*
 * GET /api/v1/tuners/{id}/stream: the tuner's transport stream as
 * video/mp2t, the whole multiplex, ?pids=0,16,17,256 or ?service=SID.
 *
 * Two deliveries (--stream-delivery); bench_stream measures the direct
 * one at 0.6 (two readers per tuner) to 0.5 (four) of MHD's CPU per
 * Mbit/s, within 1.1-1.25 of a bare read/write relay:
 *  - "direct" (the default, rest_stream_direct.c) writes the stream on
 *    the connection's socket from the loop;
 *  - "mhd" answers with a libmicrohttpd callback response of unknown
 *    length (chunked on HTTP/1.1): the content reader copies what the
 *    reader's ring holds into MHD's buffer and suspends the connection
 *    when it is empty; the next packets resume it.  A reader dropped as
 *    too slow is by definition a connection MHD is waiting to write to,
 *    where no content callback will come: its socket is shut down so
 *    that MHD's next write fails and it closes the connection at once.
 *    Its weak spot: a client that leaves while no packets flow (no lock)
 *    is only noticed with the next packets, as MHD does not watch a
 *    suspended connection.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_front.h"
#include "log.h"
#include "loop.h"
#include "net_api.h"
#include "rest_stream.h"

/* MHD's chunk per content callback; the connection's memory pool bounds
 * it further (HTTP_FRONT_CONN_MEMORY). */
#define REST_STREAM_BLOCK (64 * 1024)

static void rest_stream_wake(void *owner)
{
	struct rest_stream *s = owner;
	const union MHD_ConnectionInfo *ci;

	if (s->net->stream_direct) {
		rest_stream_direct_wake(s);
		return;
	}
	if (s->suspended) {
		s->suspended = 0;
		MHD_resume_connection(s->conn);
		http_front_kick_soon(s->net->front);
		return;
	}
	if (stream_reader_ended(s->reader) != STREAM_END_SLOW)
		return;
	ci =
	    MHD_get_connection_info(s->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci)
		shutdown(ci->connect_fd, SHUT_RDWR);
	http_front_kick_soon(s->net->front);
}

static ssize_t rest_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct rest_stream *s = cls;
	size_t n = stream_reader_read(s->reader, buf, max);

	(void)pos;
	if (n)
		return (ssize_t)n;
	switch (stream_reader_ended(s->reader)) {
	case STREAM_END_NONE:
		s->suspended = 1;
		MHD_suspend_connection(s->conn);
		return 0;
	case STREAM_END_SLOW:
		return MHD_CONTENT_READER_END_WITH_ERROR;
	default:
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
}

static void rest_stream_free(void *cls)
{
	struct rest_stream *s = cls;

	if (s->reader)
		stream_reader_close(s->reader, STREAM_END_CLIENT);
	free(s);
}

void rest_stream_completed(struct rest_req *r)
{
	struct rest_stream *s = r->stream;

	if (!s)
		return;
	/* MHD ended a stream still running: it stops. */
	if (s->fd >= 0) {
		loop_del_fd(r->net->loop, s->fd);
		close(s->fd);
	}
	if (s->reader)
		stream_reader_close(s->reader, r->net->stopping
						   ? STREAM_END_STOPPING
						   : STREAM_END_CLIENT);
	free(s);
	r->stream = NULL;
}

static enum MHD_Result bad_query(struct rest_req *r, const char *field,
				 const char *why)
{
	return rest_error(r, 400, "bad_request",
			  json_pack("{s:s}", "field", field), "%s: %s", field,
			  why);
}

/* The filter from ?pids= or ?service= (not both). */
static int parse_filter(struct rest_req *r, struct stream_filter_spec *f,
			enum MHD_Result *ret)
{
	const char *pids =
	    MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "pids");
	const char *service = MHD_lookup_connection_value(
	    r->conn, MHD_GET_ARGUMENT_KIND, "service");
	const char *why = NULL;

	memset(f, 0, sizeof(*f));
	if (pids && service) {
		*ret = bad_query(r, "service",
				 "pids and service exclude "
				 "each other");
		return -1;
	}
	if (pids && stream_filter_parse_pids(f, pids, &why)) {
		*ret = bad_query(r, "pids", why);
		return -1;
	}
	if (service && stream_filter_parse_service(f, service, &why)) {
		*ret = bad_query(r, "service", why);
		return -1;
	}
	return 0;
}

static enum MHD_Result open_error(struct rest_req *r, uint32_t tuner, int err)
{
	switch (err) {
	case -EAGAIN:
		return rest_error(r, 429, "too_many_requests",
				  json_pack("{s:i, s:i}", "max_per_tuner",
					    STREAM_READERS_PER_TUNER, "max",
					    STREAM_READERS_MAX),
				  "too many streams are open");
	case -ENOENT:
		return rest_error(
		    r, 404, "not_found",
		    json_pack("{s:I}", "tuner", (json_int_t)tuner),
		    "no tuner %u", tuner);
	case -ENODEV:
		return rest_error(r, 503, "unavailable", NULL,
				  "tuner %u has no stream source now", tuner);
	case -ESHUTDOWN:
		return rest_error(r, 503, "unavailable", NULL,
				  "the daemon is shutting down");
	default:
		return rest_error(r, 500, "internal", NULL, "out of memory");
	}
}

/* A stream's 200 (HEAD's, or the MHD delivery's): video/mp2t, never
 * cached; resp is handed to MHD. */
static enum MHD_Result queue_ts(struct rest_req *r, struct MHD_Response *resp)
{
	enum MHD_Result ret;

	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"video/mp2t");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
				"no-store");
	rest_cors_headers(r->net, r->conn, resp);
	ret = MHD_queue_response(r->conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result stream_head(struct rest_req *r)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);

	return resp ? queue_ts(r, resp) : MHD_NO;
}

enum MHD_Result rest_stream_serve(struct rest_req *r, uint32_t tuner,
				  const struct stream_filter_spec *f,
				  const char *by)
{
	struct rest_stream *s = calloc(1, sizeof(*s));
	struct MHD_Response *resp = NULL;
	enum MHD_Result ret;
	int err = -ENOMEM;

	if (s)
		s->reader = stream_reader_open(r->net->streams, tuner, f, by,
					       rest_stream_wake, s, &err);
	if (!s || !s->reader) {
		free(s);
		return open_error(r, tuner, err);
	}
	s->net = r->net;
	s->conn = r->conn;
	s->fd = -1;
	if (r->net->stream_direct) {
		ret = rest_stream_direct_start(r, s);
		if (ret == MHD_NO)
			rest_stream_free(s);
		return ret;
	}
	resp = MHD_create_response_from_callback(
	    MHD_SIZE_UNKNOWN, REST_STREAM_BLOCK, rest_stream_read, s,
	    rest_stream_free);
	if (!resp) {
		rest_stream_free(s);
		return MHD_NO;
	}
	return queue_ts(r, resp);
}

enum MHD_Result rest_stream_get(struct rest_req *r)
{
	struct command_result res = {0};
	struct stream_filter_spec f;
	enum MHD_Result ret;
	char by[64];

	if (!r->net->streams)
		return open_error(r, r->tuner, -ESHUTDOWN);
	command_client_init(&r->client, r->net->commands, r->who.role,
			    r->who.token_name, 1);
	if (command_stream_check(&r->client, r->tuner, rest_lease_id(r), by,
				 sizeof(by), &res))
		return rest_reply(r, res.status, res.body);
	if (parse_filter(r, &f, &ret))
		return ret;
	if (!strcmp(r->method, "HEAD"))
		return stream_head(r);
	return rest_stream_serve(r, r->tuner, &f, by);
}

void rest_stream_stop(struct rest_req *r)
{
	const union MHD_ConnectionInfo *ci;

	if (r->stream) {
		rest_stream_direct_stop(r->stream);
		return;
	}
	/* MHD's delivery: its next write fails and it closes at once, as
	 * for a slow reader. */
	ci =
	    MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci)
		shutdown(ci->connect_fd, SHUT_RDWR);
	http_front_kick_soon(r->net->front);
}

// SPDX-License-Identifier: MIT
/*
 * The event stream as Server-Sent Events (sse_stream.h).
 *
 * The answer is a libmicrohttpd callback response of unknown length
 * (chunked).  Each event goes out as
 *   id: <seq>\nevent: <type>\ndata: <json>\n\n
 * (the bus's JSON is compact: it never holds a newline).  When the queue
 * is empty the content reader suspends the connection and returns 0;
 * the next event (or the 15 s heartbeat, a comment line) resumes it, so
 * an idle stream costs no CPU at all.
 *
 * The message being written holds its own reference to the event (or a
 * copy of a gap or closed text, a few dozen bytes), so a slow-consumer
 * close that empties the queue cannot pull it away mid-write.
 */
#include "sse_stream.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "auth.h"
#include "daemon.h"
#include "event_stream.h"
#include "eventbus.h"
#include "http_front.h"
#include "json_api.h"
#include "log.h"
#include "loop.h"
#include "net_api.h"
#include "rest.h"

#define SSE_HEARTBEAT_MS 15000
#define SSE_BLOCK        4096
/* Kernel buffering per stream, as for WebSocket streams. */
#define SSE_SNDBUF (128 * 1024)

static const char sse_heartbeat[] = ": keep-alive\n\n";

/* One message on its way out: head, body, "\n\n". */
struct sse_msg {
	char head[80];
	size_t head_len;
	const struct event *ev; /* a reference held for the body */
	char *own;              /* a copy of the stream's own text */
	const char *body;
	size_t body_len;
	size_t off, total;
	int last; /* the closed message: the stream ends after it */
};

struct sse_stream {
	struct sse_set *set;
	struct MHD_Connection *conn;
	struct event_sub *sub;
	struct sse_msg msg;
	int suspended;
	int heartbeat_due;
	int ended;
	uint64_t hb_timer;
	struct sse_stream *prev, *next;
};

/* The streams of one daemon's front. */
struct sse_set {
	struct daemon *d;
	struct http_front *front;
	struct sse_stream *streams;
	/* sse_set_close() ran: no stream suspends any more, none opens. */
	int closing;
};

/* ---- waking libmicrohttpd ---- */

/* Resume a suspended stream.  MHD runs right after the current callback,
 * never from here: this is called inside MHD's and the bus's callbacks. */
static void sse_resume(struct sse_stream *st)
{
	if (!st->suspended)
		return;
	st->suspended = 0;
	MHD_resume_connection(st->conn);
	http_front_kick_soon(st->set->front);
}

static void sse_wake(void *owner)
{
	sse_resume(owner);
}

static long sse_heartbeat_fire(struct loop *l, uint64_t id, void *arg)
{
	struct sse_stream *st = arg;

	(void)l;
	(void)id;
	st->heartbeat_due = 1;
	sse_resume(st);
	return SSE_HEARTBEAT_MS;
}

/* ---- messages ---- */

static void msg_clear(struct sse_msg *m)
{
	if (m->ev)
		event_put(m->ev);
	free(m->own);
	memset(m, 0, sizeof(*m));
}

static void msg_total(struct sse_msg *m)
{
	m->total = m->head_len + m->body_len + 2;
}

/* Take the next queued item into st->msg.  0 when there is none. */
static int msg_load(struct sse_stream *st)
{
	const struct stream_item *it = event_sub_peek(st->sub);
	struct sse_msg *m = &st->msg;
	const char *type;

	if (!it)
		return 0;
	m->body = event_sub_text(it, &m->body_len);
	if (it->kind == STREAM_EVENT) {
		m->ev = event_get(it->ev);
		type = it->ev->type;
	} else {
		m->own = malloc(m->body_len);
		if (m->own)
			memcpy(m->own, m->body, m->body_len);
		m->body = m->own;
		m->body_len = m->own ? m->body_len : 0;
		type = it->kind == STREAM_GAP ? "gap" : "closed";
	}
	if (it->kind == STREAM_CLOSED)
		m->head_len = (size_t)snprintf(m->head, sizeof(m->head),
					       "event: %s\ndata: ", type);
	else
		m->head_len = (size_t)snprintf(
		    m->head, sizeof(m->head),
		    "id: %llu\nevent: %s\ndata: ", (unsigned long long)it->id,
		    type);
	m->last = it->kind == STREAM_CLOSED;
	event_sub_pop(st->sub);
	msg_total(m);
	return 1;
}

static void msg_heartbeat(struct sse_msg *m)
{
	m->body = sse_heartbeat;
	m->body_len = sizeof(sse_heartbeat) - 3;
	m->head_len = 0;
	msg_total(m);
}

static size_t copy_part(const char *src, size_t len, size_t *skip, char *dst,
			size_t room)
{
	size_t n;

	if (*skip >= len) {
		*skip -= len;
		return 0;
	}
	n = len - *skip < room ? len - *skip : room;
	memcpy(dst, src + *skip, n);
	*skip = 0;
	return n;
}

/* Copy what fits of the message; returns the bytes copied. */
static size_t msg_copy(struct sse_msg *m, char *buf, size_t max)
{
	size_t skip = m->off, n = 0;

	n += copy_part(m->head, m->head_len, &skip, buf + n, max - n);
	n += copy_part(m->body, m->body_len, &skip, buf + n, max - n);
	n += copy_part("\n\n", 2, &skip, buf + n, max - n);
	m->off += n;
	return n;
}

/* ---- the response ---- */

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sse_stream *st = cls;
	size_t n = 0;

	(void)pos;
	while (n < max && !st->ended) {
		if (!st->msg.total && !msg_load(st)) {
			if (!st->heartbeat_due)
				break;
			st->heartbeat_due = 0;
			msg_heartbeat(&st->msg);
		}
		n += msg_copy(&st->msg, buf + n, max - n);
		if (st->msg.off < st->msg.total)
			break;
		st->ended = st->msg.last;
		msg_clear(&st->msg);
	}
	if (n)
		return (ssize_t)n;
	if (st->ended || event_sub_is_closed(st->sub) || st->set->closing)
		return MHD_CONTENT_READER_END_OF_STREAM;
	st->suspended = 1;
	MHD_suspend_connection(st->conn);
	return 0;
}

static void sse_free(void *cls)
{
	struct sse_stream *st = cls;

	if (st->prev)
		st->prev->next = st->next;
	else if (st->set->streams == st)
		st->set->streams = st->next;
	if (st->next)
		st->next->prev = st->prev;
	loop_del_timer(st->set->d->loop, st->hb_timer);
	msg_clear(&st->msg);
	event_sub_free(st->sub);
	free(st);
}

static enum MHD_Result sse_error(struct MHD_Connection *c, unsigned int code,
				 struct api_error *e)
{
	size_t len = 0;
	char *text = event_stream_dump(api_error_to_json(e), &len);
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!text)
		return MHD_NO;
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"application/json");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* Filters and the starting point from the query and Last-Event-ID. */
static int sse_parse(struct MHD_Connection *c, struct event_filter *f,
		     int *has_since, uint64_t *since, struct api_error *e)
{
	const char *last =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
	const char *s =
	    MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "since");

	if (event_filter_parse(
		f,
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "types"),
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "tuner"),
		e))
		return -1;
	/* A reconnecting EventSource sends the original URL again: the
	 * header is the newer position. */
	if (last && *last) {
		s = last;
		if (event_since_parse(s, since)) {
			api_error_set(
			    e, 400, "bad_request",
			    json_pack("{s:s}", "field", "Last-Event-ID"),
			    "Last-Event-ID: a sequence number");
			return -1;
		}
	} else if (s && event_since_parse(s, since)) {
		api_error_set(e, 400, "bad_request",
			      json_pack("{s:s}", "field", "since"),
			      "since: a sequence number");
		return -1;
	}
	*has_since = s != NULL;
	return 0;
}

static struct sse_stream *
sse_open(struct sse_set *set, struct MHD_Connection *c, struct api_error *e)
{
	struct daemon *d = set->d;
	struct sse_stream *st = calloc(1, sizeof(*st));
	struct event_filter f;
	uint64_t since = 0;
	int has_since = 0;

	if (!st) {
		api_error_set(e, 500, "internal", NULL, "out of memory");
		return NULL;
	}
	if (sse_parse(c, &f, &has_since, &since, e)) {
		free(st);
		return NULL;
	}
	st->set = set;
	st->conn = c;
	st->sub = event_sub_new(d, &f, has_since, since, sse_wake, st);
	st->hb_timer =
	    loop_add_timer(d->loop, SSE_HEARTBEAT_MS, sse_heartbeat_fire, st);
	if (!st->sub || !st->hb_timer) {
		api_error_set(e, 503, "unavailable", NULL,
			      "the event stream is not available");
		loop_del_timer(d->loop, st->hb_timer);
		event_sub_free(st->sub);
		free(st);
		return NULL;
	}
	return st;
}

static void sse_tune_socket(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	int size = SSE_SNDBUF, one = 1;

	if (!ci)
		return;
	setsockopt(ci->connect_fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	setsockopt(ci->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static struct MHD_Response *sse_response(struct sse_stream *st)
{
	struct MHD_Response *r = MHD_create_response_from_callback(
	    MHD_SIZE_UNKNOWN, SSE_BLOCK, sse_read, st, sse_free);

	if (!r)
		return NULL;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	/* Proxies must not hold events back to fill a buffer. */
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	return r;
}

enum MHD_Result sse_head(struct MHD_Connection *c)
{
	struct api_error e = {0};
	struct MHD_Response *r;
	struct event_filter f;
	enum MHD_Result ret;
	uint64_t since = 0;
	int has_since = 0;

	/* The answer a GET would start with, and no stream: MHD 0.9.75 would
	 * send a callback response's body even to a HEAD. */
	if (sse_parse(c, &f, &has_since, &since, &e))
		return sse_error(c, (unsigned int)e.status, &e);
	r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* The streams are full: the front's 503 (text taken). */
static enum MHD_Result sse_full(struct MHD_Connection *c, char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
	    strlen(text), text, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	ret = MHD_queue_response(c, MHD_HTTP_SERVICE_UNAVAILABLE, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result sse_handle(struct daemon *d, struct MHD_Connection *c,
			   const struct auth_result *who)
{
	struct net_api *net = net_api_of(d);
	struct sse_set *set = net ? http_front_sse(net->front) : NULL;
	struct api_error e = {0};
	struct MHD_Response *r;
	struct sse_stream *st;
	enum MHD_Result ret;

	/* The front authorised the request already (viewer or better). */
	if (!who || !who->ok || !set)
		return MHD_NO;
	if (set->closing) {
		api_error_set(&e, 503, "unavailable", NULL,
			      "the daemon is shutting down");
		return sse_error(c, 503, &e);
	}
	st = sse_open(set, c, &e);
	if (!st)
		return sse_error(c, (unsigned int)e.status, &e);
	if (http_front_stream_begin(set->front, c)) {
		char *text = http_front_streams_full(set->front);

		sse_free(st);
		return text ? sse_full(c, text) : MHD_NO;
	}
	r = sse_response(st);
	if (!r) {
		sse_free(st);
		return MHD_NO; /* the connection closes: its class with it */
	}
	st->next = set->streams;
	if (st->next)
		st->next->prev = st;
	set->streams = st;
	sse_tune_socket(c);
	rest_cors_headers(net, c, r);
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	log_debug("sse: event stream open (%s)", role_name(who->role));
	return ret;
}

struct sse_set *sse_set_new(struct daemon *d, struct http_front *front)
{
	struct sse_set *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	set->d = d;
	set->front = front;
	return set;
}

void sse_set_close(struct sse_set *set)
{
	if (!set)
		return;
	/* Every subscriber is closed by now: resume the waiting streams so
	 * they write their last message and end before MHD stops (MHD must
	 * not stop with suspended connections), and keep any stream from
	 * suspending again, or a new one (a reconnect on a kept-alive
	 * connection) from starting. */
	set->closing = 1;
	for (struct sse_stream *st = set->streams; st; st = st->next)
		sse_resume(st);
}

void sse_set_free(struct sse_set *set)
{
	/* MHD stopped: it freed every stream (sse_free()) already. */
	free(set);
}

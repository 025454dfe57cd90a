// SPDX-License-Identifier: MIT
/*
 * Connection classes (http_front_priv.h): what the front admits and
 * what it says when it cannot.
 *
 * Two classes, each with its own cap: request/response connections
 * (REST, static files, and every connection whose head is not read yet)
 * and event streams (WebSocket and Server-Sent Events).  A connection's
 * class is known only once its head is read, so every connection is a
 * request/response one from its accept and moves to the streams when its
 * head asks for one (an upgrade, or GET /api/v1/events); a stream that
 * ends on a connection kept alive moves back.  So streams can never take
 * the slots commands need: with every stream slot taken, a REST command
 * still gets in, and a new stream is refused with a 503 once its head is
 * read (its request slot is freed at once).  Within the request class the
 * last HTTP_FRONT_LOOPBACK_RESERVE slots are for loopback clients only,
 * and a non-loopback address holds at most HTTP_FRONT_PER_ADDR
 * connections of either class (front_peers.c).
 *
 * Every connection is a file descriptor: at start the soft RLIMIT_NOFILE
 * is raised (up to the hard limit) to what both caps need plus what the
 * rest of the daemon uses, and what was got is logged; a limit too low
 * for the caps shows as accept() failing with EMFILE, which pauses the
 * listener (http_front.c) rather than failing the daemon.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "http_front_priv.h"
#include "json_api.h"
#include "log.h"

/* Descriptors the daemon needs besides the front's connections: the
 * workers' sockets, the plugins, the loop, the log and MHD. */
#define FRONT_NOFILE_SPARE 1024

static const char refusal_head[] = "HTTP/1.1 503 Service Unavailable\r\n"
				   "Content-Type: application/json\r\n"
				   "Connection: close\r\n"
				   "Retry-After: 1\r\n"
				   "Content-Length: %zu\r\n\r\n%s";

char *front_full_body(const struct http_front *f, enum front_class cls)
{
	json_t *err =
	    cls == FRONT_STREAMS
		? api_error_json("unavailable",
				 "too many event streams: try again later",
				 json_pack("{s:i}", "max_event_streams",
					   (int)f->max[FRONT_STREAMS]))
		: api_error_json("unavailable",
				 "too many connections: try again later",
				 json_pack("{s:i}", "max_connections",
					   (int)f->max[FRONT_REQUESTS]));
	char *text = err ? json_dumps(err, JSON_COMPACT) : NULL;

	json_decref(err);
	return text;
}

char *front_per_addr_body(void)
{
	json_t *err = api_error_json(
	    "unavailable",
	    "too many connections from this address: try again later",
	    json_pack("{s:i}", "max_connections_per_address",
		      HTTP_FRONT_PER_ADDR));
	char *text = err ? json_dumps(err, JSON_COMPACT) : NULL;

	json_decref(err);
	return text;
}

/* Send the 503 refusal with body (taken; NULL: just close). */
void front_send_refusal(int fd, char *body)
{
	char buf[1024];
	int n;

	if (body) {
		n = snprintf(buf, sizeof(buf), refusal_head, strlen(body) + 1,
			     body);
		if (n > 0 && (size_t)n < sizeof(buf) - 1) {
			buf[n] = '\n';
			n = (int)send(fd, buf, (size_t)n + 1,
				      MSG_DONTWAIT | MSG_NOSIGNAL);
		}
		(void)n;
	}
	free(body);
	shutdown(fd, SHUT_WR);
}

void front_conn_gone(struct http_front *f, enum front_class cls, int fd)
{
	f->conns[cls]--;
	front_peer_del(f, fd);
}

int front_to_stream(struct http_front *f)
{
	if (f->conns[FRONT_STREAMS] >= f->max[FRONT_STREAMS])
		return -EBUSY;
	f->conns[FRONT_REQUESTS]--;
	f->conns[FRONT_STREAMS]++;
	return 0;
}

void front_to_requests(struct http_front *f)
{
	f->conns[FRONT_STREAMS]--;
	f->conns[FRONT_REQUESTS]++;
}

void front_raise_nofile(const struct http_front *f)
{
	rlim_t want = (rlim_t)f->max[FRONT_REQUESTS] + f->max[FRONT_STREAMS] +
		      FRONT_NOFILE_SPARE;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur >= want) {
		log_info("http: %u request and %u stream connections; open "
			 "files limit %llu",
			 f->max[FRONT_REQUESTS], f->max[FRONT_STREAMS],
			 (unsigned long long)rl.rlim_cur);
		return;
	}
	rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < want)
		log_warn("http: open files limit %llu (hard limit %llu), below "
			 "the %llu that %u request and %u stream connections "
			 "need: accept() will fail before the caps",
			 (unsigned long long)rl.rlim_cur,
			 (unsigned long long)rl.rlim_max,
			 (unsigned long long)want, f->max[FRONT_REQUESTS],
			 f->max[FRONT_STREAMS]);
	else
		log_info("http: %u request and %u stream connections; open "
			 "files limit raised to %llu",
			 f->max[FRONT_REQUESTS], f->max[FRONT_STREAMS],
			 (unsigned long long)rl.rlim_cur);
}

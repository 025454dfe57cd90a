// SPDX-License-Identifier: MIT
/*
 * libmicrohttpd on the daemon's loop (http_front_priv.h).
 *
 * MHD runs with MHD_USE_NO_LISTEN_SOCKET | MHD_USE_EPOLL and no thread of
 * its own: its epoll fd is watched by the loop, MHD_run() runs when that
 * fd is readable or when MHD's timeout (MHD_get_timeout(); 0.9.75 has no
 * MHD_get_timeout64()) is due on a loop timer.
 *
 * The connection count: an MHD connection counts from its STARTED to its
 * CLOSED notification, which also ends its address's entry (the front
 * listed it at the accept), as a request/response connection or, while
 * it serves Server-Sent Events, as a stream.  The front also knows which connections have a
 * request in flight (from the request line to its completion), so that
 * a stop can wait for the last answers.
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdint.h>

#include "http_front_priv.h"
#include "log.h"
#include "loop.h"
#include "rest.h"

static long mhd_timer_fn(struct loop *l, uint64_t id, void *arg);

/*
 * Run MHD, then make sure the loop calls it again by its next timeout.
 * An armed timer that is due no later than needed stays: it may fire
 * early (MHD then has nothing to do and says when to come back), which
 * costs less than re-arming after every request.
 */
void front_mhd_run(struct http_front *f)
{
	MHD_UNSIGNED_LONG_LONG ms;
	uint64_t due;

	f->in_run = 1;
	MHD_run(f->mhd);
	f->in_run = 0;
	if (MHD_get_timeout(f->mhd, &ms) != MHD_YES)
		return;
	due = loop_now_ms() + ms;
	if (f->mhd_timer && f->mhd_due <= due)
		return;
	loop_del_timer(f->loop, f->mhd_timer);
	f->mhd_due = due;
	f->mhd_timer = loop_add_timer(f->loop, ms, mhd_timer_fn, f);
}

static long mhd_timer_fn(struct loop *l, uint64_t id, void *arg)
{
	struct http_front *f = arg;

	(void)l;
	(void)id;
	f->mhd_timer = 0; /* this timer ends; the run arms the next */
	front_mhd_run(f);
	return LOOP_TIMER_DONE;
}

static void mhd_ready(struct loop *l, int fd, unsigned int events, void *arg)
{
	(void)l;
	(void)fd;
	(void)events;
	front_mhd_run(arg);
}

void http_front_kick_soon(struct http_front *f)
{
	if (!f || !f->mhd)
		return;
	if (f->mhd_timer && f->mhd_due <= loop_now_ms())
		return;
	loop_del_timer(f->loop, f->mhd_timer);
	f->mhd_due = loop_now_ms();
	f->mhd_timer = loop_add_timer(f->loop, 0, mhd_timer_fn, f);
}

void http_front_kick(struct http_front *f)
{
	if (!f || !f->mhd)
		return;
	if (f->in_run)
		http_front_kick_soon(f); /* inside MHD: right after it */
	else
		front_mhd_run(f);
}

int front_mhd_conn_fd(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

	return ci ? ci->connect_fd : -1;
}

/* MHD 0.9.75 answers MHD_CONNECTION_INFO_SOCKET_CONTEXT with the address
 * of the connection's socket context itself (the union's member is its
 * value): that address is the context to write. */
void **front_mhd_socket_ctx(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? (void **)&ci->socket_context : NULL;
}

static uintptr_t flags_of(void **sc)
{
	return sc ? (uintptr_t)*sc : 0;
}

static void flags_set(void **sc, uintptr_t flags)
{
	if (sc)
		*sc = (void *)flags;
}

/* An MHD connection counts from STARTED to CLOSED (MHD reports CLOSED
 * also when it could not take a connection after STARTED), in its class;
 * an upgraded one in the streams until MHD closes it, after the
 * WebSocket server gave it back. */
static void mhd_notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
		       enum MHD_ConnectionNotificationCode toe)
{
	struct http_front *f = cls;
	uintptr_t flags = flags_of(socket_ctx);

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		f->conns[FRONT_REQUESTS]++;
		return;
	}
	flags_set(socket_ctx, 0);
	if (flags & MHD_CONN_IN_FLIGHT)
		f->busy_reqs--;
	front_conn_gone(
	    f, (flags & MHD_CONN_STREAM) ? FRONT_STREAMS : FRONT_REQUESTS,
	    front_mhd_conn_fd(c));
}

/* A request line was read: a request is in flight until completed. */
static void *mhd_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct http_front *f = cls;
	void **sc = front_mhd_socket_ctx(c);
	uintptr_t flags = flags_of(sc);

	if (sc && !(flags & MHD_CONN_IN_FLIGHT)) {
		flags_set(sc, flags | MHD_CONN_IN_FLIGHT);
		f->busy_reqs++;
	}
	return rest_uri_log(f->net, uri, c);
}

/* A request ended.  An event stream that ended on a connection kept
 * alive makes it a request/response connection again; an upgraded one
 * ends (MHD reports its request completed when the WebSocket server gave
 * the socket back) and stays a stream until its CLOSED. */
static void mhd_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			  enum MHD_RequestTerminationCode toe)
{
	struct http_front *f = cls;
	void **sc = front_mhd_socket_ctx(c);
	uintptr_t flags = flags_of(sc);

	rest_request_completed(f->net, c, req_cls, toe);
	if (flags & MHD_CONN_IN_FLIGHT)
		f->busy_reqs--;
	if (flags & MHD_CONN_UPGRADED) {
		flags_set(sc, flags & ~(uintptr_t)MHD_CONN_IN_FLIGHT);
		return;
	}
	if (flags & MHD_CONN_STREAM)
		front_to_requests(f);
	flags_set(sc, 0);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	if (log_get_level() >= LL_DEBUG)
		log_vmsg(LL_DEBUG, fmt, ap);
}

int front_mhd_start(struct http_front *f)
{
	const union MHD_DaemonInfo *info;
	/* MHD_USE_TURBO: MHD tries a read or write before waiting for
	 * readiness.  MHD_ALLOW_UPGRADE: WebSocket upgrades are MHD's
	 * (front_upgrade.c). */
	unsigned int flags = MHD_USE_NO_LISTEN_SOCKET | MHD_USE_EPOLL |
			     MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE |
			     MHD_USE_ERROR_LOG | MHD_USE_TURBO;

	f->mhd = MHD_start_daemon(
	    flags, 0, NULL, NULL, rest_access_handler, f->net,
	    MHD_OPTION_CONNECTION_LIMIT,
	    f->max[FRONT_REQUESTS] + f->max[FRONT_STREAMS] + 8,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_FRONT_CONN_MEMORY,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_FRONT_IDLE_S,
	    MHD_OPTION_NOTIFY_COMPLETED, mhd_completed, f,
	    MHD_OPTION_URI_LOG_CALLBACK, mhd_uri, f,
	    MHD_OPTION_NOTIFY_CONNECTION, mhd_notify, f,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, f, MHD_OPTION_END);
	if (!f->mhd) {
		log_err("http: libmicrohttpd would not start");
		return -1;
	}
	info = MHD_get_daemon_info(f->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info || info->epoll_fd < 0) {
		log_err("http: libmicrohttpd has no epoll fd");
		return -1;
	}
	f->mhd_ep = info->epoll_fd;
	if (loop_add_fd(f->loop, f->mhd_ep, LOOP_READ, mhd_ready, f) < 0)
		return -1;
	return 0;
}

void front_mhd_stop(struct http_front *f)
{
	if (f->mhd) {
		if (f->mhd_ep >= 0)
			loop_del_fd(f->loop, f->mhd_ep);
		MHD_stop_daemon(f->mhd);
		f->mhd = NULL; /* later kicks find nothing to run */
	}
	loop_del_timer(f->loop, f->mhd_timer);
	f->mhd_timer = 0;
}

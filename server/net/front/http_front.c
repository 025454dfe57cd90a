// SPDX-License-Identifier: MIT
/*
 * The one port of the network API.
 *
 * Everything runs on the daemon's loop: libmicrohttpd through its epoll
 * fd and timeout (front_mhd.c), the WebSocket streams on sockets MHD
 * upgraded (ws.c, wslay).  So every REST handler runs in the loop thread
 * next to the tuners, and a request waiting for a tuner is a suspended
 * MHD connection, never a thread.
 *
 * The front accepts itself so that a new connection's first request head
 * is checked before MHD sees it: it peeks at the head without taking the
 * bytes (MSG_PEEK), in a private edge-triggered epoll set so a partial
 * head costs nothing until more bytes come.  A head out of bounds
 * (front_head.c) is answered with the API's JSON error, not
 * libmicrohttpd's HTML.  The peek is bounded by HTTP_FRONT_PEEK_MAX
 * bytes (a bigger head is refused with 431) and by the head's deadline,
 * HTTP_FRONT_HEAD_S from the accept: a head not complete by then is
 * closed unanswered.  MHD's own timeout restarts with every byte, so
 * without this deadline a client trickling one byte every few seconds
 * would hold its slot for ever (slowloris).  MHD's timeout still closes
 * kept-alive connections left idle.  Every connection then goes to MHD,
 * WebSocket upgrades included (front_upgrade.c).
 *
 * Admission (front_classes.c, front_peers.c): a cap per connection
 * class, at most HTTP_FRONT_PER_ADDR per non-loopback address, and the
 * last HTTP_FRONT_LOOPBACK_RESERVE request slots for loopback clients
 * only.
 *
 * The connection counts, here: a connection counts as a request from its
 * accept while it is peeked at, then from libmicrohttpd's STARTED to its
 * CLOSED notification (as a stream while it serves SSE, and from its
 * upgrade on when it is a WebSocket).
 *
 * Stopping: closing the listener is the quiesce (MHD has no listening
 * socket, so MHD_quiesce_daemon() has nothing to do).  The waiting
 * requests are answered and the streams told to end; the loop then runs
 * until every answer and last message is handed to the kernel (no
 * request in flight, no WebSocket still to say goodbye, nothing ready in
 * the loop), at most HTTP_FRONT_STOP_MS for clients that stopped
 * reading.  The WebSocket server's teardown gives its sockets back to
 * MHD, and MHD_stop_daemon() closes the rest.
 */
#define _GNU_SOURCE /* accept4 */
#include "http_front.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_front_priv.h"
#include "json_api.h"
#include "log.h"
#include "loop.h"
#include "net_api.h"
#include "rest.h"
#include "sse_stream.h"
#include "ws.h"

/* Refused connections get a short answer while they wait in the peek
 * set; beyond this many even that is skipped (plain close). */
#define FRONT_REFUSING_MAX 64
/* Cap on accept() calls per loop turn, so a flood cannot starve the
 * tuners. */
#define FRONT_ACCEPT_BATCH    64
#define FRONT_ACCEPT_PAUSE_MS 100

/* Why a connection is refused (struct pending's refuse). */
enum { ADMIT = 0, REFUSE_FULL, REFUSE_ADDR };

struct pending {
	struct http_front *f;
	int fd;
	int refuse; /* ADMIT, or why not */
	uint64_t deadline_ms;
	struct sockaddr_storage peer;
	socklen_t peer_len;
	struct pending *prev, *next;
};

/* ---- peeking at new connections ---- */

static void pending_unlink(struct http_front *f, struct pending *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		f->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
	epoll_ctl(f->peek_ep, EPOLL_CTL_DEL, p->fd, NULL);
	if (p->refuse)
		f->refusing--;
}

/* Drop a pending connection that goes nowhere. */
static void pending_close(struct http_front *f, struct pending *p)
{
	pending_unlink(f, p);
	if (!p->refuse)
		front_conn_gone(f, FRONT_REQUESTS, p->fd);
	close(p->fd);
	free(p);
}

/* Answer a connection over the cap: take its head, say why, close. */
static void refuse(struct http_front *f, struct pending *p)
{
	char sink[HTTP_FRONT_PEEK_MAX];
	ssize_t n;

	n = recv(p->fd, sink, sizeof(sink), MSG_DONTWAIT);
	(void)n;
	front_send_refusal(p->fd, p->refuse == REFUSE_ADDR
				      ? front_per_addr_body()
				      : front_full_body(f, FRONT_REQUESTS));
	pending_close(f, p);
}

/* The pending connection's slot goes with it to MHD (released here,
 * taken again by MHD's STARTED).  Its address stays listed until it
 * closes (MHD's CLOSED). */
static void hand_over(struct http_front *f, struct pending *p)
{
	int fd = p->fd;

	pending_unlink(f, p);
	f->conns[FRONT_REQUESTS]--;
	if (MHD_add_connection(f->mhd, fd, (struct sockaddr *)&p->peer,
			       p->peer_len) == MHD_YES) {
		front_mhd_run(f);
	} else { /* MHD closed the fd. */
		front_peer_del(f, fd);
		log_warn("http: could not take a connection: %s",
			 strerror(errno));
	}
	free(p);
}

/* Look at what has arrived so far; hand over once the head is in. */
static void pending_check(struct http_front *f, struct pending *p, int late)
{
	char head[HTTP_FRONT_PEEK_MAX + 1];
	ssize_t n =
	    recv(p->fd, head, HTTP_FRONT_PEEK_MAX, MSG_PEEK | MSG_DONTWAIT);
	struct front_refusal why;
	const char *end;
	int complete;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		pending_close(f, p);
		return;
	}
	if (n < 0)
		n = 0;
	head[n] = '\0';
	end = memmem(head, (size_t)n, "\r\n\r\n", 4);
	complete = n >= HTTP_FRONT_PEEK_MAX || end;
	if (!complete && !late)
		return;
	if (p->refuse) {
		refuse(f, p);
		return;
	}
	if (!complete) {
		/* The head's deadline passed (a trickling or idle client):
		 * there is no request to answer, only a slot to free. */
		log_debug("http: connection %d: no request head in %u ms",
			  p->fd, f->head_ms);
		pending_close(f, p);
		return;
	}
	if (front_head_check(head, end ? (size_t)(end + 2 - head) : (size_t)n,
			     !end, &why)) {
		front_head_answer(p->fd, &why);
		pending_close(f, p);
		return;
	}
	hand_over(f, p);
}

static void peek_ready(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct http_front *f = arg;
	struct epoll_event evs[32];
	int n;

	(void)l;
	(void)fd;
	(void)events;
	n = epoll_wait(f->peek_ep, evs, 32, 0);
	for (int i = 0; i < n; i++)
		pending_check(f, evs[i].data.ptr, 0);
}

static long sweep_fn(struct loop *l, uint64_t id, void *arg)
{
	struct http_front *f = arg;
	uint64_t now = loop_now_ms();
	struct pending *p, *next;

	(void)l;
	(void)id;
	for (p = f->pending; p; p = next) {
		next = p->next;
		if (now >= p->deadline_ms)
			pending_check(f, p, 1);
	}
	if (!f->pending) {
		f->sweep_timer = 0;
		return LOOP_TIMER_DONE;
	}
	return 100;
}

/* ADMIT, or why the connection is refused. */
static int admission(const struct http_front *f, int loopback,
		     const unsigned char addr[16])
{
	unsigned int max = f->max[FRONT_REQUESTS];

	if (f->conns[FRONT_REQUESTS] >= max)
		return REFUSE_FULL;
	if (loopback)
		return ADMIT;
	if (f->conns[FRONT_REQUESTS] + HTTP_FRONT_LOOPBACK_RESERVE >= max)
		return REFUSE_FULL;
	if (front_peer_count(f, addr) >= HTTP_FRONT_PER_ADDR)
		return REFUSE_ADDR;
	return ADMIT;
}

static void track(struct http_front *f, int fd, const struct sockaddr *peer,
		  socklen_t len)
{
	unsigned char addr[16];
	/* A trusted proxy carries many clients: no per-address cap, and
	 * the reserve is its as it is a local client's. */
	int loopback =
	    front_peer_addr(peer, addr) ||
	    (f->net && addr_list_match(&f->net->cfg.trusted_proxies, peer));
	int over_cap = admission(f, loopback, addr);
	struct pending *p = calloc(1, sizeof(*p));
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET};

	if (!p || (over_cap && f->refusing >= FRONT_REFUSING_MAX)) {
		free(p);
		close(fd);
		return;
	}
	p->f = f;
	p->fd = fd;
	p->refuse = over_cap;
	p->deadline_ms =
	    loop_now_ms() + (over_cap ? HTTP_FRONT_PEEK_MS : f->head_ms);
	memcpy(&p->peer, peer, len);
	p->peer_len = len;
	ev.data.ptr = p;
	if (epoll_ctl(f->peek_ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		free(p);
		close(fd);
		return;
	}
	p->next = f->pending;
	if (p->next)
		p->next->prev = p;
	f->pending = p;
	if (over_cap) {
		f->refusing++;
	} else {
		f->conns[FRONT_REQUESTS]++;
		if (!loopback)
			front_peer_add(f, fd, addr);
	}
	if (!f->sweep_timer)
		f->sweep_timer = loop_add_timer(f->loop, 100, sweep_fn, f);
}

static long accept_resume(struct loop *l, uint64_t id, void *arg)
{
	struct http_front *f = arg;

	(void)id;
	f->accept_timer = 0;
	loop_set_fd_mask(l, f->listen_fd, LOOP_READ);
	if (f->extra_fd >= 0)
		loop_set_fd_mask(l, f->extra_fd, LOOP_READ);
	return LOOP_TIMER_DONE;
}

/* Out of fds: the pending connection stays in the backlog and the
 * listener would be readable forever, so stop watching it for a while. */
static void accept_pause(struct http_front *f, int fd)
{
	log_warn("http: accept: %s; pausing for %d ms", strerror(errno),
		 FRONT_ACCEPT_PAUSE_MS);
	loop_set_fd_mask(f->loop, fd, 0);
	if (!f->accept_timer)
		f->accept_timer = loop_add_timer(f->loop, FRONT_ACCEPT_PAUSE_MS,
						 accept_resume, f);
}

static void accept_ready(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct http_front *f = arg;

	(void)l;
	(void)events;
	for (int i = 0; i < FRONT_ACCEPT_BATCH; i++) {
		struct sockaddr_storage peer;
		socklen_t len = sizeof(peer);
		int c = accept4(fd, (struct sockaddr *)&peer, &len,
				SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM)
				accept_pause(f, fd);
			return;
		}
		track(f, c, (struct sockaddr *)&peer, len);
	}
}

/* ---- the listener ---- */

/* "ADDR:PORT", "[V6]:PORT" or ":PORT" (every address). */
static int listen_socket(const char *spec, int *port_out)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICHOST |
					     AI_NUMERICSERV};
	char host[128];
	const char *colon = strrchr(spec, ':');
	struct addrinfo *ai = NULL;
	int fd = -1, one = 1, err;
	size_t hlen;

	if (!colon || !colon[1] || (size_t)(colon - spec) >= sizeof(host))
		return -EINVAL;
	hlen = (size_t)(colon - spec);
	if (hlen >= 2 && spec[0] == '[' && spec[hlen - 1] == ']') {
		memcpy(host, spec + 1, hlen - 2);
		host[hlen - 2] = '\0';
	} else {
		memcpy(host, spec, hlen);
		host[hlen] = '\0';
	}
	err = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
	if (err)
		return -EINVAL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		goto err;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0)
		goto err;
	freeaddrinfo(ai);
	*port_out = http_front_bound_port(fd);
	return fd;
err:
	err = -errno;
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return err;
}

int http_front_bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* The WebSocket server gave a socket back: MHD closes it when it runs. */
static void front_ws_kick(void *arg)
{
	http_front_kick_soon(arg);
}

struct http_front *http_front_start(struct net_api *net, const char *spec)
{
	struct http_front *f = calloc(1, sizeof(*f));
	int err = -ENOMEM;

	if (!f)
		return NULL;
	f->net = net;
	f->loop = net->loop;
	f->mhd_ep = -1;
	f->listen_fd = -1;
	f->extra_fd = -1;
	f->peek_ep = -1;
	f->head_ms = net->head_timeout_ms > 0
			 ? (unsigned int)net->head_timeout_ms
			 : HTTP_FRONT_HEAD_S * 1000;
	f->max[FRONT_REQUESTS] = net_api_max_conns(net, 0);
	f->max[FRONT_STREAMS] = net_api_max_conns(net, 1);
	f->peers = calloc(f->max[FRONT_REQUESTS] + f->max[FRONT_STREAMS],
			  sizeof(*f->peers));
	if (!f->peers)
		goto err;
	front_raise_nofile(f);
	f->peek_ep = epoll_create1(EPOLL_CLOEXEC);
	f->listen_fd = listen_socket(spec, &f->port);
	if (f->listen_fd < 0) {
		err = f->listen_fd;
		log_err("http: cannot listen on %s: %s", spec, strerror(-err));
		goto err;
	}
	f->sse = sse_set_new(net->d, f);
	errno = 0;
	f->ws = ws_server_new(net->d, front_ws_kick, f);
	if (!f->ws && errno)
		err = -errno;
	if (f->peek_ep < 0 || !f->sse || !f->ws || front_mhd_start(f) ||
	    loop_add_fd(f->loop, f->peek_ep, LOOP_READ, peek_ready, f) < 0 ||
	    loop_add_fd(f->loop, f->listen_fd, LOOP_READ, accept_ready, f) < 0)
		goto err;
	log_info("http: listening on %s (port %d)", spec, f->port);
	return f;
err:
	http_front_stop(f);
	errno = -err;
	return NULL;
}

/* The same accept, caps and hand-over as the first listener: a
 * connection is the front's whichever port it came in on, so the caps
 * and the stop cover both, and handlers tell the ports apart by the
 * socket's local port. */
int http_front_listen_extra(struct http_front *f, const char *spec)
{
	int fd = listen_socket(spec, &f->extra_port);

	if (fd < 0 ||
	    loop_add_fd(f->loop, fd, LOOP_READ, accept_ready, f) < 0) {
		int err = fd < 0 ? fd : -ENOMEM;

		log_err("http: cannot listen on %s: %s", spec, strerror(-err));
		if (fd >= 0)
			close(fd);
		f->extra_port = 0;
		return err;
	}
	f->extra_fd = fd;
	log_info("http: listening on %s (port %d) too", spec, f->extra_port);
	return 0;
}

int http_front_extra_port(const struct http_front *f)
{
	return f && f->extra_fd >= 0 ? f->extra_port : 0;
}

/* Nothing of the front's waits for the loop any more: every request is
 * answered, every WebSocket handed its last message and its close frame
 * to the kernel, and nothing is ready in the loop. */
static int front_settled(struct http_front *f)
{
	struct pollfd pfd = {.fd = loop_fd(f->loop), .events = POLLIN};

	if (f->busy_reqs || ws_server_busy(f->ws))
		return 0;
	return loop_next_timeout_ms(f->loop) != 0 && poll(&pfd, 1, 0) == 0;
}

/* Run the loop (stopped by now) until the front settles. */
static void front_drain(struct http_front *f)
{
	uint64_t deadline = loop_now_ms() + HTTP_FRONT_STOP_MS;

	while (!front_settled(f)) {
		uint64_t now = loop_now_ms();

		if (now >= deadline) {
			log_warn("http: stopping with %u request(s) and %u "
				 "WebSocket(s) unfinished",
				 f->busy_reqs, ws_server_busy(f->ws));
			return;
		}
		loop_run_once(f->loop, (int)(deadline - now));
	}
}

/* No new connection from here on. */
static void front_quiesce(struct http_front *f)
{
	if (f->listen_fd >= 0) {
		loop_del_fd(f->loop, f->listen_fd);
		close(f->listen_fd);
		f->listen_fd = -1;
	}
	if (f->extra_fd >= 0) {
		loop_del_fd(f->loop, f->extra_fd);
		close(f->extra_fd);
		f->extra_fd = -1;
	}
	loop_del_timer(f->loop, f->accept_timer);
	f->accept_timer = 0;
	while (f->pending)
		pending_close(f, f->pending);
	if (f->peek_ep >= 0) {
		loop_del_fd(f->loop, f->peek_ep);
		close(f->peek_ep);
		f->peek_ep = -1;
	}
	loop_del_timer(f->loop, f->sweep_timer);
	f->sweep_timer = 0;
}

void http_front_stop(struct http_front *f)
{
	if (!f)
		return;
	front_quiesce(f);
	if (f->mhd) {
		/* The event subscribers were closed already; new requests
		 * are refused meanwhile (net->stopping), so nothing
		 * suspends again: MHD refuses to stop with a suspended
		 * connection. */
		sse_set_close(f->sse);
		rest_cancel_waiting(f->net);
		front_drain(f);
	}
	/* The WebSocket sockets go back to MHD before it stops: it closes
	 * them, and reports them closed, as any other connection. */
	ws_server_free(f->ws);
	f->ws = NULL;
	front_mhd_stop(f);
	sse_set_free(f->sse);
	free(f->peers);
	free(f);
}

int http_front_port(const struct http_front *f)
{
	return f ? f->port : -1;
}

unsigned int http_front_conns(const struct http_front *f)
{
	return f ? f->conns[FRONT_REQUESTS] + f->conns[FRONT_STREAMS] : 0;
}

struct sse_set *http_front_sse(const struct http_front *f)
{
	return f ? f->sse : NULL;
}

struct ws_server *http_front_ws(const struct http_front *f)
{
	return f ? f->ws : NULL;
}

// SPDX-License-Identifier: MIT
/*
 * bench_fanout - event fan-out latency to N WebSocket subscribers (default
 * 1000), from the publication of an event to its receipt, p50/p99.
 *
 * Both sides serve the same bytes to the same client stack, on the same
 * loop, and differ only in what tunerd adds:
 *  - tunerd: the daemon's real event path in process: eventbus_publish()
 *    on the daemon's bus, the event stream hub (filters, queues) and the
 *    WebSocket server (ws.h, sockets adopted as the HTTP front does);
 *  - baseline: a bare libwebsockets server on the same libuv loop (also a
 *    foreign loop), fed by eventbus_publish() on a second bus of the same
 *    box name, which writes each event's serialised text (the very bytes
 *    the hub would send) to every connection.
 * The subscribers are N libwebsockets clients per side, each side's in a
 * child process of its own (one lws context, its own poll loop; the same
 * program for both), which stamps each receipt with CLOCK_MONOTONIC
 * against the publication time the message carries ("t_ns").  Rounds
 * alternate, one event at a time: a child says when all its N got it,
 * the parent publishes the next one on the other side.  So the load of a
 * shared machine falls on both alike, and the parent needs no thread: its
 * loop watches the children's sockets.
 *
 *   bench_fanout [--subscribers N] [--events E]
 */
#define _GNU_SOURCE
#include <libwebsockets.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "event_stream.h"
#include "eventbus.h"
#include "loop.h"
#include "ws.h"

#define MAX_SUBS       5000
#define WARMUP_ROUNDS  10
#define SIDES          2
#define SIDE_BASE      0
#define SIDE_TUNERD    1
#define EVENTS_QUERY   "/api/v1/events?types=bench.tick"
#define BASE_MSG_MAX   1024
#define FREE_TURNS_MAX 64

/* What a child reports at the end (microseconds). */
struct result {
	int ok;
	double p50, p99;
};

static int n_subs = 1000, n_rounds = 200;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the subscribers (child process) ---- */

struct clients {
	struct lws_context *ctx;
	int ctl;
	int established, failed;
	int got;    /* receipts of the round running */
	int rounds; /* rounds completed */
	uint64_t *ns;
	size_t nns;
	int done;
};

static struct clients C;

static void round_done(void)
{
	char ack = 'A';

	C.got = 0;
	if (++C.rounds == WARMUP_ROUNDS + n_rounds)
		C.done = 1;
	if (write(C.ctl, &ack, 1) != 1)
		C.done = 1;
}

static void note_receipt(const char *msg, size_t len)
{
	uint64_t t = now_ns();
	const char *p = memmem(msg, len, "\"t_ns\":", 7);

	if (!p)
		return;
	if (C.rounds >= WARMUP_ROUNDS)
		C.ns[C.nns++] = t - strtoull(p + 7, NULL, 10);
	if (++C.got == n_subs)
		round_done();
}

static int client_cb(struct lws *wsi, enum lws_callback_reasons reason,
		     void *user, void *in, size_t len)
{
	(void)wsi;
	(void)user;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		C.established++;
		break;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		C.failed++;
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		note_receipt(in, len);
		break;
	default:
		break;
	}
	return 0;
}

static const struct lws_protocols client_protocols[] = {
    {"tunerd.v1", client_cb, 0, BASE_MSG_MAX, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void clients_connect(int port)
{
	struct lws_client_connect_info ci;

	for (int i = 0; i < n_subs; i++) {
		memset(&ci, 0, sizeof(ci));
		ci.context = C.ctx;
		ci.address = "127.0.0.1";
		ci.port = port;
		ci.path = EVENTS_QUERY;
		ci.host = "127.0.0.1";
		ci.origin = "127.0.0.1";
		ci.protocol = "tunerd.v1";
		if (!lws_client_connect_via_info(&ci))
			C.failed++;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void percentiles(struct result *r)
{
	size_t n = C.nns;

	qsort(C.ns, n, sizeof(uint64_t), cmp_u64);
	r->p50 = n ? C.ns[n / 2] / 1000.0 : 0;
	r->p99 = n ? C.ns[n * 99 / 100] / 1000.0 : 0;
}

/* One side's subscribers. */
static int clients_main(int ctl, int port)
{
	struct lws_context_creation_info info;
	struct result r = {0};
	char ready = 'R';

	C.ctl = ctl;
	C.ns = calloc((size_t)n_subs * (size_t)n_rounds, sizeof(uint64_t));
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = client_protocols;
	info.gid = -1;
	info.uid = -1;
	C.ctx = lws_create_context(&info);
	if (!C.ctx || !C.ns)
		return 1;
	clients_connect(port);
	while (C.established + C.failed < n_subs)
		lws_service(C.ctx, 100);
	if (C.failed) {
		fprintf(stderr, "bench_fanout: %d of %d subscribers failed\n",
			C.failed, n_subs);
		return 1;
	}
	if (write(ctl, &ready, 1) != 1)
		return 1;
	while (!C.done)
		lws_service(C.ctx, 1000);
	percentiles(&r);
	r.ok = 1;
	if (write(ctl, "Z", 1) != 1 || write(ctl, &r, sizeof(r)) != sizeof(r))
		return 1;
	lws_context_destroy(C.ctx);
	return 0;
}

/* ---- the baseline: a bare lws server on the daemon's loop ---- */

struct base_conn {
	struct lws *wsi;
	uint64_t sent; /* seq of the last event written */
	struct base_conn *next;
};

struct base {
	struct lws_context *ctx;
	struct lws_vhost *vh;
	struct eventbus *bus;
	const struct event *ev; /* the event being sent (a reference) */
	struct base_conn *conns;
	unsigned char buf[LWS_PRE + BASE_MSG_MAX];
};

static struct base Base;

static int base_write(struct base_conn *bc)
{
	const struct event *ev = Base.ev;

	if (!ev || bc->sent == ev->seq || ev->json_len > BASE_MSG_MAX)
		return 0;
	bc->sent = ev->seq;
	memcpy(Base.buf + LWS_PRE, ev->json, ev->json_len);
	return lws_write(bc->wsi, Base.buf + LWS_PRE, ev->json_len,
			 LWS_WRITE_TEXT) < (int)ev->json_len
		   ? -1
		   : 0;
}

static void base_forget(struct base_conn *bc)
{
	for (struct base_conn **pp = &Base.conns; *pp; pp = &(*pp)->next)
		if (*pp == bc) {
			*pp = bc->next;
			return;
		}
}

static int base_cb(struct lws *wsi, enum lws_callback_reasons reason,
		   void *user, void *in, size_t len)
{
	struct base_conn *bc = user;

	switch (reason) {
	case LWS_CALLBACK_ESTABLISHED:
		bc->wsi = wsi;
		bc->next = Base.conns;
		Base.conns = bc;
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return base_write(bc);
	case LWS_CALLBACK_CLOSED:
		base_forget(bc);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static const struct lws_protocols base_protocols[] = {
    {"tunerd.v1", base_cb, sizeof(struct base_conn), BASE_MSG_MAX, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* The bus hands over the serialised event: every connection sends it. */
static void base_on_event(const struct event *ev, void *arg)
{
	(void)arg;
	if (Base.ev)
		event_put(Base.ev);
	Base.ev = event_get(ev);
	for (struct base_conn *bc = Base.conns; bc; bc = bc->next)
		lws_callback_on_writable(bc->wsi);
}

static int base_start(struct loop *l)
{
	struct lws_context_creation_info info;
	void *loops[1] = {loop_uv(l)};

	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	info.options =
	    LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_LIBUV;
	info.foreign_loops = loops;
	info.pcontext = &Base.ctx;
	info.gid = -1;
	info.uid = -1;
	Base.ctx = lws_create_context(&info);
	info.vhost_name = "baseline";
	info.protocols = base_protocols;
	Base.vh = Base.ctx ? lws_create_vhost(Base.ctx, &info) : NULL;
	Base.bus = eventbus_new(64);
	if (!Base.vh || !Base.bus || eventbus_set_box(Base.bus, "bench"))
		return -1;
	return eventbus_subscribe(Base.bus, base_on_event, NULL) < 0 ? -1 : 0;
}

static void count_closing(uv_handle_t *h, void *arg)
{
	*(int *)arg += uv_is_closing(h) != 0;
}

/* lws 4.1 on a foreign loop: destroy, let the loop close its handles,
 * destroy again to free the context. */
static void base_stop(struct loop *l)
{
	if (Base.ctx)
		lws_context_destroy(Base.ctx);
	for (int i = 0; i < FREE_TURNS_MAX; i++) {
		int closing = 0;

		uv_walk(loop_uv(l), count_closing, &closing);
		if (!closing)
			break;
		loop_run_once(l, 0);
	}
	if (Base.ctx)
		lws_context_destroy(Base.ctx);
	if (Base.ev)
		event_put(Base.ev);
	eventbus_free(Base.bus);
}

/* ---- the server side (parent process) ---- */

struct server {
	struct loop *loop;
	struct daemon d;
	struct ws_server *ws;
	int listen[SIDES], port[SIDES];
	int ctl[SIDES]; /* to each side's child */
	pid_t child[SIDES];
	int ready, reported;
	int next_side;
	int rounds_published;
	struct result res[SIDES];
	int failed;
};

static struct server S;

static int listen_any(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 4096) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		perror("bench_fanout: listen");
		exit(1);
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* Each side adopts its sockets: the front's way for tunerd, lws's own
 * for the baseline. */
static void on_accept(struct loop *l, int lfd, unsigned int ev, void *arg)
{
	int side = (int)(intptr_t)arg, fd;

	(void)l;
	(void)ev;
	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >=
	       0) {
		if (side == SIDE_TUNERD)
			ws_adopt(S.ws, fd, NULL, 0);
		else if (!lws_adopt_socket_vhost(Base.vh, fd))
			S.failed = 1;
	}
}

/* One event, on one side; it carries its publication time. */
static void publish(int side)
{
	struct eventbus *bus = side == SIDE_TUNERD ? S.d.events : Base.bus;

	eventbus_publish(bus, "bench.tick", EVENTBUS_NO_TUNER,
			 json_pack("{s:I}", "t_ns", (json_int_t)now_ns()));
}

static void next_round(void)
{
	if (S.rounds_published == SIDES * (WARMUP_ROUNDS + n_rounds))
		return; /* the child reports next */
	S.rounds_published++;
	publish(S.next_side);
	S.next_side = !S.next_side;
}

/* A child: 'R' ready, 'A' the round arrived everywhere, 'Z' results. */
static void on_ctl(struct loop *l, int fd, unsigned int ev, void *arg)
{
	int side = (int)(intptr_t)arg;
	char c;

	(void)ev;
	if (read(fd, &c, 1) != 1) {
		loop_stop(l); /* the child died: res[side].ok stays 0 */
		return;
	}
	if (c == 'R' && ++S.ready == SIDES)
		next_round();
	if (c == 'A')
		next_round();
	if (c != 'Z')
		return;
	if (read(fd, &S.res[side], sizeof(S.res[side])) != sizeof(S.res[side]))
		S.res[side].ok = 0;
	loop_del_fd(l, fd);
	if (++S.reported == SIDES)
		loop_stop(l);
}

static int server_start(void)
{
	S.loop = loop_new();
	S.d.loop = S.loop;
	S.d.events = eventbus_new(4096);
	snprintf(S.d.name, sizeof(S.d.name), "bench");
	if (!S.d.events || eventbus_set_box(S.d.events, S.d.name))
		return -1;
	S.ws = ws_server_new(&S.d, NULL, NULL);
	if (!S.ws || base_start(S.loop))
		return -1;
	for (int s = 0; s < SIDES; s++)
		if (loop_add_fd(S.loop, S.listen[s], LOOP_READ, on_accept,
				(void *)(intptr_t)s) ||
		    loop_add_fd(S.loop, S.ctl[s], LOOP_READ, on_ctl,
				(void *)(intptr_t)s))
			return -1;
	return 0;
}

static void server_stop(void)
{
	event_streams_stop(&S.d);
	for (int s = 0; s < SIDES; s++) {
		loop_del_fd(S.loop, S.listen[s]);
		loop_del_fd(S.loop, S.ctl[s]);
	}
	ws_server_free(S.ws);
	base_stop(S.loop);
	eventbus_free(S.d.events);
	loop_free(S.loop);
}

/* ---- main ---- */

static void raise_nofile(int need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)need) {
		rl.rlim_cur =
		    rl.rlim_max < (rlim_t)need ? rl.rlim_max : (rlim_t)need;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void parse_args(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--subscribers"))
			n_subs = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--events"))
			n_rounds = atoi(argv[i + 1]);
	}
	if (n_subs < 1 || n_subs > MAX_SUBS || n_rounds < 1) {
		fprintf(stderr,
			"usage: bench_fanout [--subscribers 1..%d] "
			"[--events N]\n",
			MAX_SUBS);
		exit(2);
	}
}

static void report(const struct result r[SIDES])
{
	printf("bench_fanout: %d subscribers per side, %d events each "
	       "(publish -> receipt, same host, same bytes, lws clients)\n",
	       n_subs, n_rounds);
	printf("  %-40s p50 %8.1f us  p99 %8.1f us\n",
	       "bare lws server, same loop (baseline):", r[SIDE_BASE].p50,
	       r[SIDE_BASE].p99);
	printf("  %-40s p50 %8.1f us  p99 %8.1f us\n",
	       "tunerd: bus -> hub -> WebSocket server:", r[SIDE_TUNERD].p50,
	       r[SIDE_TUNERD].p99);
	printf("  %-40s p50 %8.2f     p99 %8.2f\n", "ratio tunerd / baseline:",
	       r[SIDE_TUNERD].p50 / r[SIDE_BASE].p50,
	       r[SIDE_TUNERD].p99 / r[SIDE_BASE].p99);
}

/* Each side's subscribers in a child of their own, forked before any
 * loop or lws context exists. */
static int spawn_children(void)
{
	for (int s = 0; s < SIDES; s++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			return -1;
		S.child[s] = fork();
		if (S.child[s] == 0) {
			close(sv[0]);
			for (int t = 0; t < SIDES; t++)
				close(S.listen[t]);
			_exit(clients_main(sv[1], S.port[s]));
		}
		close(sv[1]);
		S.ctl[s] = sv[0];
		if (S.child[s] < 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int ok = 1;

	parse_args(argc, argv);
	raise_nofile(2 * n_subs + 256);
	lws_set_log_level(LLL_ERR, NULL);
	for (int s = 0; s < SIDES; s++)
		S.listen[s] = listen_any(&S.port[s]);
	if (spawn_children() || server_start()) {
		fprintf(stderr, "bench_fanout: cannot start\n");
		return 1;
	}
	loop_run(S.loop);
	server_stop();
	for (int s = 0; s < SIDES; s++) {
		int status = 0;

		close(S.listen[s]);
		close(S.ctl[s]);
		waitpid(S.child[s], &status, 0);
		ok &= S.res[s].ok;
	}
	if (!ok || S.failed) {
		fprintf(stderr, "bench_fanout: the run failed (%s)\n",
			S.failed ? "adoption" : "subscribers");
		return 1;
	}
	report(S.res);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * bench_fanout - event fan-out latency to N WebSocket subscribers (default
 * 1000), from the publication of an event to its receipt, p50/p99, and
 * the REST API's latency while the events fan out.
 *
 * Both sides serve the same bytes to the same client stack, on the same
 * loop, and differ only in what tunerd adds:
 *  - tunerd: the daemon's network API in process (api_start(): the HTTP
 *    front on a real listening port with its accept, peek, connection
 *    classes, MHD's upgrade and the WebSocket server), fed by
 *    eventbus_publish() on the daemon's bus through the event stream hub
 *    (filters, queues); the subscribers connect to the front's port as
 *    any client does;
 *  - baseline: a bare WebSocket server of the same libraries on the same
 *    loop (libmicrohttpd's upgrade, wslay's framing) with a listening
 *    socket of its own, fed by eventbus_publish() on a second bus of the
 *    same box name, which writes each event's serialised text (the very
 *    bytes the hub sends) to every connection at once.
 * The subscribers are N libwebsockets clients per side, each side's in a
 * child process of its own (bench_fanout_clients.c).  Rounds alternate,
 * one event at a time: a child says when all its N got it, the parent
 * publishes the next one on the other side, so the load of a shared
 * machine falls on both alike.  R runs of E rounds (after a warm-up)
 * give R p50/p99 pairs per side: their medians and spread are printed.
 *
 * Then the load phase, tunerd only: bursts of B events (one per tuner,
 * as status samples come) every P ms to the N subscribers, while a REST
 * client (a child with libcurl) times GET /api/v1/tuners, against the
 * same client's figures on the idle daemon just before.  The WebSocket
 * server's counters tell the messages per write.
 *
 *   bench_fanout [--subscribers N] [--events E] [--runs R]
 *                [--load-events B] [--load-ms P] [--probes K]
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
#include <unistd.h>

#include "bench_fanout.h"
#include "bench_proc.h"
#include "daemon.h"
#include "event_stream.h"
#include "eventbus.h"
#include "http_front.h"
#include "loop.h"
#include "net_api.h"
#include "ws.h"

#define MAX_SUBS    5000
#define MAX_RUNS    15
#define SIDES       2
#define SIDE_BASE   0
#define SIDE_TUNERD 1
#define PROBER      SIDES /* the third child */
#define CHILDREN    3
/* What a status sample carries besides the envelope, about. */
#define LOAD_PAD 300

static struct fanout_args A = {
    .subs = 1000, .rounds = 200, .runs = 5, .probes = 500, .probe_us = 2000};
static int load_events = 64, load_ms = 250;

/* ---- the server side (parent process) ---- */

enum phase { PH_ROUNDS, PH_IDLE_PROBE, PH_LOAD_PROBE, PH_DONE };

struct server {
	struct loop *loop;
	struct daemon d;
	struct ws_server *ws; /* the front's */
	int base_listen;
	int port[SIDES];
	int ctl[CHILDREN];
	pid_t child[CHILDREN];
	int ready, gone;
	int next_side;
	int rounds_published, acks;
	int reported[SIDES];
	struct fanout_result res[MAX_RUNS][SIDES];
	enum phase phase;
	uint64_t load_timer;
	long load_published;
	struct fanout_result rest_idle, rest_load, load_lat;
	struct ws_stats ws_before, ws_after;
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

/* The baseline's libmicrohttpd takes its accepted sockets. */
static void on_base_accept(struct loop *l, int lfd, unsigned int ev, void *arg)
{
	int fd;

	(void)l;
	(void)ev;
	(void)arg;
	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >=
	       0)
		if (fanout_base_adopt(fd))
			S.failed = 1;
}

/* One round's event, on one side; it carries its publication time. */
static void publish(int side)
{
	struct eventbus *bus =
	    side == SIDE_TUNERD ? S.d.events : fanout_base_bus();

	eventbus_publish(
	    bus, "bench.tick", EVENTBUS_NO_TUNER,
	    json_pack("{s:I}", "t_ns", (json_int_t)bench_now_ns()));
}

static long load_burst(struct loop *l, uint64_t id, void *arg)
{
	static char pad[LOAD_PAD + 1];

	(void)l;
	(void)id;
	(void)arg;
	if (!pad[0])
		memset(pad, 'x', LOAD_PAD);
	for (int t = 1; t <= load_events; t++)
		eventbus_publish(S.d.events, "bench.load", t,
				 json_pack("{s:I,s:s}", "l_ns",
					   (json_int_t)bench_now_ns(), "pad",
					   pad));
	S.load_published += load_events;
	return load_ms;
}

static void tell(int child, char c)
{

	if (write(S.ctl[child], &c, 1) != 1)
		S.failed = 1;
}

/* Subscribers stop once each has the load's events (bench_fanout.h). */
static void tell_quit(int child, uint64_t events)
{
	char buf[1 + sizeof(events)] = {'Q'};

	memcpy(buf + 1, &events, sizeof(events));
	if (write(S.ctl[child], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		S.failed = 1;
}

/* The prober answered: idle -> load -> done (the subscribers drain). */
static void probe_done(const struct fanout_result *r)
{
	if (S.phase == PH_IDLE_PROBE) {
		S.rest_idle = *r;
		S.phase = PH_LOAD_PROBE;
		ws_server_stats(S.ws, &S.ws_before);
		tell(SIDE_TUNERD, 'L');
		S.load_timer = loop_add_timer(S.loop, 1, load_burst, NULL);
		tell(PROBER, 'P');
		return;
	}
	S.rest_load = *r;
	S.phase = PH_DONE;
	loop_del_timer(S.loop, S.load_timer);
	ws_server_stats(S.ws, &S.ws_after);
	tell_quit(SIDE_BASE, 0);
	tell_quit(SIDE_TUNERD, (uint64_t)S.load_published);
	tell(PROBER, 'Q');
}

static void next_round(void)
{
	if (S.rounds_published ==
	    A.runs * SIDES * (FANOUT_WARMUP_ROUNDS + A.rounds)) {
		if (S.phase == PH_ROUNDS) {
			S.phase = PH_IDLE_PROBE;
			tell(PROBER, 'P');
		}
		return;
	}
	S.rounds_published++;
	publish(S.next_side);
	S.next_side = !S.next_side;
}

/* The figures after a tag: written with it in one write, so they are
 * there (the loop made the socket non-blocking). */
static int read_result(int fd, struct fanout_result *r)
{
	if (recv(fd, r, sizeof(*r), MSG_WAITALL) != sizeof(*r))
		r->ok = 0;
	return r->ok ? 0 : -1;
}

/* A child wrote (bench_fanout.h). */
static void on_ctl(struct loop *l, int fd, unsigned int ev, void *arg)
{
	int who = (int)(intptr_t)arg;
	struct fanout_result r = {0};
	char c;

	(void)ev;
	if (read(fd, &c, 1) != 1) {
		loop_del_fd(l, fd);
		/* A child that ends early fails the run; at the end the loop
		 * runs until every child is gone, so that none sees its
		 * connections closed under it. */
		if (S.phase != PH_DONE)
			S.failed = 1;
		if (S.failed || ++S.gone == CHILDREN)
			loop_stop(l);
		return;
	}
	if (c == 'R') {
		if (++S.ready == SIDES)
			next_round();
	} else if (c == 'A')
		next_round();
	else if (c == 'Z' && !read_result(fd, &r) && S.reported[who] < MAX_RUNS)
		S.res[S.reported[who]++][who] = r;
	else if (c == 'Y' && who == PROBER && !read_result(fd, &r))
		probe_done(&r);
	else if (c == 'Y' && !read_result(fd, &r) && who == SIDE_TUNERD)
		S.load_lat = r;
	else if (c != 'Y')
		S.failed = 1;
}

static int front_start(void)
{
	char conns[16];
	struct net_api *net;

	/* Both classes hold every subscriber: the subscribers connect all
	 * at once and count as requests until their heads are read. */
	snprintf(conns, sizeof(conns), "%d", A.subs + 64);
	if (api_option(&S.d, "listen", "127.0.0.1:0") ||
	    api_option(&S.d, "status-interval-ms", "0") ||
	    api_option(&S.d, "max-request-conns", conns) ||
	    api_option(&S.d, "max-stream-conns", conns) || api_start(&S.d))
		return -1;
	net = net_api_of(&S.d);
	S.port[SIDE_TUNERD] = http_front_port(net->front);
	S.ws = http_front_ws(net->front);
	return S.ws ? 0 : -1;
}

static int server_start(void)
{
	S.loop = loop_new();
	S.d.loop = S.loop;
	S.d.events = eventbus_new(4096);
	snprintf(S.d.name, sizeof(S.d.name), "bench");
	if (!S.d.events || eventbus_set_box(S.d.events, S.d.name))
		return -1;
	if (front_start() || fanout_base_start(S.loop))
		return -1;
	return loop_add_fd(S.loop, S.base_listen, LOOP_READ, on_base_accept,
			   NULL);
}

static void server_stop(void)
{
	loop_del_fd(S.loop, S.base_listen);
	for (int i = 0; i < CHILDREN; i++)
		if (S.gone < CHILDREN)
			loop_del_fd(S.loop, S.ctl[i]);
	api_stop(&S.d);
	fanout_base_stop(S.loop);
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

static int *arg_slot(const char *name)
{
	static const struct {
		const char *name;
		int *v;
	} slots[] = {
	    {"--subscribers", &A.subs}, {"--events", &A.rounds},
	    {"--runs", &A.runs},        {"--load-events", &load_events},
	    {"--load-ms", &load_ms},    {"--probes", &A.probes}};

	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		if (!strcmp(name, slots[i].name))
			return slots[i].v;
	return NULL;
}

static void parse_args(int argc, char **argv)
{
	int bad = argc % 2 == 0;

	for (int i = 1; i + 1 < argc && !bad; i += 2) {
		int *v = arg_slot(argv[i]);

		if (v)
			*v = atoi(argv[i + 1]);
		bad = !v;
	}
	if (bad || A.subs < 1 || A.subs > MAX_SUBS || A.rounds < 1 ||
	    A.runs < 1 || A.runs > MAX_RUNS || load_events < 1 || load_ms < 1 ||
	    A.probes < 10) {
		fprintf(stderr,
			"usage: bench_fanout [--subscribers 1..%d] [--events "
			"E] [--runs 1..%d] [--load-events B] [--load-ms P] "
			"[--probes K>=10]\n",
			MAX_SUBS, MAX_RUNS);
		exit(2);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* "median (min..max)" of v[0..n), sorted in place. */
static void print_spread(const char *label, double *v, int n, const char *unit)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	printf("  %-28s %9.2f %s  (%.2f .. %.2f)\n", label, v[n / 2], unit,
	       v[0], v[n - 1]);
}

static void report_rounds(void)
{
	double v[6][MAX_RUNS];

	printf("bench_fanout: %d subscribers per side, %d runs of %d events "
	       "(publish -> receipt; tunerd through its front's port)\n",
	       A.subs, A.runs, A.rounds);
	printf("  run  baseline p50/p99 (us)   tunerd p50/p99 (us)   ratio "
	       "p50/p99\n");
	for (int i = 0; i < A.runs; i++) {
		const struct fanout_result *b = &S.res[i][SIDE_BASE],
					   *t = &S.res[i][SIDE_TUNERD];

		v[0][i] = b->p50;
		v[1][i] = b->p99;
		v[2][i] = t->p50;
		v[3][i] = t->p99;
		v[4][i] = t->p50 / b->p50;
		v[5][i] = t->p99 / b->p99;
		printf("  %3d  %9.1f %9.1f     %9.1f %9.1f      %5.2f %5.2f\n",
		       i + 1, b->p50, b->p99, t->p50, t->p99, v[4][i], v[5][i]);
	}
	printf("  median of %d runs (min .. max):\n", A.runs);
	print_spread("baseline p50", v[0], A.runs, "us");
	print_spread("baseline p99", v[1], A.runs, "us");
	print_spread("tunerd p50", v[2], A.runs, "us");
	print_spread("tunerd p99", v[3], A.runs, "us");
	print_spread("ratio tunerd/baseline p50", v[4], A.runs, "x");
	print_spread("ratio tunerd/baseline p99", v[5], A.runs, "x");
}

static void report_load(void)
{
	const struct ws_stats *a = &S.ws_after, *b = &S.ws_before;
	uint64_t batches = a->batches - b->batches;
	uint64_t msgs = a->messages - b->messages;

	printf("load: %d events every %d ms to %d subscribers (tunerd), %ld "
	       "published\n",
	       load_events, load_ms, A.subs, S.load_published);
	printf("  event latency       p50 %9.1f us  p99 %9.1f us  max %9.1f "
	       "us  (%ld receipts of %ld)\n",
	       S.load_lat.p50, S.load_lat.p99, S.load_lat.max, S.load_lat.n,
	       S.load_published * A.subs);
	if (S.load_lat.closed)
		printf("  subscribers closed by the server (slow consumers): "
		       "%ld of %d\n",
		       S.load_lat.closed, A.subs);
	printf("  GET /api/v1/tuners  idle:    p50 %7.1f us  p99 %7.1f us\n",
	       S.rest_idle.p50, S.rest_idle.p99);
	printf("  GET /api/v1/tuners  fan-out: p50 %7.1f us  p99 %7.1f us  "
	       "(p99 %.2fx idle)\n",
	       S.rest_load.p50, S.rest_load.p99,
	       S.rest_load.p99 / S.rest_idle.p99);
	printf(
	    "  WebSocket writes: %llu batches, %llu messages, %.1f "
	    "messages per write (max %llu), %llu deferred to the next turn\n",
	    (unsigned long long)batches, (unsigned long long)msgs,
	    batches ? (double)msgs / (double)batches : 0.0,
	    (unsigned long long)a->max_batch,
	    (unsigned long long)(a->deferred - b->deferred));
}

/* A child, forked once the servers listen (it uses neither their loop nor
 * the lws contexts of its clients, and leaves by _exit()). */
static int spawn(int who)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	S.child[who] = fork();
	if (S.child[who] == 0) {
		close(sv[0]);
		if (who == PROBER)
			_exit(
			    fanout_prober_main(&A, sv[1], S.port[SIDE_TUNERD]));
		_exit(fanout_subscribers_main(&A, sv[1], S.port[who]));
	}
	close(sv[1]);
	S.ctl[who] = sv[0];
	if (S.child[who] < 0)
		return -1;
	return loop_add_fd(S.loop, sv[0], LOOP_READ, on_ctl,
			   (void *)(intptr_t)who);
}

int main(int argc, char **argv)
{
	int ok = 1;

	parse_args(argc, argv);
	raise_nofile(2 * A.subs + 1024);
	lws_set_log_level(LLL_ERR, NULL);
	S.base_listen = listen_any(&S.port[SIDE_BASE]);
	if (server_start()) {
		fprintf(stderr, "bench_fanout: cannot start\n");
		return 1;
	}
	for (int i = 0; i < CHILDREN; i++)
		if (spawn(i)) {
			fprintf(stderr, "bench_fanout: cannot fork\n");
			return 1;
		}
	loop_run(S.loop);
	server_stop();
	for (int i = 0; i < CHILDREN; i++) {
		int status = 0;

		close(S.ctl[i]);
		waitpid(S.child[i], &status, 0);
		ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fprintf(stderr, "bench_fanout: child %d: status 0x%x\n",
				i, status);
	}
	close(S.base_listen);
	if (!ok || S.failed || S.reported[SIDE_BASE] != A.runs ||
	    S.reported[SIDE_TUNERD] != A.runs) {
		fprintf(stderr,
			"bench_fanout: the run failed (children %s, runs "
			"reported %d and %d of %d%s)\n",
			ok ? "ok" : "failed", S.reported[SIDE_BASE],
			S.reported[SIDE_TUNERD], A.runs,
			S.failed ? ", a child broke off" : "");
		return 1;
	}
	report_rounds();
	report_load();
	return 0;
}

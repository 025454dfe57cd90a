// SPDX-License-Identifier: MIT
/*
 * bench_fanout - event fan-out latency to N WebSocket subscribers (default
 * 1000), from eventbus_publish() to the subscriber's receipt, p50/p99.
 *
 * The daemon's real event path runs in process: the loop, the event bus,
 * the event stream hub and the WebSocket server (ws_adopt() on accepted
 * sockets, as the HTTP front does).  Each event carries its publish time
 * (CLOCK_MONOTONIC); N libwebsockets clients in another thread note when
 * it arrives.
 *
 * Baseline, same run: the loop thread writes the same kind of message to
 * N plain TCP sockets with send(), and N plain sockets read it in another
 * thread.  The ratio says what the WebSocket stream costs over the bare
 * system-call fan-out.  Baseline and WebSocket rounds alternate, one
 * event at a time (the next once every subscriber got the last), so the
 * load of a shared machine falls on both alike.
 *
 *   bench_fanout [--subscribers N] [--events E]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <libwebsockets.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "event_stream.h"
#include "eventbus.h"
#include "loop.h"
#include "ws.h"

#define MAX_SUBS         5000
#define WARMUP_ROUNDS    10
#define ROUND_TIMEOUT_MS 5000

struct bench {
	int n, rounds;
	struct loop *loop;
	struct daemon d;
	int ws_listen, tcp_listen, ws_port, tcp_port;
	int tcp_fds[MAX_SUBS];
	atomic_int ntcp;
	atomic_int established, failed;
	atomic_int received; /* this round */
	atomic_int recording;
	/* Receipt latencies (ns) of the kind of round running. */
	struct samples {
		uint64_t *ns;
		atomic_size_t n;
	} tcp, ws, *_Atomic cur;
	atomic_int stop, ws_done;
	struct lws_context *_Atomic cctx;
};

static struct bench B;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

	nanosleep(&ts, NULL);
}

/* A receipt: the JSON message carries its publish time in "t_ns". */
static void note_receipt(const char *msg, size_t len)
{
	uint64_t t = now_ns();
	json_t *j = json_loadb(msg, len, 0, NULL);
	json_t *v = json_object_get(j, "t_ns");

	if (json_is_integer(v) && atomic_load(&B.recording)) {
		struct samples *sm = atomic_load(&B.cur);
		size_t i = atomic_fetch_add(&sm->n, 1);

		if (i < (size_t)B.n * (size_t)B.rounds)
			sm->ns[i] = t - (uint64_t)json_integer_value(v);
	}
	if (v)
		atomic_fetch_add(&B.received, 1);
	json_decref(j);
}

/* ---- the server side, in the loop thread ---- */

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

static void nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void ws_accept(struct loop *l, int lfd, unsigned int ev, void *arg)
{
	int fd;

	(void)l;
	(void)ev;
	(void)arg;
	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >=
	       0)
		ws_adopt(&B.d, fd);
}

static void tcp_accept(struct loop *l, int lfd, unsigned int ev, void *arg)
{
	int fd;

	(void)l;
	(void)ev;
	(void)arg;
	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >=
	       0) {
		int i = atomic_load(&B.ntcp);

		if (i == MAX_SUBS) {
			close(fd);
			continue;
		}
		nodelay(fd);
		B.tcp_fds[i] = fd;
		atomic_store(&B.ntcp, i + 1);
	}
}

static void publish_ws(void *arg)
{
	(void)arg;
	eventbus_publish(B.d.events, "bench.tick", EVENTBUS_NO_TUNER,
			 json_pack("{s:I}", "t_ns", (json_int_t)now_ns()));
}

/* The baseline: one message formatted once, written to every socket. */
static void publish_tcp(void *arg)
{
	char msg[128];
	int len, n = atomic_load(&B.ntcp);

	(void)arg;
	len = snprintf(msg, sizeof(msg),
		       "{\"type\":\"bench.tick\",\"t_ns\":%llu}\n",
		       (unsigned long long)now_ns());
	for (int i = 0; i < n; i++)
		if (send(B.tcp_fds[i], msg, (size_t)len,
			 MSG_NOSIGNAL | MSG_DONTWAIT) != len)
			fprintf(stderr, "bench_fanout: short send\n");
}

static void server_stop(void *arg)
{
	(void)arg;
	event_streams_stop(&B.d);
	for (int i = 0; i < atomic_load(&B.ntcp); i++)
		close(B.tcp_fds[i]);
	loop_stop(B.loop);
}

static void *loop_thread(void *arg)
{
	(void)arg;
	loop_run(B.loop);
	return NULL;
}

/* ---- the subscribers ---- */

static int client_cb(struct lws *wsi, enum lws_callback_reasons reason,
		     void *user, void *in, size_t len)
{
	(void)wsi;
	(void)user;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		atomic_fetch_add(&B.established, 1);
		break;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		atomic_fetch_add(&B.failed, 1);
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
    {"tunerd.v1", client_cb, 0, 0, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void *ws_clients(void *arg)
{
	struct lws_context_creation_info info;
	struct lws_client_connect_info ci;

	(void)arg;
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = client_protocols;
	info.gid = -1;
	info.uid = -1;
	B.cctx = lws_create_context(&info);
	if (!B.cctx) {
		fprintf(stderr, "bench_fanout: no lws client context\n");
		exit(1);
	}
	for (int i = 0; i < B.n; i++) {
		memset(&ci, 0, sizeof(ci));
		ci.context = B.cctx;
		ci.address = "127.0.0.1";
		ci.port = B.ws_port;
		ci.path = "/api/v1/events?types=bench.tick";
		ci.host = "127.0.0.1";
		ci.origin = "127.0.0.1";
		ci.protocol = "tunerd.v1";
		if (!lws_client_connect_via_info(&ci))
			atomic_fetch_add(&B.failed, 1);
	}
	while (!atomic_load(&B.stop))
		lws_service(B.cctx, 0);
	lws_context_destroy(B.cctx);
	atomic_store(&B.ws_done, 1);
	return NULL;
}

struct line_buf {
	char buf[512];
	size_t len;
};

static void tcp_read(int fd, struct line_buf *lb)
{
	ssize_t n;
	char *nl;

	while ((n = recv(fd, lb->buf + lb->len, sizeof(lb->buf) - lb->len,
			 MSG_DONTWAIT)) > 0) {
		lb->len += (size_t)n;
		while ((nl = memchr(lb->buf, '\n', lb->len))) {
			size_t one = (size_t)(nl - lb->buf) + 1;

			note_receipt(lb->buf, one - 1);
			memmove(lb->buf, lb->buf + one, lb->len - one);
			lb->len -= one;
		}
		if (lb->len == sizeof(lb->buf))
			lb->len = 0;
	}
}

static void *tcp_clients(void *arg)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)B.tcp_port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct line_buf *lbs = calloc((size_t)B.n, sizeof(*lbs));
	int *fds = calloc((size_t)B.n, sizeof(*fds));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event evs[256];

	(void)arg;
	for (int i = 0; i < B.n; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};

		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (connect(fds[i], (struct sockaddr *)&a, sizeof(a)) < 0) {
			perror("bench_fanout: connect");
			exit(1);
		}
		nodelay(fds[i]);
		epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
	}
	while (!atomic_load(&B.stop)) {
		int n = epoll_wait(ep, evs, 256, 50);

		for (int i = 0; i < n; i++)
			tcp_read(fds[evs[i].data.u32], &lbs[evs[i].data.u32]);
	}
	for (int i = 0; i < B.n; i++)
		close(fds[i]);
	close(ep);
	free(fds);
	free(lbs);
	return NULL;
}

/* ---- measuring ---- */

static int wait_count(atomic_int *v, int want, int ms)
{
	for (int i = 0; i < ms * 10; i++) {
		if (atomic_load(v) >= want)
			return 0;
		sleep_us(100);
	}
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One event to every subscriber of a kind; 0 once all got it. */
static int one_round(void (*publish)(void *), struct samples *sm, int record)
{
	atomic_store(&B.cur, sm);
	atomic_store(&B.recording, record);
	atomic_store(&B.received, 0);
	loop_post(B.loop, publish, NULL);
	if (wait_count(&B.received, B.n, ROUND_TIMEOUT_MS)) {
		fprintf(stderr, "bench_fanout: %d of %d arrived\n",
			atomic_load(&B.received), B.n);
		return -1;
	}
	atomic_store(&B.recording, 0);
	sleep_us(2000);
	return 0;
}

static void percentiles(struct samples *sm, double *p50, double *p99)
{
	size_t n = atomic_load(&sm->n);

	qsort(sm->ns, n, sizeof(*sm->ns), cmp_u64);
	*p50 = sm->ns[n / 2] / 1000.0;
	*p99 = sm->ns[n * 99 / 100] / 1000.0;
}

/* Baseline and WebSocket rounds alternate, so that the load of a shared
 * machine falls on both alike.  Percentiles in microseconds. */
static int run_rounds(double *b50, double *b99, double *w50, double *w99)
{
	for (int r = 0; r < WARMUP_ROUNDS + B.rounds; r++)
		if (one_round(publish_tcp, &B.tcp, r >= WARMUP_ROUNDS) ||
		    one_round(publish_ws, &B.ws, r >= WARMUP_ROUNDS))
			return -1;
	percentiles(&B.tcp, b50, b99);
	percentiles(&B.ws, w50, w99);
	return 0;
}

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
	B.n = 1000;
	B.rounds = 200;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--subscribers"))
			B.n = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--events"))
			B.rounds = atoi(argv[i + 1]);
	}
	if (B.n < 1 || B.n > MAX_SUBS || B.rounds < 1) {
		fprintf(stderr,
			"usage: bench_fanout [--subscribers 1..%d] "
			"[--events N]\n",
			MAX_SUBS);
		exit(2);
	}
}

/* The daemon's side: loop, bus, listeners; the loop runs in thread lt. */
static void server_start(pthread_t *lt)
{
	B.loop = loop_new();
	B.d.loop = B.loop;
	B.d.events = eventbus_new(4096);
	snprintf(B.d.name, sizeof(B.d.name), "bench");
	B.ws_listen = listen_any(&B.ws_port);
	B.tcp_listen = listen_any(&B.tcp_port);
	loop_add_fd(B.loop, B.ws_listen, LOOP_READ, ws_accept, NULL);
	loop_add_fd(B.loop, B.tcp_listen, LOOP_READ, tcp_accept, NULL);
	pthread_create(lt, NULL, loop_thread, NULL);
}

static void stop_all(pthread_t lt, pthread_t tt, pthread_t wt)
{
	atomic_store(&B.stop, 1);
	pthread_join(tt, NULL);
	/* The client thread sleeps in lws_service() until told. */
	while (!atomic_load(&B.ws_done)) {
		struct lws_context *c = atomic_load(&B.cctx);

		if (c)
			lws_cancel_service(c);
		sleep_us(10000);
	}
	pthread_join(wt, NULL);
	loop_post(B.loop, server_stop, NULL);
	pthread_join(lt, NULL);
	close(B.ws_listen);
	close(B.tcp_listen);
	eventbus_free(B.d.events);
	loop_free(B.loop);
}

static void report(double b50, double b99, double w50, double w99)
{
	printf("bench_fanout: %d subscribers, %d events each "
	       "(publish -> receipt, same host)\n",
	       B.n, B.rounds);
	printf("  plain TCP send() fan-out (baseline): p50 %8.1f us  "
	       "p99 %8.1f us\n",
	       b50, b99);
	printf("  WebSocket event stream:              p50 %8.1f us  "
	       "p99 %8.1f us\n",
	       w50, w99);
	printf("  ratio WebSocket / baseline:          p50 %8.2f     "
	       "p99 %8.2f\n",
	       w50 / b50, w99 / b99);
}

int main(int argc, char **argv)
{
	pthread_t lt, tt, wt;
	double b50, b99, w50, w99;
	int ok;

	parse_args(argc, argv);
	raise_nofile(4 * B.n + 256);
	lws_set_log_level(LLL_ERR, NULL);
	B.tcp.ns = calloc((size_t)B.n * (size_t)B.rounds, sizeof(uint64_t));
	B.ws.ns = calloc((size_t)B.n * (size_t)B.rounds, sizeof(uint64_t));
	server_start(&lt);
	pthread_create(&tt, NULL, tcp_clients, NULL);
	pthread_create(&wt, NULL, ws_clients, NULL);
	ok = wait_count(&B.ntcp, B.n, 30000) == 0 &&
	     wait_count(&B.established, B.n, 60000) == 0 &&
	     run_rounds(&b50, &b99, &w50, &w99) == 0;
	if (!ok)
		fprintf(stderr,
			"bench_fanout: %d WebSocket clients up, %d failed\n",
			atomic_load(&B.established), atomic_load(&B.failed));
	stop_all(lt, tt, wt);
	if (ok)
		report(b50, b99, w50, w99);
	free(B.tcp.ns);
	free(B.ws.ns);
	return ok ? 0 : 1;
}

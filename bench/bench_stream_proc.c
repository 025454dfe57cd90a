// SPDX-License-Identifier: MIT
/*
 * bench_stream_proc.c - bench_stream's other processes: the transport
 * stream source (what the simulated box serves on PATH.ts<N>) and the
 * bare relay the daemon is compared with.  Both die with the bench
 * (PR_SET_PDEATHSIG).
 */
#define _GNU_SOURCE
#include "bench_proc.h"
#include "bench_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS   64
#define MAX_TUNERS  16
#define CYCLE_PIDS  8
#define CYCLE_PKTS  (CYCLE_PIDS * 128) /* each PID a multiple of 16 */
#define SOURCE_TICK 2                  /* ms between writes */

double bench_cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the name may hold spaces */
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%lu %lu",
			 &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static int unix_listen(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(a.sun_path))
		return -1;
	strcpy(a.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 16)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Signals the parent through a pipe that the child is ready. */
static pid_t fork_ready(int *ready_fd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		*ready_fd = p[1];
		return 0;
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return pid;
}

/* ---- the source ---- */

/* Two copies of the cycle, so that any write of up to one cycle is one
 * contiguous piece. */
static uint8_t *make_cycle(size_t *len)
{
	size_t n = (size_t)CYCLE_PKTS * BENCH_TS_PACKET;
	uint8_t *b = malloc(2 * n), cc[CYCLE_PIDS] = {0};

	if (!b)
		return NULL;
	memset(b, 0xA5, 2 * n);
	for (size_t i = 0; i < 2 * CYCLE_PKTS; i++) {
		uint8_t *p = b + i * BENCH_TS_PACKET;
		unsigned int k = i % CYCLE_PIDS, pid = 0x100 + k;

		p[0] = 0x47;
		p[1] = (uint8_t)(pid >> 8);
		p[2] = (uint8_t)pid;
		p[3] = (uint8_t)(0x10 | cc[k]);
		cc[k] = (cc[k] + 1) & 0x0F;
	}
	*len = n;
	return b;
}

struct feed {
	int fd;
	double t0;
	uint64_t sent;
	size_t off;
};

static void source_tick(struct feed *f, const uint8_t *cycle, size_t len,
			double rate_bps)
{
	double due = (bench_now_s() - f->t0) * rate_bps / 8;
	size_t want, chunk;
	ssize_t n;

	if (due <= (double)f->sent)
		return;
	want = (size_t)(due - (double)f->sent);
	want -= want % BENCH_TS_PACKET;
	while (want) {
		chunk = want < len ? want : len;
		n = write(f->fd, cycle + f->off, chunk);
		if (n <= 0)
			return; /* a reader this slow loses data: not here */
		f->sent += (uint64_t)n;
		f->off = (f->off + (size_t)n) % len;
		want -= (size_t)n;
	}
}

static void source_main(const char *sockpath, int ntuners, double rate_bps,
			int ready)
{
	struct feed feeds[MAX_CONNS];
	int lfd[MAX_TUNERS], nfeeds = 0;
	char path[256];
	size_t len;
	uint8_t *cycle = make_cycle(&len);

	for (int i = 0; i < ntuners; i++) {
		snprintf(path, sizeof(path), "%s.ts%d", sockpath, i + 1);
		lfd[i] = unix_listen(path);
		if (lfd[i] < 0 || !cycle)
			_exit(1);
		fcntl(lfd[i], F_SETFL, O_NONBLOCK);
	}
	if (write(ready, "r", 1) != 1)
		_exit(1);
	for (;;) {
		usleep(SOURCE_TICK * 1000);
		for (int i = 0; i < ntuners && nfeeds < MAX_CONNS; i++) {
			int fd = accept4(lfd[i], NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0)
				feeds[nfeeds++] =
				    (struct feed){fd, bench_now_s(), 0, 0};
		}
		for (int i = 0; i < nfeeds; i++)
			source_tick(&feeds[i], cycle, len, rate_bps);
	}
}

pid_t bench_source_start(const char *sockpath, int ntuners, double rate_bps)
{
	int ready = -1;
	pid_t pid = fork_ready(&ready);

	if (pid == 0) {
		signal(SIGPIPE, SIG_IGN);
		source_main(sockpath, ntuners, rate_bps, ready);
		_exit(0);
	}
	return pid;
}

/* ---- the bare relay ---- */

struct relay_tuner {
	int src;        /* -1 until a reader asks */
	int pipe[2];    /* splice mode: the source's pages */
	int tpipe[2];   /* and a copy (tee) for every reader but the last */
	int readers[8]; /* sockets */
	int nreaders;
};

struct relay {
	const char *sockpath;
	enum bench_relay_mode mode;
	int ep, lfd;
	struct relay_tuner t[MAX_TUNERS + 1];
	uint8_t buf[BENCH_SOURCE_READ];
};

static const char relay_head[] =
    "HTTP/1.0 200 OK\r\nContent-Type: video/mp2t\r\n\r\n";

static int relay_source(struct relay *r, int n)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct relay_tuner *t = &r->t[n];
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)n};

	if (t->src >= 0)
		return 0;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s.ts%d", r->sockpath, n);
	t->src = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (t->src < 0 || connect(t->src, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	if (r->mode == BENCH_RELAY_SPLICE &&
	    (pipe2(t->pipe, O_CLOEXEC) || pipe2(t->tpipe, O_CLOEXEC)))
		return -1;
	if (r->mode == BENCH_RELAY_SPLICE) {
		fcntl(t->pipe[0], F_SETPIPE_SZ, BENCH_SOURCE_READ * 2);
		fcntl(t->tpipe[0], F_SETPIPE_SZ, BENCH_SOURCE_READ * 2);
	}
	return epoll_ctl(r->ep, EPOLL_CTL_ADD, t->src, &ev);
}

/* A reader: its request (one read; the bench's readers send it in one
 * piece), the head, and a place beside its tuner's source. */
static void relay_accept(struct relay *r)
{
	char req[512];
	int fd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC), n;
	ssize_t got;

	if (fd < 0)
		return;
	got = read(fd, req, sizeof(req) - 1);
	req[got > 0 ? got : 0] = '\0';
	if (sscanf(req, "GET /api/v1/tuners/%d/stream", &n) != 1 || n < 1 ||
	    n > MAX_TUNERS || r->t[n].nreaders == 8 || relay_source(r, n) ||
	    write(fd, relay_head, sizeof(relay_head) - 1) < 0) {
		close(fd);
		return;
	}
	r->t[n].readers[r->t[n].nreaders++] = fd;
}

/* Blocking writes: the bench's readers keep up, as tunerd's do. */
static void relay_rw(struct relay *r, struct relay_tuner *t)
{
	ssize_t n = read(t->src, r->buf, sizeof(r->buf));

	if (n <= 0)
		_exit(0);
	for (int i = 0; i < t->nreaders; i++)
		for (ssize_t off = 0, w; off < n; off += w)
			if ((w = write(t->readers[i], r->buf + off,
				       (size_t)(n - off))) <= 0)
				_exit(1);
}

/* The source into a pipe; tee() it for all readers but the last, which
 * takes the pipe's pages themselves. */
static void relay_splice(struct relay_tuner *t)
{
	ssize_t n = splice(t->src, NULL, t->pipe[1], NULL, BENCH_SOURCE_READ,
			   SPLICE_F_MOVE);

	if (n <= 0)
		_exit(0);
	for (int i = 0; i < t->nreaders; i++) {
		ssize_t left = n, w;

		if (i + 1 < t->nreaders) {
			/* The copy is drained before the next one. */
			if (tee(t->pipe[0], t->tpipe[1], (size_t)n, 0) != n)
				_exit(1);
			while (left > 0 &&
			       (w = splice(t->tpipe[0], NULL, t->readers[i],
					   NULL, (size_t)left, SPLICE_F_MOVE)) >
				   0)
				left -= w;
		} else {
			while (left > 0 &&
			       (w = splice(t->pipe[0], NULL, t->readers[i],
					   NULL, (size_t)left, SPLICE_F_MOVE)) >
				   0)
				left -= w;
		}
		if (left)
			_exit(1);
	}
}

static void relay_main(struct relay *r, int ready)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 0}, evs[16];

	r->ep = epoll_create1(EPOLL_CLOEXEC);
	if (r->ep < 0 || epoll_ctl(r->ep, EPOLL_CTL_ADD, r->lfd, &ev) ||
	    write(ready, "r", 1) != 1)
		_exit(1);
	for (;;) {
		int n = epoll_wait(r->ep, evs, 16, -1);

		for (int i = 0; i < n; i++) {
			uint32_t k = evs[i].data.u32;

			if (!k)
				relay_accept(r);
			else if (r->mode == BENCH_RELAY_SPLICE)
				relay_splice(&r->t[k]);
			else
				relay_rw(r, &r->t[k]);
		}
	}
}

pid_t bench_relay_start(const char *sockpath, int port,
			enum bench_relay_mode mode)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int ready = -1, one = 1;
	pid_t pid = fork_ready(&ready);
	struct relay *r;

	if (pid != 0)
		return pid;
	signal(SIGPIPE, SIG_IGN);
	r = calloc(1, sizeof(*r));
	if (!r)
		_exit(1);
	r->sockpath = sockpath;
	r->mode = mode;
	for (int i = 0; i <= MAX_TUNERS; i++)
		r->t[i].src = -1;
	r->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(r->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (r->lfd < 0 || bind(r->lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(r->lfd, 64))
		_exit(1);
	relay_main(r, ready);
	_exit(0);
}

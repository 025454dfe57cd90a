// SPDX-License-Identifier: MIT
/*
 * bench_stream - tunerd streaming MPEG-TS: N tuners (default 6) at a
 * multiplex's rate (default 24 Mbit/s) to R readers each (default 2),
 * against bare relays of the same bytes to the same readers, in the same
 * run.
 *
 * It starts a transport stream source (bench_stream_proc.c: the sockets
 * PATH.ts<N> a simulated box serves), a simulated box with N MT2060 and
 * tunerd on it, and the relays.  The readers live in this process: N * R
 * connections reading GET /api/v1/tuners/<n>/stream (HTTP/1.0: the body
 * is the bare stream, no chunks), each checking its continuity counters.
 * Each server gets the readers for S seconds (default 20) after a second
 * of warm-up; the figures are the bytes the readers got in the window and
 * the CPU time the server process used in it (/proc/PID/stat), as CPU %
 * per 100 Mbit/s delivered, and the ratio tunerd / relay.
 *
 * Usage: bench_stream [--seconds S] [--tuners N] [--readers R]
 *                     [--rate-mbps M]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_proc.h"
#include "bench_stream.h"

#define MAX_READERS 64
#define READ_BUF    (256 * 1024)
#define WARMUP_S    1.0

struct reader {
	int fd;
	int in_body;
	char head[512];
	size_t head_len;
	uint8_t carry[BENCH_TS_PACKET];
	size_t carry_len;
	uint8_t cc[8192]; /* 0x10 | last, 0 unknown */
	uint64_t bytes, cc_errors;
};

struct result {
	double mbps, cpu_pct;
	uint64_t cc_errors;
	int readers_ok;
};

static struct {
	double seconds, rate_mbps;
	int tuners, readers;
} opt = {20.0, 24.0, 6, 2};

static int tcp_connect(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* GET path (HTTP/1.0): the whole answer, up to len - 1 bytes. */
static ssize_t http_get(int port, const char *path, char *buf, size_t len)
{
	int fd = tcp_connect(port);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	dprintf(fd, "GET %s HTTP/1.0\r\nHost: bench\r\n\r\n", path);
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

/* ---- the readers ---- */

static void count_packets(struct reader *r, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + BENCH_TS_PACKET <= n; i += BENCH_TS_PACKET) {
		unsigned int pid = ((unsigned int)p[i + 1] & 0x1F) << 8 |
				   p[i + 2],
			     cc = p[i + 3] & 0x0F;

		if (p[i] != 0x47) {
			r->cc_errors++; /* lost sync counts too */
			continue;
		}
		if (r->cc[pid] && cc != ((r->cc[pid] + 1) & 0x0F))
			r->cc_errors++;
		r->cc[pid] = (uint8_t)(0x10 | cc);
	}
}

static void reader_data(struct reader *r, uint8_t *buf, size_t n)
{
	size_t take;

	if (!r->in_body) {
		char *end;

		take = n < sizeof(r->head) - 1 - r->head_len
			   ? n
			   : sizeof(r->head) - 1 - r->head_len;
		memcpy(r->head + r->head_len, buf, take);
		r->head_len += take;
		r->head[r->head_len] = '\0';
		end = strstr(r->head, "\r\n\r\n");
		if (!end)
			return;
		r->in_body = strstr(r->head, " 200 ") != NULL;
		take = (size_t)(end + 4 - r->head) - (r->head_len - take);
		buf += take;
		n -= take;
	}
	r->bytes += n;
	if (r->carry_len) {
		take = BENCH_TS_PACKET - r->carry_len < n
			   ? BENCH_TS_PACKET - r->carry_len
			   : n;
		memcpy(r->carry + r->carry_len, buf, take);
		r->carry_len += take;
		buf += take;
		n -= take;
		if (r->carry_len < BENCH_TS_PACKET)
			return;
		count_packets(r, r->carry, BENCH_TS_PACKET);
		r->carry_len = 0;
	}
	count_packets(r, buf, n - n % BENCH_TS_PACKET);
	r->carry_len = n % BENCH_TS_PACKET;
	memcpy(r->carry, buf + n - r->carry_len, r->carry_len);
}

/* Read every reader until `until`; returns -1 if one ended. */
static int read_until(int ep, struct reader *rs, double until, uint8_t *buf)
{
	struct epoll_event evs[MAX_READERS];

	while (bench_now_s() < until) {
		int n = epoll_wait(ep, evs, MAX_READERS, 100);

		for (int i = 0; i < n; i++) {
			struct reader *r = &rs[evs[i].data.u32];
			ssize_t got = read(r->fd, buf, READ_BUF);

			if (got <= 0)
				return -1;
			reader_data(r, buf, (size_t)got);
		}
	}
	return 0;
}

static int measure(pid_t server, int port, struct result *res)
{
	int nr = opt.tuners * opt.readers, ep = epoll_create1(EPOLL_CLOEXEC);
	struct reader *rs = calloc((size_t)nr, sizeof(*rs));
	uint8_t *buf = malloc(READ_BUF);
	uint64_t bytes0 = 0, bytes1 = 0;
	double cpu0, cpu1, t0, t1;
	int ret = -1;

	for (int i = 0; rs && buf && i < nr; i++) {
		struct epoll_event ev = {.events = EPOLLIN,
					 .data.u32 = (uint32_t)i};

		rs[i].fd = tcp_connect(port);
		if (rs[i].fd < 0 ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, rs[i].fd, &ev) < 0)
			goto out;
		dprintf(rs[i].fd,
			"GET /api/v1/tuners/%d/stream HTTP/1.0\r\n"
			"Host: bench\r\n\r\n",
			i / opt.readers + 1);
	}
	if (!rs || !buf || read_until(ep, rs, bench_now_s() + WARMUP_S, buf))
		goto out;
	for (int i = 0; i < nr; i++)
		bytes0 += rs[i].bytes;
	cpu0 = bench_cpu_s(server);
	t0 = bench_now_s();
	if (read_until(ep, rs, t0 + opt.seconds, buf))
		goto out;
	cpu1 = bench_cpu_s(server);
	t1 = bench_now_s();
	memset(res, 0, sizeof(*res));
	for (int i = 0; i < nr; i++) {
		bytes1 += rs[i].bytes;
		res->cc_errors += rs[i].cc_errors;
		res->readers_ok += rs[i].in_body;
	}
	res->mbps = (double)(bytes1 - bytes0) * 8 / (t1 - t0) / 1e6;
	res->cpu_pct = (cpu1 - cpu0) / (t1 - t0) * 100;
	ret = 0;
out:
	for (int i = 0; rs && i < nr; i++)
		if (rs[i].fd > 0)
			close(rs[i].fd);
	free(rs);
	free(buf);
	close(ep);
	return ret;
}

/* ---- tunerd and its box ---- */

/* Every tuner ready: tunerd's GET /api/v1/tuners says so. */
static int tuners_ready(int port)
{
	static char buf[65536];
	int n = 0;

	if (http_get(port, "/api/v1/tuners", buf, sizeof(buf)) <= 0)
		return 0;
	for (char *p = buf; (p = strstr(p, "\"state\":\"ready\"")); p++)
		n++;
	return n == opt.tuners;
}

static pid_t start_daemon(const char *bin, const char *dir, const char *sock,
			  int port, const char *delivery)
{
	char path[PATH_MAX + 32], stub[PATH_MAX], plugins[PATH_MAX + 16];
	char listen[32], log[PATH_MAX], state[PATH_MAX];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/tunerd", bin);
	snprintf(stub, sizeof(stub), "sim:%s", sock);
	snprintf(plugins, sizeof(plugins), "%s/../plugins", bin);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	snprintf(log, sizeof(log), "%s/tunerd-%s.log", dir, delivery);
	snprintf(state, sizeof(state), "%s/state-%s", dir, delivery);
	pid = bench_spawn((char *[]){path, "--stub", stub, "--plugin-dir",
				     plugins, "--listen", listen,
				     "--stream-delivery", (char *)delivery,
				     "--state-dir", state, NULL},
			  log);
	for (int i = 0; pid > 0 && i < 600; i++, usleep(50000))
		if (tuners_ready(port))
			return pid;
	bench_stop(pid);
	return -1;
}

/* The box (bin: the bench's own directory, for the programs' paths). */
static int start_box(const char *dir, const char *sock, char *bin, pid_t *box)
{
	char path[PATH_MAX + 32], env[PATH_MAX], log[PATH_MAX];
	char chips[16 * 8] = "", app[PATH_MAX];
	FILE *f;

	if (bench_self_dir(bin, PATH_MAX))
		return -1;
	for (int i = 0; i < opt.tuners; i++)
		strcat(chips, i ? ",mt2060" : "mt2060");
	snprintf(env, sizeof(env), "%s/test.env", dir);
	f = fopen(env, "w");
	if (!f)
		return -1;
	fputs("DVBT 474000000 8000000 -50.0 30.0 \"MUX A\"\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/tunerd-simbox", bin);
	snprintf(app, sizeof(app), "%s/app.sock", dir);
	snprintf(log, sizeof(log), "%s/box.log", dir);
	*box = bench_spawn((char *[]){path, "--socket", (char *)sock,
				      "--app-socket", app, "--tuners", chips,
				      "--env", env, "--settle-scale", "0",
				      "--i2c-khz", "0", NULL},
			   log);
	return *box > 0 ? 0 : -1;
}

/* 0 once the box's stream sockets exist (at most 10 s). */
static int box_streams_made(const char *sock)
{
	char path[96];
	const struct timespec tick = {0, 10 * 1000 * 1000};

	for (int i = 0; i < 1000; i++) {
		snprintf(path, sizeof(path), "%s.ts%d", sock, opt.tuners);
		if (access(path, F_OK) == 0)
			return 0;
		nanosleep(&tick, NULL);
	}
	return -1;
}

/* tunerd with this delivery on the box, measured, stopped. */
static int measure_tunerd(const char *bin, const char *dir, const char *sock,
			  const char *delivery, struct result *res)
{
	int port = bench_free_port();
	pid_t pid = start_daemon(bin, dir, sock, port, delivery);
	int ret = pid > 0 ? measure(pid, port, res) : -1;

	bench_stop(pid);
	return ret;
}

/* ---- report ---- */

static void print_line(const char *name, const struct result *r)
{
	printf("%-30s %9.1f %8.1f %14.2f %9llu %4d\n", name, r->mbps,
	       r->cpu_pct, r->mbps > 0 ? r->cpu_pct / r->mbps * 100 : 0.0,
	       (unsigned long long)r->cc_errors, r->readers_ok);
}

static void print_ratio(const char *name, const struct result *d,
			const struct result *b)
{
	double cd = d->cpu_pct / d->mbps, cb = b->cpu_pct / b->mbps;

	printf("tunerd / %-21s CPU per Mbit/s %.2f, delivered %.3f\n", name,
	       cb > 0 ? cd / cb : 0.0, b->mbps > 0 ? d->mbps / b->mbps : 0.0);
}

static int parse_args(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"seconds", required_argument, NULL, 's'},
	    {"tuners", required_argument, NULL, 't'},
	    {"readers", required_argument, NULL, 'r'},
	    {"rate-mbps", required_argument, NULL, 'm'},
	    {NULL, 0, NULL, 0}};
	int c;

	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		if (c == 's')
			opt.seconds = atof(optarg);
		else if (c == 't')
			opt.tuners = atoi(optarg);
		else if (c == 'r')
			opt.readers = atoi(optarg);
		else if (c == 'm')
			opt.rate_mbps = atof(optarg);
		else
			return -1;
	}
	if (opt.seconds <= 0 || opt.seconds > 600 || opt.tuners < 1 ||
	    opt.tuners > 16 || opt.readers < 1 || opt.readers > 4 ||
	    opt.rate_mbps <= 0 || opt.rate_mbps > 200)
		return -1;
	return 0;
}

static void report(const struct result *d, const struct result *m,
		   const struct result *rw, const struct result *sp)
{
	printf("%-30s %9s %8s %14s %9s %4s\n", "server", "Mbit/s", "CPU %",
	       "CPU%/100Mbit", "CC errs", "ok");
	print_line("tunerd (direct writes)", d);
	print_line("tunerd (MHD callback)", m);
	print_line("bare relay (read/write)", rw);
	print_line("bare relay (splice/tee)", sp);
	print_ratio("relay (read/write)", d, rw);
	print_ratio("relay (splice/tee)", d, sp);
	printf("tunerd MHD / direct:           CPU per Mbit/s %.2f\n",
	       d->cpu_pct > 0 ? (m->cpu_pct / m->mbps) / (d->cpu_pct / d->mbps)
			      : 0.0);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/bench-stream-XXXXXX", sock[64], bin[PATH_MAX];
	struct result d = {0}, m = {0}, rw = {0}, sp = {0};
	pid_t src = -1, box = -1, relay = -1, relay_sp = -1;
	int port_rw = bench_free_port(), port_sp, ret = 1;

	if (parse_args(argc, argv)) {
		fprintf(stderr, "usage: bench_stream [--seconds 1..600] "
				"[--tuners 1..16] [--readers 1..4] "
				"[--rate-mbps M]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (!mkdtemp(dir))
		return 1;
	snprintf(sock, sizeof(sock), "%s/sim.sock", dir);
	/* The box first: it makes its own PATH.ts<N> sockets at start, and
	 * the bench's source then takes those paths over (unlink, bind), so
	 * the daemon and the relays read the bench's counted packets. */
	if (start_box(dir, sock, bin, &box) || box_streams_made(sock)) {
		fprintf(stderr, "bench_stream: no box (logs in %s)\n", dir);
		goto out_early;
	}
	src = bench_source_start(sock, opt.tuners, opt.rate_mbps * 1e6);
	relay = bench_relay_start(sock, port_rw, BENCH_RELAY_RW);
	port_sp = bench_free_port();
	relay_sp = bench_relay_start(sock, port_sp, BENCH_RELAY_SPLICE);
	if (src < 0 || relay < 0 || relay_sp < 0) {
		fprintf(stderr, "bench_stream: cannot start (logs in %s)\n",
			dir);
		goto out;
	}
	printf("bench_stream: %d tuners x %.1f Mbit/s, %d readers each, "
	       "%.0f s per server\n",
	       opt.tuners, opt.rate_mbps, opt.readers, opt.seconds);
	if (measure_tunerd(bin, dir, sock, "direct", &d) ||
	    measure(relay, port_rw, &rw) ||
	    measure_tunerd(bin, dir, sock, "mhd", &m) ||
	    measure(relay_sp, port_sp, &sp)) {
		fprintf(stderr,
			"bench_stream: a server or reader failed "
			"(logs in %s)\n",
			dir);
		goto out;
	}
	report(&d, &m, &rw, &sp);
	ret = d.cc_errors || m.cc_errors || rw.cc_errors || sp.cc_errors ||
	      d.readers_ok + m.readers_ok + rw.readers_ok + sp.readers_ok !=
		  4 * opt.tuners * opt.readers;
out:
	bench_stop(relay);
	bench_stop(relay_sp);
	bench_stop(src);
out_early:
	bench_stop(box);
	if (!ret)
		bench_remove_tree(dir);
	return ret;
}

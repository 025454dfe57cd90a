// SPDX-License-Identifier: MIT
/*
 * bench_tune - a REST tune with wait_lock_ms through tunerd's real port,
 * per chip, against the chip's driver alone on the same model.
 *
 * A simulated box process with the hardware's timing (its defaults: a
 * 400 kHz bus, settle scale 1.0) carries an MT2060, a QT1010 and an
 * XC3028, and an RF environment with two DVB-T multiplexes; tunerd
 * serves it on a loopback port.  Each tune alternates between the
 * multiplexes, so every request retunes and waits for a new lock.  Two
 * baselines, measured in the same run and interleaved tune by tune with
 * the REST tunes, run the same plugin in this process: straight on the
 * chip model with the same bus time and settle (bench_tune_drv.c), the
 * driver's own time, its waits and the chip's settle included; and over
 * a stub channel of a second box process (bench_tune_stub.c), which adds
 * the box's process hop per transfer that tunerd's worker pays too.
 * Each round also times a fresh status read through the port and the
 * same read over the stub: their difference is what any one command's
 * round trip (client, port, daemon, worker and back) costs on this
 * machine, the floor under REST - stub for a tune.  Each run prints
 * medians and their ratios; the summary gives the median of the runs
 * and its spread.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>

#include "bench_proc.h"
#include "bench_tune.h"
#include "xc3028_fwgen.h"

#define NCHIPS      3
#define MAX_TUNES   1000
#define MAX_RUNS    50
#define WAIT_LOCK   "2000"
#define I2C_KHZ     400 /* the box's defaults: its realistic timing */
#define SETTLE      1.0
#define FREQ_A      490000000u
#define FREQ_B      514000000u
#define READY_TRIES 600 /* x 50 ms: start-up, not measured */

static const char *const chips[NCHIPS] = {"mt2060", "qt1010", "xc3028"};

static const char bench_env[] = "DVBT 490000000 8000000 -52.5 28.5 \"MUX A\"\n"
				"DVBT 514000000 8000000 -54.0 27.0 \"MUX B\"\n";

struct opts {
	int runs, tunes;
	const char *bin_dir;   /* NULL: beside this program */
	const char *state_dir; /* NULL: in the run's directory */
};

struct procs {
	char dir[64], fw[128], fwdir[96], plugins[PATH_MAX + 16];
	char sock2[96]; /* the second box's: the bench is its daemon */
	pid_t box, box2, daemon;
	int port;
};

static double median_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	return n ? (double)v[n / 2] : 0.0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

/* A box process with the bench's tuners: its stub socket at sock, its
 * app socket and log named with tag. */
static pid_t spawn_box(const struct procs *p, const char *bin, const char *tag,
		       const char *sock, const char *env)
{
	char path[PATH_MAX + 64], app[96], log[128];

	snprintf(path, sizeof(path), "%s/tunerd-simbox", bin);
	snprintf(app, sizeof(app), "%s/app%s.sock", p->dir, tag);
	snprintf(log, sizeof(log), "%s/box%s.log", p->dir, tag);
	return bench_spawn(
	    (char *[]){path, "--socket", (char *)sock, "--app-socket", app,
		       "--tuners", "mt2060,qt1010,xc3028", "--env", (char *)env,
		       "--firmware", (char *)p->fw, NULL},
	    log);
}

/* tunerd and the box from the bin dir, the plugins from bin/../plugins. */
static int start_procs(struct procs *p, const struct opts *o)
{
	char bin[PATH_MAX], path[PATH_MAX + 64], sock[96], env[96];
	char stub[128], listen[64], log[128], err[256], state[PATH_MAX];

	if (bench_self_dir(bin, sizeof(bin)))
		return -1;
	if (o->bin_dir)
		snprintf(bin, sizeof(bin), "%s", o->bin_dir);
	snprintf(p->plugins, sizeof(p->plugins), "%s/../plugins", bin);
	strcpy(p->dir, "/tmp/bench-tune-XXXXXX");
	if (!mkdtemp(p->dir))
		return -1;
	snprintf(sock, sizeof(sock), "%s/sim.sock", p->dir);
	snprintf(env, sizeof(env), "%s/bench.env", p->dir);
	snprintf(p->fwdir, sizeof(p->fwdir), "%s/fw", p->dir);
	snprintf(p->fw, sizeof(p->fw), "%s/xc3028-v27.fw", p->fwdir);
	if (write_file(env, bench_env) || mkdir(p->fwdir, 0700) ||
	    xc3028_fwgen_write(p->fw, err, sizeof(err)))
		return -1;
	p->box = spawn_box(p, bin, "", sock, env);
	snprintf(p->sock2, sizeof(p->sock2), "%s/sim2.sock", p->dir);
	p->box2 = spawn_box(p, bin, "2", p->sock2, env);
	p->port = bench_free_port();
	snprintf(path, sizeof(path), "%s/tunerd", bin);
	snprintf(stub, sizeof(stub), "sim:%s", sock);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", p->port);
	snprintf(log, sizeof(log), "%s/tunerd.log", p->dir);
	/* Its own state: the tunes' fsync()s are part of what is measured,
	 * and no params or history are restored from an earlier run. */
	if (o->state_dir)
		snprintf(state, sizeof(state), "%s", o->state_dir);
	else
		snprintf(state, sizeof(state), "%s/state", p->dir);
	for (int i = 0;
	     i < READY_TRIES && (access(sock, F_OK) || access(p->sock2, F_OK));
	     i++)
		usleep(10000); /* start-up, not measured */
	p->daemon = bench_spawn(
	    (char *[]){path, "--stub", stub, "--plugin-dir", p->plugins,
		       "--firmware-dir", p->fwdir, "--listen", listen,
		       "--log-level", "warn", "--status-interval-ms", "0",
		       "--state-dir", state, NULL},
	    log);
	return p->box > 0 && p->box2 > 0 && p->daemon > 0 && p->port > 0 ? 0
									 : -1;
}

struct body {
	char text[8192];
	size_t len;
};

static size_t collect(char *ptr, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
	size_t len = size * n, room = sizeof(b->text) - 1 - b->len;

	memcpy(b->text + b->len, ptr, len < room ? len : room);
	b->len += len < room ? len : room;
	b->text[b->len] = '\0';
	return len;
}

/* GET or POST (post non-NULL); the HTTP status, 0 on failure. */
static long http(CURL *c, const char *url, const char *post, struct body *b)
{
	long code = 0;

	b->len = 0;
	b->text[0] = '\0';
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	if (post)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, post);
	else
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	return code;
}

static int wait_ready(CURL *c, int port)
{
	char url[128];
	struct body b;

	for (int i = 0; i < READY_TRIES; i++, usleep(50000)) {
		int ready = 0;

		for (int t = 1; t <= NCHIPS; t++) {
			snprintf(url, sizeof(url),
				 "http://127.0.0.1:%d/api/v1/tuners/%d", port,
				 t);
			ready += http(c, url, NULL, &b) == 200 &&
				 strstr(b.text, "\"state\":\"ready\"");
		}
		if (ready == NCHIPS)
			return 0;
	}
	return -1;
}

/* One REST tune with a lock wait, timed at the client; 0 on failure. */
static uint64_t rest_tune(CURL *c, int port, int tuner, uint32_t freq,
			  unsigned int *unlocked)
{
	char url[128], post[256];
	struct body b;
	uint64_t t0;
	long code;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners/%d/tune",
		 port, tuner);
	snprintf(post, sizeof(post),
		 "{\"delivery_system\":\"DVBT\",\"frequency\":%u,"
		 "\"bandwidth\":8000000,\"wait_lock_ms\":" WAIT_LOCK "}",
		 freq);
	t0 = bench_now_ns();
	code = http(c, url, post, &b);
	if (code != 200)
		return 0;
	if (!strstr(b.text, "\"locked\":true"))
		(*unlocked)++;
	return bench_now_ns() - t0;
}

struct run_result {
	double rest_ms, stub_ms, drv_ms;
	double ratio;      /* REST / the driver alone */
	double ratio_stub; /* REST / the driver over the stub */
	double tune_us;    /* REST tune - stub tune */
	double status_us;  /* REST status - stub status: the round trip */
	unsigned int unlocked, failed;
};

/* A fresh status read through the port (the worker reads the chip and
 * the demodulator, as its lock watch does); 0 on failure. */
static uint64_t rest_status(CURL *c, int port, int tuner)
{
	char url[128];
	struct body b;
	uint64_t t0;

	snprintf(url, sizeof(url),
		 "http://127.0.0.1:%d/api/v1/tuners/%d/status", port, tuner);
	t0 = bench_now_ns();
	return http(c, url, NULL, &b) == 200 ? bench_now_ns() - t0 : 0;
}

/* One run of one chip: n rounds of a REST tune, the driver's tune over
 * the second box's stub, the driver's tune alone, then a status read
 * through the port and over the stub (what one command's round trip
 * through the daemon costs beside the box's hop).  Interleaved, so a
 * machine that speeds up or slows down during the run weighs on them
 * alike and the ratios stay fair. */
static int run_chip(CURL *c, const struct procs *p, struct bench_drv *drv,
		    struct bench_drv *stub, int tuner, int n,
		    struct run_result *r)
{
	enum { REST_TUNE, STUB_TUNE, ALONE_TUNE, REST_STATUS, STUB_STATUS, N };
	static uint64_t ns[N][MAX_TUNES];
	size_t ok[N] = {0};
	double ms[N];

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < n; i++) {
		uint32_t freq = i % 2 ? FREQ_B : FREQ_A;
		uint64_t t[N];

		/* One after the other, in this order: the expressions of an
		 * initializer list are not sequenced. */
		t[REST_TUNE] = rest_tune(c, p->port, tuner, freq, &r->unlocked);
		t[STUB_TUNE] = bench_drv_tune(stub, freq);
		t[ALONE_TUNE] = bench_drv_tune(drv, freq);
		t[REST_STATUS] = rest_status(c, p->port, tuner);
		t[STUB_STATUS] = bench_drv_status(stub);
		for (int k = 0; k < N; k++) {
			if (t[k])
				ns[k][ok[k]++] = t[k];
			else
				r->failed++;
		}
	}
	for (int k = 0; k < N; k++) {
		if (!ok[k])
			return -1;
		ms[k] = median_u64(ns[k], ok[k]) / 1e6;
	}
	r->rest_ms = ms[REST_TUNE];
	r->stub_ms = ms[STUB_TUNE];
	r->drv_ms = ms[ALONE_TUNE];
	r->ratio = r->rest_ms / r->drv_ms;
	r->ratio_stub = r->rest_ms / r->stub_ms;
	r->tune_us = (ms[REST_TUNE] - ms[STUB_TUNE]) * 1e3;
	r->status_us = (ms[REST_STATUS] - ms[STUB_STATUS]) * 1e3;
	return 0;
}

/* The median of one field over the runs, with its spread. */
static void print_spread(const char *label, const struct run_result *res,
			 int runs, size_t field, const char *fmt)
{
	double v[MAX_RUNS];

	for (int i = 0; i < runs; i++)
		memcpy(&v[i], (const char *)&res[i] + field, sizeof(double));
	qsort(v, (size_t)runs, sizeof(double), cmp_double);
	printf("  %s ", label);
	printf(fmt, v[runs / 2]);
	printf(" [");
	printf(fmt, v[0]);
	printf("..");
	printf(fmt, v[runs - 1]);
	printf("]");
}

static void summary(const char *chip, const struct run_result *res, int runs)
{
	printf("%-7s", chip);
	print_spread("REST", res, runs, offsetof(struct run_result, rest_ms),
		     "%.2f");
	print_spread("stub", res, runs, offsetof(struct run_result, stub_ms),
		     "%.2f");
	print_spread("alone", res, runs, offsetof(struct run_result, drv_ms),
		     "%.2f");
	printf(" ms\n       ");
	print_spread("REST/alone", res, runs,
		     offsetof(struct run_result, ratio), "%.3f");
	print_spread("REST/stub", res, runs,
		     offsetof(struct run_result, ratio_stub), "%.3f");
	printf("\n       REST - stub:");
	print_spread("tune", res, runs, offsetof(struct run_result, tune_us),
		     "%.0f");
	print_spread("status (the round trip)", res, runs,
		     offsetof(struct run_result, status_us), "%.0f");
	printf(" us\n");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--quick")) {
			o->runs = 2;
			o->tunes = 4;
			continue;
		}
		if (!v)
			return -1;
		if (!strcmp(argv[i], "--runs"))
			o->runs = atoi(v);
		else if (!strcmp(argv[i], "--tunes"))
			o->tunes = atoi(v);
		else if (!strcmp(argv[i], "--bin-dir"))
			o->bin_dir = v;
		else if (!strcmp(argv[i], "--state-dir"))
			o->state_dir = v;
		else
			return -1;
		i++;
	}
	return o->runs >= 1 && o->runs <= MAX_RUNS && o->tunes >= 1 &&
		       o->tunes <= MAX_TUNES
		   ? 0
		   : -1;
}

/* The driver of chip k alone on the model (stub 0), or over the second
 * box's channel bound to client k + 1. */
static struct bench_drv *drv_start(const struct procs *p, int k, int stub,
				   uint64_t caps)
{
	struct bench_stub_chan ch = {.fd = -1};
	char path[PATH_MAX + 32], err[256];
	struct bench_drv *d = NULL;
	int ret = stub ? bench_stub_bind(&ch, p->sock2, (uint32_t)k + 1) : 0;

	ch.bracket = !!(caps & TSTUB_CAP_CMD_BRACKET);
	snprintf(path, sizeof(path), "%s/%s.so", p->plugins, chips[k]);
	if (ret)
		snprintf(err, sizeof(err), "bind: %s", strerror(-ret));
	else
		d = bench_drv_new(chips[k], path, p->fw, p->fwdir, I2C_KHZ,
				  SETTLE, stub ? &ch : NULL, err, sizeof(err));
	if (!d) /* the channel is closed with it */
		fprintf(stderr, "bench_tune: %s %s: %s\n", chips[k],
			stub ? "over the stub" : "alone", err);
	return d;
}

static int bench(const struct procs *p, CURL *c, int runs, int tunes)
{
	static struct run_result res[NCHIPS][MAX_RUNS];
	struct bench_drv *drv[NCHIPS] = {0}, *stub[NCHIPS] = {0};
	uint64_t caps = 0;
	int ret = 0, ctl = bench_stub_session(p->sock2, NCHIPS, &caps);

	if (ctl < 0) {
		fprintf(stderr, "bench_tune: the second box: %s\n",
			strerror(-ctl));
		return -1;
	}
	for (int k = 0; k < NCHIPS && !ret; k++) {
		drv[k] = drv_start(p, k, 0, caps);
		stub[k] = drv_start(p, k, 1, caps);
		ret = drv[k] && stub[k] ? 0 : -1;
	}
	for (int r = 0; r < runs && !ret; r++)
		for (int k = 0; k < NCHIPS && !ret; k++) {
			struct run_result *x = &res[k][r];

			ret = run_chip(c, p, drv[k], stub[k], k + 1, tunes, x);
			printf(
			    "run %d %-7s REST %8.2f  stub %8.2f  alone %8.2f "
			    "ms  REST/alone %.3fx  REST/stub %.3fx  "
			    "REST - stub: tune %.0f, status %.0f us  "
			    "(unlocked %u, failed %u)\n",
			    r + 1, chips[k], x->rest_ms, x->stub_ms, x->drv_ms,
			    x->ratio, x->ratio_stub, x->tune_us, x->status_us,
			    x->unlocked, x->failed);
			fflush(stdout);
			if (x->unlocked || x->failed)
				ret = -1; /* a figure of tunes that failed */
		}
	if (!ret) {
		printf("\nmedians of %d runs of %d tunes, [min..max] over the "
		       "runs:\n",
		       runs, tunes);
		for (int k = 0; k < NCHIPS; k++)
			summary(chips[k], res[k], runs);
	}
	for (int k = 0; k < NCHIPS; k++) {
		bench_drv_free(drv[k]);
		bench_drv_free(stub[k]);
	}
	close(ctl);
	return ret;
}

int main(int argc, char **argv)
{
	struct procs p = {0};
	struct opts o = {.runs = 5, .tunes = 20};
	struct curl_slist *h = NULL;
	int ret = 1;
	CURL *c;

	if (parse_args(argc, argv, &o)) {
		fprintf(stderr, "usage: bench_tune [--quick] [--runs R] "
				"[--tunes N] [--bin-dir DIR] "
				"[--state-dir DIR]\n");
		return 2;
	}
	/* The baseline's bus waits are sleeps: without the default 50 us
	 * slack each, as precise as the box's timerfds. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	c = curl_easy_init();
	h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (start_procs(&p, &o) || wait_ready(c, p.port)) {
		fprintf(stderr,
			"bench_tune: the box or tunerd did not start "
			"(logs in %s)\n",
			p.dir);
		goto out;
	}
	printf("bench_tune: REST tune with wait_lock_ms through 127.0.0.1:%d "
	       "against the same driver in the bench, over a box's stub "
	       "channel (stub) and on the chip model (alone); bus %d kHz, "
	       "settle scale %.1f; the daemon's state in %s%s\n",
	       p.port, I2C_KHZ, SETTLE, o.state_dir ? o.state_dir : p.dir,
	       o.state_dir ? "" : "/state");
	ret = bench(&p, c, o.runs, o.tunes) ? 1 : 0;
out:
	bench_stop(p.daemon);
	bench_stop(p.box);
	bench_stop(p.box2);
	if (!ret && p.dir[0]) /* on failure its logs stay for a look */
		bench_remove_tree(p.dir);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	curl_global_cleanup();
	return ret;
}

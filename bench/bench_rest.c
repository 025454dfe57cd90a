// SPDX-License-Identifier: MIT
/*
 * bench_rest - REST requests per second of tunerd, each beside a baseline
 * that does the same work, measured in the same run.
 *
 * It starts a simulated box (one MT2060) and tunerd --listen on a free
 * port from its own directory, tunes the tuner, waits until every tuner
 * shows a status (the history's sampler reads each within a second: the
 * lists the baseline sends must be as long as tunerd's), fetches tunerd's
 * answers, counts the I2C transfers of one fresh status read (the box's
 * app socket stats), then drives keep-alive GETs from N client threads
 * (libcurl, one connection each) in alternating rounds (medians
 * compared):
 *   1. GET /api/v1/tuners/1: the front and REST alone, against a bare
 *      libmicrohttpd front (external epoll, one thread, a process of its
 *      own, as tunerd's) answering the same bytes;
 *   2. GET /api/v1/tuners/1/status: a fresh status, through the tuner's
 *      worker process and the box process; against the bare front whose
 *      status goes through a worker process and a box process too, with
 *      the same messages and sizes and shared reads (bench_rest_bare.c);
 *   3. GET /api/v1/tuners/1/status?max_age_ms=2000: the last read (kept
 *      fresh by the status sampler), against the bare front's same bytes.
 * It prints requests/s with the ratio tunerd / baseline for each.
 *
 * Usage: bench_rest [--seconds S] [--clients N]
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_proc.h"
#include "bench_rest.h"
#include "tuner_stub.h"

#define BENCH_MAX_CLIENTS 64
#define BENCH_MAX_TUNERS  1024
#define BENCH_ROUNDS      5
#define BENCH_K_READS     200 /* fresh status reads that count transfers */

struct run {
	const char *url;
	double seconds;
	unsigned long ok, failed;
	pthread_mutex_t lock;
};

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
	struct bench_body *b = arg;
	char *grown;

	if (!b)
		return size * n;
	grown = realloc(b->data, b->len + size * n + 1);
	if (!grown)
		return 0;
	b->data = grown;
	memcpy(b->data + b->len, p, size * n);
	b->len += size * n;
	b->data[b->len] = '\0';
	return size * n;
}

/* One GET; the body into *out when out is not NULL.  Returns the status. */
static long get(CURL *c, const char *url, struct bench_body *out)
{
	long code = 0;

	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (curl_easy_perform(c) != CURLE_OK)
		return -1;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	return code;
}

static void *client(void *arg)
{
	struct run *r = arg;
	CURL *c = curl_easy_init();
	unsigned long ok = 0, failed = 0;
	double end = bench_now_s() + r->seconds;

	while (c && bench_now_s() < end) {
		if (get(c, r->url, NULL) == 200)
			ok++;
		else
			failed++;
	}
	curl_easy_cleanup(c);
	pthread_mutex_lock(&r->lock);
	r->ok += ok;
	r->failed += failed;
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* Requests per second with n clients for s seconds. */
static double measure(const char *url, int n, double s, unsigned long *fail)
{
	struct run r = {.url = url, .seconds = s};
	pthread_t th[BENCH_MAX_CLIENTS];
	double t0 = bench_now_s();

	pthread_mutex_init(&r.lock, NULL);
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, client, &r);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&r.lock);
	*fail = r.failed;
	return (double)r.ok / (bench_now_s() - t0);
}

/* ---- the processes under test ---- */

static const char bench_env[] = "DVBT 474000000 8000000 -50.0 30.0 \"MUX A\"\n";

struct procs {
	int ntuners; /* MT2060, QT1010, XC3028 in turn */
	char dir[64];
	char app[128]; /* the box's app socket */
	pid_t box, daemon;
	int port;
};

/* Whether a UNIX stream socket accepts connections. */
static int unix_connect(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(a.sun_path))
		return -1;
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int start_procs(struct procs *p)
{
	char bin[PATH_MAX], path[PATH_MAX + 64], sock[128], env[128];
	char stub[160], plugins[PATH_MAX + 16], listen[64], log[128],
	    state[128];
	static const char *const chips[] = {"mt2060", "qt1010", "xc3028"};
	char tuners[BENCH_MAX_TUNERS * 8] = "";
	int fd = -1;
	FILE *f;

	if (bench_self_dir(bin, sizeof(bin)))
		return -1;
	strcpy(p->dir, "/tmp/bench-rest-XXXXXX");
	if (!mkdtemp(p->dir))
		return -1;
	snprintf(sock, sizeof(sock), "%s/sim.sock", p->dir);
	snprintf(p->app, sizeof(p->app), "%s/app.sock", p->dir);
	snprintf(env, sizeof(env), "%s/test.env", p->dir);
	f = fopen(env, "w");
	if (!f)
		return -1;
	fputs(bench_env, f);
	fclose(f);
	for (int i = 0; i < p->ntuners; i++)
		snprintf(tuners + strlen(tuners),
			 sizeof(tuners) - strlen(tuners), "%s%s", i ? "," : "",
			 chips[i % 3]);
	snprintf(path, sizeof(path), "%s/tunerd-simbox", bin);
	snprintf(log, sizeof(log), "%s/box.log", p->dir);
	/* No modeled bus time or settling: the baseline has none either. */
	p->box = bench_spawn((char *[]){path, "--socket", sock, "--app-socket",
					p->app, "--tuners", tuners, "--env",
					env, "--settle-scale", "0", "--i2c-khz",
					"0", NULL},
			     log);
	for (int i = 0; i < 500 && fd < 0; i++, usleep(10000))
		fd = unix_connect(p->app); /* start-up, not measured */
	if (fd < 0)
		return -1;
	close(fd);
	p->port = bench_free_port();
	snprintf(path, sizeof(path), "%s/tunerd", bin);
	snprintf(stub, sizeof(stub), "sim:%s", sock);
	snprintf(plugins, sizeof(plugins), "%s/../plugins", bin);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", p->port);
	snprintf(log, sizeof(log), "%s/tunerd.log", p->dir);
	/* Its own state: the tunes' fsync()s are part of what is measured. */
	snprintf(state, sizeof(state), "%s/state", p->dir);
	p->daemon = bench_spawn(
	    (char *[]){path, "--stub", stub, "--plugin-dir", plugins,
		       "--listen", listen, "--log-level", "warn",
		       "--firmware-dir", p->dir, "--state-dir", state, NULL},
	    log);
	return p->box > 0 && p->daemon > 0 ? 0 : -1;
}

/* The box's I2C counters (its app socket's stats). 0 or -1. */
static int box_i2c_stats(const char *app, json_int_t *xfers, json_int_t *bytes)
{
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	json_t *root, *st;
	int fd = unix_connect(app), ret = -1;

	if (fd < 0)
		return -1;
	if (write(fd, "{\"op\":\"stats\"}\n", 15) == 15)
		while (len + 1 < sizeof(buf) &&
		       (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
			len += (size_t)n;
			if (buf[len - 1] == '\n')
				break;
		}
	close(fd);
	root = json_loadb(buf, len, 0, NULL);
	st = json_object_get(root, "stats");
	if (json_is_integer(json_object_get(st, "i2c_transfers"))) {
		*xfers =
		    json_integer_value(json_object_get(st, "i2c_transfers"));
		*bytes = json_integer_value(json_object_get(st, "i2c_bytes"));
		ret = 0;
	}
	json_decref(root);
	return ret;
}

/*
 * The I2C work of one fresh status read, from the box's counters over
 * BENCH_K_READS reads: transfers (k) and message sizes for the baseline.
 * The sampler's reads meanwhile (one a second) round away.
 */
static int measure_k(CURL *c, const struct procs *p, struct bench_bare_cfg *b)
{
	json_int_t x0, b0, x1, b1;
	char url[160];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners/1/status",
		 p->port);
	if (box_i2c_stats(p->app, &x0, &b0))
		return -1;
	for (int i = 0; i < BENCH_K_READS; i++)
		if (get(c, url, NULL) != 200)
			return -1;
	if (box_i2c_stats(p->app, &x1, &b1))
		return -1;
	b->k = (unsigned int)lround((double)(x1 - x0) / BENCH_K_READS);
	/* The request: header, transfer, written bytes; the reply: header
	 * and read bytes.  Both get the transfer's payload: a byte more than
	 * the real messages for a register read, on either side. */
	b->xfer_len = sizeof(struct tstub_hdr) + sizeof(struct tstub_i2c_xfer);
	b->xfer_reply_len = sizeof(struct tstub_hdr);
	if (x1 > x0) {
		size_t payload =
		    (size_t)lround((double)(b1 - b0) / (double)(x1 - x0));

		b->xfer_len += payload;
		b->xfer_reply_len += payload;
	}
	return 0;
}
static int count_str(const char *text, const char *what)
{
	int n = 0;

	for (const char *s = text; s && (s = strstr(s, what)); s++)
		n++;
	return n;
}

/* Every tuner has a status once the history's sampler read it (within a
 * second): from then on the list has the size it keeps, the one the
 * baseline must send too (about 1.5 times that of a list without). */
static void wait_statuses(CURL *c, int port)
{
	char url[128];
	struct bench_body b = {0};

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners", port);
	for (int i = 0; i < 100; i++, usleep(50000)) {
		free(b.data);
		b = (struct bench_body){0};
		if (get(c, url, &b) == 200 &&
		    !count_str(b.data, "\"status\":null"))
			break;
	}
	free(b.data);
}

/* Wait for the tuners to be ready, tune tuner 1, wait for every status. */
static int count_ready(const char *text)
{
	return count_str(text, "\"state\":\"ready\"");
}

static int prepare(CURL *c, int port, int ntuners)
{
	char url[128];
	struct bench_body b = {0};
	struct curl_slist *h = NULL;
	long code = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners", port);
	for (int i = 0; i < 400; i++, usleep(50000)) {
		free(b.data);
		b = (struct bench_body){0};
		if (get(c, url, &b) == 200 && count_ready(b.data) == ntuners)
			break;
	}
	free(b.data);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners/1/tune",
		 port);
	h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS,
			 "{\"delivery_system\":\"DVBT\",\"frequency\":"
			 "474000000,\"bandwidth\":8000000}");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, NULL);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	curl_slist_free_all(h);
	if (code != 200)
		return -1;
	wait_statuses(c, port);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The machine is shared and noisy: the two servers are measured in
 * alternating short rounds and each is summed up by its median round.
 */
static void compare(const char *what, const char *baseline, const char *path,
		    int tport, int bport, int clients, double secs)
{
	double t[BENCH_ROUNDS], b[BENCH_ROUNDS];
	unsigned long tf = 0, bf = 0, f;
	char turl[160], burl[160];

	snprintf(turl, sizeof(turl), "http://127.0.0.1:%d%s", tport, path);
	snprintf(burl, sizeof(burl), "http://127.0.0.1:%d%s", bport, path);
	for (int i = 0; i < BENCH_ROUNDS; i++) {
		b[i] = measure(burl, clients, secs / BENCH_ROUNDS, &f);
		bf += f;
		t[i] = measure(turl, clients, secs / BENCH_ROUNDS, &f);
		tf += f;
	}
	qsort(t, BENCH_ROUNDS, sizeof(double), cmp_double);
	qsort(b, BENCH_ROUNDS, sizeof(double), cmp_double);
	printf("%s\n  tunerd   %7.0f req/s (%.0f..%.0f)\n"
	       "  baseline %7.0f req/s (%.0f..%.0f): %s\n"
	       "  ratio tunerd/baseline %.2f  failed %lu/%lu\n",
	       what, t[BENCH_ROUNDS / 2], t[0], t[BENCH_ROUNDS - 1],
	       b[BENCH_ROUNDS / 2], b[0], b[BENCH_ROUNDS - 1], baseline,
	       b[BENCH_ROUNDS / 2] > 0
		   ? t[BENCH_ROUNDS / 2] / b[BENCH_ROUNDS / 2]
		   : 0.0,
	       tf, bf);
}

/* Remove the run's directory (kept when tunerd did not come up). */
static void cleanup(const struct procs *p)
{
	if (p->dir[0])
		bench_remove_tree(p->dir);
}

static int parse_args(int argc, char **argv, double *secs, int *clients,
		      int *ntuners)
{
	static const struct option opts[] = {
	    {"seconds", required_argument, NULL, 's'},
	    {"clients", required_argument, NULL, 'c'},
	    {"tuners", required_argument, NULL, 't'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's')
			*secs = atof(optarg);
		else if (c == 'c')
			*clients = atoi(optarg);
		else if (c == 't')
			*ntuners = atoi(optarg);
		else
			return -1;
	}
	if (*clients < 1 || *clients > BENCH_MAX_CLIENTS || *secs <= 0 ||
	    *ntuners < 1 || *ntuners > BENCH_MAX_TUNERS) {
		fprintf(stderr,
			"usage: bench_rest [--seconds S] "
			"[--clients 1..%d] [--tuners 1..%d]\n",
			BENCH_MAX_CLIENTS, BENCH_MAX_TUNERS);
		return -1;
	}
	return 0;
}

/* tunerd's answers, which the baseline sends back byte for byte. */
static int fetch_bodies(CURL *h, int port, struct bench_bare_cfg *b)
{
	char url[160];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners/1/status",
		 port);
	if (get(h, url, &b->status) != 200)
		return -1;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners", port);
	if (get(h, url, &b->tuners) != 200)
		return -1;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners/1", port);
	return get(h, url, &b->tuner) == 200 ? 0 : -1;
}

static void run_all(const struct bench_bare_cfg *b, int tport, int clients,
		    double secs)
{
	char hops[160];

	printf("bench_rest: %d keep-alive clients, %d rounds of %.2f s per "
	       "server, medians (min..max)\n",
	       clients, BENCH_ROUNDS, secs / BENCH_ROUNDS);
	printf("a fresh status read: 1 worker command, %u I2C transfer(s) of "
	       "%zu/%zu bytes with the box\n",
	       b->k, b->xfer_len, b->xfer_reply_len);
	compare("GET /api/v1/tuners/1 (front and REST alone)",
		"bare MHD front answering the same bytes", "/api/v1/tuners/1",
		tport, b->port, clients, secs);
	snprintf(hops, sizeof(hops),
		 "bare MHD front -> worker process -> box process, the same "
		 "messages (k=%u), reads shared",
		 b->k);
	compare("GET /api/v1/tuners/1/status (fresh: front -> worker -> box)",
		hops, "/api/v1/tuners/1/status", tport, b->port, clients, secs);
	compare("GET /api/v1/tuners/1/status?max_age_ms=2000 (the last read)",
		"bare MHD front answering the same bytes",
		"/api/v1/tuners/1/status?max_age_ms=2000", tport, b->port,
		clients, secs);
	snprintf(hops, sizeof(hops),
		 "bare MHD front answering the same %zu bytes", b->tuners.len);
	compare("GET /api/v1/tuners (every tuner)", hops, "/api/v1/tuners",
		tport, b->port, clients, secs);
}

int main(int argc, char **argv)
{
	struct bench_bare_cfg bare = {0};
	struct procs p = {.ntuners = 1};
	pid_t front = -1;
	double secs = 5.0;
	int clients = 8, ret = 1;
	CURL *h;

	if (parse_args(argc, argv, &secs, &clients, &p.ntuners))
		return 2;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	h = curl_easy_init();
	if (start_procs(&p) || prepare(h, p.port, p.ntuners) ||
	    fetch_bodies(h, p.port, &bare) || measure_k(h, &p, &bare)) {
		fprintf(stderr,
			"bench_rest: tunerd did not come up (logs in "
			"%s)\n",
			p.dir);
		goto out;
	}
	bare.port = bench_free_port();
	front = bench_bare_start(&bare);
	if (front < 0) {
		fprintf(stderr, "bench_rest: the baseline did not start\n");
		goto out;
	}
	run_all(&bare, p.port, clients, secs);
	bench_bare_stop(front);
	ret = 0;
out:
	curl_easy_cleanup(h);
	bench_stop(p.daemon);
	bench_stop(p.box);
	free(bare.status.data);
	free(bare.tuner.data);
	free(bare.tuners.data);
	curl_global_cleanup();
	if (ret == 0)
		cleanup(&p);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * bench_rest - REST requests per second of tunerd against a bare
 * libmicrohttpd server answering the same bytes, in the same run.
 *
 * It starts a simulated box (one MT2060) and tunerd --listen on a free
 * port from its own directory, tunes the tuner, then drives keep-alive
 * GETs from N client threads (libcurl, one connection each) for S seconds
 * (in alternating rounds, medians compared) at:
 *   1. tunerd  GET /api/v1/tuners/1/status  (a fresh status: a round trip
 *      through the tuner's worker and the box each time),
 *   2. tunerd  GET /api/v1/tuners/1/status?max_age_ms=2000 (the last
 *      status read, kept fresh by the status sampler: what pollers use),
 *   3. tunerd  GET /api/v1/tuners/1         (the front and REST alone),
 *   4. bare MHD (epoll, one thread, like tunerd's; a process of its own,
 *      like tunerd) answering the bytes of (1) and of (2).
 * and prints requests/s with the ratio tunerd / bare for each.
 *
 * Usage: bench_rest [--seconds S] [--clients N]
 */
#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_MAX_CLIENTS 64
#define BENCH_ROUNDS      5

struct body {
	char *data;
	size_t len;
};

struct run {
	const char *url;
	double seconds;
	unsigned long ok, failed;
	pthread_mutex_t lock;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t collect(char *p, size_t size, size_t n, void *arg)
{
	struct body *b = arg;
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
static long get(CURL *c, const char *url, struct body *out)
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
	double end = now_s() + r->seconds;

	while (c && now_s() < end) {
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
	double t0 = now_s();

	pthread_mutex_init(&r.lock, NULL);
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, client, &r);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&r.lock);
	*fail = r.failed;
	return (double)r.ok / (now_s() - t0);
}

/* ---- the bare server ---- */

static enum MHD_Result bare_answer(void *cls, struct MHD_Connection *c,
				   const char *url, const char *method,
				   const char *version, const char *upload,
				   size_t *upload_size, void **req_cls)
{
	const struct body *bodies = cls;
	const struct body *b = strstr(url, "/status") ? &bodies[0] : &bodies[1];
	struct MHD_Response *resp;
	enum MHD_Result ret;

	(void)method;
	(void)version;
	(void)upload;
	(void)upload_size;
	if (!*req_cls) {
		*req_cls = (void *)1; /* the head; answer on the next call */
		return MHD_YES;
	}
	resp = MHD_create_response_from_buffer(b->len, b->data,
					       MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

static int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/*
 * The bare server runs in a child process of its own, as tunerd does, so
 * that neither side gets the cheaper in-process thread switches.
 */
static pid_t bare_start(struct body *bodies, int port)
{
	pid_t pid = fork();
	CURL *c;

	if (pid == 0) {
		struct MHD_Daemon *mhd = MHD_start_daemon(
		    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL,
		    (uint16_t)port, NULL, NULL, bare_answer, bodies,
		    MHD_OPTION_CONNECTION_LIMIT, 256u,
		    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
		    MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);

		if (!mhd)
			_exit(1);
		for (;;)
			pause();
	}
	if (pid < 0)
		return -1;
	c = curl_easy_init();
	for (int i = 0; i < 100; i++, usleep(20000)) {
		char url[64];

		snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
		if (get(c, url, NULL) == 200)
			break;
	}
	curl_easy_cleanup(c);
	return pid;
}

/* ---- the processes under test ---- */

static const char bench_env[] = "DVBT 474000000 8000000 -50.0 30.0 \"MUX A\"\n";

static pid_t spawn(char *const argv[], const char *log)
{
	pid_t pid = fork();

	if (pid == 0) {
		FILE *f = freopen(log, "w", stdout);

		(void)f;
		dup2(STDOUT_FILENO, STDERR_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static void stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

struct procs {
	char dir[64];
	pid_t box, daemon;
	int port;
};

static int start_procs(struct procs *p)
{
	char bin[PATH_MAX], path[PATH_MAX + 64], sock[128], app[128], env[128];
	char stub[160], plugins[PATH_MAX + 16], listen[64], log[128];
	ssize_t n = readlink("/proc/self/exe", bin, sizeof(bin) - 1);
	FILE *f;

	if (n <= 0)
		return -1;
	bin[n] = '\0';
	*strrchr(bin, '/') = '\0';
	strcpy(p->dir, "/tmp/bench-rest-XXXXXX");
	if (!mkdtemp(p->dir))
		return -1;
	snprintf(sock, sizeof(sock), "%s/sim.sock", p->dir);
	snprintf(app, sizeof(app), "%s/app.sock", p->dir);
	snprintf(env, sizeof(env), "%s/test.env", p->dir);
	f = fopen(env, "w");
	if (!f)
		return -1;
	fputs(bench_env, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/tunerd-simbox", bin);
	snprintf(log, sizeof(log), "%s/box.log", p->dir);
	p->box = spawn((char *[]){path, "--socket", sock, "--app-socket", app,
				  "--tuners", "mt2060", "--env", env,
				  "--settle-scale", "0", NULL},
		       log);
	usleep(300000);
	p->port = free_port();
	snprintf(path, sizeof(path), "%s/tunerd", bin);
	snprintf(stub, sizeof(stub), "sim:%s", sock);
	snprintf(plugins, sizeof(plugins), "%s/../plugins", bin);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", p->port);
	snprintf(log, sizeof(log), "%s/tunerd.log", p->dir);
	p->daemon =
	    spawn((char *[]){path, "--stub", stub, "--plugin-dir", plugins,
			     "--listen", listen, "--log-level", "warn", NULL},
		  log);
	return p->box > 0 && p->daemon > 0 ? 0 : -1;
}

/* Wait for tuner 1 to be ready, then tune it. */
static int prepare(CURL *c, int port)
{
	char url[128];
	struct body b = {0};
	struct curl_slist *h = NULL;
	long code = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners/1", port);
	for (int i = 0; i < 200; i++, usleep(50000)) {
		free(b.data);
		b = (struct body){0};
		if (get(c, url, &b) == 200 && strstr(b.data, "\"ready\""))
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
	return code == 200 ? 0 : -1;
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
static void compare(const char *what, const char *path, int tport, int bport,
		    int clients, double secs)
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
	printf("%-28s tunerd %7.0f req/s (%.0f..%.0f)  bare MHD %7.0f req/s "
	       "(%.0f..%.0f)  ratio %.2f  failed %lu/%lu\n",
	       what, t[BENCH_ROUNDS / 2], t[0], t[BENCH_ROUNDS - 1],
	       b[BENCH_ROUNDS / 2], b[0], b[BENCH_ROUNDS - 1],
	       b[BENCH_ROUNDS / 2] > 0
		   ? t[BENCH_ROUNDS / 2] / b[BENCH_ROUNDS / 2]
		   : 0.0,
	       tf, bf);
}

/* Remove the run's directory (kept when tunerd did not come up). */
static void cleanup(const struct procs *p)
{
	static const char *const files[] = {"sim.sock", "app.sock", "test.env",
					    "box.log", "tunerd.log"};
	char path[128];

	if (!p->dir[0])
		return;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", p->dir, files[i]);
		unlink(path);
	}
	rmdir(p->dir);
}

static int parse_args(int argc, char **argv, double *secs, int *clients)
{
	static const struct option opts[] = {
	    {"seconds", required_argument, NULL, 's'},
	    {"clients", required_argument, NULL, 'c'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's')
			*secs = atof(optarg);
		else if (c == 'c')
			*clients = atoi(optarg);
		else
			return -1;
	}
	if (*clients < 1 || *clients > BENCH_MAX_CLIENTS || *secs <= 0) {
		fprintf(stderr,
			"usage: bench_rest [--seconds S] "
			"[--clients 1..%d]\n",
			BENCH_MAX_CLIENTS);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct body bodies[2] = {{0}, {0}};
	struct procs p = {0};
	pid_t bare;
	double secs = 5.0;
	int clients = 8, bport, ret = 1;
	char url[160];
	CURL *h;

	if (parse_args(argc, argv, &secs, &clients))
		return 2;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	h = curl_easy_init();
	if (start_procs(&p) || prepare(h, p.port)) {
		fprintf(stderr,
			"bench_rest: tunerd did not come up (logs in "
			"%s)\n",
			p.dir);
		goto out;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners/1/status",
		 p.port);
	get(h, url, &bodies[0]);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners/1",
		 p.port);
	get(h, url, &bodies[1]);
	bport = free_port();
	if (!bodies[0].data || !bodies[1].data)
		goto out;
	bare = bare_start(bodies, bport);
	if (bare < 0)
		goto out;
	printf("bench_rest: %d keep-alive clients, %d rounds of %.2f s per "
	       "server\n",
	       clients, BENCH_ROUNDS, secs / BENCH_ROUNDS);
	compare("GET /api/v1/tuners/1/status", "/api/v1/tuners/1/status",
		p.port, bport, clients, secs);
	compare("GET /api/v1/tuners/1/status?max_age_ms=2000",
		"/api/v1/tuners/1/status?max_age_ms=2000", p.port, bport,
		clients, secs);
	compare("GET /api/v1/tuners/1", "/api/v1/tuners/1", p.port, bport,
		clients, secs);
	stop(bare);
	ret = 0;
out:
	curl_easy_cleanup(h);
	stop(p.daemon);
	stop(p.box);
	free(bodies[0].data);
	free(bodies[1].data);
	curl_global_cleanup();
	if (ret == 0)
		cleanup(&p);
	return ret;
}

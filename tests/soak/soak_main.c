// SPDX-License-Identifier: MIT
/*
 * tunerd-soak - the client side of scripts/soak.sh: event subscribers,
 * REST tunes and leases, and a slowloris attacker, all at once against
 * one running tunerd, for a number of seconds; then the checks: no REST
 * request without an answer, every subscriber's sequence gap-free (or
 * its losses told), every subscriber at the last event, the daemon still
 * answering.  Exit status 0 when they hold, 1 when one fails, 2 on bad
 * usage.  The daemon's processes (workers killed, RSS sampled) are the
 * script's business.
 *
 *   tunerd-soak --port P [--host 127.0.0.1] [--seconds 600]
 *               [--subscribers N] [--sub-procs 2] [--rate 200]
 *               [--tuners 64] [--rest-conns 32] [--lease-tuners 8]
 *               [--holders 3] [--slow-conns 64] [--slow-source ADDR]
 *               [--finish-ms 30000]
 *
 * Before any load the parent reads the box's next seq (GET /api/v1/box),
 * and every subscriber asks for the events after it; after the load it
 * reads it again, and every subscriber must get there.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "soak.h"

uint64_t soak_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int soak_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EAGAIN) {
			struct timespec ts = {0, 1000000};

			nanosleep(&ts, NULL); /* a full socketpair */
			continue;
		}
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Blocking read of exactly len bytes (the fd may be non-blocking). */
int soak_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	int flags = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fcntl(fd, F_SETFL, flags);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	fcntl(fd, F_SETFL, flags);
	return 0;
}

static struct soak_opts O = {
    .host = "127.0.0.1",
    .seconds = 600,
    .subscribers = 180,
    .sub_procs = 2,
    .rate = 200,
    .tuners = 64,
    .rest_conns = 32,
    .lease_tuners = 8,
    .holders = 3,
    .slow_conns = 64,
    .finish_ms = 30000,
};

static const struct option long_opts[] = {
    {"host", required_argument, NULL, 'H'},
    {"port", required_argument, NULL, 'p'},
    {"seconds", required_argument, NULL, 's'},
    {"subscribers", required_argument, NULL, 'n'},
    {"sub-procs", required_argument, NULL, 'P'},
    {"rate", required_argument, NULL, 'r'},
    {"tuners", required_argument, NULL, 't'},
    {"rest-conns", required_argument, NULL, 'c'},
    {"lease-tuners", required_argument, NULL, 'l'},
    {"holders", required_argument, NULL, 'h'},
    {"slow-conns", required_argument, NULL, 'w'},
    {"slow-source", required_argument, NULL, 'S'},
    {"finish-ms", required_argument, NULL, 'f'},
    {NULL, 0, NULL, 0},
};

static int set_int(int c, int v)
{
	static const struct {
		int c, min, max;
		int *dst;
	} t[] = {
	    {'p', 1, 65535, &O.port},
	    {'s', 1, 86400, &O.seconds},
	    {'n', 0, SOAK_SUBS_MAX, &O.subscribers},
	    {'P', 1, SOAK_SUB_PROCS, &O.sub_procs},
	    {'r', 1, 10000, &O.rate},
	    {'t', 1, SOAK_TUNERS_MAX, &O.tuners},
	    {'c', 1, 1024, &O.rest_conns},
	    {'l', 0, SOAK_TUNERS_MAX, &O.lease_tuners},
	    {'h', 1, 16, &O.holders},
	    {'w', 0, 1024, &O.slow_conns},
	    {'f', 1000, 600000, &O.finish_ms},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].c == c) {
			if (v < t[i].min || v > t[i].max)
				return -1;
			*t[i].dst = v;
			return 0;
		}
	return -1;
}

static int parse_args(int argc, char **argv)
{
	int c;

	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		if (c == 'H')
			O.host = optarg;
		else if (c == 'S')
			O.slow_source = optarg;
		else if (c == '?' || set_int(c, atoi(optarg)))
			return -1;
	}
	if (!O.port || optind < argc || O.lease_tuners > O.tuners)
		return -1;
	if (O.sub_procs > O.subscribers)
		O.sub_procs = O.subscribers ? O.subscribers : 1;
	return 0;
}

static size_t on_box_body(char *p, size_t size, size_t n, void *arg)
{
	json_t **box = arg;

	json_decref(*box);
	*box = json_loadb(p, size * n, 0, NULL);
	return size * n;
}

/* events.next_seq of GET /api/v1/box, or 0 when the daemon does not
 * answer (the answer is small enough to come in one piece). */
static uint64_t box_next_seq(void)
{
	char url[128];
	json_t *box = NULL;
	long status = 0;
	uint64_t seq = 0;
	CURL *c = curl_easy_init();

	if (!c)
		return 0;
	snprintf(url, sizeof(url), "http://%s:%d/api/v1/box", O.host, O.port);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_box_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &box);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	if (curl_easy_perform(c) == CURLE_OK &&
	    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK &&
	    status == 200)
		seq = (uint64_t)json_integer_value(json_object_get(
		    json_object_get(box, "events"), "next_seq"));
	json_decref(box);
	curl_easy_cleanup(c);
	return seq;
}

/* ---- the children ---- */

enum { KIND_SUBS, KIND_REST, KIND_SLOW };

struct child {
	pid_t pid;
	int ctl;
	int kind, first, count;
};

static struct child kids[SOAK_SUB_PROCS + 2];
static int nkids;

static int child_run(struct child *k, int ctl, uint64_t since)
{
	fcntl(ctl, F_SETFL, O_NONBLOCK);
	switch (k->kind) {
	case KIND_SUBS:
		return soak_subs_main(&O, ctl, k->first, k->count, since);
	case KIND_REST:
		return soak_rest_main(&O, ctl);
	default:
		return soak_slow_main(&O, ctl);
	}
}

/* Forks one child and waits for its ready byte. */
static struct child *spawn(int kind, int first, int count, uint64_t since)
{
	struct child *k = &kids[nkids];
	char ready;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return NULL;
	k->kind = kind;
	k->first = first;
	k->count = count;
	k->pid = fork();
	if (k->pid == 0) {
		close(sv[0]);
		for (int i = 0; i < nkids; i++)
			close(kids[i].ctl);
		_exit(child_run(k, sv[1], since));
	}
	close(sv[1]);
	k->ctl = sv[0];
	if (k->pid < 0 || soak_read_all(k->ctl, &ready, 1) ||
	    ready != SOAK_READY) {
		fprintf(stderr, "soak: a client process did not start\n");
		return NULL;
	}
	nkids++;
	return k;
}

/* The load runs; a child that dies meanwhile ends it early. */
static int run_load(void)
{
	uint64_t end = soak_now_ms() + (uint64_t)O.seconds * 1000u;
	struct pollfd pfd[SOAK_SUB_PROCS + 2];

	for (int i = 0; i < nkids; i++)
		pfd[i] = (struct pollfd){.fd = kids[i].ctl, .events = POLLIN};
	for (uint64_t now; (now = soak_now_ms()) < end;) {
		if (poll(pfd, (nfds_t)nkids, (int)(end - now)) > 0) {
			fprintf(stderr, "soak: a client process ended early\n");
			return -1;
		}
	}
	return 0;
}

/* Asks a child for its figures: cmd (+ arg), then 'Z' and len bytes. */
static int collect(struct child *k, char cmd, const void *arg, size_t alen,
		   void *out, size_t len)
{
	char z;

	if (soak_write_all(k->ctl, &cmd, 1) ||
	    (arg && soak_write_all(k->ctl, arg, alen)) ||
	    soak_read_all(k->ctl, &z, 1) || z != 'Z' ||
	    soak_read_all(k->ctl, out, len)) {
		fprintf(stderr, "soak: a client process gave no figures\n");
		return -1;
	}
	return 0;
}

static void raise_nofile(rlim_t need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need) {
		rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int start_clients(uint64_t since)
{
	int per = O.subscribers / O.sub_procs, first = 0;

	for (int p = 0; O.subscribers && p < O.sub_procs; p++) {
		int count = p == O.sub_procs - 1 ? O.subscribers - first : per;

		if (!spawn(KIND_SUBS, first, count, since))
			return -1;
		first += count;
	}
	printf("soak: %d subscribers connected from seq %llu\n", O.subscribers,
	       (unsigned long long)since + 1);
	fflush(stdout);
	if (!spawn(KIND_REST, 0, 0, 0) || !spawn(KIND_SLOW, 0, 0, 0))
		return -1;
	return 0;
}

/* Stops the load, reads the figures and reports: the failed checks. */
static int finish(uint64_t since)
{
	static struct soak_rest_result rest;
	struct soak_slow_result slow;
	struct soak_sub_result *subs =
	    calloc((size_t)O.subscribers + 1, sizeof(*subs));
	uint64_t last;
	int failed = 0;

	for (int i = 0; i < nkids; i++)
		if (kids[i].kind == KIND_REST)
			failed |= collect(&kids[i], SOAK_CMD_STOP, NULL, 0,
					  &rest, sizeof(rest));
		else if (kids[i].kind == KIND_SLOW)
			failed |= collect(&kids[i], SOAK_CMD_STOP, NULL, 0,
					  &slow, sizeof(slow));
	last = box_next_seq();
	if (!last) {
		fprintf(stderr, "soak: FAIL: the daemon does not answer "
				"GET /api/v1/box after the load\n");
		failed = 1;
	}
	last = last ? last - 1 : since;
	for (int i = 0; subs && i < nkids; i++)
		if (kids[i].kind == KIND_SUBS)
			failed |=
			    collect(&kids[i], SOAK_CMD_FINISH, &last,
				    sizeof(last), subs + kids[i].first,
				    (size_t)kids[i].count * sizeof(*subs));
	if (failed || !subs) {
		free(subs);
		return 1;
	}
	failed += soak_report_rest(&rest, O.seconds);
	soak_report_slow(&slow, O.slow_conns, O.slow_source);
	failed += soak_report_subs(subs, O.subscribers, since + 1, last);
	free(subs);
	return failed;
}

/* The clients' own cost: on a shared machine they compete with the
 * daemon for the same cores. */
static void print_cpu(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru))
		return;
	printf("\nclient processes' CPU: user %.1f s, system %.1f s\n",
	       (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

int main(int argc, char **argv)
{
	uint64_t since;
	int failed;

	if (parse_args(argc, argv)) {
		fprintf(stderr, "usage: see the head of tests/soak/soak_main.c "
				"(--port is required)\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	raise_nofile((rlim_t)O.subscribers + (rlim_t)O.rest_conns +
		     (rlim_t)O.slow_conns + 256);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	since = box_next_seq();
	if (!since) {
		fprintf(stderr, "soak: the daemon does not answer on %s:%d\n",
			O.host, O.port);
		return 1;
	}
	since--;
	failed = start_clients(since) || run_load();
	failed = failed ? 1 : finish(since);
	for (int i = 0; i < nkids; i++) {
		close(kids[i].ctl);
		kill(kids[i].pid, SIGTERM);
		waitpid(kids[i].pid, NULL, 0);
	}
	curl_global_cleanup();
	print_cpu();
	printf("soak: driver checks %s\n", failed ? "FAILED" : "passed");
	return failed ? 1 : 0;
}

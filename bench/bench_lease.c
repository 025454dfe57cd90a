// SPDX-License-Identifier: MIT
/*
 * bench_lease - durable lease changes from several clients at once, and
 * what they cost everyone else: lease renewals per second from N clients
 * (each renewal is a change the daemon must have on disk before its 200)
 * and, meanwhile, the latency of GET /api/v1/tuners/1 from one more
 * client, p50/p99/max.  The baseline is the same GET with no lease
 * traffic, in the same run (rounds alternate).  Run it against two
 * builds (--tunerd) to compare a daemon that writes on its loop with one
 * that writes off it.
 *
 * It starts a simulated box (one MT2060) and tunerd with its state in a
 * new directory under /var/tmp (a disk: the fsync()s are what is
 * measured), takes one lease on tuner 1 and has the N clients renew it
 * with its id, keep-alive, as fast as they are answered.
 *
 *   bench_lease [--seconds S] [--clients N] [--rounds R] [--tunerd PATH]
 */
#include <curl/curl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_proc.h"

#define MAX_CLIENTS 64
#define MAX_SAMPLES 1000000

static size_t discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

static CURL *handle(const char *url)
{
	CURL *c = curl_easy_init();

	if (c) {
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
		curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	}
	return c;
}

static struct curl_slist *json_header;

static long status_of(CURL *c)
{
	long code = 0;

	if (curl_easy_perform(c) != CURLE_OK)
		return -1;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	return code;
}

/* ---- the load ---- */

struct load {
	char renew_url[128], get_url[128], body[128];
	atomic_int stop;
	atomic_ulong renewed, failed;
	double *lat; /* the GETs' latencies, ms */
	size_t nlat;
};

static void *renewer(void *arg)
{
	struct load *l = arg;
	CURL *c = handle(l->renew_url);

	curl_easy_setopt(c, CURLOPT_HTTPHEADER, json_header);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, l->body);
	while (!l->stop) {
		if (status_of(c) == 200)
			l->renewed++;
		else
			l->failed++;
	}
	curl_easy_cleanup(c);
	return NULL;
}

/* The measured client: GETs one after the other for secs. */
static void get_loop(struct load *l, double secs)
{
	CURL *c = handle(l->get_url);
	double end = bench_now_s() + secs, t0;

	l->nlat = 0;
	while ((t0 = bench_now_s()) < end && l->nlat < MAX_SAMPLES) {
		if (status_of(c) != 200) {
			l->failed++;
			continue;
		}
		l->lat[l->nlat++] = (bench_now_s() - t0) * 1e3;
	}
	curl_easy_cleanup(c);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct figures {
	double ops, p50, p99, max;
};

static void summarise(struct load *l, double secs, struct figures *f)
{
	qsort(l->lat, l->nlat, sizeof(double), cmp);
	f->ops = (double)l->renewed / secs;
	f->p50 = l->nlat ? l->lat[l->nlat / 2] : 0;
	f->p99 = l->nlat ? l->lat[(size_t)((double)l->nlat * 0.99)] : 0;
	f->max = l->nlat ? l->lat[l->nlat - 1] : 0;
}

/* One round: the GET alone (clients 0) or beside N renewing clients. */
static void round_of(struct load *l, int clients, double secs,
		     struct figures *f)
{
	pthread_t th[MAX_CLIENTS];
	double t0;

	l->stop = 0;
	l->renewed = 0;
	for (int i = 0; i < clients; i++)
		pthread_create(&th[i], NULL, renewer, l);
	t0 = bench_now_s();
	get_loop(l, secs);
	l->stop = 1;
	for (int i = 0; i < clients; i++)
		pthread_join(th[i], NULL);
	summarise(l, bench_now_s() - t0, f);
}

/* ---- the processes ---- */

struct procs {
	char dir[64];
	pid_t box, daemon;
	int port;
};

static int start_procs(struct procs *p, const char *tunerd)
{
	char bin[PATH_MAX], path[PATH_MAX + 64], sock[128], stub[160];
	char plugins[PATH_MAX + 16], listen[64], log[128], state[128];

	if (bench_self_dir(bin, sizeof(bin)))
		return -1;
	strcpy(p->dir, "/var/tmp/bench-lease-XXXXXX");
	if (!mkdtemp(p->dir))
		return -1;
	snprintf(sock, sizeof(sock), "%s/sim.sock", p->dir);
	snprintf(path, sizeof(path), "%s/tunerd-simbox", bin);
	snprintf(log, sizeof(log), "%s/box.log", p->dir);
	p->box = bench_spawn((char *[]){path, "--socket", sock, "--tuners",
					"mt2060", "--settle-scale", "0",
					"--i2c-khz", "0", NULL},
			     log);
	p->port = bench_free_port();
	snprintf(path, sizeof(path), "%s", tunerd ? tunerd : "");
	if (!tunerd)
		snprintf(path, sizeof(path), "%s/tunerd", bin);
	snprintf(stub, sizeof(stub), "sim:%s", sock);
	snprintf(plugins, sizeof(plugins), "%s/../plugins", bin);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", p->port);
	snprintf(log, sizeof(log), "%s/tunerd.log", p->dir);
	snprintf(state, sizeof(state), "%s/state", p->dir);
	p->daemon =
	    bench_spawn((char *[]){path, "--stub", stub, "--plugin-dir",
				   plugins, "--listen", listen, "--log-level",
				   "warn", "--state-dir", state, NULL},
			log);
	return p->box > 0 && p->daemon > 0 ? 0 : -1;
}

/* Wait for tuner 1 and take its lease; the renewal body in l. */
static int take_lease(struct load *l, int port)
{
	char url[128], buf[4096];
	FILE *f;
	CURL *c;
	json_t *j;
	long code = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/tuners/1/lease",
		 port);
	for (int i = 0; i < 500 && code != 201; i++, usleep(20000)) {
		f = fmemopen(buf, sizeof(buf) - 1, "w");
		c = handle(url);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, NULL);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, json_header);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS,
				 "{\"holder\":\"bench\",\"ttl_s\":600}");
		code = status_of(c); /* start-up: not measured */
		curl_easy_cleanup(c);
		fflush(f);
		buf[ftell(f)] = '\0';
		fclose(f);
	}
	j = code == 201 ? json_loads(buf, 0, NULL) : NULL;
	if (!j)
		return -1;
	snprintf(l->body, sizeof(l->body),
		 "{\"lease_id\":\"%s\",\"ttl_s\":600}",
		 json_string_value(json_object_get(j, "lease_id")));
	json_decref(j);
	snprintf(l->renew_url, sizeof(l->renew_url), "%s", url);
	snprintf(l->get_url, sizeof(l->get_url),
		 "http://127.0.0.1:%d/api/v1/tuners/1", port);
	return 0;
}

static void cleanup(const struct procs *p)
{
	bench_remove_tree(p->dir);
}

static int parse_args(int argc, char **argv, double *secs, int *clients,
		      int *rounds, const char **tunerd)
{
	static const struct option opts[] = {
	    {"seconds", required_argument, NULL, 's'},
	    {"clients", required_argument, NULL, 'c'},
	    {"rounds", required_argument, NULL, 'r'},
	    {"tunerd", required_argument, NULL, 't'},
	    {0}};
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 's')
			*secs = atof(optarg);
		else if (o == 'c')
			*clients = atoi(optarg);
		else if (o == 'r')
			*rounds = atoi(optarg);
		else if (o == 't')
			*tunerd = optarg;
		else
			return -1;
	}
	if (*secs <= 0 || *clients < 1 || *clients > MAX_CLIENTS ||
	    *rounds < 1) {
		fprintf(stderr, "usage: bench_lease [--seconds S] [--clients "
				"1..64] [--rounds R] [--tunerd PATH]\n");
		return -1;
	}
	return 0;
}

static void print(const char *what, const struct figures *f)
{
	printf("  %-22s %8.0f renewals/s  GET p50 %6.2f  p99 %7.2f  max "
	       "%7.2f ms\n",
	       what, f->ops, f->p50, f->p99, f->max);
}

int main(int argc, char **argv)
{
	struct load l = {0};
	struct procs p = {0};
	struct figures alone, busy;
	const char *tunerd = NULL;
	double secs = 3.0;
	int clients = 8, rounds = 3, ret = 1;
	char what[64];

	if (parse_args(argc, argv, &secs, &clients, &rounds, &tunerd))
		return 2;
	l.lat = calloc(MAX_SAMPLES, sizeof(double));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	json_header = curl_slist_append(NULL, "Content-Type: application/json");
	if (!l.lat || start_procs(&p, tunerd) || take_lease(&l, p.port)) {
		fprintf(stderr,
			"bench_lease: tunerd did not come up (logs in "
			"%s)\n",
			p.dir);
		goto out;
	}
	printf("bench_lease: %s, state in %s\n", tunerd ? tunerd : "tunerd",
	       p.dir);
	snprintf(what, sizeof(what), "%d renewing clients", clients);
	for (int r = 0; r < rounds; r++) {
		round_of(&l, 0, secs, &alone);
		round_of(&l, clients, secs, &busy);
		printf("round %d\n", r + 1);
		print("GET alone", &alone);
		print(what, &busy);
	}
	printf("  failed requests: %lu\n", (unsigned long)l.failed);
	ret = 0;
out:
	bench_stop(p.daemon);
	bench_stop(p.box);
	curl_slist_free_all(json_header);
	curl_global_cleanup();
	free(l.lat);
	if (ret == 0)
		cleanup(&p);
	return ret;
}

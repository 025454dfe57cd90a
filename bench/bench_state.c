// SPDX-License-Identifier: MIT
/*
 * bench_state - what one durable lease change costs the daemon's loop:
 * state_file_write() of a leases document (temporary file, fsync,
 * rename, fsync of the directory), beside a bare baseline writing and
 * renaming the same bytes without any fsync, in the same directory and
 * the same run (blocks alternate, because disks shared with other work
 * are noisy).  The difference is the price of durability; the daemon
 * pays it once per take, renew or release, and once per loop turn for
 * API tunes.
 *
 *   bench_state [--dir DIR] [--writes N] [--leases K]
 *
 * DIR defaults to a new directory under /var/tmp (a disk, unlike /tmp on
 * some systems), removed at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "state_file.h"

#define BLOCK 50

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A leases document as lease_store.c writes it, with k leases. */
static json_t *leases_doc(int k)
{
	json_t *arr = json_array();

	for (int i = 0; i < k; i++)
		json_array_append_new(
		    arr, json_pack(
			     "{s:i, s:s, s:s, s:i, s:i, s:I}", "tuner", i + 1,
			     "id", "0123456789abcdef0123456789abcdef", "holder",
			     "mythtv-recorder", "priority", 100, "ttl_s", 30,
			     "expires_ms", (json_int_t)1764000000000 + i));
	return json_pack("{s:i, s:o}", "version", 1, "leases", arr);
}

/* The baseline: the same bytes to a temporary file renamed over the
 * document, no fsync. */
static int bare_write(int dfd, const char *text)
{
	int fd = openat(dfd, ".bare.json.tmp",
			O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t len = strlen(text);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return renameat(dfd, ".bare.json.tmp", dfd, "bare.json");
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	printf("  %-34s p50 %7.3f ms  p99 %7.3f ms\n", what, v[n / 2],
	       v[n * 99 / 100]);
}

static int run(const char *dir, int writes, int k)
{
	struct state_dir *sd;
	json_t *doc = leases_doc(k);
	char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	double *durable = calloc((size_t)writes, sizeof(double));
	double *bare = calloc((size_t)writes, sizeof(double));
	int dfd, err = state_dir_open(dir, &sd), nd = 0, nb = 0;

	if (err || !text || !durable || !bare) {
		fprintf(stderr, "bench_state: %s: %s\n", dir,
			strerror(err ? -err : ENOMEM));
		return 1;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (nd < writes) {
		for (int i = 0; i < BLOCK && nd < writes; i++) {
			double t = now_ms();

			if (state_file_write(sd, "leases", doc))
				return 1;
			durable[nd++] = now_ms() - t;
		}
		for (int i = 0; i < BLOCK && nb < writes; i++) {
			double t = now_ms();

			if (bare_write(dfd, text))
				return 1;
			bare[nb++] = now_ms() - t;
		}
	}
	printf("bench_state: %d writes of a %zu-byte leases document (%d "
	       "leases) in %s\n",
	       writes, strlen(text), k, dir);
	report("tunerd (write, fsync, rename, fsync)", durable, nd);
	report("baseline (write, rename)", bare, nb);
	printf("  ratio tunerd/baseline (p50) %.1f\n",
	       durable[nd / 2] / (bare[nb / 2] > 0 ? bare[nb / 2] : 1e-9));
	unlinkat(dfd, "leases.json", 0);
	unlinkat(dfd, "bare.json", 0);
	close(dfd);
	state_dir_close(sd);
	free(durable);
	free(bare);
	free(text);
	json_decref(doc);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"dir", required_argument, NULL, 'd'},
	    {"writes", required_argument, NULL, 'n'},
	    {"leases", required_argument, NULL, 'k'},
	    {NULL, 0, NULL, 0},
	};
	char tmpl[] = "/var/tmp/bench-state-XXXXXX";
	const char *dir = NULL;
	int writes = 1000, k = 4, c, ret;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'd')
			dir = optarg;
		else if (c == 'n')
			writes = atoi(optarg);
		else if (c == 'k')
			k = atoi(optarg);
		else
			return 2;
	}
	if (writes < 1 || k < 0 || k > 4096) {
		fprintf(stderr,
			"bench_state: --writes >= 1, --leases 0..4096\n");
		return 2;
	}
	if (!dir && !(dir = mkdtemp(tmpl))) {
		perror("bench_state: mkdtemp");
		return 1;
	}
	ret = run(dir, writes, k);
	if (dir == tmpl)
		rmdir(tmpl);
	return ret;
}

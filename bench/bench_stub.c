// SPDX-License-Identifier: MIT
/*
 * bench_stub - round-trip latency of a kernel-side tune through tunerd,
 * beside a bare AF_UNIX ping-pong making as many round trips, in the same
 * run.
 *
 * The bench embeds the simulated box (the kernel side: I2C delay 0,
 * settle scale 0, one bridge per chip) and starts a real tunerd on it.
 * Per chip it times TSTUB_SET_PARAMS requests one at a time (DVB-T 8 MHz,
 * alternating 474/482 MHz: the same XC3028 firmware set, a real retune
 * each time), counts the I2C transfers (K) and the bridge requests (C: the
 * XC3028's clock reset, a demodulator status) per tune, and in
 * alternating blocks times a SOCK_SEQPACKET ping-pong with a forked echo
 * process of 1 + K + C round trips with messages of the same sizes.  A
 * second phase times one tune on each of 64 tuners issued at once
 * against one tune on one tuner.  Figures only: nothing is asserted but
 * that every request succeeded.
 *
 * --cpu N pins every process of the run (the bench with its box, the
 * echo, tunerd and its workers) to CPU N; --cpus A,B pins the bench with
 * its box to CPU A and the echo, tunerd and its workers to CPU B.
 * Unpinned, the figures depend on where the scheduler happens to put the
 * box and a worker: on one CPU each hop is a context switch, on two each
 * is a cross-CPU wake-up of an idle CPU, which on a virtual machine costs
 * tens of microseconds, and a woken task stays on its previous CPU while
 * that one is idle, so where a worker first ran decides the whole run;
 * the echo pair tends to stay on one CPU.  Pinned either way, both sides
 * pay the same for a hop and the ratio is the cost of the paths
 * themselves.
 *
 * --chip NAME measures that chip alone and skips the 64-tuner phase.
 *
 * Usage: bench_stub [--quick] [--requests N] [--tunerd PATH]
 *                   [--plugin-dir DIR] [--cpu N | --cpus A,B]
 *                   [--chip NAME]
 */
#define _GNU_SOURCE /* CPU_SETSIZE */
#include "bench_stub.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_FREQ_A         474000000u
#define BENCH_FREQ_B         482000000u
#define BENCH_FREQ_C         490000000u
#define BENCH_BLOCK          10000
#define BENCH_WARMUP         100
#define BENCH_K_PROBE        200
#define BENCH_REQUESTS       100000
#define BENCH_QUICK_REQUESTS 5000
#define BENCH_WIDE_TUNERS    64
#define BENCH_WIDE_ROUNDS    200
#define BENCH_QUICK_ROUNDS   20
#define BENCH_WIDE_IDLE_MS   2
#define BENCH_IDEAL_CORES    2

/* What the baseline's messages look like: a SET_PARAMS request is a
 * header and struct tstub_params, its reply a bare header; an I2C
 * transfer request is a header, struct tstub_i2c_xfer and the bytes. */
#define BENCH_REQ_LEN (sizeof(struct tstub_hdr) + sizeof(struct tstub_params))
#define BENCH_HDR_LEN sizeof(struct tstub_hdr)
#define BENCH_XFER_LEN                                                         \
	(sizeof(struct tstub_hdr) + sizeof(struct tstub_i2c_xfer))
#define BENCH_CTRL_LEN (sizeof(struct tstub_hdr) + sizeof(struct tstub_ctrl))

struct bench_opts {
	const char *tunerd;
	const char *plugins;
	unsigned long requests;
	unsigned int rounds;
	int cpu;          /* -1: not pinned */
	int cpu_far;      /* --cpus: the echo's and tunerd's; -1: cpu's */
	const char *chip; /* only this chip, no 64-tuner phase; NULL: all */
};

struct chip_result {
	const char *chip;
	size_t n;
	uint64_t *stub_ns, *base_ns;
	double k_mean; /* I2C transfers per tune over the measurement */
	double c_mean; /* bridge requests per tune over the measurement */
	struct bench_exchange x; /* the baseline's messages, from the probe */
	unsigned long failed;
};

static const char *const bench_chips[] = {"mt2060", "qt1010", "xc3028"};
#define BENCH_NCHIPS (sizeof(bench_chips) / sizeof(bench_chips[0]))

/* Nearest-rank percentile of n sorted samples, in microseconds. */
static double pct_us(const uint64_t *sorted, size_t n, double p)
{
	size_t rank = (size_t)ceil(p * (double)n);

	if (!n)
		return 0.0;
	return (double)sorted[rank ? rank - 1 : 0] / 1000.0;
}

/* One tune of a chip's tuner, timed. */
static int chip_tune(struct bench_stub *b, uint32_t client, size_t i,
		     uint64_t *ns)
{
	uint32_t f = i & 1 ? BENCH_FREQ_B : BENCH_FREQ_A;
	uint64_t t0 = bench_now_ns();
	int err = bench_tune(b, client, f);

	*ns = bench_now_ns() - t0;
	return err;
}

/* The chip model's registers after tune i: a real retune each time. */
static int chip_check_tuned(struct bench_stub *b, uint32_t client, size_t i)
{
	uint32_t want = i & 1 ? BENCH_FREQ_B : BENCH_FREQ_A;
	uint32_t other = i & 1 ? BENCH_FREQ_A : BENCH_FREQ_B;
	struct sim_box_client_info ci;
	uint32_t f;

	if (sim_box_client_info(b->box, client, &ci) || !ci.tuned.valid)
		return -ENODATA;
	f = ci.tuned.frequency;
	/* Chips decode to their step: nearer the last request than the
	 * other frequency is what a retune leaves. */
	if ((f > want ? f - want : want - f) >=
	    (f > other ? f - other : other - f))
		return -EIO;
	return 0;
}

/* Warm up, then count the transfers and bytes of a probe run to shape
 * the baseline. */
static int chip_probe(struct bench_stub *b, uint32_t client,
		      struct chip_result *r)
{
	struct sim_box_stats s0, s1;
	uint64_t ns, xfers;
	int err = 0;

	for (size_t i = 0; i < BENCH_WARMUP && !err; i++)
		err = chip_tune(b, client, i, &ns);
	sim_box_get_stats(b->box, &s0);
	for (size_t i = 0; i < BENCH_K_PROBE && !err; i++)
		err = chip_tune(b, client, i, &ns);
	sim_box_get_stats(b->box, &s1);
	if (err)
		return err;
	xfers = s1.i2c_transfers - s0.i2c_transfers;
	r->x = (struct bench_exchange){
	    .req_len = BENCH_REQ_LEN,
	    .reply_len = BENCH_HDR_LEN,
	    .k = (unsigned int)lround((double)xfers / BENCH_K_PROBE),
	    .xfer_len = BENCH_XFER_LEN,
	    .xfer_reply_len = BENCH_HDR_LEN,
	    .k_ctrl = (unsigned int)lround(
		(double)(s1.bridge_requests - s0.bridge_requests) /
		BENCH_K_PROBE),
	    .ctrl_len = BENCH_CTRL_LEN,
	    .ctrl_reply_len = BENCH_HDR_LEN};
	if (xfers)
		r->x.xfer_len += (size_t)lround(
		    (double)(s1.i2c_bytes - s0.i2c_bytes) / (double)xfers);
	return 0;
}

static void stub_block(struct bench_stub *b, uint32_t client,
		       struct chip_result *r, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (chip_tune(b, client, i, &r->stub_ns[i]) ||
		    chip_check_tuned(b, client, i))
			r->failed++;
}

static int base_block(struct bench_pingpong *pp, struct chip_result *r,
		      size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		uint64_t t0 = bench_now_ns();
		int err = bench_pingpong_rounds(pp, &r->x);

		if (err)
			return err;
		r->base_ns[i] = bench_now_ns() - t0;
	}
	return 0;
}

/* Stub and baseline in alternating blocks, so that noise hits both. */
static int chip_measure(struct bench_stub *b, struct bench_pingpong *pp,
			uint32_t client, struct chip_result *r)
{
	size_t block = r->n >= 4 * BENCH_BLOCK ? BENCH_BLOCK : (r->n + 3) / 4;
	struct sim_box_stats s0, s1;
	int err;

	err = chip_probe(b, client, r);
	if (err)
		return err;
	sim_box_get_stats(b->box, &s0);
	for (size_t from = 0; from < r->n; from += block) {
		size_t to = from + block < r->n ? from + block : r->n;

		stub_block(b, client, r, from, to);
		err = base_block(pp, r, from, to);
		if (err)
			return err;
	}
	sim_box_get_stats(b->box, &s1);
	r->k_mean =
	    (double)(s1.i2c_transfers - s0.i2c_transfers) / (double)r->n;
	r->c_mean =
	    (double)(s1.bridge_requests - s0.bridge_requests) / (double)r->n;
	return 0;
}

static void chip_print(struct chip_result *r)
{
	double sp50, sp99, bp50, bp99;

	qsort(r->stub_ns, r->n, sizeof(uint64_t), bench_cmp_u64);
	qsort(r->base_ns, r->n, sizeof(uint64_t), bench_cmp_u64);
	sp50 = pct_us(r->stub_ns, r->n, 0.50);
	sp99 = pct_us(r->stub_ns, r->n, 0.99);
	bp50 = pct_us(r->base_ns, r->n, 0.50);
	bp99 = pct_us(r->base_ns, r->n, 0.99);
	printf("%-7s %8zu %3u (%7.3f) %5zu %4u %9.1f %9.1f %9.1f %9.1f "
	       "%6.2f %6.2f%s\n",
	       r->chip, r->n, (unsigned int)lround(r->k_mean), r->k_mean,
	       r->x.xfer_len, r->x.k_ctrl, sp50, sp99, bp50, bp99, sp50 / bp50,
	       sp99 / bp99, r->failed ? "  FAILED" : "");
	if ((unsigned int)lround(r->k_mean) != r->x.k ||
	    (unsigned int)lround(r->c_mean) != r->x.k_ctrl)
		printf("  (%s: the baseline used K = %u, C = %u from its probe "
		       "run)\n",
		       r->chip, r->x.k, r->x.k_ctrl);
}

/* Phase 1: one tuner per chip, one request at a time. */
static int phase_latency(const struct bench_opts *o, const char *dir,
			 struct bench_pingpong *pp)
{
	struct sim_box_bridge br[BENCH_NCHIPS];
	struct chip_result res[BENCH_NCHIPS] = {0};
	struct bench_stub b;
	unsigned long failed = 0;
	int err;

	for (size_t i = 0; i < BENCH_NCHIPS; i++)
		br[i] = (struct sim_box_bridge){.chip = bench_chips[i],
						.adapter = (uint32_t)i};
	err = bench_stub_start(&b, dir, "latency", o->tunerd, o->plugins, br,
			       BENCH_NCHIPS);
	if (err)
		return err;
	printf("round trip of one TSTUB_SET_PARAMS (DVB-T 8 MHz, %u/%u MHz "
	       "alternating), %lu per chip; baseline: 1 + K + C SEQPACKET "
	       "round trips, %zu B request / %zu B reply, then K x (I2C B) / "
	       "%zu B, then C bridge requests (BRIDGE_CTRL, DEMOD_STATUS) x "
	       "%zu B / %zu B\n",
	       BENCH_FREQ_A / 1000000, BENCH_FREQ_B / 1000000, o->requests,
	       BENCH_REQ_LEN, BENCH_HDR_LEN, BENCH_HDR_LEN, BENCH_CTRL_LEN,
	       BENCH_HDR_LEN);
	printf("%-7s %8s %13s %5s %4s %9s %9s %9s %9s %6s %6s\n", "chip",
	       "samples", "i2c/tune", "I2C B", "C", "stub p50", "stub p99",
	       "base p50", "base p99", "r p50", "r p99");
	for (size_t i = 0; i < BENCH_NCHIPS && !err; i++) {
		struct chip_result *r = &res[i];

		if (o->chip && strcmp(o->chip, bench_chips[i]))
			continue;
		r->chip = bench_chips[i];
		r->n = o->requests;
		r->stub_ns = calloc(r->n, sizeof(uint64_t));
		r->base_ns = calloc(r->n, sizeof(uint64_t));
		if (!r->stub_ns || !r->base_ns)
			err = -ENOMEM;
		else
			err = chip_measure(&b, pp, (uint32_t)i + 1, r);
		if (!err)
			chip_print(r);
		failed += r->failed;
		fflush(stdout);
	}
	printf("(us; r = stub / baseline; target: r p50 <= 1.5)\n");
	for (size_t i = 0; i < BENCH_NCHIPS; i++) {
		free(res[i].stub_ns);
		free(res[i].base_ns);
	}
	if (bench_stub_stop(&b) && !err)
		err = -ECHILD;
	if (!err && failed) {
		fprintf(stderr, "bench_stub: %lu request(s) failed\n", failed);
		err = -EIO;
	}
	return err;
}

/*
 * Phase 2: one tune on each of 64 tuners issued at once.  Each timed step
 * starts on a drained box, so that neither pays for the status reads the
 * workers do after the other's replies.  Tuner 1 alternates between the
 * single tune's frequency and the others': every tune retunes.
 */
static int wide_round(struct bench_stub *b, size_t ntuners, size_t round,
		      uint64_t *one_ns, uint64_t *all_ns)
{
	uint32_t f = round & 1 ? BENCH_FREQ_B : BENCH_FREQ_A;
	uint64_t t0;
	int err;

	bench_drain(b, BENCH_WIDE_IDLE_MS);
	t0 = bench_now_ns();
	err = bench_tune(b, 1, BENCH_FREQ_C);
	*one_ns = bench_now_ns() - t0;
	if (err)
		return err;
	bench_drain(b, BENCH_WIDE_IDLE_MS);
	t0 = bench_now_ns();
	err = bench_tune_all(b, ntuners, f);
	*all_ns = bench_now_ns() - t0;
	return err;
}

static int phase_wide(const struct bench_opts *o, const char *dir)
{
	struct sim_box_bridge br[BENCH_WIDE_TUNERS];
	uint64_t one[BENCH_WIDE_ROUNDS], all[BENCH_WIDE_ROUNDS];
	struct bench_stub b;
	double one_us, all_us;
	int err;

	for (size_t i = 0; i < BENCH_WIDE_TUNERS; i++)
		br[i] = (struct sim_box_bridge){.chip = "mt2060",
						.adapter = (uint32_t)i};
	err = bench_stub_start(&b, dir, "wide", o->tunerd, o->plugins, br,
			       BENCH_WIDE_TUNERS);
	if (err)
		return err;
	for (size_t r = 0; r < o->rounds && !err; r++)
		err = wide_round(&b, BENCH_WIDE_TUNERS, r, &one[r], &all[r]);
	if (bench_stub_stop(&b) && !err)
		err = -ECHILD;
	if (err) {
		fprintf(stderr, "bench_stub: 64-tuner phase: %s\n",
			strerror(-err));
		return err;
	}
	qsort(one, o->rounds, sizeof(uint64_t), bench_cmp_u64);
	qsort(all, o->rounds, sizeof(uint64_t), bench_cmp_u64);
	one_us = pct_us(one, o->rounds, 0.5);
	all_us = pct_us(all, o->rounds, 0.5);
	printf("\n%d x mt2060, %u rounds (median): one tune on one tuner "
	       "%.1f us; one tune on each of %d tuners at once %.1f us\n",
	       BENCH_WIDE_TUNERS, o->rounds, one_us, BENCH_WIDE_TUNERS, all_us);
	printf("ratio %d-tuner total / single: %.2f (serial: %d; ideal on "
	       "%d cores: %.1f; this machine: %ld cores)\n",
	       BENCH_WIDE_TUNERS, all_us / one_us, BENCH_WIDE_TUNERS,
	       BENCH_IDEAL_CORES, (double)BENCH_WIDE_TUNERS / BENCH_IDEAL_CORES,
	       sysconf(_SC_NPROCESSORS_ONLN));
	return 0;
}

static int parse_opts(int argc, char **argv, struct bench_opts *o)
{
	static const struct option opts[] = {
	    {"quick", no_argument, NULL, 'q'},
	    {"requests", required_argument, NULL, 'n'},
	    {"tunerd", required_argument, NULL, 't'},
	    {"plugin-dir", required_argument, NULL, 'p'},
	    {"cpu", required_argument, NULL, 'c'},
	    {"cpus", required_argument, NULL, 'S'},
	    {"chip", required_argument, NULL, 'C'},
	    {NULL, 0, NULL, 0},
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			o->requests = BENCH_QUICK_REQUESTS;
			o->rounds = BENCH_QUICK_ROUNDS;
			break;
		case 'n':
			o->requests = strtoul(optarg, &end, 10);
			if (*end || o->requests < 1 || o->requests > 100000000)
				return -1;
			break;
		case 't':
			o->tunerd = optarg;
			break;
		case 'p':
			o->plugins = optarg;
			break;
		case 'c':
			o->cpu = (int)strtol(optarg, &end, 10);
			if (*end || o->cpu < 0 || o->cpu >= CPU_SETSIZE)
				return -1;
			break;
		case 'S':
			if (sscanf(optarg, "%d,%d", &o->cpu, &o->cpu_far) !=
				2 ||
			    o->cpu < 0 || o->cpu >= CPU_SETSIZE ||
			    o->cpu_far < 0 || o->cpu_far >= CPU_SETSIZE)
				return -1;
			break;
		case 'C':
			o->chip = optarg;
			break;
		default:
			return -1;
		}
	}
	for (size_t i = 0; o->chip && i < BENCH_NCHIPS; i++)
		if (!strcmp(o->chip, bench_chips[i]))
			return optind == argc ? 0 : -1;
	return o->chip || optind != argc ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o = {.tunerd = BENCH_TUNERD_PATH,
			       .plugins = BENCH_PLUGIN_DIR,
			       .requests = BENCH_REQUESTS,
			       .rounds = BENCH_WIDE_ROUNDS,
			       .cpu = -1,
			       .cpu_far = -1};
	struct bench_pingpong pp;
	char dir[128];
	int err;

	if (parse_opts(argc, argv, &o)) {
		fprintf(
		    stderr,
		    "usage: %s [--quick] [--requests N] "
		    "[--tunerd PATH] [--plugin-dir DIR] "
		    "[--cpu N | --cpus A,B] [--chip mt2060|qt1010|xc3028]\n",
		    argv[0]);
		return 2;
	}
	if (o.cpu >= 0) {
		/* Before any fork: every process of the run inherits it. */
		err = bench_pin_to_cpu(o.cpu);
		if (err) {
			fprintf(stderr, "bench_stub: --cpu: %s\n",
				strerror(-err));
			return 2;
		}
		if (o.cpu_far < 0) {
			printf("every process pinned to CPU %d\n", o.cpu);
		} else {
			bench_children_on_cpu(o.cpu_far);
			printf("the bench and its box pinned to CPU %d, the "
			       "echo, tunerd and its workers to CPU %d\n",
			       o.cpu, o.cpu_far);
		}
	}
	signal(SIGPIPE, SIG_IGN);
	/* The echo process first: it must not inherit the box's sockets. */
	if (bench_pingpong_start(&pp))
		return 1;
	err = bench_workdir(dir, sizeof(dir));
	if (!err)
		err = phase_latency(&o, dir, &pp);
	bench_pingpong_stop(&pp);
	if (!err && !o.chip)
		err = phase_wide(&o, dir);
	if (err) {
		fprintf(stderr, "bench_stub: failed (%s); logs in %s\n",
			strerror(-err), dir);
		return 1;
	}
	bench_remove_tree(dir);
	return 0;
}

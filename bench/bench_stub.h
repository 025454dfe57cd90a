/* SPDX-License-Identifier: MIT */
/*
 * bench_stub.h - bench_stub's processes: the embedded simulated box with
 * a tunerd on it, and the bare SEQPACKET echo process of the baseline.
 */
#ifndef BENCH_STUB_H
#define BENCH_STUB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench_proc.h"
#include "box.h"

#ifndef BENCH_TUNERD_PATH
#define BENCH_TUNERD_PATH "tunerd"
#endif
#ifndef BENCH_PLUGIN_DIR
#define BENCH_PLUGIN_DIR "plugins"
#endif

/* A box in this process and the tunerd serving it. */
struct bench_stub {
	struct sim_box *box;
	pid_t tunerd; /* 0 once reaped */
	size_t nclients;
};

/* A private directory with the synthetic XC3028 firmware in dir/fw.
 * 0 or a negative errno. */
int bench_workdir(char *dir, size_t len);

/*
 * Start a box with these bridges (I2C delay 0, settle scale 0) on
 * dir/<tag>.sock, then tunerd on it (log in dir/tunerd-<tag>.log), and
 * wait until every client is bound, attached and has answered a first
 * TSTUB_TUNER_INIT.  On failure nothing is left running.
 */
int bench_stub_start(struct bench_stub *b, const char *dir, const char *tag,
		     const char *tunerd, const char *plugins,
		     const struct sim_box_bridge *bridges, size_t n);
/* Serve the box until it has been idle for idle_ms (at most a bounded
 * number of rounds): the workers' work after their replies is done. */
void bench_drain(struct bench_stub *b, int idle_ms);
/* Stop and reap tunerd, free the box.  0, or -ECHILD when tunerd had
 * died, exited with an error or had to be killed. */
int bench_stub_stop(struct bench_stub *b);

/* TSTUB_SET_PARAMS (DVB-T, 8 MHz) on one client, waited for; then on
 * clients 1..n issued at once.  0 or the first error. */
int bench_tune(struct bench_stub *b, uint32_t client, uint32_t freq);
int bench_tune_all(struct bench_stub *b, size_t n, uint32_t freq);

/* The baseline: a forked process echoing on a SEQPACKET socketpair. */
struct bench_pingpong {
	int fd;
	pid_t pid;
	uint64_t out[256 / 8], in[2048 / 8];
};

/* This process (and what it forks from now) on CPU cpu; 0 or -errno. */
int bench_pin_to_cpu(int cpu);
/* Children forked from now (the echo, tunerd) run on CPU cpu; -1: where
 * the bench runs. */
void bench_children_on_cpu(int cpu);

int bench_pingpong_start(struct bench_pingpong *pp);
void bench_pingpong_stop(struct bench_pingpong *pp);
/* The messages of one tune: the request and its reply, then k I2C
 * transfers and k_ctrl bridge requests (BRIDGE_CTRL, DEMOD_STATUS) with
 * theirs. */
struct bench_exchange {
	size_t req_len, reply_len;
	unsigned int k;
	size_t xfer_len, xfer_reply_len;
	unsigned int k_ctrl;
	size_t ctrl_len, ctrl_reply_len;
};

/* The exchange's round trips, one at a time.  0 or a negative errno. */
int bench_pingpong_rounds(struct bench_pingpong *pp,
			  const struct bench_exchange *x);

#endif /* BENCH_STUB_H */

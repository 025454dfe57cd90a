// SPDX-License-Identifier: MIT
/*
 * bench_stub_proc.c - the processes bench_stub measures: the simulated
 * box embedded here with a real tunerd on it, and the baseline's echo
 * process.  Children get SIGKILL when the bench dies, so an interrupted
 * run leaves nothing behind.
 */
#define _GNU_SOURCE
#include "bench_stub.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xc3028_fwgen.h"

#define BENCH_READY_TIMEOUT_NS (60ull * 1000000000u)
#define BENCH_STOP_TIMEOUT_NS  (5ull * 1000000000u)
#define BENCH_DRAIN_TRIES      50
#define BENCH_DRAIN_IDLE_MS    20

int bench_workdir(char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	char fw[PATH_MAX], err[256];

	if (snprintf(dir, len, "%s/bench-stub-XXXXXX", tmp ? tmp : "/tmp") >=
	    (int)len)
		return -ENAMETOOLONG;
	if (!mkdtemp(dir))
		return -errno;
	snprintf(fw, sizeof(fw), "%s/fw", dir);
	if (mkdir(fw, 0700))
		return -errno;
	snprintf(fw, sizeof(fw), "%s/fw/xc3028-v27.fw", dir);
	if (xc3028_fwgen_write(fw, err, sizeof(err))) {
		fprintf(stderr, "bench_stub: firmware: %s\n", err);
		return -EIO;
	}
	return 0;
}

static int child_cpu = -1;

int bench_pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

void bench_children_on_cpu(int cpu)
{
	child_cpu = cpu;
}

/* The child dies with the bench, whatever kills the bench.  Also moves
 * the child to child_cpu, when set (before an exec: tunerd's own
 * children inherit it). */
static void child_tie_to_parent(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	if (child_cpu >= 0 && bench_pin_to_cpu(child_cpu))
		_exit(127);
}

static pid_t tunerd_spawn(const char *dir, const char *tag, const char *sock,
			  const char *tunerd, const char *plugins)
{
	char stub[PATH_MAX + 8], fw[PATH_MAX], log[PATH_MAX], state[PATH_MAX];
	pid_t parent = getpid(), pid;
	int fd;

	snprintf(stub, sizeof(stub), "sim:%s", sock);
	snprintf(fw, sizeof(fw), "%s/fw", dir);
	snprintf(log, sizeof(log), "%s/tunerd-%s.log", dir, tag);
	snprintf(state, sizeof(state), "%s/state-%s", dir, tag);
	pid = fork();
	if (pid)
		return pid;
	child_tie_to_parent(parent);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
	    dup2(fd, STDERR_FILENO) < 0)
		_exit(127);
	execl(tunerd, tunerd, "--stub", stub, "--plugin-dir", plugins,
	      "--firmware-dir", fw, "--state-dir", state, (char *)NULL);
	fprintf(stderr, "exec %s: %s\n", tunerd, strerror(errno));
	_exit(127);
}

/* -ECHILD when tunerd is gone (and reaped). */
static int tunerd_alive(struct bench_stub *b)
{
	if (!b->tunerd || waitpid(b->tunerd, NULL, WNOHANG) == 0)
		return b->tunerd ? 0 : -ECHILD;
	b->tunerd = 0;
	return -ECHILD;
}

struct batch {
	size_t left;
	size_t failed;
	int first_err;
};

static void batch_done(void *arg, int err, const void *body, size_t len)
{
	struct batch *bt = arg;

	(void)body;
	(void)len;
	bt->left--;
	if (err && !bt->failed++)
		bt->first_err = err;
}

/* The box's deadline ends every request, so this returns.  Its wait is
 * the box's own, unbounded as tunerd-simbox's is: a bound would cost a
 * timer started and stopped on the loop for every round trip. */
static int batch_wait(struct bench_stub *b, struct batch *bt)
{
	while (bt->left) {
		int n = sim_box_run(b->box, -1);

		if (n < 0 && n != -EINTR)
			return n;
	}
	return bt->failed ? bt->first_err : 0;
}

static void batch_submit(struct bench_stub *b, struct batch *bt,
			 uint32_t client, uint16_t opcode,
			 const struct tstub_params *p)
{
	int err;

	bt->left++;
	err = sim_box_request(b->box, client, opcode, p, batch_done, bt);
	if (err)
		batch_done(bt, err, NULL, 0);
}

int bench_tune(struct bench_stub *b, uint32_t client, uint32_t freq)
{
	const struct tstub_params p = {.delsys = TSTUB_DELSYS_DVBT,
				       .frequency = freq,
				       .bandwidth = 8000000};
	struct batch bt = {0};

	batch_submit(b, &bt, client, TSTUB_SET_PARAMS, &p);
	return batch_wait(b, &bt);
}

int bench_tune_all(struct bench_stub *b, size_t n, uint32_t freq)
{
	const struct tstub_params p = {.delsys = TSTUB_DELSYS_DVBT,
				       .frequency = freq,
				       .bandwidth = 8000000};
	struct batch bt = {0};

	for (size_t c = 1; c <= n; c++)
		batch_submit(b, &bt, (uint32_t)c, TSTUB_SET_PARAMS, &p);
	return batch_wait(b, &bt);
}

static size_t clients_ready(const struct bench_stub *b)
{
	struct sim_box_client_info ci;
	size_t ready = 0;

	for (uint32_t c = 1; c <= b->nclients; c++)
		if (!sim_box_client_info(b->box, c, &ci) && ci.bound &&
		    ci.attached)
			ready++;
	return ready;
}

static int stub_wait_ready(struct bench_stub *b)
{
	uint64_t end = bench_now_ns() + BENCH_READY_TIMEOUT_NS;
	struct batch bt = {0};

	while (clients_ready(b) < b->nclients) {
		if (tunerd_alive(b))
			return -ECHILD;
		if (bench_now_ns() > end)
			return -ETIMEDOUT;
		sim_box_run(b->box, 20);
	}
	for (uint32_t c = 1; c <= b->nclients; c++)
		batch_submit(b, &bt, c, TSTUB_TUNER_INIT, NULL);
	return batch_wait(b, &bt);
}

int bench_stub_start(struct bench_stub *b, const char *dir, const char *tag,
		     const char *tunerd, const char *plugins,
		     const struct sim_box_bridge *bridges, size_t n)
{
	char sock[PATH_MAX], fw[PATH_MAX], err[256];
	struct sim_box_config cfg = {0};
	int ret;

	snprintf(sock, sizeof(sock), "%s/%s.sock", dir, tag);
	snprintf(fw, sizeof(fw), "%s/fw/xc3028-v27.fw", dir);
	cfg.stub_path = sock;
	cfg.bridges = bridges;
	cfg.nbridges = n;
	cfg.firmware_path = fw;
	cfg.i2c_khz = 0;
	cfg.settle_scale = 0.0;
	*b = (struct bench_stub){.nclients = n};
	b->box = sim_box_new(&cfg, err, sizeof(err));
	if (!b->box) {
		fprintf(stderr, "bench_stub: box: %s\n", err);
		return -EIO;
	}
	b->tunerd = tunerd_spawn(dir, tag, sock, tunerd, plugins);
	if (b->tunerd < 0) {
		ret = -errno;
		b->tunerd = 0;
		goto fail;
	}
	ret = stub_wait_ready(b);
	if (!ret)
		return 0;
	fprintf(stderr, "bench_stub: %s: tunerd not ready: %s\n", tag,
		strerror(-ret));
fail:
	bench_stub_stop(b);
	return ret;
}

/* SIGTERM, with the box still served while tunerd shuts down; SIGKILL
 * when that takes too long. */
static int tunerd_stop(struct bench_stub *b)
{
	uint64_t end = bench_now_ns() + BENCH_STOP_TIMEOUT_NS;
	pid_t pid = b->tunerd;
	int status = 0;

	kill(pid, SIGTERM);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (bench_now_ns() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "bench_stub: tunerd killed\n");
			return -ECHILD;
		}
		sim_box_run(b->box, 10);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
		return 0;
	fprintf(stderr, "bench_stub: tunerd ended with status 0x%x\n", status);
	return -ECHILD;
}

void bench_drain(struct bench_stub *b, int idle_ms)
{
	for (int i = 0; i < BENCH_DRAIN_TRIES; i++)
		if (sim_box_run(b->box, idle_ms) <= 0)
			break;
}

int bench_stub_stop(struct bench_stub *b)
{
	int ret;

	/* A worker still reads its status after the last reply: let it
	 * finish rather than have the box answer a closed channel. */
	bench_drain(b, BENCH_DRAIN_IDLE_MS);
	ret = b->tunerd ? tunerd_stop(b) : -ECHILD;

	b->tunerd = 0;
	sim_box_free(b->box);
	b->box = NULL;
	return ret;
}

/* ---- the baseline ---- */

/* The first 4 bytes of every message say how long the answer is. */
static void __attribute__((noreturn)) echo_serve(int fd)
{
	uint64_t buf[2048 / 8];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		uint32_t len;

		if (n < (ssize_t)sizeof(len))
			_exit(n == 0 ? 0 : 1);
		memcpy(&len, buf, sizeof(len));
		if (len < sizeof(len) || len > sizeof(buf))
			_exit(1);
		if (send(fd, buf, len, 0) != (ssize_t)len)
			_exit(1);
	}
}

int bench_pingpong_start(struct bench_pingpong *pp)
{
	pid_t parent = getpid();
	int sv[2];

	memset(pp, 0, sizeof(*pp));
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		perror("bench_stub: socketpair");
		return -errno;
	}
	pp->pid = fork();
	if (pp->pid == 0) {
		child_tie_to_parent(parent);
		close(sv[0]);
		echo_serve(sv[1]);
	}
	close(sv[1]);
	if (pp->pid < 0) {
		perror("bench_stub: fork");
		close(sv[0]);
		return -ECHILD;
	}
	pp->fd = sv[0];
	return 0;
}

void bench_pingpong_stop(struct bench_pingpong *pp)
{
	close(pp->fd); /* the echo process reads EOF and exits */
	waitpid(pp->pid, NULL, 0);
}

static int pingpong_round(struct bench_pingpong *pp, size_t len,
			  size_t reply_len)
{
	uint32_t want = (uint32_t)reply_len;
	ssize_t n;

	if (len > sizeof(pp->out) || len < sizeof(want))
		return -EMSGSIZE;
	memcpy(pp->out, &want, sizeof(want));
	if (send(pp->fd, pp->out, len, 0) != (ssize_t)len)
		return -EIO;
	n = recv(pp->fd, pp->in, sizeof(pp->in), 0);
	return n == (ssize_t)reply_len ? 0 : -EIO;
}

int bench_pingpong_rounds(struct bench_pingpong *pp,
			  const struct bench_exchange *x)
{
	int err = pingpong_round(pp, x->req_len, x->reply_len);

	for (unsigned int i = 0; i < x->k && !err; i++)
		err = pingpong_round(pp, x->xfer_len, x->xfer_reply_len);
	for (unsigned int i = 0; i < x->k_ctrl && !err; i++)
		err = pingpong_round(pp, x->ctrl_len, x->ctrl_reply_len);
	return err;
}

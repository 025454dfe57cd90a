// SPDX-License-Identifier: MIT
/*
 * The worker zygote: a small process forked at the daemon's start that
 * forks the workers (see worker_zygote.h for why).  One request, one
 * answer, on a SOCK_SEQPACKET pair: the worker's arguments flattened into
 * a fixed struct with the worker's daemon socket attached (SCM_RIGHTS),
 * answered with the worker's pid or a negative errno.  The daemon waits
 * for the answer (a fork of a small process: tens of microseconds), so a
 * spawn stays the synchronous call it was.
 */
#define _GNU_SOURCE /* close_range, CLONE_PARENT */
#include "worker_zygote.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"

/* The worker's arguments without pointers. */
struct zygote_req {
	pid_t parent; /* the daemon: the worker's parent */
	uint32_t client;
	int abi;
	struct tstub_chip_info info;
	struct tunerd_tuner_config cfg;
	struct stub_addr stub;
	unsigned int deadline_ms;
	unsigned int settle_permille;
	int demod_status;
	int cmd_bracket;
	int have_restore;
	int have_saved;
	int have_firmware_dir;
	struct tstub_params restore;
	struct tstub_params saved;
	char plugin_path[PATH_MAX];
	char firmware_dir[PATH_MAX];
};

/* Plugins the zygote holds open, so that a worker's dlopen() of the same
 * file only counts a reference: loading it anew in each worker would write
 * to the link map of every library the daemon links (the loader sorts
 * them all), copying those heap pages into each worker.  A plugin gets
 * here only after its trial loaded it in a child of its own. */
#define ZYGOTE_PRELOAD_MAX 16

struct zygote_preload {
	char *path;
	struct stat st; /* the file it was loaded from */
	void *handle;
};

static struct zygote_preload preloads[ZYGOTE_PRELOAD_MAX];
static int zygote_fd = -1;
static pid_t zygote_pid;
/* A zygote that dies (a crash, a stray kill) is forked again at the next
 * spawn, at most once per ZYGOTE_RESPAWN_NS: the new one is forked from
 * the grown daemon and so costs up to one daemon's worth of pages, but
 * its workers share those, where each worker forked from the daemon
 * would copy what it touches.  Never again after worker_zygote_stop(). */
#define ZYGOTE_RESPAWN_NS (10 * 1000000000ull)
static int zygote_wanted;
static uint64_t zygote_respawned_ns;

/* The worker must not hold the daemon's fds: a control channel kept open
 * by a worker would keep the stub from seeing the daemon go. */
static void close_fds_but(int keep)
{
	if (keep > 3 && close_range(3, (unsigned int)keep - 1, 0) < 0)
		for (int fd = 3; fd < keep; fd++)
			close(fd);
	if (close_range((unsigned int)keep + 1, ~0u, 0) < 0) {
		long max = sysconf(_SC_OPEN_MAX);

		for (long fd = keep + 1; fd < (max > 0 ? max : 1024); fd++)
			close((int)fd);
	}
}

void worker_become(const struct worker_args *a, pid_t parent)
{
	char tag[32];
	sigset_t none;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(WORKER_EXIT_OK); /* the daemon died before prctl */
	/* A chip's waits and the lock watch's reads are timed to the chip:
	 * no 50 us timer slack on each. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	close_fds_but(a->daemon_fd);
	snprintf(tag, sizeof(tag), "tunerd-worker %u", a->client);
	log_set_tag(tag);
	/* _exit: nothing of the daemon's (atexit, stdio) runs here. */
	_exit(worker_main(a));
}

static void __attribute__((noreturn))
zygote_run_worker(const struct zygote_req *r, int sock)
{
	struct worker_args a = {
	    .client = r->client,
	    .abi = r->abi,
	    .plugin_path = r->plugin_path,
	    .info = r->info,
	    .cfg = r->cfg,
	    .stub = &r->stub,
	    .firmware_dir = r->have_firmware_dir ? r->firmware_dir : NULL,
	    .deadline_ms = r->deadline_ms,
	    .settle_permille = r->settle_permille,
	    .demod_status = r->demod_status,
	    .cmd_bracket = r->cmd_bracket,
	    .daemon_fd = sock,
	    .restore = r->restore,
	    .have_restore = r->have_restore,
	    .saved = r->saved,
	    .have_saved = r->have_saved,
	};

	worker_become(&a, r->parent);
}

/* One request: its fd (or -1) and whether it is whole. */
static ssize_t zygote_recv(int fd, struct zygote_req *r, int *sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = r, .iov_len = sizeof(*r)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	ssize_t n;

	*sock = -1;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(sock, CMSG_DATA(c), sizeof(int));
	return n;
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Hold path open; a file replaced since is closed first, so the worker
 * loads the new one.  Best effort: the worker opens and checks the plugin
 * itself either way. */
static void zygote_preload(const char *path)
{
	struct zygote_preload *free_slot = NULL;
	struct stat st;

	if (stat(path, &st))
		return;
	for (int i = 0; i < ZYGOTE_PRELOAD_MAX; i++) {
		struct zygote_preload *p = &preloads[i];

		if (!p->path) {
			free_slot = free_slot ? free_slot : p;
			continue;
		}
		if (strcmp(p->path, path))
			continue;
		if (same_file(&p->st, &st))
			return;
		dlclose(p->handle);
		free(p->path);
		memset(p, 0, sizeof(*p));
		free_slot = p;
	}
	if (!free_slot || !(free_slot->path = strdup(path)))
		return;
	free_slot->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	free_slot->st = st;
	if (!free_slot->handle) {
		free(free_slot->path);
		free_slot->path = NULL;
	}
}

/*
 * The worker is made with the raw clone system call, which glibc's fork()
 * cannot do: CLONE_PARENT makes it the daemon's child.  What fork() adds
 * is not needed here: the zygote has one thread and no atfork handlers,
 * and the child's glibc state (its thread id cached in the thread block)
 * serves only recursive mutexes, which a worker does not use.
 */
static void __attribute__((noreturn)) zygote_serve(int fd)
{
	for (;;) {
		struct zygote_req r;
		int sock;
		int32_t reply;
		ssize_t n = zygote_recv(fd, &r, &sock);
		pid_t pid;

		if (n <= 0)
			_exit(0); /* the daemon is gone */
		if (n != (ssize_t)sizeof(r) || sock < 0) {
			reply = -EINVAL;
		} else {
			r.plugin_path[PATH_MAX - 1] = '\0';
			r.firmware_dir[PATH_MAX - 1] = '\0';
			r.stub.path[PATH_MAX - 1] = '\0';
			zygote_preload(r.plugin_path);
			pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD,
					     NULL, NULL, NULL, 0);
			if (pid == 0) {
				close(fd);
				zygote_run_worker(&r, sock);
			}
			reply = pid < 0 ? -errno : pid;
		}
		if (sock >= 0)
			close(sock);
		if (send(fd, &reply, sizeof(reply), MSG_NOSIGNAL) < 0)
			_exit(0);
	}
}

int worker_zygote_start(void)
{
	pid_t parent = getpid(), pid;
	int sv[2], err;

	if (zygote_fd >= 0)
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		close_fds_but(sv[1]);
		log_set_tag("tunerd-zygote");
		/* The libraries' constructors (TLS, HTTP) left small freed
		 * chunks all over the heap.  A worker's first large malloc
		 * would coalesce them, writing to (and so copying) every page
		 * they lie on; done here once, the workers share the result. */
		malloc_trim(0);
		zygote_serve(sv[1]);
	}
	close(sv[1]);
	zygote_fd = sv[0];
	zygote_pid = pid;
	zygote_wanted = 1;
	return 0;
}

/* Fork a zygote again, unless the last try was under ZYGOTE_RESPAWN_NS
 * ago. */
static void zygote_respawn(void)
{
	uint64_t now = loop_now_ns();
	int err;

	if (!zygote_wanted || now - zygote_respawned_ns < ZYGOTE_RESPAWN_NS)
		return;
	zygote_respawned_ns = now;
	err = worker_zygote_start();
	if (err)
		log_warn("worker zygote: fork again failed (%s)",
			 strerror(-err));
	else
		log_info("worker zygote %d: forked again", (int)zygote_pid);
}

static void zygote_end(const char *why)
{
	int st = 0;

	if (zygote_fd < 0)
		return;
	close(zygote_fd);
	zygote_fd = -1;
	kill(zygote_pid, SIGKILL);
	while (waitpid(zygote_pid, &st, 0) < 0 && errno == EINTR)
		;
	if (why)
		log_warn("worker zygote %d %s: workers are forked from the "
			 "daemon until it is forked again",
			 (int)zygote_pid, why);
}

void worker_zygote_stop(void)
{
	zygote_wanted = 0;
	zygote_end(NULL);
}

static int zygote_send(const struct zygote_req *r, int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = (void *)r, .iov_len = sizeof(*r)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &sock, sizeof(int));
	return sendmsg(zygote_fd, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(*r)
		   ? 0
		   : -1;
}

static int zygote_fill(struct zygote_req *r, const struct worker_args *a)
{
	memset(r, 0, sizeof(*r));
	r->parent = getpid();
	r->client = a->client;
	r->abi = a->abi;
	r->info = a->info;
	r->cfg = a->cfg;
	r->stub = *a->stub;
	r->deadline_ms = a->deadline_ms;
	r->settle_permille = a->settle_permille;
	r->demod_status = a->demod_status;
	r->cmd_bracket = a->cmd_bracket;
	r->have_restore = a->have_restore;
	r->restore = a->restore;
	r->have_saved = a->have_saved;
	r->saved = a->saved;
	r->have_firmware_dir = a->firmware_dir != NULL;
	if (snprintf(r->plugin_path, PATH_MAX, "%s", a->plugin_path) >=
		PATH_MAX ||
	    (a->firmware_dir && snprintf(r->firmware_dir, PATH_MAX, "%s",
					 a->firmware_dir) >= PATH_MAX))
		return -ENAMETOOLONG;
	return 0;
}

pid_t worker_zygote_spawn(const struct worker_args *a)
{
	static struct zygote_req r; /* 8 KiB: not on the loop's stack */
	struct pollfd pfd = {.events = POLLIN};
	int32_t reply = 0;
	int err;

	if (a->ops)
		return -ECHILD;
	if (zygote_fd < 0)
		zygote_respawn();
	if (zygote_fd < 0)
		return -ECHILD;
	pfd.fd = zygote_fd;
	err = zygote_fill(&r, a);
	if (err)
		return err;
	if (zygote_send(&r, a->daemon_fd)) {
		zygote_end("is gone");
		return -ECHILD;
	}
	while ((err = poll(&pfd, 1, WORKER_ZYGOTE_WAIT_MS)) < 0 &&
	       errno == EINTR)
		;
	if (err <= 0 || recv(zygote_fd, &reply, sizeof(reply), 0) !=
			    (ssize_t)sizeof(reply)) {
		zygote_end(err <= 0 ? "did not answer" : "is gone");
		return -ECHILD;
	}
	return reply;
}

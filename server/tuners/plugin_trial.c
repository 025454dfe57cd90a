// SPDX-License-Identifier: MIT
/*
 * A plugin's first load, tried in a child process.  dlopen() runs the
 * plugin's constructors and the host then calls its version() and
 * describe(): code the daemon cannot vet.  So the daemon never runs it:
 * a child does and reports the description through a pipe, and only
 * workers open a plugin to serve a tuner.
 *
 * The child's exit is watched through a pidfd rather than SIGCHLD, so the
 * trial needs nothing from the daemon's signal handling and a unit test
 * can drive it with a bare loop.  The pipe is read once the child is
 * reaped: the description (a few hundred bytes) fits the pipe's buffer,
 * so the child never blocks writing it.
 */
#define _GNU_SOURCE /* close_range */
#include "plugin_trial.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loop.h"

struct plugin_trial {
	struct loop *loop;
	char path[PATH_MAX];
	pid_t pid;
	int pidfd;
	int rfd; /* the pipe's read end */
	uint64_t deadline;
	unsigned int timeout_ms;
	int timed_out;
	plugin_trial_fn fn;
	void *arg;
};

_Static_assert(sizeof(struct plugin_desc) <= PIPE_BUF,
	       "the child writes its description in one write");

/* Close fds from first to last (inclusive), without close_range() too. */
static void trial_close_fds(unsigned int first, unsigned int last)
{
	long max;

	if (first > last || close_range(first, last, 0) == 0)
		return;
	max = sysconf(_SC_OPEN_MAX);
	if (max <= 0 || max > 65536)
		max = 65536;
	for (long fd = first; fd <= (long)last && fd < max; fd++)
		close((int)fd);
}

/* Every fd closed but wfd (returned, moved above stderr); 0-2 on
 * /dev/null so what the plugin opens cannot land there. */
static int trial_child_fds(int wfd)
{
	int devnull;

	if (wfd <= 2)
		wfd = fcntl(wfd, F_DUPFD, 3);
	if (wfd < 0)
		_exit(127);
	if (wfd > 3)
		trial_close_fds(3, (unsigned int)wfd - 1);
	trial_close_fds((unsigned int)wfd + 1, ~0u);
	devnull = open("/dev/null", O_RDWR);
	for (int fd = 0; fd <= 2; fd++)
		if (devnull != fd)
			dup2(devnull, fd);
	if (devnull > 2)
		close(devnull);
	return wfd;
}

static void __attribute__((noreturn))
trial_child(const char *path, int wfd, pid_t parent)
{
	struct tunerd_plugin_ops ops;
	struct plugin_desc d;
	sigset_t none;
	void *handle;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127); /* the daemon died before prctl */
	wfd = trial_child_fds(wfd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	plugin_open(path, &d, &ops, &handle);
	if (write(wfd, &d, sizeof(d)) != (ssize_t)sizeof(d))
		_exit(126);
	/* _exit: neither the plugin's destructors nor the daemon's atexit
	 * run here. */
	_exit(0);
}

static void trial_unhook(struct plugin_trial *t)
{
	loop_del_fd(t->loop, t->pidfd);
	loop_del_timer(t->loop, t->deadline);
	close(t->pidfd);
	close(t->rfd);
}

/* What the parent learns from the child's end. */
static void trial_result(struct plugin_trial *t, const siginfo_t *si,
			 struct plugin_desc *d)
{
	ssize_t n = read(t->rfd, d, sizeof(*d));

	if (n == (ssize_t)sizeof(*d) && si->si_code == CLD_EXITED &&
	    si->si_status == 0) {
		d->reason[sizeof(d->reason) - 1] = '\0';
		return;
	}
	memset(d, 0, sizeof(*d));
	if (t->timed_out)
		plugin_desc_refuse(d, -ENOEXEC, t->path,
				   "hung for %u ms while loading",
				   t->timeout_ms);
	else if (si->si_code == CLD_KILLED || si->si_code == CLD_DUMPED)
		plugin_desc_refuse(d, -ENOEXEC, t->path,
				   "crashed while loading (signal %d)",
				   si->si_status);
	else
		plugin_desc_refuse(d, -ENOEXEC, t->path,
				   "failed while loading (exit %d)",
				   si->si_status);
}

static void trial_exited(struct loop *l, int fd, unsigned int ev, void *arg)
{
	struct plugin_trial *t = arg;
	struct plugin_desc d;
	siginfo_t si = {0};

	(void)l;
	(void)fd;
	(void)ev;
	if (waitid((idtype_t)P_PIDFD, (id_t)t->pidfd, &si, WEXITED | WNOHANG) <
		0 ||
	    si.si_pid == 0)
		return; /* not yet: the pidfd said readable too early */
	trial_result(t, &si, &d);
	trial_unhook(t);
	t->fn(&d, t->arg);
	free(t);
}

static long trial_deadline(struct loop *l, uint64_t id, void *arg)
{
	struct plugin_trial *t = arg;

	(void)l;
	(void)id;
	t->deadline = 0;
	t->timed_out = 1;
	/* The pidfd names this child even if its pid were reused. */
	pidfd_send_signal(t->pidfd, SIGKILL, NULL, 0);
	return LOOP_TIMER_DONE;
}

/* The parent's side once the child runs; 0 or -errno. */
static int trial_watch(struct plugin_trial *t)
{
	t->pidfd = pidfd_open(t->pid, 0);
	if (t->pidfd < 0)
		return -errno;
	if (loop_add_fd(t->loop, t->pidfd, LOOP_READ, trial_exited, t) < 0) {
		close(t->pidfd);
		return -ENOMEM;
	}
	t->deadline = loop_add_timer(t->loop, t->timeout_ms, trial_deadline, t);
	if (!t->deadline) {
		loop_del_fd(t->loop, t->pidfd);
		close(t->pidfd);
		return -ENOMEM;
	}
	return 0;
}

struct plugin_trial *plugin_trial_start(struct loop *l, const char *path,
					unsigned int timeout_ms,
					plugin_trial_fn fn, void *arg)
{
	struct plugin_trial *t = calloc(1, sizeof(*t));
	pid_t parent = getpid();
	int p[2], err;

	if (!t)
		return NULL;
	if (pipe2(p, O_CLOEXEC) < 0) {
		free(t);
		return NULL;
	}
	*t = (struct plugin_trial){.loop = l,
				   .rfd = p[0],
				   .fn = fn,
				   .arg = arg,
				   .timeout_ms = timeout_ms};
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->pid = fork();
	if (t->pid == 0)
		trial_child(t->path, p[1], parent);
	err = t->pid < 0 ? -errno : 0;
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	if (!err)
		err = trial_watch(t);
	if (err) {
		if (t->pid > 0) {
			kill(t->pid, SIGKILL);
			waitpid(t->pid, NULL, 0);
		}
		close(p[0]);
		free(t);
		errno = -err;
		return NULL;
	}
	return t;
}

void plugin_trial_cancel(struct plugin_trial *t)
{
	siginfo_t si;

	if (!t)
		return;
	pidfd_send_signal(t->pidfd, SIGKILL, NULL, 0);
	/* By pid, not by pidfd: the loop made the pidfd non-blocking, and the
	 * pid cannot be reused before this reap. */
	while (waitid(P_PID, (id_t)t->pid, &si, WEXITED) < 0 && errno == EINTR)
		;
	trial_unhook(t);
	free(t);
}

// SPDX-License-Identifier: MIT
/*
 * A plugin's first load, tried in a child process.  dlopen() runs the
 * plugin's constructors and the host then calls its version() and
 * describe(): code the daemon cannot vet.  A plugin that crashes or hangs
 * there would take the daemon down with every tuner, so each candidate is
 * first loaded in a forked child; only one that loads cleanly there is
 * opened in the daemon.  The cost, a fork per candidate scanned, is paid
 * when a chip's plugin is looked up, not per tune.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plugin_trial.h"
#include "tunerd_plugin.h"

#define TRIAL_TIMEOUT_MS 2000
#define TRIAL_POLL_MS    2

/* The child: load, negotiate, describe; the answer is the exit status. */
static void __attribute__((noreturn)) trial_child(const char *path)
{
	const int abi = TUNERD_PLUGIN_ABI;
	tunerd_plugin_version_fn version;
	tunerd_plugin_describe_fn describe;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		_exit(0); /* the daemon's own dlopen reports why */
	version = (tunerd_plugin_version_fn)dlsym(h, TUNERD_PLUGIN_VERSION_SYM);
	describe =
	    (tunerd_plugin_describe_fn)dlsym(h, TUNERD_PLUGIN_DESCRIBE_SYM);
	if (version && describe) {
		int v = version(1, &abi);

		if (v == abi)
			(void)describe(v);
	}
	_exit(0);
}

static int trial_wait(pid_t pid, int *status)
{
	struct timespec pause = {0, TRIAL_POLL_MS * 1000000L};

	for (int waited = 0; waited < TRIAL_TIMEOUT_MS;
	     waited += TRIAL_POLL_MS) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		nanosleep(&pause, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	return -ETIMEDOUT;
}

int plugin_trial(const char *path, char *why, size_t whylen)
{
	int status = 0, ret;
	pid_t pid = fork();

	if (pid < 0) {
		snprintf(why, whylen, "cannot fork to try it: %m");
		return -errno;
	}
	if (pid == 0)
		trial_child(path);
	ret = trial_wait(pid, &status);
	if (ret == -ETIMEDOUT) {
		snprintf(why, whylen, "hung for %d ms while loading",
			 TRIAL_TIMEOUT_MS);
		return ret;
	}
	if (ret < 0) {
		snprintf(why, whylen, "lost its trial load: %d", ret);
		return ret;
	}
	if (WIFSIGNALED(status)) {
		snprintf(why, whylen, "crashed while loading (signal %d)",
			 WTERMSIG(status));
		return -ENOEXEC;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(why, whylen, "failed while loading (exit %d)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -ENOEXEC;
	}
	return 0;
}

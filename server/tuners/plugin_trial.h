/* SPDX-License-Identifier: MIT */
/*
 * plugin_trial.h - a plugin's description learnt in a child process.
 *
 * The child is forked with every fd closed but the write end of a pipe
 * and dies with the daemon (PR_SET_PDEATHSIG), so a plugin that hangs
 * while loading holds nothing of the daemon's (least of all the control
 * channel to the stub) and does not outlive it.  It runs plugin_open()
 * and writes the struct plugin_desc to the pipe.  The parent watches the
 * child's pidfd in the loop and reaps it there; a deadline timer kills a
 * child that hangs.  Nothing blocks the loop thread.
 *
 * Loop thread only.
 */
#ifndef TUNERD_PLUGIN_TRIAL_H
#define TUNERD_PLUGIN_TRIAL_H

#include "plugin_open.h"

struct loop;
struct plugin_trial;

/* Called once from the loop with what the child found (or why it found
 * nothing: crashed, hung, exited); d is valid during the call only.  The
 * trial is freed after it returns. */
typedef void (*plugin_trial_fn)(const struct plugin_desc *d, void *arg);

/*
 * Try the plugin at path; fn runs from the loop, never from inside this
 * call.  Returns the trial, or NULL with errno set (fork, pipe or pidfd
 * failed) and fn never called.
 */
struct plugin_trial *plugin_trial_start(struct loop *l, const char *path,
					unsigned int timeout_ms,
					plugin_trial_fn fn, void *arg);

/* Kill the child and reap it; fn is not called.  Blocks only for the
 * killed child to go, which SIGKILL makes immediate: for shutdown. */
void plugin_trial_cancel(struct plugin_trial *t);

#endif /* TUNERD_PLUGIN_TRIAL_H */

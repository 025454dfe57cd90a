/* SPDX-License-Identifier: MIT */
#ifndef TUNERD_PLUGIN_TRIAL_H
#define TUNERD_PLUGIN_TRIAL_H

#include <stddef.h>

/* Load the plugin at path in a child process first.  0 if it loaded,
 * negotiated and described itself there without crashing or hanging;
 * else a negative errno and the reason in why. */
int plugin_trial(const char *path, char *why, size_t whylen);

#endif /* TUNERD_PLUGIN_TRIAL_H */

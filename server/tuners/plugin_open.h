/* SPDX-License-Identifier: MIT */
/*
 * plugin_open.h - opening one chip plugin file: dlopen, ABI version
 * negotiation, describe() and the checks of the description.
 *
 * This runs the plugin's code (its constructors, version(), describe()),
 * so only processes that may die of it call it: a plugin trial child
 * (plugin_trial.h) and a tuner's worker.  The daemon never does.
 */
#ifndef TUNERD_PLUGIN_OPEN_H
#define TUNERD_PLUGIN_OPEN_H

#include "tunerd_plugin.h"

/* What opening one file found.  A fixed-size struct with no pointers: a
 * trial child writes it as is to its parent. */
struct plugin_desc {
	int error; /* 0 usable, else why refused (-EPROTO, -ENOEXEC) */
	char reason[192];
	int abi;
	int info_valid; /* describe() gave an identity, even if refused */
	struct tstub_chip_info info;
};

/*
 * Open and check the plugin at path.  Returns 0 with *handle open and
 * *ops the host's copy of the plugin's ops (fields beyond the plugin's
 * ops size are NULL); else d->error with d->reason ("plugin FILE: ...")
 * and nothing left open.
 */
int plugin_open(const char *path, struct plugin_desc *d,
		struct tunerd_plugin_ops *ops, void **handle);

/* The file name part of path. */
const char *plugin_base_name(const char *path);

/* Fill d as refused: error, and reason prefixed with "plugin FILE: ". */
int plugin_desc_refuse(struct plugin_desc *d, int error, const char *path,
		       const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* TUNERD_PLUGIN_OPEN_H */

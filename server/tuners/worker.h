/* SPDX-License-Identifier: MIT */
/*
 * worker.h - a tuner's worker process: forked from the daemon, it opens
 * its chip's plugin (the daemon never does), binds its own stub channel, probes the chip and
 * then serves the stub's requests and the daemon's commands, reporting
 * every command to the daemon (worker_proto.h).
 */
#ifndef TUNERD_WORKER_H
#define TUNERD_WORKER_H

#include <stdint.h>

#include "stub.h"
#include "tunerd_plugin.h"

/* Exit codes of a worker process. */
#define WORKER_EXIT_OK        0 /* the daemon closed the socketpair */
#define WORKER_EXIT_PROBE     2 /* bind or probe failed (reported) */
#define WORKER_EXIT_STUB_GONE 3 /* the stub channel closed */

struct worker_args {
	uint32_t client;
	int abi; /* negotiated plugin ABI */
	/* The plugin: ops already at hand (tests), else opened from
	 * plugin_path and checked against abi and info.chip_id. */
	const struct tunerd_plugin_ops *ops;
	const char *plugin_path;
	struct tstub_chip_info info;
	struct tunerd_tuner_config cfg;
	const struct stub_addr *stub;
	const char *firmware_dir;
	unsigned int deadline_ms;
	unsigned int settle_permille;
	int demod_status; /* the stub answers TSTUB_DEMOD_STATUS */
	int cmd_bracket;  /* the stub takes TSTUB_CMD_BEGIN/END */
	int daemon_fd;
	struct tstub_params restore; /* the daemon's last params ... */
	int have_restore;            /* ... if any, else the stub's ... */
	struct tstub_params saved;   /* ... if any, else these from the */
	int have_saved;              /* state directory (tuner_saved.c) */
};

/* Runs the worker; returns its exit code. */
int worker_main(const struct worker_args *a);

#endif /* TUNERD_WORKER_H */

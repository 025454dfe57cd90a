/* SPDX-License-Identifier: MIT */
/*
 * daemon.h - the daemon-wide state every module reaches through one
 * struct daemon, and the hooks where the network layer plugs in.
 */
#ifndef TUNERD_DAEMON_H
#define TUNERD_DAEMON_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "stub.h"

struct control;
struct event_hub;
struct eventbus;
struct loop;
struct plugin_host;
struct saved_params;
struct state_dir;
struct tuner;

#define DAEMON_DEFAULT_DEADLINE_MS 3000
#define DAEMON_NAME_LEN            64
#define DAEMON_STATE_DIR           "/var/lib/tunerd"

/* What the stub's INIT said; connected == 0 while there is none. */
struct stub_session {
	int connected;
	uint32_t kind; /* TSTUB_KIND_KERNEL or _SIM */
	uint32_t major, minor;
	uint64_t flags; /* accepted TSTUB_CAP_* */
	uint32_t settle_permille;
	uint32_t max_clients;
	int64_t since_ms; /* realtime of the INIT */
};

struct daemon_config {
	struct stub_addr stub;
	const char *const *plugin_dirs; /* NULL-terminated */
	const char *firmware_dir;       /* may be NULL: no firmware */
	unsigned int deadline_ms;
	size_t event_ring;
	size_t event_ring_bytes;    /* 0: EVENTBUS_DEFAULT_BYTES */
	int64_t event_ring_keep_ms; /* 0: EVENTBUS_DEFAULT_KEEP_MS */
	const char *name;           /* NULL: the host name */
};

struct daemon {
	struct loop *loop;
	struct eventbus *events;
	struct uv_check_s *events_check; /* events published soon (daemon.c) */
	uint64_t events_flush_timer;
	struct plugin_host *plugins;
	struct control *control;
	struct stub_addr stub;
	char firmware_dir[PATH_MAX]; /* "" when none */
	unsigned int deadline_ms;
	char name[DAEMON_NAME_LEN];
	int64_t started_ms; /* realtime */

	struct tuner *tuners; /* sorted by id */
	/* Bumped by tuner_changed(): whenever what the Tuner objects of the
	 * API show may have changed (a tuner added or gone, its state, chip,
	 * params, status).  Readers that cache those texts check this one
	 * number instead of every tuner. */
	uint64_t tuners_version;
	struct stub_session session;

	/* What survives a restart (state_file.h); NULL: nothing does. */
	struct state_dir *state;
	char state_dir_config[PATH_MAX]; /* the config file's, "" none */
	struct saved_params *saved;      /* the tuners' (tuner_saved.c) */

	int stopping;
	void *api;                   /* the network layer's state */
	struct event_hub *event_hub; /* the event streams' (net/events) */
};

/* Build the loop, event bus and plugin host.  0 or the negative errno of
 * what failed. */
int daemon_init(struct daemon *d, const struct daemon_config *cfg);
/*
 * Keep the daemon's state in path and read back what is there.  source
 * names where an explicit path came from ("--state-dir", ...): one that
 * cannot be used is an error, 0 or its negative errno, logged.  With
 * source NULL (the default, DAEMON_STATE_DIR) a directory that cannot be
 * used is one log line and 0: a developer without root runs without
 * persistence.
 */
int daemon_open_state(struct daemon *d, const char *path, const char *source);
/* Connect to the stub (retrying in the background). */
int daemon_start(struct daemon *d);
/* Kill the workers, close the stub, free everything. */
void daemon_fini(struct daemon *d);

/*
 * Command-line options of the network layer: main() accepts each --NAME
 * (with a value when has_arg), lists it in --help, and hands it to
 * api_option() after daemon_init() and before api_start().
 */
struct api_option {
	const char *name;
	int has_arg;
	const char *arg_name; /* "ADDR:PORT", shown in --help */
	const char *help;
};
extern const struct api_option api_options[]; /* ends with {NULL} */
/* Returns 0, or a negative errno after logging why (main() then exits). */
int api_option(struct daemon *d, const char *name, const char *value);

/*
 * The network layer's hooks.  main() calls api_start() once the daemon is
 * initialised and before the loop runs (loop thread), and api_stop() after
 * the loop ended and before daemon_fini().  api_start() returns 0 or the
 * negative errno of what failed (main() logs it).
 */
int api_start(struct daemon *d);
void api_stop(struct daemon *d);
/*
 * SIGHUP: read the --config file again and, when it is valid, apply it
 * (tokens, name) without touching a connection; an invalid file is
 * logged and the running configuration stays.  Loop thread.  Returns 0,
 * or a negative errno (nothing changed; also without a --config file).
 */
int api_reload(struct daemon *d);

#endif /* TUNERD_DAEMON_H */

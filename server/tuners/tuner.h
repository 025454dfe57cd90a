/* SPDX-License-Identifier: MIT */
/*
 * tuner.h - the daemon's tuners: one per stub client, each driven by its
 * own worker process, and the internal API the network layer builds on.
 *
 * The daemon has one thread, its loop's: struct tuner, every function
 * here and every completion run there, and nothing is locked.
 */
#ifndef TUNERD_TUNER_H
#define TUNERD_TUNER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics_hist.h"
#include "tuner_stub.h"

struct daemon;
struct tuner;

enum tuner_state {
	TUNER_STARTING = 1, /* first worker probing the chip */
	TUNER_READY,        /* worker up, commands flow */
	TUNER_RESTARTING,   /* worker died: a new one is due or probing */
	TUNER_FAILED,       /* probe failed or restarts gave up */
	TUNER_OFFLINE,      /* the stub is gone; back on its re-ATTACH */
};

enum tuner_op {
	TUNER_OP_TUNE = 1, /* set_params */
	TUNER_OP_INIT,
	TUNER_OP_SLEEP,
	TUNER_OP_STATUS, /* chip status merged with the demodulator's */
	/* kernel-side only: */
	TUNER_OP_FREQUENCY,
	/* Never run since stub ABI 1.2 retired TSTUB_I2C_GATE; the name
	 * stays in the events' vocabulary (protocol/events.md). */
	TUNER_OP_GATE,
};

enum tuner_origin {
	TUNER_ORIGIN_KERNEL = 1, /* the stub (a local application) */
	TUNER_ORIGIN_API,        /* tuner_submit() */
	TUNER_ORIGIN_RESTORE,    /* the daemon itself after a (re)start */
};

#define TUNER_QUEUE_MAX 16 /* pending API requests per tuner */
#define TUNER_LABEL_LEN 64

struct tuner_counters {
	uint64_t commands;        /* every command the worker ran */
	uint64_t kernel_commands; /* of which from the stub */
	uint64_t api_commands;    /* of which from tuner_submit() */
	uint64_t tunes;
	uint64_t tune_errors;
	uint64_t errors;   /* commands that failed */
	uint64_t timeouts; /* API requests past their deadline */
	uint64_t busy;     /* API requests refused: queue full */
	uint64_t crashes;  /* worker died unasked */
	uint64_t hangs;    /* worker killed: a command ran too long */
	uint64_t restarts;
	uint64_t lock_gained;
	uint64_t lock_lost;
	/* For /metrics: tunes by origin (enum tuner_origin; 0 unused) and
	 * result (0 ok, 1 failed), their time in the worker, and the I2C
	 * transfers the worker asked the stub for. */
	uint64_t tunes_by[TUNER_ORIGIN_RESTORE + 1][2];
	struct metrics_hist tune_seconds;
	uint64_t i2c_transfers;
};

/* A consistent copy of what the daemon knows of one tuner. */
struct tuner_snapshot {
	uint32_t id; /* the stub's client id */
	enum tuner_state state;
	struct tstub_attach attach; /* chip, adapter, address, bridge */
	struct tstub_chip_info info;
	int have_info;
	struct tstub_params params; /* last params tuned successfully */
	int have_params;
	enum tuner_origin changed_origin; /* who tuned them */
	char changed_by[TUNER_LABEL_LEN]; /* "kernel", "restore", label */
	int64_t changed_at_ms;            /* realtime */
	struct tstub_status status;       /* last status read */
	int have_status;
	int64_t status_at_ms;
	int locked;     /* -1 unknown, 0, 1 */
	int last_error; /* negative errno of the last failure, 0 none */
	char last_error_msg[128];
	int64_t last_error_at_ms;
	struct tuner_counters counters;
	int worker_pid;      /* 0 when no worker runs */
	int64_t up_since_ms; /* realtime the current worker became ready */
	unsigned int queued; /* API requests waiting, the one in flight too */
};

/* Completion of tuner_submit(), called from the loop (never from inside
 * tuner_submit()).  status is the one read after the command (valid
 * fields flagged), or NULL. */
typedef void (*tuner_done_fn)(int err, const struct tstub_status *status,
			      void *arg);

struct tuner *tuner_find(struct daemon *d, uint32_t id);
struct tuner *tuner_first(struct daemon *d);
struct tuner *tuner_next(struct tuner *t);
uint32_t tuner_id(const struct tuner *t);
void tuner_snapshot(const struct tuner *t, struct tuner_snapshot *s);

/*
 * Queue an API command: TUNER_OP_TUNE (p required), _INIT, _SLEEP or
 * _STATUS.  Commands of one tuner run one at a time, in order, each within
 * the daemon's deadline.  origin_label says who asked ("api:alice", ...);
 * it becomes changed_by after a tune.  Returns 0 and later calls done
 * exactly once, always from the loop after tuner_submit() returned (a
 * caller needs no guard against being re-entered): err 0 or a negative errno (-ETIMEDOUT past the deadline,
 * -ECONNABORTED the worker died while running it, -ENODEV the tuner
 * failed or went away, -ENOTCONN the stub went away, or the chip's
 * error).  Returns, without calling done: -EINVAL bad op or params the
 * chip cannot do, -EBUSY queue full, -ENODEV failed tuner, -ENOTCONN
 * offline tuner.
 */
int tuner_submit(struct tuner *t, enum tuner_op op,
		 const struct tstub_params *p, const char *origin_label,
		 tuner_done_fn done, void *arg);

/*
 * tuner_submit(), and a tune that goes well but finds no lock is answered
 * later: with the first status that shows lock (the worker watches the
 * chip and reports the lock as it sees it) or, wait_lock_ms after the
 * submit, with the last status known (0: no wait).  The queue moves on
 * meanwhile.
 */
int tuner_submit_wait(struct tuner *t, enum tuner_op op,
		      const struct tstub_params *p, const char *origin_label,
		      unsigned int wait_lock_ms, tuner_done_fn done, void *arg);

/* Drop the completions of every pending request whose arg is arg (a
 * client that went away).  Returns how many were dropped. */
unsigned int tuner_forget(struct daemon *d, void *arg);

const char *tuner_state_name(enum tuner_state s);
const char *tuner_op_name(enum tuner_op op);
const char *tuner_origin_name(enum tuner_origin o);
/* The label prefix of the HDHomeRun face's clients ("hdhomerun:<IP>"). */
#define TUNER_LABEL_HDHOMERUN "hdhomerun:"
/* The events' origin: tuner_origin_name(), but "hdhomerun" for an API
 * command of the HDHomeRun face (by: its label). */
const char *tuner_event_origin(enum tuner_origin o, const char *by);
/* "tune" -> TUNER_OP_TUNE ...; 0 if unknown or not an API op. */
enum tuner_op tuner_op_parse(const char *name);

/* ---- the daemon's side (control channel and main) ---- */

/* Result of an attach: err 0 and the chip's info, or a negative errno. */
typedef void (*tuner_attach_fn)(int err, const struct tstub_chip_info *info,
				void *arg);
/* Create or look up tuner a->client and (re)start its worker; fn is
 * called exactly once, after the probe or on failure. */
void tuners_attach(struct daemon *d, const struct tstub_attach *a,
		   tuner_attach_fn fn, void *arg);
/* Returns 0 or -ENOENT. */
int tuners_detach(struct daemon *d, uint32_t client);
/* The stub went away: stop every worker, tuners go offline. */
void tuners_offline(struct daemon *d);
/* SIGCHLD: reap workers that exited. */
void tuners_reap(struct daemon *d);
/* Kill and reap every worker and free every tuner. */
void tuners_shutdown(struct daemon *d);
/* Read the params saved in d->state (tuner_saved.c): a corrupt document
 * is set aside.  0, or -ENOMEM.  Nothing without d->state. */
int tuners_load_saved(struct daemon *d);
void tuners_free_saved(struct daemon *d);
/* Answer the API tunes waiting for their params' write now, before it
 * (a worker ended); the write still comes (tuner_saved.c). */
void tuners_saved_flush(struct daemon *d);

#endif /* TUNERD_TUNER_H */

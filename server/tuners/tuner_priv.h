/* SPDX-License-Identifier: MIT */
/*
 * tuner_priv.h - private: struct tuner, shared by tuner.c (the tuner table,
 * requests, snapshots) and tuner_worker.c (the worker processes).
 */
#ifndef TUNERD_TUNER_PRIV_H
#define TUNERD_TUNER_PRIV_H

#include <jansson.h>
#include <sys/types.h>

#include "tuner.h"

struct plugin;

/* An API request, queued or in flight. */
struct tuner_req {
	uint64_t id;
	enum tuner_op op;
	struct tstub_params params;
	char label[TUNER_LABEL_LEN];
	tuner_done_fn done; /* NULL once answered (deadline) or forgotten */
	void *arg;
	uint64_t deadline_ms;      /* monotonic */
	uint64_t lock_deadline_ms; /* TUNE: answered at lock or then; 0 none */
};

#define TUNER_RESTART_MIN_MS      50
#define TUNER_RESTART_MAX_MS      2000
#define TUNER_RESTART_RESET_MS    10000 /* up this long: backoff starts over */
#define TUNER_RESTART_PROBE_TRIES 5     /* failed restart probes: give up */
#define TUNER_HANG_GRACE_MS       500

struct tuner {
	struct daemon *d;
	struct tuner *next;
	uint32_t id;
	struct tstub_attach attach;
	struct plugin *plugin;
	struct tstub_chip_info info;
	int have_info;
	enum tuner_state state;

	struct tstub_params params;
	int have_params;
	struct tstub_params saved_params; /* from the state directory */
	int have_saved;                   /* ... for this very chip */
	/* The in-flight API tune is done; its answer waits for its params
	 * to be written, by write number held_write (tuner_saved.c). */
	int answer_held;
	uint64_t held_write;
	struct tstub_status held_status;
	int have_held_status;
	enum tuner_origin changed_origin;
	char changed_by[TUNER_LABEL_LEN];
	int64_t changed_at_ms;
	struct tstub_status status;
	int have_status;
	int64_t status_at_ms;
	int locked;
	int last_error;
	char last_error_msg[128];
	int64_t last_error_at_ms;
	struct tuner_counters counters;

	/* The worker. */
	pid_t pid;
	int sock;
	int probed;    /* the current worker reported a good probe */
	int probe_err; /* ... or this error */
	int initial;   /* probing for an ATTACH, not a restart */
	int hang_kill; /* we killed it: a command ran too long */
	int busy;      /* a command began and has not ended */
	enum tuner_op busy_op;
	enum tuner_origin busy_origin;
	struct tstub_params busy_params;
	uint64_t busy_since_ms;    /* monotonic */
	uint64_t watch_timer;      /* hang and liveness, tuner_worker.c */
	uint64_t waiting_since_ms; /* a sent command waits to begin: since */
	uint64_t probe_timer;
	tuner_attach_fn attach_fn; /* an ATTACH waits for the probe */
	void *attach_arg;
	uint64_t restart_timer;
	unsigned int backoff_ms;
	unsigned int probe_failures;
	uint64_t ready_at_ms; /* monotonic */
	int64_t up_since_ms;  /* realtime */

	/* API requests: one in flight, the rest queued in order. */
	struct tuner_req queue[TUNER_QUEUE_MAX];
	unsigned int qhead, qcount;
	struct tuner_req inflight;
	int has_inflight; /* sent, no DONE yet (even if answered) */
	/* Tunes done and waiting for lock: answered by the first status that
	 * shows it (the worker's lock watch reports it), or at their lock
	 * deadline with the last status. */
	struct tuner_req lock_waits[TUNER_QUEUE_MAX];
	unsigned int nlock_waits;
	/* One deadline timer for every request of the tuner, armed for the
	 * earliest deadline when none earlier is armed; on expiry it checks
	 * the deadlines and arms for the next, so a stream of requests costs
	 * no timer re-arm per request. */
	uint64_t deadline_timer;
	uint64_t deadline_timer_at; /* monotonic ms it fires */
	uint64_t next_req_id;
	int send_err;             /* the in-flight request was never sent */
	uint64_t send_fail_timer; /* ... and is answered with send_err */
};

/* tuner.c */
void tuner_set_error(struct tuner *t, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tuner_pump(struct tuner *t);
void tuner_fail_requests(struct tuner *t, int inflight_err, int queued_err);
void tuner_complete_inflight(struct tuner *t, int err,
			     const struct tstub_status *st);
void tuner_publish(struct tuner *t, const char *type, json_t *fields);
void tuner_set_state(struct tuner *t, enum tuner_state s, const char *why);
/* What its snapshot shows changed: bump d->tuners_version. */
void tuner_changed(struct tuner *t);
/* A status read (any: a command's, the lock watch's): the tuner's status,
 * tuner.lock on a change, and the lock waits answered when it locked. */
void tuner_take_status(struct tuner *t, const struct tstub_status *st);

void tuner_req_finish(struct tuner_req *r, int err,
		      const struct tstub_status *st);

/* tuner_lock.c */
/* Answer the lock waits due by due_ms (UINT64_MAX: all) with st. */
void tuner_lock_waits_answer(struct tuner *t, uint64_t due_ms,
			     const struct tstub_status *st);
/* Keep r, a tune done, until lock or its lock deadline; whether kept. */
int tuner_lock_wait_keep(struct tuner *t, const struct tuner_req *r, int err,
			 const struct tstub_status *st);

/* tuner_worker.c */
int tuner_worker_spawn(struct tuner *t);
/* Its failure as the tuner's error, naming the limit that was hit. */
void tuner_spawn_error(struct tuner *t, int err);
void tuner_worker_stop(struct tuner *t, const char *why);
void tuner_watch_begin(struct tuner *t);
void tuner_worker_reaped(struct tuner *t, int wstatus);

/* tuner_saved.c: the params kept in the state directory. */
/* At an attach: the saved params of t, when they are this chip's. */
void tuner_saved_attach(struct tuner *t);
/* An API tune to p is sent to the worker: its write starts meanwhile. */
void tuner_saved_intent(struct tuner *t, const struct tstub_params *p);
/* That tune failed: the entry goes back to what t had. */
void tuner_saved_undo(struct tuner *t);
/* After a successful tune: keep t->params.  1 when the in-flight API
 * request must be answered only once they are written (set
 * t->answer_held = 1; tuner_saved.c answers it, its write number in
 * t->held_write); 0 when it may be answered now. */
int tuner_saved_tuned(struct tuner *t);

/* tuner_report.c: what reports and ends become (counters, events). */
struct wmsg_done;
void tuner_describe_end(const struct tuner *t, pid_t pid, int st, char *buf,
			size_t len);
/* worker.crash or worker.exit (nothing after a hang kill: worker.hang). */
void tuner_publish_end(struct tuner *t, pid_t pid, int st, const char *why);
/* The command the worker died in never reports: its closing event. */
void tuner_publish_lost(struct tuner *t, const char *why);
/* Who the command's event names: the API label, else the origin (of
 * the report m, or of the command the worker runs now). */
const char *tuner_changed_by(const struct tuner *t, const struct wmsg_done *m);
const char *tuner_changed_by_busy(const struct tuner *t);
void tuner_count(struct tuner *t, const struct wmsg_done *m);
void tuner_publish_done(struct tuner *t, const struct wmsg_done *m,
			const char *by);
void tuner_attach_reply(struct tuner *t, int err);

#endif /* TUNERD_TUNER_PRIV_H */

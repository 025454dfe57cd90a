// SPDX-License-Identifier: MIT
/*
 * What a worker's reports and its end become for the rest of the daemon:
 * the tuner's counters and the events (tuner.tune/.init/.sleep with their
 * outcome, error, worker.crash, worker.exit).  Kept apart from the process
 * handling in tuner_worker.c: these only read the tuner's state and the
 * report, and publish.
 */
#define _GNU_SOURCE /* sigabbrev_np */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "api_json.h"
#include "loop.h"
#include "tuner_priv.h"
#include "worker.h"
#include "worker_proto.h"

const char *tuner_changed_by_busy(const struct tuner *t)
{
	if (t->busy_origin == TUNER_ORIGIN_API && t->has_inflight)
		return t->inflight.label;
	return tuner_origin_name(t->busy_origin);
}

void tuner_describe_end(const struct tuner *t, pid_t pid, int st, char *buf,
			size_t len)
{
	if (t->hang_kill)
		snprintf(buf, len, "worker %d hung in %s", (int)pid,
			 tuner_op_name(t->busy_op));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "worker %d crashed: signal %d (%s)",
			 (int)pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
	else if (WEXITSTATUS(st) == WORKER_EXIT_STUB_GONE)
		snprintf(buf, len, "worker %d: stub channel closed", (int)pid);
	else
		snprintf(buf, len, "worker %d exited with %d", (int)pid,
			 WEXITSTATUS(st));
}

void tuner_publish_end(struct tuner *t, pid_t pid, int st, const char *why)
{
	if (t->hang_kill)
		return; /* worker.hang said it */
	if (WIFSIGNALED(st)) {
		t->counters.crashes++;
		tuner_publish(t, "worker.crash",
			      json_pack("{s:i,s:i,s:s,s:s}", "pid", (int)pid,
					"signal", WTERMSIG(st), "signal_name",
					sigabbrev_np(WTERMSIG(st)) ?: "?",
					"reason", why));
		return;
	}
	if (WEXITSTATUS(st) != WORKER_EXIT_STUB_GONE &&
	    WEXITSTATUS(st) != WORKER_EXIT_PROBE)
		t->counters.crashes++;
	tuner_publish(t, "worker.exit",
		      json_pack("{s:i,s:i,s:s}", "pid", (int)pid, "exit_code",
				WEXITSTATUS(st), "reason", why));
}

/*
 * The fields of a command's event (tuner.tune, .init, .sleep): who asked,
 * result "ok" or the API's error code (as a REST request with this errno
 * would be answered), message when it failed, the worker's time.
 */
static json_t *outcome_json(enum tuner_origin origin, const char *by, int err,
			    const char *message, uint64_t elapsed_ms)
{
	json_t *f = json_pack("{s:s,s:s,s:s,s:I}", "origin",
			      tuner_event_origin(origin, by), "by", by,
			      "result", err ? api_errno_code(err) : "ok",
			      "elapsed_ms", (json_int_t)elapsed_ms);

	if (f && err)
		json_object_set_new(f, "message", json_string(message));
	return f;
}

/* The command the worker died in never reports: say how it ended. */
void tuner_publish_lost(struct tuner *t, const char *why)
{
	json_t *f;

	if (!t->busy)
		return;
	t->busy = 0;
	t->counters.commands++;
	t->counters.errors++;
	if (t->busy_op != TUNER_OP_TUNE)
		return;
	t->counters.tunes++;
	t->counters.tune_errors++;
	if (t->busy_origin <= TUNER_ORIGIN_RESTORE)
		t->counters.tunes_by[t->busy_origin][1]++;
	f = outcome_json(t->busy_origin, tuner_changed_by_busy(t),
			 -ECONNABORTED, why, loop_now_ms() - t->busy_since_ms);
	if (f) {
		json_object_set_new(f, "params",
				    params_to_json(&t->busy_params));
		json_object_set_new(f, "status", json_null());
		json_object_set_new(f, "locked", json_false());
	}
	tuner_publish(t, "tuner.tune", f);
}

const char *tuner_changed_by(const struct tuner *t, const struct wmsg_done *m)
{
	if (m->origin == TUNER_ORIGIN_API && t->has_inflight &&
	    t->inflight.id == m->req_id)
		return t->inflight.label;
	return tuner_origin_name((enum tuner_origin)m->origin);
}

void tuner_count(struct tuner *t, const struct wmsg_done *m)
{
	struct tuner_counters *c = &t->counters;

	c->commands++;
	if (m->origin == TUNER_ORIGIN_KERNEL)
		c->kernel_commands++;
	else if (m->origin == TUNER_ORIGIN_API)
		c->api_commands++;
	if (m->error)
		c->errors++;
	c->i2c_transfers += m->i2c_transfers;
	if (m->op == TUNER_OP_TUNE) {
		c->tunes++;
		if (m->error)
			c->tune_errors++;
		if (m->origin <= TUNER_ORIGIN_RESTORE)
			c->tunes_by[m->origin][m->error != 0]++;
		metrics_hist_observe(&c->tune_seconds, m->duration_ns);
	}
}

/* A status or frequency read failed with a new error: the event "error"
 * (the kernel polls status, repeated errors would flood the bus). */
static void tuner_publish_error(struct tuner *t, const struct wmsg_done *m)
{
	if (!m->error || m->error == t->last_error)
		return;
	tuner_publish(t, "error",
		      json_pack("{s:s,s:s,s:s,s:s}", "op",
				tuner_op_name((enum tuner_op)m->op), "origin",
				tuner_origin_name(m->origin), "code",
				api_errno_code(m->error), "message",
				strerror(-m->error)));
}

/* Tunes, init and sleep are events, in the REST API's shapes: a tune
 * carries its params and the status read after it (null when none). */
void tuner_publish_done(struct tuner *t, const struct wmsg_done *m,
			const char *by)
{
	enum tuner_op op = (enum tuner_op)m->op;
	char type[32];
	json_t *f;

	if (op != TUNER_OP_TUNE && op != TUNER_OP_INIT &&
	    op != TUNER_OP_SLEEP) {
		tuner_publish_error(t, m);
		return;
	}
	f = outcome_json((enum tuner_origin)m->origin, by, m->error,
			 m->error ? strerror(-m->error) : NULL,
			 (m->duration_ns + 500000) / 1000000);
	if (f && op == TUNER_OP_TUNE) {
		json_object_set_new(f, "params", params_to_json(&m->params));
		json_object_set_new(
		    f, "status",
		    m->have_status
			? status_to_json(&m->status, (uint64_t)t->changed_at_ms)
			: json_null());
		json_object_set_new(
		    f, "locked",
		    json_boolean(m->have_status &&
				 api_status_locked(&m->status)));
	}
	snprintf(type, sizeof(type), "tuner.%s", tuner_op_name(op));
	tuner_publish(t, type, f);
}

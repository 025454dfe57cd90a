// SPDX-License-Identifier: MIT
/*
 * The daemon's side of the worker processes: start (from the zygote or a
 * fork, worker_zygote.c), the reports they send,
 * the hang and liveness watches, death and restart with backoff.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_json.h"
#include "daemon.h"
#include "eventbus.h"
#include "log.h"
#include "loop.h"
#include "plugin_host.h"
#include "tuner_priv.h"
#include "worker.h"
#include "worker_proto.h"
#include "worker_zygote.h"

void tuner_attach_reply(struct tuner *t, int err)
{
	tuner_attach_fn fn = t->attach_fn;

	if (!fn)
		return;
	t->attach_fn = NULL;
	fn(err, err ? NULL : &t->info, t->attach_arg);
}

static void tuner_worker_args(const struct tuner *t, int sock,
			      struct worker_args *a)
{
	const struct daemon *d = t->d;

	*a = (struct worker_args){
	    .client = t->id,
	    .abi = t->plugin->abi,
	    .plugin_path = t->plugin->path,
	    .info = t->info,
	    .cfg = {.size = sizeof(struct tunerd_tuner_config),
		    .chip_id = t->attach.chip_id,
		    .vendor_id = t->attach.vendor_id,
		    .product_id = t->attach.product_id,
		    .config = t->attach.config,
		    .i2c_addr = t->attach.i2c_addr},
	    .stub = &d->stub,
	    .firmware_dir = d->firmware_dir[0] ? d->firmware_dir : NULL,
	    .deadline_ms = d->deadline_ms,
	    .settle_permille = d->session.settle_permille,
	    .demod_status = !!(d->session.flags & TSTUB_CAP_DEMOD_STATUS),
	    .cmd_bracket = !!(d->session.flags & TSTUB_CAP_CMD_BRACKET),
	    .daemon_fd = sock,
	    .restore = t->params,
	    .have_restore = t->have_params,
	    .saved = t->saved_params,
	    .have_saved = t->have_saved,
	};
}

/* A worker from the zygote, else forked from the daemon.  A zygote that
 * failed mid-request may have started a worker on the pair: the fork gets
 * a fresh one. */
static pid_t tuner_worker_start(struct tuner *t, int sv[2])
{
	pid_t parent = getpid(), pid;
	struct worker_args a;

	tuner_worker_args(t, sv[1], &a);
	pid = worker_zygote_spawn(&a);
	if (pid != -ECHILD)
		return pid;
	close(sv[0]);
	close(sv[1]);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		sv[0] = sv[1] = -1;
		return -errno;
	}
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		tuner_worker_args(t, sv[1], &a);
		worker_become(&a, parent);
	}
	return pid;
}

static void tuner_worker_readable(struct loop *l, int fd, unsigned int ev,
				  void *arg);
static long tuner_probe_timeout(struct loop *l, uint64_t id, void *arg);

int tuner_worker_spawn(struct tuner *t)
{
	pid_t pid;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = tuner_worker_start(t, sv);
	if (pid < 0) {
		if (sv[0] >= 0) {
			close(sv[0]);
			close(sv[1]);
		}
		return pid;
	}
	close(sv[1]);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	t->pid = pid;
	t->sock = sv[0];
	t->probed = 0;
	t->probe_err = 0;
	t->hang_kill = 0;
	t->busy = 0;
	loop_add_fd(t->d->loop, sv[0], LOOP_READ, tuner_worker_readable, t);
	t->probe_timer = loop_add_timer(t->d->loop, t->d->deadline_ms,
					tuner_probe_timeout, t);
	log_debug("tuner %u (%s): worker %d started", t->id, t->info.name,
		  (int)pid);
	return 0;
}

void tuner_spawn_error(struct tuner *t, int err)
{
	struct rlimit rl = {0};

	if (err == -EMFILE && !getrlimit(RLIMIT_NOFILE, &rl))
		tuner_set_error(t, err,
				"cannot start a worker: the daemon's open file "
				"limit (RLIMIT_NOFILE %llu) is reached",
				(unsigned long long)rl.rlim_cur);
	else if (err == -EAGAIN && !getrlimit(RLIMIT_NPROC, &rl))
		tuner_set_error(t, err,
				"cannot start a worker: the process limit "
				"(RLIMIT_NPROC %llu) or memory is exhausted",
				(unsigned long long)rl.rlim_cur);
	else
		tuner_set_error(t, err, "cannot start a worker: %s",
				strerror(-err));
}

static void tuner_worker_unhook(struct tuner *t)
{
	struct loop *l = t->d->loop;

	if (t->sock >= 0) {
		loop_del_fd(l, t->sock);
		close(t->sock);
		t->sock = -1;
	}
	loop_del_timer(l, t->watch_timer);
	loop_del_timer(l, t->probe_timer);
	t->watch_timer = t->probe_timer = 0;
}

static int reap_blocking(pid_t pid)
{
	int st = 0;

	kill(pid, SIGKILL); /* no-op for one already dead */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

/* why: how a command the worker runs ends (its closing event). */
void tuner_worker_stop(struct tuner *t, const char *why)
{
	pid_t pid = t->pid;

	tuner_worker_unhook(t);
	tuner_publish_lost(t, why);
	if (!pid)
		return;
	t->pid = 0;
	reap_blocking(pid);
}

/* The worker closed its end or we gave up on it: make sure it is dead,
 * collect why it ended. */
static void tuner_worker_lost(struct tuner *t)
{
	pid_t pid = t->pid;

	if (pid)
		tuner_worker_reaped(t, reap_blocking(pid));
}

static long tuner_restart_fire(struct loop *l, uint64_t id, void *arg)
{
	struct tuner *t = arg;
	int err;

	(void)l;
	(void)id;
	t->restart_timer = 0;
	if (t->state != TUNER_RESTARTING || t->pid)
		return LOOP_TIMER_DONE;
	err = tuner_worker_spawn(t);
	if (err) {
		tuner_spawn_error(t, err);
		tuner_fail_requests(t, -ENODEV, -ENODEV);
		tuner_set_state(t, TUNER_FAILED, t->last_error_msg);
	}
	return LOOP_TIMER_DONE;
}

/* Backoff: 50 ms doubling to 2 s, back to 50 ms after 10 s up. */
static void tuner_schedule_restart(struct tuner *t, const char *why)
{
	unsigned int delay;

	if (t->ready_at_ms &&
	    loop_now_ms() - t->ready_at_ms >= TUNER_RESTART_RESET_MS)
		t->backoff_ms = TUNER_RESTART_MIN_MS;
	t->ready_at_ms = 0;
	delay = t->backoff_ms ? t->backoff_ms : TUNER_RESTART_MIN_MS;
	t->backoff_ms =
	    delay * 2 > TUNER_RESTART_MAX_MS ? TUNER_RESTART_MAX_MS : delay * 2;
	t->counters.restarts++;
	tuner_set_state(t, TUNER_RESTARTING, why);
	tuner_publish(t, "worker.restart",
		      json_pack("{s:i,s:s}", "delay_ms", delay, "reason", why));
	t->restart_timer =
	    loop_add_timer(t->d->loop, delay, tuner_restart_fire, t);
}

/* A worker ended before a good probe. */
static void tuner_probe_failed(struct tuner *t, int err, const char *why)
{
	if (!t->initial && ++t->probe_failures < TUNER_RESTART_PROBE_TRIES) {
		tuner_schedule_restart(t, why);
		return;
	}
	if (!t->probe_err)
		tuner_set_error(t, err, "%s", why);
	tuner_attach_reply(t, err);
	tuner_fail_requests(t, err, err);
	tuner_set_state(t, TUNER_FAILED, t->last_error_msg);
	tuner_publish(
	    t, "tuner.failed",
	    json_pack("{s:s,s:s}", "code", api_errno_code(err), "reason", why));
}

void tuner_worker_reaped(struct tuner *t, int st)
{
	pid_t pid = t->pid;
	char why[128];

	tuner_worker_unhook(t);
	t->pid = 0;
	tuner_describe_end(t, pid, st, why, sizeof(why));
	if (t->d->stopping || t->state == TUNER_OFFLINE ||
	    t->state == TUNER_FAILED) {
		tuner_publish_lost(t, why);
		return;
	}
	log_msg(t->hang_kill || WIFSIGNALED(st) ? LL_ERR : LL_WARN,
		"tuner %u (%s): %s", t->id, t->info.name, why);
	tuner_publish_end(t, pid, st, why);
	tuner_publish_lost(t, why);
	if (!t->probed) {
		tuner_probe_failed(t, t->probe_err ? t->probe_err : -EIO, why);
	} else {
		tuner_set_error(t, -ECONNABORTED, "%s", why);
		/* The command it ran is lost.  After a crash the queued ones
		 * go to the next worker; after a hang they waited behind a
		 * stuck worker for longer than a deadline: stale, they fail
		 * rather than run late. */
		tuner_fail_requests(t, -ECONNABORTED,
				    t->hang_kill ? -ECONNABORTED : 0);
		tuner_schedule_restart(t, why);
	}
}

static long tuner_probe_timeout(struct loop *l, uint64_t id, void *arg)
{
	struct tuner *t = arg;

	(void)l;
	(void)id;
	t->probe_timer = 0;
	log_err("tuner %u (%s): no probe result within %u ms", t->id,
		t->info.name, t->d->deadline_ms);
	t->probe_err = -ETIMEDOUT;
	tuner_worker_lost(t);
	return LOOP_TIMER_DONE;
}

/* A worker that ran op (or did not begin it) for a deadline and its
 * grace: killed, restarted as after a crash. */
static void tuner_kill_hung(struct tuner *t, enum tuner_op op,
			    const char *doing)
{
	unsigned int ms = t->d->deadline_ms + TUNER_HANG_GRACE_MS;

	t->hang_kill = 1;
	t->busy_op = op; /* what tuner_describe_end() names */
	t->counters.hangs++;
	log_err("tuner %u (%s): worker %d %s %s for over %u ms: killing it",
		t->id, t->info.name, (int)t->pid, doing, tuner_op_name(op), ms);
	tuner_publish(t, "worker.hang",
		      json_pack("{s:i,s:s,s:i}", "pid", (int)t->pid, "op",
				tuner_op_name(op), "ms", ms));
	tuner_worker_lost(t);
}

/*
 * The hang and liveness watch, one timer per worker.  A command that
 * began (BEGIN) must end within a deadline and its grace; a command sent
 * while the worker runs none must begin within as much, counted from the
 * send or the worker's last report (progress): without this a stopped
 * worker (SIGSTOP, a stuck read) would hold its tuner forever.  The times
 * are stamps; the timer is armed only when none is, and on expiry it
 * checks the stamps and re-arms for what is left, so a stream of
 * commands costs no timer operation per command.
 */
static long tuner_watch_fire(struct loop *l, uint64_t id, void *arg)
{
	struct tuner *t = arg;
	uint64_t limit = t->d->deadline_ms + TUNER_HANG_GRACE_MS;
	uint64_t now = loop_now_ms(), since;

	(void)id;
	t->watch_timer = 0;
	if (!t->pid)
		return LOOP_TIMER_DONE;
	if (t->busy)
		since = t->busy_since_ms;
	else if (t->has_inflight && !t->send_err)
		since = t->waiting_since_ms;
	else
		return LOOP_TIMER_DONE;
	if (now - since < limit) {
		t->watch_timer =
		    loop_add_timer(l, since + limit - now, tuner_watch_fire, t);
		return LOOP_TIMER_DONE;
	}
	if (t->busy)
		tuner_kill_hung(t, t->busy_op, "runs");
	else
		tuner_kill_hung(t, t->inflight.op, "has not begun");
	return LOOP_TIMER_DONE;
}

static void tuner_watch_arm(struct tuner *t)
{
	if (!t->watch_timer)
		t->watch_timer = loop_add_timer(
		    t->d->loop, t->d->deadline_ms + TUNER_HANG_GRACE_MS,
		    tuner_watch_fire, t);
}

/* A command was sent, or the worker showed progress: ours must begin. */
void tuner_watch_begin(struct tuner *t)
{
	t->waiting_since_ms = loop_now_ms();
	tuner_watch_arm(t);
}

static void tuner_on_probed(struct tuner *t, const struct wmsg_probed *m)
{
	loop_del_timer(t->d->loop, t->probe_timer);
	t->probe_timer = 0;
	if (m->error) {
		/* The worker exits next; its end decides what follows. */
		t->probe_err = m->error;
		tuner_set_error(t, m->error, "probe failed: %s",
				strerror(-m->error));
		if (t->initial)
			tuner_attach_reply(t, m->error);
		return;
	}
	t->probed = 1;
	t->initial = 0;
	t->probe_failures = 0;
	t->ready_at_ms = loop_now_ms();
	t->up_since_ms = eventbus_now_ms();
	tuner_set_state(t, TUNER_READY, NULL);
	tuner_attach_reply(t, 0);
	tuner_publish(t, "tuner.ready",
		      json_pack("{s:i,s:s,s:s}", "pid", (int)t->pid, "chip",
				t->info.name, "plugin", t->plugin->file));
	tuner_pump(t);
}

static void tuner_publish_started(struct tuner *t, enum tuner_origin origin,
				  const char *by,
				  const struct tstub_params *params)
{
	tuner_publish(t, "tuner.tune_started",
		      json_pack("{s:s,s:s,s:o}", "origin",
				tuner_event_origin(origin, by), "by", by,
				"params", params_to_json(params)));
}

static void tuner_on_begin(struct tuner *t, const struct wmsg_begin *m)
{
	t->busy = 1;
	t->busy_op = (enum tuner_op)m->op;
	t->busy_origin = (enum tuner_origin)m->origin;
	t->busy_params = m->params;
	t->busy_since_ms = loop_now_ms();
	tuner_watch_arm(t);
	if (t->busy_op == TUNER_OP_TUNE)
		tuner_publish_started(t, t->busy_origin,
				      tuner_changed_by_busy(t), &m->params);
}

static void tuner_on_done(struct tuner *t, const struct wmsg_done *m)
{
	const char *by = tuner_changed_by(t, m);
	enum tuner_op op = (enum tuner_op)m->op;
	char what[64] = "";
	int hold = 0;

	/* A short command from the stub has this one report: its start is
	 * told here, just before its end. */
	if (!m->began && op == TUNER_OP_TUNE)
		tuner_publish_started(t, (enum tuner_origin)m->origin, by,
				      &m->params);
	t->busy = 0;
	if (op == TUNER_OP_TUNE)
		snprintf(what, sizeof(what), " %s %u Hz",
			 tstub_delsys_name(m->params.delsys),
			 m->params.frequency);
	log_debug("tuner %u (%s): %s%s from %s: %s, %.1f ms", t->id,
		  t->info.name, tuner_op_name(op), what, by,
		  m->error ? strerror(-m->error) : "ok", m->duration_ns / 1e6);
	tuner_count(t, m);
	/* First the new params: the event's status tells when they
	 * changed. */
	if (op == TUNER_OP_TUNE && !m->error) {
		t->params = m->params;
		t->have_params = 1;
		t->changed_origin = (enum tuner_origin)m->origin;
		snprintf(t->changed_by, sizeof(t->changed_by), "%s", by);
		t->changed_at_ms = eventbus_now_ms();
		tuner_changed(t);
		hold = tuner_saved_tuned(t); /* durable before the answer */
	}
	tuner_publish_done(t, m, by);
	if (m->error)
		tuner_set_error(t, m->error, "%s (%s): %s", tuner_op_name(op),
				tuner_origin_name(m->origin),
				strerror(-m->error));
	if (m->have_status)
		tuner_take_status(t, &m->status);
	if (m->req_id && t->has_inflight && t->inflight.id == m->req_id) {
		if (hold) { /* tuners_saved_flush() answers it */
			t->answer_held = 1;
			t->held_status = m->status;
			t->have_held_status = (int)m->have_status;
			return;
		}
		tuner_complete_inflight(t, m->error,
					m->have_status ? &m->status : NULL);
		tuner_pump(t);
	} else if (t->has_inflight && !t->send_err) {
		tuner_watch_begin(t); /* ours is next */
	}
}

/* The worker's lock watch saw the lock: as any status read, it answers
 * the tunes waiting for it. */
static void tuner_on_lock(struct tuner *t, const struct wmsg_lock *m)
{
	log_debug("tuner %u (%s): lock after tune %llu, %u watch reads", t->id,
		  t->info.name, (unsigned long long)m->req_id, m->reads);
	t->counters.i2c_transfers += m->i2c_transfers;
	tuner_take_status(t, &m->status);
}

static void tuner_worker_readable(struct loop *l, int fd, unsigned int ev,
				  void *arg)
{
	struct tuner *t = arg;
	union wmsg m;
	int n;

	(void)l;
	(void)ev;
	n = wmsg_recv(fd, &m);
	if (n == -EAGAIN)
		return;
	if (n == -EBADMSG) {
		log_warn("tuner %u: malformed message from the worker", t->id);
		return;
	}
	if (n <= 0) {
		tuner_worker_lost(t);
		return;
	}
	switch (m.h.type) {
	case WMSG_PROBED:
		tuner_on_probed(t, &m.probed);
		break;
	case WMSG_BEGIN:
		tuner_on_begin(t, &m.begin);
		break;
	case WMSG_DONE:
		tuner_on_done(t, &m.done);
		break;
	case WMSG_LOCK:
		tuner_on_lock(t, &m.lock);
		break;
	}
}

void tuners_reap(struct daemon *d)
{
	for (struct tuner *t = d->tuners; t; t = t->next) {
		int st;

		if (t->pid && waitpid(t->pid, &st, WNOHANG) == t->pid)
			tuner_worker_reaped(t, st);
	}
}

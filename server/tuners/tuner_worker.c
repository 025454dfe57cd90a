// SPDX-License-Identifier: MIT
/*
 * The daemon's side of the worker processes: fork, the reports they send,
 * the hang and liveness watches, death and restart with backoff.
 */
#define _GNU_SOURCE /* close_range */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

void tuner_attach_reply(struct tuner *t, int err)
{
	tuner_attach_fn fn = t->attach_fn;

	if (!fn)
		return;
	t->attach_fn = NULL;
	fn(err, err ? NULL : &t->info, t->attach_arg);
}

/* The worker must not hold the daemon's fds: a control channel kept open
 * by a worker would keep the stub from seeing the daemon go. */
static void worker_close_fds(int keep)
{
	if (keep > 3 && close_range(3, (unsigned int)keep - 1, 0) < 0)
		for (int fd = 3; fd < keep; fd++)
			close(fd);
	if (close_range((unsigned int)keep + 1, ~0u, 0) < 0) {
		long max = sysconf(_SC_OPEN_MAX);

		for (long fd = keep + 1; fd < (max > 0 ? max : 1024); fd++)
			close((int)fd);
	}
}

static void __attribute__((noreturn))
tuner_worker_child(struct tuner *t, int sock, pid_t parent)
{
	struct daemon *d = t->d;
	struct worker_args a = {
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
	    .daemon_fd = sock,
	    .restore = t->params,
	    .have_restore = t->have_params,
	    .saved = t->saved_params,
	    .have_saved = t->have_saved,
	};
	char tag[32];
	sigset_t none;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(WORKER_EXIT_OK); /* the daemon died before prctl */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	worker_close_fds(sock);
	snprintf(tag, sizeof(tag), "tunerd-worker %u", t->id);
	log_set_tag(tag);
	/* _exit: nothing of the daemon's (atexit, stdio) runs here. */
	_exit(worker_main(&a));
}

static void tuner_worker_readable(struct loop *l, int fd, unsigned int ev,
				  void *arg);
static long tuner_probe_timeout(struct loop *l, uint64_t id, void *arg);

int tuner_worker_spawn(struct tuner *t)
{
	pid_t parent = getpid(), pid;
	int sv[2], err;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (pid == 0)
		tuner_worker_child(t, sv[1], parent);
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

static void tuner_worker_unhook(struct tuner *t)
{
	struct loop *l = t->d->loop;

	if (t->sock >= 0) {
		loop_del_fd(l, t->sock);
		close(t->sock);
		t->sock = -1;
	}
	loop_del_timer(l, t->hang_timer);
	loop_del_timer(l, t->begin_timer);
	loop_del_timer(l, t->probe_timer);
	t->hang_timer = t->begin_timer = t->probe_timer = 0;
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
		tuner_set_error(t, err, "cannot start a worker: %s",
				strerror(-err));
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

static long tuner_hang_fire(struct loop *l, uint64_t id, void *arg)
{
	struct tuner *t = arg;

	(void)l;
	(void)id;
	t->hang_timer = 0;
	tuner_kill_hung(t, t->busy_op, "runs");
	return LOOP_TIMER_DONE;
}

static long tuner_begin_fire(struct loop *l, uint64_t id, void *arg)
{
	struct tuner *t = arg;

	(void)l;
	(void)id;
	t->begin_timer = 0;
	if (t->has_inflight && !t->busy && t->pid)
		tuner_kill_hung(t, t->inflight.op, "has not begun");
	return LOOP_TIMER_DONE;
}

/*
 * The liveness watch: a command was sent and the worker is not running
 * another, so it must begin this one within a deadline and its grace.
 * The hang watch only starts once a command begins: without this, a
 * stopped worker (SIGSTOP, a stuck read) would hold its tuner forever.
 * Re-armed whenever the worker shows progress (a command ended).
 */
void tuner_watch_begin(struct tuner *t)
{
	loop_del_timer(t->d->loop, t->begin_timer);
	t->begin_timer =
	    loop_add_timer(t->d->loop, t->d->deadline_ms + TUNER_HANG_GRACE_MS,
			   tuner_begin_fire, t);
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

static void tuner_on_begin(struct tuner *t, const struct wmsg_begin *m)
{
	t->busy = 1;
	t->busy_op = (enum tuner_op)m->op;
	t->busy_origin = (enum tuner_origin)m->origin;
	t->busy_params = m->params;
	t->busy_since_ms = loop_now_ms();
	loop_del_timer(t->d->loop, t->begin_timer);
	t->begin_timer = 0;
	loop_del_timer(t->d->loop, t->hang_timer);
	t->hang_timer =
	    loop_add_timer(t->d->loop, t->d->deadline_ms + TUNER_HANG_GRACE_MS,
			   tuner_hang_fire, t);
	if (t->busy_op == TUNER_OP_TUNE)
		tuner_publish(t, "tuner.tune_started",
			      json_pack("{s:s,s:s,s:o}", "origin",
					tuner_origin_name(t->busy_origin), "by",
					tuner_changed_by_busy(t), "params",
					params_to_json(&m->params)));
}

static void tuner_on_done(struct tuner *t, const struct wmsg_done *m)
{
	const char *by = tuner_changed_by(t, m);
	enum tuner_op op = (enum tuner_op)m->op;
	char what[64] = "";
	int hold = 0;

	loop_del_timer(t->d->loop, t->hang_timer);
	t->hang_timer = 0;
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

// SPDX-License-Identifier: MIT
#define _GNU_SOURCE /* ppoll */
#include "worker.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"
#include "plugin_open.h"
#include "tuner.h"
#include "worker_host.h"
#include "worker_priv.h"
#include "worker_proto.h"

#define WORKER_BIND_RETRY_MS 20
#define WORKER_GO_ON         (-1) /* worker_poll(): no exit yet */

static int worker_get_frequency(struct worker *wk, struct tstub_freq *f)
{
	memset(f, 0, sizeof(*f));
	if (wk->a->ops->get_frequency)
		return wk->a->ops->get_frequency(wk->priv, f);
	if (wk->have_cur) {
		f->frequency = wk->cur.frequency;
		f->bandwidth = wk->cur.bandwidth;
	}
	f->if_frequency = wk->a->info.if_frequency;
	return 0;
}

static int worker_exec(struct worker *wk, struct worker_cmd *c)
{
	const struct tunerd_plugin_ops *ops = wk->a->ops;
	int err;

	switch (c->op) {
	case TUNER_OP_TUNE:
		err = ops->set_params(wk->priv, &c->params);
		if (!err) {
			wk->cur = c->params;
			wk->cur.flags |= TSTUB_PARAMS_VALID;
			wk->have_cur = 1;
		}
		return err;
	case TUNER_OP_INIT:
		return ops->init(wk->priv);
	case TUNER_OP_SLEEP:
		return ops->sleep(wk->priv);
	case TUNER_OP_STATUS:
		err = worker_read_status(wk, &c->status, 1);
		c->have_status = !err;
		return err;
	case TUNER_OP_FREQUENCY:
		return worker_get_frequency(wk, &c->freq);
	case TUNER_OP_GATE:
		break; /* retired with TSTUB_I2C_GATE */
	}
	return -EINVAL;
}

/*
 * The worker's two timers, both armed lazily (never pushed later, never
 * cancelled per command: on a virtual machine each reprogramming of the
 * CPU's timer traps to the hypervisor):
 *  - a POSIX timer, whose signal finds the worker wherever it is (a
 *    plugin spinning without a host call included): a command from the
 *    stub reports its start only once it has run for WORKER_BEGIN_LATE_NS
 *    (most end sooner and then have one report, their DONE), so the
 *    daemon's hang watch still sees every long command; the report owed
 *    for the previous tune goes first.  Armed at a command's start unless
 *    armed already (an earlier command's time comes first, and its signal
 *    re-arms for the command then running), disarmed once the stub has
 *    been quiet, so an idle worker takes no signal;
 *  - a timerfd in the worker's wait for the deferred work of the stub's
 *    commands (worker_priv.h), due once the stub has been quiet: re-armed
 *    only for an earlier time; one that fires early for what is pending
 *    then is re-armed by the work's run.  A wake-up through the wait is a
 *    plain timer expiry; a signal to a sleeping worker also runs its
 *    handler (bench_stub, 64 tunes at once: 4.3 ms, and 4.6 ms with the
 *    deferred work woken by the signal).
 * In the handler: send(), timer_settime() only, no logging, no
 * allocation.
 */
static struct worker *late_worker;

static void worker_begin_late(struct worker *wk)
{
	if (!wk->begin_armed)
		return;
	wk->begin_armed = 0;
	worker_settle_owed(wk, WORKER_OWED_NONE, NULL);
	worker_flush_held(wk);
	wmsg_send(wk->a->daemon_fd, &wk->begin);
	wk->began = 1;
}

/* 0, or -errno: the caller then reports the start at once. */
static int worker_late_arm(struct worker *wk, uint64_t at_ns)
{
	struct itimerspec at = {0};

	if (wk->late_timer_set)
		return 0;
	at.it_value = loop_timespec(at_ns);
	/* Set first: a signal in between re-arms, and this arms the same. */
	wk->late_timer_set = 1;
	if (timer_settime(wk->late_timer, TIMER_ABSTIME, &at, NULL) < 0) {
		wk->late_timer_set = 0;
		return -errno;
	}
	return 0;
}

static void worker_on_late(int sig)
{
	struct worker *wk = late_worker;
	int saved = errno;

	(void)sig;
	if (!wk)
		return;
	wk->late_timer_set = 0;
	/* Fired for an earlier command: re-armed for the one running. */
	if (wk->begin_armed && (loop_now_ns() >= wk->late_at_ns ||
				worker_late_arm(wk, wk->late_at_ns)))
		worker_begin_late(wk);
	errno = saved;
}

void worker_wake_at(struct worker *wk, uint64_t at_ns)
{
	struct itimerspec at = {0};

	if (wk->quiet_fd < 0 ||
	    (wk->quiet_armed_ns && wk->quiet_armed_ns <= at_ns))
		return;
	at.it_value = loop_timespec(at_ns);
	if (timerfd_settime(wk->quiet_fd, TFD_TIMER_ABSTIME, &at, NULL) == 0) {
		wk->quiet_armed_ns = at_ns;
		return;
	}
	/* Given up: the wait's timeout takes over (worker_next_due_ns()). */
	log_warn("tuner %u: deferred-work timer: %s", wk->a->client,
		 strerror(errno));
	close(wk->quiet_fd);
	wk->quiet_fd = -1;
}

void worker_quiet_reached(struct worker *wk)
{
	const struct itimerspec off = {0};

	if (!wk->late_timer_set)
		return;
	/* The late timer is disarmed; a signal in between finds no
	 * command: it returns. */
	wk->late_timer_set = 0;
	timer_settime(wk->late_timer, 0, &off, NULL);
}

/* 0, or -errno: then every command reports its start at once. */
static int worker_late_timer_init(struct worker *wk)
{
	/* To this thread: a test runs the worker beside other threads. */
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID,
			       .sigev_signo = SIGALRM};
	struct sigaction sa = {.sa_handler = worker_on_late,
			       .sa_flags = SA_RESTART};

	sev._sigev_un._tid = gettid(); /* sigev_notify_thread_id */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) < 0 ||
	    timer_create(CLOCK_MONOTONIC, &sev, &wk->late_timer) < 0)
		return -errno;
	late_worker = wk;
	wk->have_late_timer = 1;
	return 0;
}

static void worker_timers_init(struct worker *wk)
{
	wk->quiet_fd =
	    timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (wk->quiet_fd < 0)
		log_warn("tuner %u: no deferred-work timer: the wait times it",
			 wk->a->client);
	if (worker_late_timer_init(wk))
		log_warn("tuner %u: no timer for late command starts: each "
			 "reports its start",
			 wk->a->client);
}

static void worker_timers_fini(struct worker *wk)
{
	if (wk->have_late_timer) {
		timer_delete(wk->late_timer);
		wk->have_late_timer = 0;
		late_worker = NULL;
	}
	if (wk->quiet_fd >= 0)
		close(wk->quiet_fd);
	wk->quiet_fd = -1;
}

/*
 * Run a command.  Its start is reported (the daemon's hang watch, the
 * tune_started event) at once for the daemon's and the restore's: the
 * daemon closes a command of theirs that a crash cut short with its
 * tuner.tune, so it must know the worker took it.  The stub's report it
 * only past WORKER_BEGIN_LATE_NS: most end sooner and then have one
 * report, their DONE (one cut short by a crash has no events).
 */
static void worker_run(struct worker *wk, struct worker_cmd *c)
{
	wk->begin = (union wmsg){.begin = {.h.type = WMSG_BEGIN,
					   .origin = c->origin,
					   .op = c->op,
					   .req_id = c->req_id,
					   .params = c->params}};
	wk->began = 0;
	if (c->op == TUNER_OP_TUNE || c->op == TUNER_OP_INIT ||
	    c->op == TUNER_OP_SLEEP)
		worker_watch_stop(wk); /* the params it watched are gone */
	c->t0 = loop_now_ns();
	wk->late_at_ns = c->t0 + WORKER_BEGIN_LATE_NS;
	wk->begin_armed = 1;
	if (c->origin != TUNER_ORIGIN_KERNEL || !wk->have_late_timer ||
	    worker_late_arm(wk, wk->late_at_ns) < 0)
		worker_begin_late(wk);
	wk->ctx.cmd_deadline_ns = c->deadline_ns;
	c->err = worker_exec(wk, c);
	/* The command's last bridge request is behind it. */
	if (worker_bracket_close(&wk->ctx) && !c->err)
		c->err = -ETIMEDOUT;
	/* A signal past here finds nothing armed; one before sent it. */
	wk->begin_armed = 0;
	c->began = wk->began;
}

static int stub_op(uint16_t opcode, enum tuner_op *op)
{
	switch (opcode) {
	case TSTUB_TUNER_INIT:
		*op = TUNER_OP_INIT;
		return 0;
	case TSTUB_TUNER_SLEEP:
		*op = TUNER_OP_SLEEP;
		return 0;
	case TSTUB_SET_PARAMS:
		*op = TUNER_OP_TUNE;
		return 0;
	case TSTUB_GET_STATUS:
		*op = TUNER_OP_STATUS;
		return 0;
	case TSTUB_GET_FREQUENCY:
		*op = TUNER_OP_FREQUENCY;
		return 0;
	}
	return -EOPNOTSUPP;
}

static void worker_serve_stub(struct worker *wk, const union tstub_buf *m)
{
	const struct tstub_hdr *h = &m->hdr;
	struct worker_cmd c = {.origin = TUNER_ORIGIN_KERNEL};
	const void *body = NULL;
	size_t len = 0;

	if (h->flags & TSTUB_F_REPLY) {
		log_warn(
		    "tuner %u: dropped a %s reply with unknown unique %llu",
		    wk->a->client, tstub_opcode_name(h->opcode),
		    (unsigned long long)h->unique);
		return;
	}
	if (h->opcode == TSTUB_INTERRUPT)
		return; /* nothing of it queued; a late answer is dropped */
	if (stub_op(h->opcode, &c.op)) {
		stub_reply(wk->ctx.stub_fd, h, -EOPNOTSUPP, NULL, 0);
		return;
	}
	if (c.op == TUNER_OP_TUNE)
		c.params = *(const struct tstub_params *)tstub_body(h);
	c.deadline_ns = worker_deadline(&wk->ctx, 0);
	/* The stub's command: the kernel caller holds the gate for it. */
	worker_bracket_close(&wk->ctx);
	wk->ctx.stub_cmd = 1;
	worker_run(wk, &c);
	wk->ctx.stub_cmd = 0;
	if (!c.err && c.op == TUNER_OP_STATUS) {
		body = &c.status;
		len = sizeof(c.status);
	} else if (!c.err && c.op == TUNER_OP_FREQUENCY) {
		body = &c.freq;
		len = sizeof(c.freq);
	}
	/* Answer first: the caller in the kernel waits, the report not. */
	if (stub_reply(wk->ctx.stub_fd, h, c.err, body, len))
		log_debug("tuner %u: reply to %s failed", wk->a->client,
			  tstub_opcode_name(h->opcode));
	/* The previous tune's report goes now, off the kernel's path; the
	 * kernel's status read right after its tune is the tune's. */
	worker_settle_owed(wk, WORKER_OWED_NONE,
			   c.have_status ? &c.status : NULL);
	if (c.op == TUNER_OP_TUNE && !c.err)
		worker_finish_later(wk, &c);
	else
		worker_finish(wk, &c, 0);
}

static void worker_serve_daemon(struct worker *wk, const struct wmsg_cmd *m)
{
	struct worker_cmd c = {
	    .origin = TUNER_ORIGIN_API,
	    .op = (enum tuner_op)m->op,
	    .req_id = m->req_id,
	    .params = m->params,
	    .deadline_ns = worker_deadline(&wk->ctx, m->deadline_ns),
	    .lock_deadline_ns = m->lock_deadline_ns,
	};

	worker_settle_owed(wk, WORKER_OWED_READ, NULL);
	if (c.op != TUNER_OP_TUNE && c.op != TUNER_OP_INIT &&
	    c.op != TUNER_OP_SLEEP && c.op != TUNER_OP_STATUS) {
		c.t0 = loop_now_ns();
		c.err = -EINVAL;
		worker_finish(wk, &c, 0);
		return;
	}
	worker_run(wk, &c);
	worker_finish(wk, &c, 1);
}

static int same_params(const struct tstub_params *a,
		       const struct tstub_params *b)
{
	return a->delsys == b->delsys && a->frequency == b->frequency &&
	       a->bandwidth == b->bandwidth &&
	       a->symbol_rate == b->symbol_rate && a->std == b->std;
}

/* BIND, retried while the stub still holds the previous worker's channel
 * (its close may not have reached the stub yet). */
static int worker_bind(struct worker *wk, struct tstub_params *cached)
{
	struct tstub_client cl = {.client = wk->a->client};
	uint64_t until = worker_deadline(&wk->ctx, 0);
	struct timespec pause = {0, WORKER_BIND_RETRY_MS * 1000000L};
	union tstub_buf reply;
	int err;

	for (;;) {
		err =
		    worker_call(&wk->ctx, TSTUB_BIND, &cl, sizeof(cl), &reply);
		if (err != -EBUSY || loop_now_ns() >= until)
			break;
		nanosleep(&pause, NULL);
	}
	if (!err)
		memcpy(cached, tstub_body(&reply.hdr), sizeof(*cached));
	return err;
}

/*
 * After the probe: power up, then put back the params the tuner had: the
 * daemon's (a worker restart), else the stub's (a daemon restart: the
 * box kept them, with any local tune the daemon had not saved yet), else
 * the ones saved in the state directory (the box restarted too).
 */
static void worker_restore(struct worker *wk, const struct tstub_params *cached)
{
	const struct worker_args *a = wk->a;
	struct worker_cmd c = {.origin = TUNER_ORIGIN_RESTORE,
			       .op = TUNER_OP_INIT};
	const struct tstub_params *p = NULL;

	c.deadline_ns = worker_deadline(&wk->ctx, 0);
	worker_run(wk, &c);
	worker_finish(wk, &c, 0);
	if (a->have_restore)
		p = &a->restore;
	else if (cached->flags & TSTUB_PARAMS_VALID)
		p = cached;
	else if (a->have_saved)
		p = &a->saved;
	if (!p)
		return;
	c = (struct worker_cmd){
	    .origin = TUNER_ORIGIN_RESTORE, .op = TUNER_OP_TUNE, .params = *p};
	c.params.flags |= TSTUB_PARAMS_VALID;
	c.deadline_ns = worker_deadline(&wk->ctx, 0);
	worker_run(wk, &c);
	worker_finish(wk, &c, p != cached && !same_params(&c.params, cached));
}

/* Wait for a message, or until deferred work (an owed report, the lock
 * watch's next read) is due. */
static int worker_poll(struct worker *wk)
{
	struct pollfd p[3] = {
	    {.fd = wk->ctx.stub_fd, .events = POLLIN},
	    {.fd = wk->a->daemon_fd, .events = POLLIN},
	    {.fd = wk->quiet_fd, .events = POLLIN}, /* -1: none, ignored */
	};
	struct timespec ts, *timeout = NULL;
	uint64_t now, due;
	union tstub_buf m;
	union wmsg w;
	int n;

	/* Idle from here: what the deferred work read is done. */
	worker_bracket_close(&wk->ctx);
	worker_time_deferred(wk);
	now = loop_now_ns();
	due = worker_next_due_ns(wk);
	if (due) {
		ts = loop_timespec(due > now ? due - now : 0);
		timeout = &ts;
	}
	n = ppoll(p, 3, timeout, NULL);
	if (n < 0)
		return errno == EINTR ? WORKER_GO_ON : WORKER_EXIT_OK;
	if (n == 0)
		return WORKER_GO_ON; /* deferred work is due */
	if (p[2].revents) {
		uint64_t expiries;

		/* Expired: the work's run re-arms for what is left. */
		wk->quiet_armed_ns = 0;
		if (read(wk->quiet_fd, &expiries, sizeof(expiries)) < 0)
			log_debug("tuner %u: deferred-work timer: %s",
				  wk->a->client, strerror(errno));
	}
	if (p[1].revents) {
		n = wmsg_recv(wk->a->daemon_fd, &w);
		if (n == 0 || (n < 0 && n != -EAGAIN && n != -EBADMSG))
			return WORKER_EXIT_OK;
		if (n > 0 && w.h.type == WMSG_CMD)
			worker_serve_daemon(wk, &w.cmd);
	}
	if (p[0].revents) {
		n = stub_recv(wk->ctx.stub_fd, &m);
		if (n == 0 || (n < 0 && n != -EAGAIN && n != -ENOMSG))
			return WORKER_EXIT_STUB_GONE;
		if (n > 0)
			worker_serve_stub(wk, &m);
	}
	return WORKER_GO_ON;
}

static int worker_loop(struct worker *wk)
{
	union tstub_buf m;
	int ret = WORKER_GO_ON;

	/* Deferred work first: its stub calls may stash requests, which the
	 * fifo then serves before the poll could block on them. */
	while (ret == WORKER_GO_ON) {
		worker_run_due(wk);
		while (worker_fifo_pop(&wk->ctx, &m))
			worker_serve_stub(wk, &m);
		if (wk->ctx.stub_closed)
			return WORKER_EXIT_STUB_GONE;
		ret = worker_poll(wk);
	}
	return ret;
}

static int worker_start(struct worker *wk, struct tstub_params *cached)
{
	const struct worker_args *a = wk->a;
	union wmsg m = {.probed = {.h.type = WMSG_PROBED}};
	int err;

	err = worker_bind(wk, cached);
	if (err)
		log_err("tuner %u: bind to the stub failed: %s", a->client,
			strerror(-err));
	else
		err = a->ops->probe(&wk->ctx.host, &a->cfg, &wk->priv);
	if (worker_bracket_close(&wk->ctx) && !err)
		err = -ETIMEDOUT;
	if (err > 0)
		err = -EIO; /* not an errno: the plugin broke the ABI */
	if (err)
		log_err("tuner %u (%s): probe failed: %s", a->client,
			a->info.name, strerror(-err));
	m.probed.error = err;
	m.probed.stub_params = *cached;
	worker_report(wk, &m);
	return m.probed.error;
}

/* Open the plugin here, in the worker, so no plugin code runs in the
 * daemon; the file may have changed since the daemon's trial described
 * it, so it must still be the same chip at the same ABI version.
 * Returns 0, or reports the refusal to the daemon and returns it. */
static int worker_open_plugin(struct worker *wk, struct worker_args *own,
			      struct tunerd_plugin_ops *ops, void **handle)
{
	union wmsg m = {.probed = {.h.type = WMSG_PROBED}};
	struct plugin_desc d;
	int err = plugin_open(own->plugin_path, &d, ops, handle);

	if (!err && (d.info.chip_id != own->info.chip_id || d.abi != own->abi))
		err = plugin_desc_refuse(&d, -EPROTO, own->plugin_path,
					 "now chip %u at ABI %d, not %u at %d",
					 d.info.chip_id, d.abi,
					 own->info.chip_id, own->abi);
	if (!err) {
		own->ops = ops;
		return 0;
	}
	if (*handle)
		dlclose(*handle);
	*handle = NULL;
	log_err("tuner %u: %s", own->client, d.reason);
	m.probed.error = err;
	worker_report(wk, &m);
	return err;
}

int worker_main(const struct worker_args *args)
{
	struct tstub_params cached = {0};
	struct worker_args own = *args;
	const struct worker_args *a = &own;
	struct tunerd_plugin_ops ops;
	void *handle = NULL;
	struct worker *wk;
	int fd, ret;

	wk = calloc(1, sizeof(*wk));
	if (!wk)
		return WORKER_EXIT_PROBE;
	wk->a = a;
	wk->quiet_fd = -1;
	if (!a->ops && worker_open_plugin(wk, &own, &ops, &handle)) {
		free(wk);
		return WORKER_EXIT_PROBE;
	}
	fd = stub_open(a->stub);
	if (fd < 0) {
		union wmsg m = {
		    .probed = {.h.type = WMSG_PROBED, .error = -ENOTCONN}};

		log_err("tuner %u: cannot open a stub channel: %s", a->client,
			strerror(-fd));
		worker_report(wk, &m);
		ret = WORKER_EXIT_STUB_GONE;
		goto out_wk;
	}
	worker_ctx_init(&wk->ctx, fd, a->client, a->info.name, a->firmware_dir,
			a->deadline_ms, a->settle_permille);
	worker_timers_init(wk);
	wk->ctx.host.abi = (uint32_t)a->abi;
	wk->ctx.cmd_bracket = a->cmd_bracket;
	if (worker_start(wk, &cached)) {
		ret = wk->ctx.stub_closed ? WORKER_EXIT_STUB_GONE
					  : WORKER_EXIT_PROBE;
		goto out;
	}
	worker_restore(wk, &cached);
	ret = worker_loop(wk);
	worker_settle_owed(wk, WORKER_OWED_NONE, NULL);
	worker_flush_held(wk);
	a->ops->release(wk->priv);
out:
	worker_timers_fini(wk);
	close(fd);
out_wk:
	free(wk);
	if (handle)
		dlclose(handle);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * What follows a worker's command: the status read after a tune, the one
 * report to the daemon, and the lock watch.
 *
 * A tune from the stub is answered first; its status read and report
 * then wait until the stub has been quiet for WORKER_OWED_QUIET_NS.  A
 * kernel that sends its next request sooner is never queued behind them:
 * that request runs and is answered, then the tune's report is made,
 * with that request's status when it was the kernel's status read, else
 * without one (its event says null, as documented for "none was read").
 * A tune alone reads its status as before, a fraction of a millisecond
 * later.  The reports of the stub's commands are held and sent together
 * once the stub is quiet (worker_priv.h, WORKER_HELD_MAX).
 */
#include <errno.h>
#include <string.h>

#include "api_json.h"
#include "log.h"
#include "loop.h"
#include "worker_priv.h"

/* Combine what the chip and the bridge's demodulator see: lock bits from
 * both, strength and CNR preferably from the demodulator (it measures the
 * signal the chip hands it), PLL lock and AFC from the chip. */
static void worker_status_merge(struct tstub_status *st,
				const struct tstub_status *dm)
{
	const uint32_t demod_first = TSTUB_ST_STRENGTH_DBM |
				     TSTUB_ST_STRENGTH_REL | TSTUB_ST_CNR_DB |
				     TSTUB_ST_CNR_REL;
	uint32_t take =
	    (dm->valid & demod_first) |
	    (dm->valid & ~st->valid & (TSTUB_ST_AFC | TSTUB_ST_PLL_LOCK));

	if (dm->valid & TSTUB_ST_FE_STATUS)
		st->fe_status |= dm->fe_status;
	st->valid |= dm->valid & TSTUB_ST_FE_STATUS;
	if (take & TSTUB_ST_STRENGTH_DBM)
		st->strength_mdbm = dm->strength_mdbm;
	if (take & TSTUB_ST_STRENGTH_REL)
		st->strength_rel = dm->strength_rel;
	if (take & TSTUB_ST_CNR_DB)
		st->cnr_mdb = dm->cnr_mdb;
	if (take & TSTUB_ST_CNR_REL)
		st->cnr_rel = dm->cnr_rel;
	if (take & TSTUB_ST_AFC)
		st->afc_hz = dm->afc_hz;
	if (take & TSTUB_ST_PLL_LOCK)
		st->pll_locked = dm->pll_locked;
	st->valid |= take;
	if (!st->frequency)
		st->frequency = dm->frequency;
	if (!st->bandwidth)
		st->bandwidth = dm->bandwidth;
}

/* The status from the chip and the bridge's demodulator; from the
 * demodulator alone when the chip is not to be asked and there is one.
 * After a tune from the kernel the demodulator tells, not the chip: the
 * frontend asks the chip itself when it wants to, so the chip sees exactly
 * the traffic of the kernel's own driver (the kernel test's parity check
 * compares the two). */
int worker_read_status(struct worker *wk, struct tstub_status *st, int ask_chip)
{
	union tstub_buf reply;
	int err;

	memset(st, 0, sizeof(*st));
	err = ask_chip || !wk->a->demod_status
		  ? wk->a->ops->get_status(wk->priv, st)
		  : 0;
	if (err)
		return err;
	if (wk->a->demod_status) {
		err =
		    worker_call(&wk->ctx, TSTUB_DEMOD_STATUS, NULL, 0, &reply);
		if (!err)
			worker_status_merge(st, tstub_body(&reply.hdr));
		else if (err != -EOPNOTSUPP)
			log_debug("tuner %u: demodulator status: %s",
				  wk->a->client, strerror(-err));
	}
	if (!st->frequency && wk->have_cur)
		st->frequency = wk->cur.frequency;
	if (!st->bandwidth && wk->have_cur)
		st->bandwidth = wk->cur.bandwidth;
	return 0;
}

static void worker_send(struct worker *wk, union wmsg *m)
{
	int err = wmsg_send(wk->a->daemon_fd, m);

	if (err)
		log_debug("tuner %u: report to the daemon: %s", wk->a->client,
			  strerror(-err));
}

void worker_flush_held(struct worker *wk)
{
	unsigned int n = wk->nheld;

	wk->nheld = 0;
	wk->held_until_ns = 0;
	/* No logging here: a signal handler may flush.  A daemon that is
	 * gone ends the worker at its EOF. */
	for (unsigned int i = 0; i < n; i++)
		(void)wmsg_send(wk->a->daemon_fd, &wk->held[i]);
}

void worker_report(struct worker *wk, union wmsg *m)
{
	/* The I2C transfers made since the last report (a probe's, a lock
	 * watch's reads) ride on the next one: no message of their own. */
	if (m->h.type == WMSG_DONE)
		m->done.i2c_transfers = wk->ctx.i2c_transfers;
	else if (m->h.type == WMSG_LOCK)
		m->lock.i2c_transfers = wk->ctx.i2c_transfers;
	if (m->h.type == WMSG_DONE || m->h.type == WMSG_LOCK)
		wk->ctx.i2c_transfers = 0;
	if (m->h.type == WMSG_DONE && m->done.origin == TUNER_ORIGIN_KERNEL) {
		wk->held[wk->nheld++] = *m;
		wk->held_until_ns = loop_now_ns() + WORKER_OWED_QUIET_NS;
		if (wk->nheld == WORKER_HELD_MAX)
			worker_flush_held(wk);
		return;
	}
	worker_flush_held(wk);
	worker_send(wk, m);
}

/* Start the lock watch after a tune someone waits on that found no lock;
 * end it when any status read (the kernel's too) shows lock, since the
 * daemon sees that read's status in its report. */
static void worker_watch_after(struct worker *wk, const struct worker_cmd *c)
{
	uint64_t now = loop_now_ns();
	int locked = c->have_status && api_status_locked(&c->status);

	if (c->op == TUNER_OP_STATUS && locked)
		wk->watch.until_ns = 0;
	if (c->op != TUNER_OP_TUNE || c->err || !c->have_status || locked ||
	    c->lock_deadline_ns <= now)
		return;
	wk->watch = (struct lock_watch){.until_ns = c->lock_deadline_ns,
					.since_ns = c->t0,
					.next_ns = now,
					.req_id = c->req_id};
}

/* One read of the watch, when due: lock is reported at once. */
static void worker_watch_step(struct worker *wk)
{
	struct lock_watch *w = &wk->watch;
	union wmsg m = {.lock = {.h.type = WMSG_LOCK}};
	uint64_t now = loop_now_ns(), pace;

	if (!w->until_ns || now < w->next_ns)
		return;
	w->reads++;
	if (worker_read_status(wk, &m.lock.status, 1)) {
		w->until_ns = 0; /* its error reaches the next status read */
		return;
	}
	if (api_status_locked(&m.lock.status)) {
		m.lock.req_id = w->req_id;
		m.lock.reads = w->reads;
		w->until_ns = 0;
		worker_report(wk, &m);
		return;
	}
	now = loop_now_ns();
	if (now >= w->until_ns) {
		w->until_ns = 0;
		return;
	}
	pace = (now - w->since_ns) / WORKER_LOCK_PACE_DIV;
	w->next_ns =
	    now +
	    (pace > WORKER_LOCK_READ_MIN_NS ? pace : WORKER_LOCK_READ_MIN_NS);
}

void worker_watch_stop(struct worker *wk)
{
	wk->watch.until_ns = 0;
}

static void worker_report_done(struct worker *wk, struct worker_cmd *c)
{
	union wmsg m = {.done = {.h.type = WMSG_DONE}};

	worker_watch_after(wk, c);
	m.done.origin = c->origin;
	m.done.op = c->op;
	m.done.error = c->err;
	m.done.req_id = c->req_id;
	m.done.duration_ns = (c->t1 ? c->t1 : loop_now_ns()) - c->t0;
	m.done.params = c->params;
	m.done.have_status = (uint32_t)c->have_status;
	m.done.began = (uint32_t)c->began;
	if (c->have_status)
		m.done.status = c->status;
	worker_report(wk, &m);
}

void worker_finish(struct worker *wk, struct worker_cmd *c, int notify_stub)
{
	if (c->op == TUNER_OP_TUNE && !c->err) {
		if (notify_stub)
			worker_notify(&wk->ctx, TSTUB_PARAMS_CHANGED, &wk->cur,
				      sizeof(wk->cur));
		c->have_status = !worker_read_status(
		    wk, &c->status, c->origin != TUNER_ORIGIN_KERNEL);
	}
	wk->ctx.cmd_deadline_ns = 0;
	worker_report_done(wk, c);
}

void worker_finish_later(struct worker *wk, struct worker_cmd *c)
{
	uint64_t now = loop_now_ns();

	wk->ctx.cmd_deadline_ns = 0;
	c->t1 = now; /* the event's elapsed_ms: the tune, not the wait */
	wk->owed = *c;
	wk->owed_at_ns = now + WORKER_OWED_QUIET_NS;
}

void worker_settle_owed(struct worker *wk, enum worker_owed how,
			const struct tstub_status *st)
{
	struct worker_cmd *c = &wk->owed;

	if (!wk->owed_at_ns)
		return;
	wk->owed_at_ns = 0;
	if (st) {
		c->status = *st;
		c->have_status = 1;
	} else if (how == WORKER_OWED_READ) {
		c->have_status = !worker_read_status(
		    wk, &c->status, c->origin != TUNER_ORIGIN_KERNEL);
	}
	worker_report_done(wk, c);
}

static uint64_t worker_quiet_due_ns(const struct worker *wk)
{
	uint64_t due = wk->owed_at_ns;

	if (wk->nheld && (!due || wk->held_until_ns < due))
		due = wk->held_until_ns;
	return due;
}

uint64_t worker_next_due_ns(const struct worker *wk)
{
	uint64_t due = wk->quiet_fd >= 0 ? 0 : worker_quiet_due_ns(wk);

	if (wk->watch.until_ns && (!due || wk->watch.next_ns < due))
		due = wk->watch.next_ns;
	return due;
}

void worker_run_due(struct worker *wk)
{
	uint64_t now = loop_now_ns();

	/* An owed report that is due found the stub quiet: the held go
	 * with it. */
	if (wk->owed_at_ns && now >= wk->owed_at_ns) {
		worker_settle_owed(wk, WORKER_OWED_READ, NULL);
		worker_flush_held(wk);
	} else if (wk->nheld && now >= wk->held_until_ns) {
		worker_flush_held(wk);
	}
	worker_watch_step(wk);
}

void worker_time_deferred(struct worker *wk)
{
	uint64_t due = worker_quiet_due_ns(wk);

	if (due)
		worker_wake_at(wk, due);
	else
		worker_quiet_reached(wk);
}

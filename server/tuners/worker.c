// SPDX-License-Identifier: MIT
#include "worker.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"
#include "plugin_open.h"
#include "tuner.h"
#include "worker_host.h"
#include "worker_proto.h"

#define WORKER_BIND_RETRY_MS 20
#define WORKER_GO_ON         (-1) /* worker_poll(): no exit yet */

struct worker {
	const struct worker_args *a;
	void *priv;
	struct tstub_params cur; /* last params set successfully */
	int have_cur;
	struct worker_ctx ctx;
};

/* One command, whichever side asked for it. */
struct worker_cmd {
	enum tuner_origin origin;
	enum tuner_op op;
	uint64_t req_id;
	struct tstub_params params; /* TUNE */
	uint32_t gate_open;         /* GATE */
	uint64_t deadline_ns;
	uint64_t t0;
	int err;
	struct tstub_status status;
	int have_status;
	struct tstub_freq freq;
};

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
 * demodulator alone when the chip is not to be asked and there is one. */
static int worker_read_status(struct worker *wk, struct tstub_status *st,
			      int ask_chip)
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
		return ops->i2c_gate ? ops->i2c_gate(wk->priv, !!c->gate_open)
				     : 0;
	}
	return -EINVAL;
}

static void worker_report(struct worker *wk, union wmsg *m)
{
	int err = wmsg_send(wk->a->daemon_fd, m);

	if (err)
		log_debug("tuner %u: report to the daemon: %s", wk->a->client,
			  strerror(-err));
}

/* Tell the daemon a command starts (its hang watch), then run it. */
static void worker_run(struct worker *wk, struct worker_cmd *c)
{
	union wmsg m = {.begin = {.h.type = WMSG_BEGIN,
				  .origin = c->origin,
				  .op = c->op,
				  .req_id = c->req_id,
				  .params = c->params}};

	worker_report(wk, &m);
	c->t0 = loop_now_ns();
	wk->ctx.cmd_deadline_ns = c->deadline_ns;
	c->err = worker_exec(wk, c);
}

/* After a tune: tell the stub when the tune did not come from it, read
 * the status; then report the command to the daemon.  After a tune from
 * the kernel the bridge's demodulator tells (when there is one), not the
 * chip: the frontend asks the chip itself when it wants to, so the chip
 * sees exactly the traffic of the kernel's own driver (the parity check
 * of the kernel test compares the two). */
static void worker_finish(struct worker *wk, struct worker_cmd *c,
			  int notify_stub)
{
	union wmsg m = {.done = {.h.type = WMSG_DONE}};

	if (c->op == TUNER_OP_TUNE && !c->err) {
		if (notify_stub)
			worker_notify(&wk->ctx, TSTUB_PARAMS_CHANGED, &wk->cur,
				      sizeof(wk->cur));
		c->have_status = !worker_read_status(
		    wk, &c->status, c->origin != TUNER_ORIGIN_KERNEL);
	}
	wk->ctx.cmd_deadline_ns = 0;
	m.done.origin = c->origin;
	m.done.op = c->op;
	m.done.error = c->err;
	m.done.req_id = c->req_id;
	m.done.duration_ns = loop_now_ns() - c->t0;
	m.done.params = c->params;
	m.done.have_status = (uint32_t)c->have_status;
	if (c->have_status)
		m.done.status = c->status;
	worker_report(wk, &m);
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
	case TSTUB_I2C_GATE:
		*op = TUNER_OP_GATE;
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
	if (c.op == TUNER_OP_GATE)
		c.gate_open = ((const struct tstub_gate *)tstub_body(h))->open;
	c.deadline_ns = worker_deadline(&wk->ctx, 0);
	worker_run(wk, &c);
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
	};

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

static int worker_poll(struct worker *wk)
{
	struct pollfd p[2] = {
	    {.fd = wk->ctx.stub_fd, .events = POLLIN},
	    {.fd = wk->a->daemon_fd, .events = POLLIN},
	};
	union tstub_buf m;
	union wmsg w;
	int n;

	if (poll(p, 2, -1) < 0)
		return errno == EINTR ? WORKER_GO_ON : WORKER_EXIT_OK;
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

	while (ret == WORKER_GO_ON) {
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
	wk->ctx.host.abi = (uint32_t)a->abi;
	if (worker_start(wk, &cached)) {
		ret = wk->ctx.stub_closed ? WORKER_EXIT_STUB_GONE
					  : WORKER_EXIT_PROBE;
		goto out;
	}
	worker_restore(wk, &cached);
	ret = worker_loop(wk);
	a->ops->release(wk->priv);
out:
	close(fd);
out_wk:
	free(wk);
	if (handle)
		dlclose(handle);
	return ret;
}

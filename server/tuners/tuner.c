// SPDX-License-Identifier: MIT
/*
 * The tuner table, API requests and snapshots.  The worker processes
 * themselves are tuner_worker.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api_json.h"
#include "daemon.h"
#include "eventbus.h"
#include "log.h"
#include "loop.h"
#include "plugin_host.h"
#include "tuner_priv.h"
#include "worker_proto.h"

const char *tuner_state_name(enum tuner_state s)
{
	static const char *const names[] = {
	    [TUNER_STARTING] = "starting",     [TUNER_READY] = "ready",
	    [TUNER_RESTARTING] = "restarting", [TUNER_FAILED] = "failed",
	    [TUNER_OFFLINE] = "offline",
	};

	return s >= TUNER_STARTING && s <= TUNER_OFFLINE ? names[s] : "?";
}

static const char *const op_names[] = {
    [TUNER_OP_TUNE] = "tune",           [TUNER_OP_INIT] = "init",
    [TUNER_OP_SLEEP] = "sleep",         [TUNER_OP_STATUS] = "status",
    [TUNER_OP_FREQUENCY] = "frequency", [TUNER_OP_GATE] = "gate",
};

const char *tuner_op_name(enum tuner_op op)
{
	return op >= TUNER_OP_TUNE && op <= TUNER_OP_GATE ? op_names[op] : "?";
}

enum tuner_op tuner_op_parse(const char *name)
{
	for (int op = TUNER_OP_TUNE; op <= TUNER_OP_STATUS; op++)
		if (name && strcasecmp(name, op_names[op]) == 0)
			return (enum tuner_op)op;
	return 0;
}

const char *tuner_origin_name(enum tuner_origin o)
{
	switch (o) {
	case TUNER_ORIGIN_KERNEL:
		return "kernel";
	case TUNER_ORIGIN_API:
		return "api";
	case TUNER_ORIGIN_RESTORE:
		return "restore";
	}
	return "?";
}

const char *tuner_event_origin(enum tuner_origin o, const char *by)
{
	if (o == TUNER_ORIGIN_API && by &&
	    !strncmp(by, TUNER_LABEL_HDHOMERUN, strlen(TUNER_LABEL_HDHOMERUN)))
		return "hdhomerun";
	return tuner_origin_name(o);
}

struct tuner *tuner_find(struct daemon *d, uint32_t id)
{
	for (struct tuner *t = d->tuners; t; t = t->next)
		if (t->id == id)
			return t;
	return NULL;
}

struct tuner *tuner_first(struct daemon *d)
{
	return d->tuners;
}

struct tuner *tuner_next(struct tuner *t)
{
	return t->next;
}

uint32_t tuner_id(const struct tuner *t)
{
	return t->id;
}

void tuner_snapshot(const struct tuner *t, struct tuner_snapshot *s)
{
	*s = (struct tuner_snapshot){
	    .id = t->id,
	    .state = t->state,
	    .attach = t->attach,
	    .info = t->info,
	    .have_info = t->have_info,
	    .params = t->params,
	    .have_params = t->have_params,
	    .changed_origin = t->changed_origin,
	    .changed_at_ms = t->changed_at_ms,
	    .status = t->status,
	    .have_status = t->have_status,
	    .status_at_ms = t->status_at_ms,
	    .locked = t->locked,
	    .last_error = t->last_error,
	    .last_error_at_ms = t->last_error_at_ms,
	    .counters = t->counters,
	    .worker_pid = t->pid,
	    .up_since_ms = t->state == TUNER_READY ? t->up_since_ms : 0,
	    .queued = t->qcount + (unsigned int)t->has_inflight,
	};
	memcpy(s->changed_by, t->changed_by, sizeof(s->changed_by));
	memcpy(s->last_error_msg, t->last_error_msg, sizeof(s->last_error_msg));
}

/* Soon: a command's answer goes out before its events are built. */
void tuner_publish(struct tuner *t, const char *type, json_t *fields)
{
	eventbus_publish_soon(t->d->events, type, (long)t->id, fields);
}

void tuner_set_error(struct tuner *t, int err, const char *fmt, ...)
{
	va_list ap;

	t->last_error = err;
	t->last_error_at_ms = eventbus_now_ms();
	va_start(ap, fmt);
	vsnprintf(t->last_error_msg, sizeof(t->last_error_msg), fmt, ap);
	va_end(ap);
}

void tuner_changed(struct tuner *t)
{
	t->d->tuners_version++;
}

void tuner_set_state(struct tuner *t, enum tuner_state s, const char *why)
{
	enum tuner_state was = t->state;

	if (was == s)
		return;
	t->state = s;
	tuner_changed(t);
	log_info("tuner %u (%s): %s -> %s%s%s", t->id, t->info.name,
		 tuner_state_name(was), tuner_state_name(s), why ? ": " : "",
		 why ? why : "");
	tuner_publish(t, "tuner.state",
		      json_pack("{s:s,s:s,s:s?}", "state", tuner_state_name(s),
				"previous", tuner_state_name(was), "reason",
				why));
}

/* ---- API requests ---- */

static struct tuner_req *queue_at(struct tuner *t, unsigned int i)
{
	return &t->queue[(t->qhead + i) % TUNER_QUEUE_MAX];
}

static int queue_pop(struct tuner *t, struct tuner_req *out)
{
	if (!t->qcount)
		return 0;
	*out = *queue_at(t, 0);
	t->qhead = (t->qhead + 1) % TUNER_QUEUE_MAX;
	t->qcount--;
	return 1;
}

/* Never called inside tuner_submit(): completions reach their callers
 * from the loop (a worker's report, a timer), so a caller is never
 * re-entered while it submits. */
void tuner_req_finish(struct tuner_req *r, int err,
		      const struct tstub_status *st)
{
	tuner_done_fn done = r->done;

	r->done = NULL;
	if (done)
		done(err, st, r->arg);
}

void tuner_complete_inflight(struct tuner *t, int err,
			     const struct tstub_status *st)
{
	struct tuner_req r;

	if (!t->has_inflight)
		return;
	r = t->inflight;
	t->inflight.done = NULL;
	t->has_inflight = 0;
	t->send_err = 0;
	loop_del_timer(t->d->loop, t->send_fail_timer);
	t->send_fail_timer = 0;
	if (err && r.op == TUNER_OP_TUNE)
		tuner_saved_undo(t); /* its params were kept as it was sent */
	if (!tuner_lock_wait_keep(t, &r, err, st))
		tuner_req_finish(&r, err, st);
}

/* Lock waits get the last status: their tunes went well. */
void tuner_fail_requests(struct tuner *t, int inflight_err, int queued_err)
{
	struct tstub_status st = t->status;
	struct tuner_req r;

	if (t->answer_held)
		tuners_saved_flush(t->d); /* its tune worked: say so */
	tuner_complete_inflight(t, inflight_err, NULL);
	tuner_lock_waits_answer(t, UINT64_MAX, t->have_status ? &st : NULL);
	while (queued_err && queue_pop(t, &r))
		tuner_req_finish(&r, queued_err, NULL);
}

static long tuner_deadline_fire(struct loop *l, uint64_t id, void *arg);

/* Arm for the earliest deadline unless a timer that fires no later is
 * armed already; with nothing pending an armed timer is left to fire
 * and find nothing. */
static void tuner_arm_deadline(struct tuner *t)
{
	uint64_t first = UINT64_MAX, now = loop_now_ms();

	if (t->has_inflight && t->inflight.done)
		first = t->inflight.deadline_ms;
	for (unsigned int i = 0; i < t->qcount; i++)
		if (queue_at(t, i)->deadline_ms < first)
			first = queue_at(t, i)->deadline_ms;
	for (unsigned int i = 0; i < t->nlock_waits; i++)
		if (t->lock_waits[i].lock_deadline_ms < first)
			first = t->lock_waits[i].lock_deadline_ms;
	if (first == UINT64_MAX ||
	    (t->deadline_timer && t->deadline_timer_at <= first))
		return;
	loop_del_timer(t->d->loop, t->deadline_timer);
	t->deadline_timer = loop_add_timer(
	    t->d->loop, first > now ? first - now : 0, tuner_deadline_fire, t);
	t->deadline_timer_at = first;
}

static void tuner_expire(struct tuner *t, struct tuner_req *r)
{
	t->counters.timeouts++;
	log_warn("tuner %u (%s): %s request from %s: deadline passed", t->id,
		 t->info.name, tuner_op_name(r->op), r->label);
	tuner_req_finish(r, -ETIMEDOUT, NULL);
}

static long tuner_deadline_fire(struct loop *l, uint64_t id, void *arg)
{
	struct tuner *t = arg;
	uint64_t now = loop_now_ms();
	struct tuner_req keep[TUNER_QUEUE_MAX], r;
	struct tstub_status st = t->status;
	unsigned int n = 0;

	(void)l;
	(void)id;
	t->deadline_timer = 0;
	tuner_lock_waits_answer(t, now, t->have_status ? &st : NULL);
	/* The worker still runs an expired in-flight command: its slot
	 * stays taken until it reports, so commands never interleave. */
	if (t->has_inflight && t->inflight.done &&
	    t->inflight.deadline_ms <= now)
		tuner_expire(t, &t->inflight);
	while (queue_pop(t, &r)) {
		if (r.deadline_ms <= now)
			tuner_expire(t, &r);
		else
			keep[n++] = r;
	}
	for (unsigned int i = 0; i < n; i++)
		*queue_at(t, t->qcount++) = keep[i];
	tuner_pump(t); /* arms the next deadline */
	return LOOP_TIMER_DONE;
}

/* The worker's socket refused a command: answer it from the loop, not
 * from inside the tuner_submit() that sent it. */
static long tuner_send_failed(struct loop *l, uint64_t id, void *arg)
{
	struct tuner *t = arg;

	(void)l;
	(void)id;
	t->send_fail_timer = 0;
	tuner_complete_inflight(t, t->send_err, NULL);
	tuner_pump(t);
	return LOOP_TIMER_DONE;
}

/*
 * Send the next queued request when the worker is free.  Nothing is
 * answered here (tuner_submit() calls it): a request past its deadline
 * stays for the deadline timer, armed at once, and a send that fails
 * takes the in-flight slot until a zero-delay timer answers it.
 */
void tuner_pump(struct tuner *t)
{
	union wmsg m;
	struct tuner_req r;

	while (t->state == TUNER_READY && !t->has_inflight && t->qcount &&
	       queue_at(t, 0)->deadline_ms > loop_now_ms()) {
		queue_pop(t, &r);
		m = (union wmsg){
		    .cmd = {.h.type = WMSG_CMD,
			    .op = r.op,
			    .req_id = r.id,
			    .deadline_ns = r.deadline_ms * 1000000ull,
			    .lock_deadline_ns = r.lock_deadline_ms * 1000000ull,
			    .params = r.params}};
		t->inflight = r;
		t->has_inflight = 1;
		if (r.op == TUNER_OP_TUNE)
			tuner_saved_intent(t, &r.params);
		if (wmsg_send(t->sock, &m)) {
			t->send_err = -ECONNABORTED;
			t->send_fail_timer =
			    loop_add_timer(t->d->loop, 0, tuner_send_failed, t);
		} else if (!t->busy) {
			tuner_watch_begin(t);
		}
	}
	tuner_arm_deadline(t);
}

static int tuner_check_params(const struct tuner *t,
			      const struct tstub_params *p)
{
	const struct tstub_chip_info *ci = &t->info;

	if (!p || p->delsys == TSTUB_DELSYS_NONE ||
	    p->delsys >= TSTUB_DELSYS_COUNT)
		return -EINVAL;
	if (ci->delsys_mask && !(ci->delsys_mask & (1u << p->delsys)))
		return -EINVAL;
	if (ci->freq_max &&
	    (p->frequency < ci->freq_min || p->frequency > ci->freq_max))
		return -EINVAL;
	return 0;
}

int tuner_submit(struct tuner *t, enum tuner_op op,
		 const struct tstub_params *p, const char *origin_label,
		 tuner_done_fn done, void *arg)
{
	return tuner_submit_wait(t, op, p, origin_label, 0, done, arg);
}

int tuner_submit_wait(struct tuner *t, enum tuner_op op,
		      const struct tstub_params *p, const char *origin_label,
		      unsigned int wait_lock_ms, tuner_done_fn done, void *arg)
{
	struct tuner_req *r;

	if (op < TUNER_OP_TUNE || op > TUNER_OP_STATUS)
		return -EINVAL;
	if (op == TUNER_OP_TUNE && tuner_check_params(t, p))
		return -EINVAL;
	if (t->state == TUNER_FAILED)
		return -ENODEV;
	if (t->state == TUNER_OFFLINE)
		return -ENOTCONN;
	if (t->qcount == TUNER_QUEUE_MAX) {
		t->counters.busy++;
		return -EBUSY;
	}
	r = queue_at(t, t->qcount++);
	*r = (struct tuner_req){
	    .id = ++t->next_req_id,
	    .op = op,
	    .done = done,
	    .arg = arg,
	    .deadline_ms = loop_now_ms() + t->d->deadline_ms,
	};
	if (op == TUNER_OP_TUNE) {
		r->params = *p;
		r->params.flags |= TSTUB_PARAMS_VALID;
		if (wait_lock_ms)
			r->lock_deadline_ms = loop_now_ms() + wait_lock_ms;
	}
	snprintf(r->label, sizeof(r->label), "%s",
		 origin_label ? origin_label : "api");
	tuner_pump(t);
	return 0;
}

unsigned int tuner_forget(struct daemon *d, void *arg)
{
	unsigned int n = 0;

	for (struct tuner *t = d->tuners; t; t = t->next) {
		if (t->has_inflight && t->inflight.done &&
		    t->inflight.arg == arg) {
			t->inflight.done = NULL;
			n++;
		}
		for (unsigned int i = 0; i < t->qcount; i++)
			if (queue_at(t, i)->done &&
			    queue_at(t, i)->arg == arg) {
				queue_at(t, i)->done = NULL;
				n++;
			}
		for (unsigned int i = 0; i < t->nlock_waits; i++)
			if (t->lock_waits[i].done &&
			    t->lock_waits[i].arg == arg) {
				t->lock_waits[i].done = NULL;
				n++;
			}
	}
	return n;
}

/* ---- attach, detach, offline ---- */

static struct tuner *tuner_new(struct daemon *d, uint32_t id)
{
	struct tuner *t = calloc(1, sizeof(*t)), **pp;

	if (!t)
		return NULL;
	t->d = d;
	t->id = id;
	t->sock = -1;
	t->locked = -1;
	t->state = TUNER_STARTING;
	for (pp = &d->tuners; *pp && (*pp)->id < id; pp = &(*pp)->next)
		;
	t->next = *pp;
	*pp = t;
	tuner_changed(t);
	return t;
}

static void tuner_free(struct tuner *t)
{
	struct daemon *d = t->d;
	struct tuner **pp;

	loop_del_timer(d->loop, t->deadline_timer);
	loop_del_timer(d->loop, t->restart_timer);
	loop_del_timer(d->loop, t->send_fail_timer);
	for (pp = &d->tuners; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	tuner_changed(t);
	plugin_host_unuse(d->plugins, t->plugin);
	free(t);
}

/* Stop whatever runs for t: worker, pending attach, restart. */
static void tuner_quiesce(struct tuner *t, int inflight_err, int queued_err,
			  const char *why)
{
	tuner_worker_stop(t, why);
	tuner_attach_reply(t, -ECONNABORTED);
	loop_del_timer(t->d->loop, t->restart_timer);
	t->restart_timer = 0;
	tuner_fail_requests(t, inflight_err, queued_err);
	tuner_arm_deadline(t);
	t->locked = -1;
}

static json_t *attach_json(const struct tstub_attach *a, const char *chip)
{
	return json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:s}", "chip", chip,
			 "chip_id", a->chip_id, "adapter", a->adapter,
			 "address", a->i2c_addr, "vendor_id", a->vendor_id,
			 "product_id", a->product_id, "bridge", a->bridge);
}

/* An ATTACH waiting for its chip's plugin to be known. */
struct attach_wait {
	struct daemon *d;
	struct tstub_attach a;
	tuner_attach_fn fn;
	void *arg;
};

static void tuners_attach_loaded(int err, struct plugin *p, void *arg)
{
	struct attach_wait *w = arg;
	struct daemon *d = w->d;
	const struct tstub_attach *a = &w->a;
	tuner_attach_fn fn = w->fn;
	struct tuner *t;

	arg = w->arg;
	if (!err && !d->session.connected)
		err = -ENOTCONN; /* the stub left while the plugin was tried */
	if (err) {
		log_warn("attach of client %u: no plugin for chip %u: %s",
			 a->client, a->chip_id, strerror(-err));
		fn(err, NULL, arg);
		goto out;
	}
	t = tuner_find(d, a->client);
	if (!t)
		t = tuner_new(d, a->client);
	if (!t) {
		fn(-ENOMEM, NULL, arg);
		goto out;
	}
	tuner_quiesce(t, -ECONNABORTED, 0, "attach again");
	if (t->plugin != p) {
		plugin_host_use(p);
		plugin_host_unuse(d->plugins, t->plugin);
		t->plugin = p;
	}
	t->attach = *a;
	t->attach.bridge[sizeof(t->attach.bridge) - 1] = '\0';
	tuner_saved_attach(t);
	t->info = p->info;
	t->have_info = 1;
	tuner_changed(t);
	t->initial = 1;
	t->probe_failures = 0;
	t->backoff_ms = TUNER_RESTART_MIN_MS;
	t->attach_fn = fn;
	t->attach_arg = arg;
	log_info("tuner %u: attach %s at 0x%02x on adapter %u (%s)", t->id,
		 t->info.name, a->i2c_addr, a->adapter, t->attach.bridge);
	tuner_publish(t, "tuner.attach", attach_json(&t->attach, t->info.name));
	tuner_set_state(t, TUNER_STARTING, "attach");
	err = tuner_worker_spawn(t);
	if (err) {
		tuner_spawn_error(t, err);
		tuner_attach_reply(t, err);
		tuner_set_state(t, TUNER_FAILED, t->last_error_msg);
	}
out:
	free(w);
}

/* The plugin's description may need a trial child first: the rest runs
 * from plugin_host_load()'s callback. */
void tuners_attach(struct daemon *d, const struct tstub_attach *a,
		   tuner_attach_fn fn, void *arg)
{
	struct attach_wait *w = malloc(sizeof(*w));
	int err = -ENOMEM;

	if (w) {
		*w =
		    (struct attach_wait){.d = d, .a = *a, .fn = fn, .arg = arg};
		err = plugin_host_load(d->plugins, a->chip_id,
				       tuners_attach_loaded, w);
	}
	if (err) {
		free(w);
		fn(err, NULL, arg);
	}
}

int tuners_detach(struct daemon *d, uint32_t client)
{
	struct tuner *t = tuner_find(d, client);

	if (!t)
		return -ENOENT;
	tuner_quiesce(t, -ENODEV, -ENODEV, "detached");
	log_info("tuner %u (%s): detached", t->id, t->info.name);
	tuner_publish(t, "tuner.detach", attach_json(&t->attach, t->info.name));
	tuner_free(t);
	return 0;
}

void tuners_offline(struct daemon *d)
{
	for (struct tuner *t = d->tuners; t; t = t->next) {
		tuner_quiesce(t, -ECONNABORTED, -ENOTCONN, "stub gone");
		tuner_set_state(t, TUNER_OFFLINE, "stub gone");
	}
}

void tuners_shutdown(struct daemon *d)
{
	while (d->tuners) {
		struct tuner *t = d->tuners;

		tuner_quiesce(t, -ECANCELED, -ECANCELED, "daemon stopping");
		tuner_free(t);
	}
}

// SPDX-License-Identifier: MIT
/*
 * The command service's tuner commands: checks, submission to the tuner,
 * the lock wait after a tune, shared status reads, answers.
 *
 * A command never blocks the loop: tuner_submit() queues it and its
 * completion (always from the loop, never inside tuner_submit()) shapes
 * the answer for the transport's callback.  So a tune goes front ->
 * service -> tuner -> worker and back without re-entering the transport.
 *
 * Status reads of one tuner are shared: one in flight, one gathering the
 * commands that came since, queued when the first ends.  Every answer
 * comes from a read that started after its command (fresh), a tuner never
 * has more than two status reads queued however many clients poll it,
 * and N clients cost one worker round trip, not N.
 */
#include "command.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command_priv.h"
#include "daemon.h"
#include "json_api.h"
#include "loop.h"

struct command {
	struct command_client *cl;
	struct command *prev, *next; /* cl->commands */
	command_done_fn done;
	void *arg;
	uint32_t tuner;
	enum tuner_op op;
	struct tstub_params params;
	char label[TUNER_LABEL_LEN];
	uint64_t t0_ms;
	unsigned int wait_lock_ms; /* TUNE: the tuner answers at lock */
	struct tstub_status status;
	int have_status;
	struct status_read *read; /* a status waiting on a shared read */
	struct command *rnext;
	json_t *channel; /* a tune by channel: the channel */
};

struct status_read {
	struct command_service *cs;
	uint32_t tuner;
	int in_flight;
	struct command *members; /* linked by rnext */
	char label[TUNER_LABEL_LEN];
	struct status_read *next; /* cs->reads */
};

/* ---- answers ---- */

int command_fail(struct command_result *res, int err, struct api_error *e)
{
	res->err = err;
	res->status = e->status ? (unsigned int)e->status : 500;
	res->body = api_error_to_json(e);
	return err;
}

static int bad_field(struct api_error *e, const char *field, const char *why)
{
	api_error_set(e, 400, "bad_request", json_pack("{s:s}", "field", field),
		      "%s: %s", field, why);
	return -EINVAL;
}

/* When the tuner's params last changed (0: unknown or gone): the
 * changed_at of a Status. */
static uint64_t changed_at(struct command_service *cs, uint32_t tuner)
{
	struct tuner *t = tuner_find(cs->d, tuner);
	struct tuner_snapshot s = {0};

	if (t)
		tuner_snapshot(t, &s);
	return (uint64_t)s.changed_at_ms;
}

/* ---- commands ---- */

static void command_unlink(struct command *c)
{
	struct command_client *cl = c->cl;

	if (c->prev)
		c->prev->next = c->next;
	else
		cl->commands = c->next;
	if (c->next)
		c->next->prev = c->prev;
	cl->pending--;
}

/* The answer goes out; c is freed. */
static void command_finish(struct command *c, unsigned int status, json_t *body,
			   int err)
{
	struct command_result res = {
	    .err = err, .status = status, .body = body};
	command_done_fn done = c->done;
	void *arg = c->arg;

	command_unlink(c);
	json_decref(c->channel);
	free(c);
	done(&res, arg);
}

static void command_finish_errno(struct command *c, int err)
{
	struct command_result res;
	struct api_error e = {0};

	api_error_from_errno(&e, err, tuner_op_name(c->op));
	command_fail(&res, err, &e);
	command_finish(c, res.status, res.body, err);
}

static json_t *tune_answer(struct command *c)
{
	uint64_t at = changed_at(c->cl->cs, c->tuner);
	json_t *a = json_pack(
	    "{s:I, s:o, s:o, s:b, s:I}", "tuner", (json_int_t)c->tuner,
	    "params", params_to_json(&c->params), "status",
	    c->have_status ? status_to_json(&c->status, at) : json_null(),
	    "locked", c->have_status && api_status_locked(&c->status),
	    "elapsed_ms", (json_int_t)(loop_now_ms() - c->t0_ms));

	if (a && c->channel)
		json_object_set(a, "channel", c->channel);
	return a;
}

static void command_tuner_done(int err, const struct tstub_status *st,
			       void *arg)
{
	struct command *c = arg;

	if (st) {
		c->status = *st;
		c->have_status = 1;
	}
	/* A tune that waits for lock is answered by the tuner at the lock
	 * (the worker reports it as it sees it) or at the wait's end. */
	if (err) {
		command_finish_errno(c, err);
	} else if (c->op == TUNER_OP_TUNE) {
		command_finish(c, 200, tune_answer(c), 0);
	} else {
		command_finish(
		    c, 200,
		    json_pack("{s:I, s:s}", "tuner", (json_int_t)c->tuner,
			      "state",
			      c->op == TUNER_OP_SLEEP ? "sleeping" : "ready"),
		    0);
	}
}

/* ---- shared status reads ---- */

static struct status_read *read_find(struct command_service *cs, uint32_t tuner,
				     int in_flight)
{
	for (struct status_read *g = cs->reads; g; g = g->next)
		if (g->tuner == tuner && g->in_flight == in_flight)
			return g;
	return NULL;
}

static void read_unlink(struct status_read *g)
{
	struct status_read **pp = &g->cs->reads;

	while (*pp && *pp != g)
		pp = &(*pp)->next;
	if (*pp)
		*pp = g->next;
}

/* Give every member its answer (st when err is 0); g is freed. */
static void read_answer(struct status_read *g, int err,
			const struct tstub_status *st)
{
	json_t *body =
	    err ? NULL : status_to_json(st, changed_at(g->cs, g->tuner));
	struct command *c, *next;

	read_unlink(g);
	for (c = g->members; c; c = next) {
		next = c->rnext;
		c->read = NULL;
		if (err)
			command_finish_errno(c, err);
		else
			command_finish(c, 200, json_incref(body), 0);
	}
	json_decref(body);
	free(g);
}

static void read_done(int err, const struct tstub_status *st, void *arg);

/* Queue g's read.  Returns 0 or the tuner's refusal (g untouched). */
static int read_submit(struct status_read *g)
{
	struct tuner *t = tuner_find(g->cs->d, g->tuner);
	int ret =
	    t ? tuner_submit(t, TUNER_OP_STATUS, NULL, g->label, read_done, g)
	      : -ENODEV;

	if (ret == 0)
		g->in_flight = 1;
	return ret;
}

static void read_done(int err, const struct tstub_status *st, void *arg)
{
	struct status_read *g = arg, *next;
	struct command_service *cs = g->cs;
	uint32_t tuner = g->tuner;
	int ret;

	if (!st && !err)
		err = -EIO;
	read_answer(g, err, st);
	next = read_find(cs, tuner, 0);
	if (next) {
		ret = read_submit(next);
		if (ret < 0)
			read_answer(next, ret, NULL);
	}
}

static void read_leave(struct command *c)
{
	struct status_read *g = c->read;
	struct command **pp;

	if (!g)
		return;
	for (pp = &g->members; *pp; pp = &(*pp)->rnext)
		if (*pp == c) {
			*pp = c->rnext;
			break;
		}
	c->read = NULL;
	if (!g->members && !g->in_flight) {
		read_unlink(g);
		free(g);
	}
}

/* Join the gathering read of c's tuner, queued at once when no read is
 * in flight.  Returns 0 or the tuner's refusal. */
static int status_join(struct command *c)
{
	struct command_service *cs = c->cl->cs;
	struct status_read *g = read_find(cs, c->tuner, 0);
	int ret;

	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return -ENOMEM;
		g->cs = cs;
		g->tuner = c->tuner;
		snprintf(g->label, sizeof(g->label), "%s", c->label);
		g->next = cs->reads;
		cs->reads = g;
	}
	if (!read_find(cs, c->tuner, 1) && !g->members) {
		ret = read_submit(g);
		if (ret < 0) {
			read_unlink(g);
			free(g);
			return ret;
		}
	}
	c->read = g;
	c->rnext = g->members;
	g->members = c;
	return 0;
}

/* ---- checks ---- */

static int check_role(const struct command_client *cl, enum tuner_op op,
		      struct api_error *e)
{
	enum role needed = op == TUNER_OP_STATUS ? ROLE_VIEWER : ROLE_OPERATOR;
	const char *name = tuner_op_name(op);

	if (cl->role >= needed)
		return 0;
	api_error_set(e, 403, "forbidden",
		      json_pack("{s:s,s:s}", "required_role", role_name(needed),
				"role", role_name(cl->role)),
		      "%s %s needs the %s role",
		      op == TUNER_OP_INIT ? "an" : "a", name,
		      role_name(needed));
	return -EACCES;
}

static int parse_wait_lock(json_t *w, unsigned int *out, struct api_error *e)
{
	if (!w)
		return 0;
	if (!json_is_integer(w) || json_integer_value(w) < 0 ||
	    json_integer_value(w) > COMMAND_WAIT_LOCK_MAX_MS) {
		api_error_set(e, 400, "bad_request",
			      json_pack("{s:s}", "field", "wait_lock_ms"),
			      "wait_lock_ms: an integer 0..%d",
			      COMMAND_WAIT_LOCK_MAX_MS);
		return -EINVAL;
	}
	*out = (unsigned int)json_integer_value(w);
	return 0;
}

static int parse_tune(struct command *c, const struct command_request *req,
		      struct tuner *t, unsigned int *wait, struct api_error *e)
{
	static const char *const inline_extra[] = {"lease_id", "wait_lock_ms",
						   NULL};
	struct tuner_snapshot s;
	int ret;

	*wait = req->wait_lock_ms;
	if (req->params) {
		c->params = *req->params;
		return 0;
	}
	if (!req->args && !req->args_field) {
		api_error_set(e, 400, "bad_request",
			      json_pack("{s:s}", "field", "delivery_system"),
			      "a tune needs a JSON body with the params");
		return -EINVAL;
	}
	if (req->args_field && !json_is_object(req->args))
		return bad_field(e, req->args_field,
				 "an object with the tune params");
	tuner_snapshot(t, &s);
	ret = command_channel_params(c->cl->cs, req->args, req->args_inline,
				     s.have_info ? &s.info : NULL, &c->params,
				     &c->channel, e);
	if (ret < 0)
		return ret;
	if (ret == 0 &&
	    params_from_json_ext(req->args, s.have_info ? &s.info : NULL,
				 req->args_inline ? inline_extra : NULL,
				 &c->params, e))
		return -EINVAL;
	if (req->args_inline)
		return parse_wait_lock(
		    json_object_get(req->args, "wait_lock_ms"), wait, e);
	return 0;
}

/* Sleep and init take nothing but, inline, an optional lease id. */
static int parse_power(const struct command_request *req, struct api_error *e)
{
	const char *key;
	json_t *v;

	if (req->args && !json_is_object(req->args)) {
		api_error_set(e, 400, "bad_request", NULL,
			      "the body must be a JSON object");
		return -EINVAL;
	}
	json_object_foreach(req->args, key, v)
	{
		if (!req->args_inline || strcmp(key, "lease_id"))
			return bad_field(e, key, "unknown field");
	}
	return 0;
}

static int lease_id_of(const struct command_request *req, const char **id,
		       struct api_error *e)
{
	json_t *v =
	    req->args_inline ? json_object_get(req->args, "lease_id") : NULL;

	if (!v)
		v = req->lease_id;
	if (v && !json_is_string(v))
		return bad_field(e, "lease_id", "must be a string");
	*id = json_string_value(v);
	return 0;
}

/* Everything but the submission; 0 or a negative errno with *now. */
static int command_check(struct command *c, const struct command_request *req,
			 struct tuner *t, struct command_result *now)
{
	struct command_client *cl = c->cl;
	struct api_error e = {0};
	unsigned int wait = 0;
	const char *lease_id = NULL;
	int ret;

	ret = check_role(cl, req->op, &e);
	if (!ret && req->op == TUNER_OP_TUNE)
		ret = parse_tune(c, req, t, &wait, &e);
	else if (!ret && req->op != TUNER_OP_STATUS)
		ret = parse_power(req, &e);
	if (!ret && req->op != TUNER_OP_STATUS)
		ret = lease_id_of(req, &lease_id, &e);
	if (ret)
		return command_fail(now, ret, &e);
	c->t0_ms = loop_now_ms();
	c->wait_lock_ms = wait;
	if (req->op == TUNER_OP_STATUS)
		return 0;
	return command_lease_check(cl->cs, c->tuner, lease_id, c->label,
				   sizeof(c->label), now);
}

static int command_start(struct command *c, struct tuner *t)
{
	if (c->op == TUNER_OP_STATUS)
		return status_join(c);
	return tuner_submit_wait(
	    t, c->op, c->op == TUNER_OP_TUNE ? &c->params : NULL, c->label,
	    c->wait_lock_ms, command_tuner_done, c);
}

static int refused(struct command *c, struct tuner *t, int err,
		   struct command_result *now)
{
	struct api_error e = {0};
	struct tuner_snapshot s;

	api_error_from_errno(&e, err, tuner_op_name(c->op));
	if (err == -EINVAL && c->op == TUNER_OP_TUNE) {
		tuner_snapshot(t, &s);
		if (s.have_info) {
			json_decref(e.details);
			e.details = chip_limits_json(&s.info);
		}
	}
	return command_fail(now, err, &e);
}

static int precheck(struct command_client *cl,
		    const struct command_request *req, struct tuner **t,
		    struct command_result *now)
{
	struct api_error e = {0};

	if (!cl->cs) {
		api_error_set(&e, 503, "unavailable", NULL,
			      "no command service here");
		return command_fail(now, -EOPNOTSUPP, &e);
	}
	*t = tuner_find(cl->cs->d, req->tuner);
	if (!*t) {
		api_error_set(
		    &e, 404, "not_found",
		    json_pack("{s:I}", "tuner", (json_int_t)req->tuner),
		    "no tuner %u", req->tuner);
		return command_fail(now, -ENOENT, &e);
	}
	if (cl->max_pending && cl->pending >= cl->max_pending) {
		api_error_set(&e, 429, "too_many_requests", NULL,
			      "%u requests are waiting already",
			      cl->max_pending);
		return command_fail(now, -EAGAIN, &e);
	}
	return 0;
}

int command_submit(struct command_client *cl, const struct command_request *req,
		   command_done_fn done, void *arg, struct command_result *now)
{
	struct api_error e = {0};
	struct command *c;
	struct tuner *t = NULL;
	int ret = precheck(cl, req, &t, now);

	if (ret)
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c) {
		api_error_set(&e, 500, "internal", NULL, "out of memory");
		return command_fail(now, -ENOMEM, &e);
	}
	*c = (struct command){.cl = cl,
			      .done = done,
			      .arg = arg,
			      .tuner = req->tuner,
			      .op = req->op};
	if (cl->label)
		snprintf(c->label, sizeof(c->label), "%s", cl->label);
	else
		snprintf(c->label, sizeof(c->label), "api%s%s",
			 cl->name ? ":" : "", cl->name ? cl->name : "");
	ret = command_check(c, req, t, now);
	if (!ret) {
		ret = command_start(c, t);
		if (ret)
			refused(c, t, ret, now);
	}
	if (ret) {
		json_decref(c->channel);
		free(c);
		return ret;
	}
	c->next = cl->commands;
	if (c->next)
		c->next->prev = c;
	cl->commands = c;
	cl->pending++;
	return 0;
}

/* ---- clients and the service ---- */

void command_client_init(struct command_client *cl, struct command_service *cs,
			 enum role role, const char *name,
			 unsigned int max_pending)
{
	*cl = (struct command_client){
	    .cs = cs, .role = role, .name = name, .max_pending = max_pending};
}

void command_client_cancel(struct command_client *cl)
{
	struct command *c;

	command_lease_cancel(cl);
	while ((c = cl->commands)) {
		tuner_forget(cl->cs->d, c);
		read_leave(c);
		command_unlink(c);
		json_decref(c->channel);
		free(c);
	}
}

struct command_service *command_service_new(struct daemon *d,
					    struct lease_table *leases)
{
	struct command_service *cs = calloc(1, sizeof(*cs));

	if (cs)
		*cs = (struct command_service){.d = d, .leases = leases};
	return cs;
}

void command_service_free(struct command_service *cs)
{
	if (!cs)
		return;
	while (cs->reads) {
		struct status_read *g = cs->reads;

		tuner_forget(cs->d, g);
		for (struct command *c = g->members; c; c = c->rnext)
			c->read = NULL;
		cs->reads = g->next;
		free(g);
	}
	free(cs);
}

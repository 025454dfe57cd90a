// SPDX-License-Identifier: MIT
/*
 * REST endpoints: the box, tuners, plugins, and the commands that go to a
 * tuner's worker (tune, status, sleep, init).  A command never blocks the
 * loop: the request is suspended, tuner_submit() queues the command, and
 * its completion (or the lock poll that follows a tune with wait_lock_ms)
 * resumes the request with the answer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "eventbus.h"
#include "lease.h"
#include "loop.h"
#include "net_api.h"
#include "plugin_host.h"
#include "rest.h"
#include "tstub_codec.h"

#ifndef TUNERD_VERSION
#define TUNERD_VERSION "0.0.0"
#endif

enum MHD_Result rest_get_box(struct rest_req *r)
{
	struct daemon *d = r->net->d;
	struct stub_session ss;
	char abi[24];
	size_t n = tuner_snapshot_all(d, NULL, 0);
	uint64_t now = api_realtime_ms();
	int64_t up = (int64_t)now - d->started_ms;

	daemon_session(d, &ss);
	snprintf(abi, sizeof(abi), "%u.%u", ss.connected ? ss.major : 1,
		 ss.connected ? ss.minor : 0);
	return rest_reply(
	    r, 200,
	    json_pack("{s:s, s:s, s:I, s:{s:s, s:b, s:s}, s:I, "
		      "s:{s:I, s:I}}",
		      "name", d->name, "version", TUNERD_VERSION, "uptime_s",
		      (json_int_t)(up > 0 ? up / 1000 : 0), "stub", "kind",
		      d->stub.transport == STUB_TRANSPORT_KERNEL ? "kernel"
								 : "sim",
		      "connected", ss.connected, "abi", abi, "tuners",
		      (json_int_t)n, "events", "oldest_seq",
		      (json_int_t)eventbus_oldest_seq(d->events), "next_seq",
		      (json_int_t)eventbus_last_seq(d->events) + 1));
}

static enum MHD_Result out_of_memory(struct rest_req *r)
{
	return rest_error(r, 500, "internal", NULL, "out of memory");
}

enum MHD_Result rest_get_tuners(struct rest_req *r)
{
	static const char head[] = "{\"tuners\":[", tail[] = "]}";
	size_t cap = 256, len = sizeof(head) - 1, n;
	char *buf = malloc(cap), *grown;
	struct tuner_snapshot s;
	const char *text;

	if (!buf)
		return out_of_memory(r);
	memcpy(buf, head, len);
	for (struct tuner *t = tuner_first(r->net->d); t; t = tuner_next(t)) {
		tuner_snapshot(t, &s);
		text = rest_tuner_text(r->net, &s, &n);
		if (!text)
			goto oom;
		if (len + n + sizeof(tail) + 1 > cap) {
			cap = (len + n + sizeof(tail) + 1) * 2;
			grown = realloc(buf, cap);
			if (!grown)
				goto oom;
			buf = grown;
		}
		if (len > sizeof(head) - 1)
			buf[len++] = ',';
		memcpy(buf + len, text, n);
		len += n;
	}
	memcpy(buf + len, tail, sizeof(tail));
	return rest_reply_text(r, 200, buf, len + sizeof(tail) - 1);
oom:
	free(buf);
	return out_of_memory(r);
}

static enum MHD_Result no_tuner(struct rest_req *r)
{
	return rest_error(r, 404, "not_found",
			  json_pack("{s:I}", "tuner", (json_int_t)r->tuner),
			  "no tuner %u", r->tuner);
}

enum MHD_Result rest_get_tuner(struct rest_req *r)
{
	struct tuner *t = tuner_find(r->net->d, r->tuner);
	struct tuner_snapshot s;
	const char *text;
	char *copy;
	size_t n;

	if (!t)
		return no_tuner(r);
	tuner_snapshot(t, &s);
	text = rest_tuner_text(r->net, &s, &n);
	copy = text ? malloc(n + 1) : NULL;
	if (!copy)
		return out_of_memory(r);
	memcpy(copy, text, n + 1);
	return rest_reply_text(r, 200, copy, n);
}

static json_t *plugin_json(const struct plugin_entry *e)
{
	const struct tstub_chip_info *ci = &e->info;
	int ok = e->error == 0;

	return json_pack(
	    "{s:s, s:o, s:o, s:o, s:i, s:b, s:o}", "file", e->file, "name",
	    ok ? json_stringn(ci->name, strnlen(ci->name, TSTUB_NAME_LEN))
	       : json_null(),
	    "vendor",
	    ok ? json_stringn(ci->vendor, strnlen(ci->vendor, TSTUB_NAME_LEN))
	       : json_null(),
	    "chip_id", ok ? json_integer(ci->chip_id) : json_null(), "abi",
	    e->abi, "loaded", e->loaded, "error",
	    ok ? json_null() : json_string(e->reason));
}

enum MHD_Result rest_get_plugins(struct rest_req *r)
{
	struct plugin_entry *list = NULL;
	json_t *arr = json_array();
	size_t n = 0;

	if (plugin_host_list(r->net->d->plugins, &list, &n) < 0) {
		json_decref(arr);
		return rest_error(r, 500, "internal", NULL,
				  "cannot list the plugins: out of memory");
	}
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, plugin_json(&list[i]));
	free(list);
	return rest_reply(r, 200, json_pack("{s:o}", "plugins", arr));
}

/* ---- commands ---- */

static void command_done(int err, const struct tstub_status *st, void *arg);

static json_t *tune_answer(struct rest_req *r)
{
	struct tuner *t = tuner_find(r->net->d, r->tuner);
	struct tuner_snapshot s = {0};

	if (t)
		tuner_snapshot(t, &s);
	return json_pack(
	    "{s:I, s:o, s:o, s:b, s:I}", "tuner", (json_int_t)r->tuner,
	    "params", params_to_json(&r->params), "status",
	    r->have_status
		? status_to_json(&r->status, (uint64_t)s.changed_at_ms)
		: json_null(),
	    "locked", r->have_status && api_status_locked(&r->status),
	    "elapsed_ms", (json_int_t)(loop_now_ms() - r->t0_ms));
}

static long lock_poll(struct loop *l, uint64_t id, void *arg)
{
	struct rest_req *r = arg;
	struct tuner *t = tuner_find(r->net->d, r->tuner);

	(void)l;
	(void)id;
	r->poll_timer = 0;
	if (!t || tuner_submit(t, TUNER_OP_STATUS, NULL, r->label, command_done,
			       r) < 0)
		rest_finish(r, 200, tune_answer(r));
	return LOOP_TIMER_DONE;
}

/* After a tune: answer now, or poll the status until lock or the
 * client's wait_lock_ms runs out. */
static void tune_progress(struct rest_req *r)
{
	uint64_t now = loop_now_ms();
	uint64_t wait;

	if ((r->have_status && api_status_locked(&r->status)) ||
	    now >= r->lock_deadline_ms) {
		rest_finish(r, 200, tune_answer(r));
		return;
	}
	wait = r->lock_deadline_ms - now;
	r->poll_timer = loop_add_timer(
	    r->net->loop, wait < REST_LOCK_POLL_MS ? wait : REST_LOCK_POLL_MS,
	    lock_poll, r);
	if (!r->poll_timer)
		rest_finish(r, 200, tune_answer(r));
}

static void command_done(int err, const struct tstub_status *st, void *arg)
{
	struct rest_req *r = arg;
	struct api_error e = {0};

	if (st) {
		r->status = *st;
		r->have_status = 1;
	}
	if (err && r->polling) {
		/* A status poll after a good tune failed: the tune stands. */
		rest_finish(r, 200, tune_answer(r));
	} else if (err) {
		api_error_from_errno(&e, err, tuner_op_name(r->op));
		rest_finish_error(r, &e);
	} else if (r->op == TUNER_OP_TUNE) {
		r->polling = 1; /* later completions are status polls */
		tune_progress(r);
	} else if (r->op == TUNER_OP_STATUS) {
		struct tuner *t = tuner_find(r->net->d, r->tuner);
		struct tuner_snapshot s = {0};

		if (t)
			tuner_snapshot(t, &s);
		rest_finish(
		    r, 200,
		    status_to_json(&r->status, (uint64_t)s.changed_at_ms));
	} else {
		rest_finish(
		    r, 200,
		    json_pack("{s:I, s:s}", "tuner", (json_int_t)r->tuner,
			      "state",
			      r->op == TUNER_OP_SLEEP ? "sleeping" : "ready"));
	}
}

const char *rest_lease_id(struct rest_req *r, json_t *body)
{
	json_t *v = json_object_get(body, "lease_id");

	if (json_is_string(v))
		return json_string_value(v);
	if (!v) {
		const char *h = MHD_lookup_connection_value(
		    r->conn, MHD_HEADER_KIND, "X-Tunerd-Lease");

		if (h)
			return h;
		return MHD_lookup_connection_value(
		    r->conn, MHD_GET_ARGUMENT_KIND, "lease_id");
	}
	return NULL;
}

json_t *rest_lease_details(const struct lease *l)
{
	return json_pack("{s:s, s:i, s:o}", "holder", l->holder, "priority",
			 l->priority, "expires",
			 api_time_json(l->expires_wall));
}

static int parse_tune(struct rest_req *r, json_t *body,
		      const struct tuner_snapshot *s, struct api_error *e)
{
	static const char *const extra[] = {"lease_id", "wait_lock_ms", NULL};
	json_t *w = json_object_get(body, "wait_lock_ms");

	if (!body) {
		api_error_set(e, 400, "bad_request",
			      json_pack("{s:s}", "field", "delivery_system"),
			      "a tune needs a JSON body with the params");
		return -1;
	}
	if (params_from_json_ext(body, s->have_info ? &s->info : NULL, extra,
				 &r->params, e))
		return -1;
	if (w && (!json_is_integer(w) || json_integer_value(w) < 0 ||
		  json_integer_value(w) > REST_WAIT_LOCK_MAX_MS)) {
		api_error_set(e, 400, "bad_request",
			      json_pack("{s:s}", "field", "wait_lock_ms"),
			      "wait_lock_ms: an integer 0..%d",
			      REST_WAIT_LOCK_MAX_MS);
		return -1;
	}
	r->wait_lock_ms = w ? (unsigned int)json_integer_value(w) : 0;
	return 0;
}

/* Sleep and init take nothing but an optional lease id. */
static int parse_power(json_t *body, struct api_error *e)
{
	const char *key;
	json_t *v;

	if (body && !json_is_object(body)) {
		api_error_set(e, 400, "bad_request", NULL,
			      "the body must be a JSON object");
		return -1;
	}
	json_object_foreach(body, key, v)
	{
		if (strcmp(key, "lease_id")) {
			api_error_set(e, 400, "bad_request",
				      json_pack("{s:s}", "field", key),
				      "%s: unknown field", key);
			return -1;
		}
	}
	return 0;
}

static int check_lease(struct rest_req *r, json_t *body, struct api_error *e)
{
	json_t *v = json_object_get(body, "lease_id");
	const char *id = rest_lease_id(r, body);
	struct lease l;

	if (v && !json_is_string(v)) {
		api_error_set(e, 400, "bad_request",
			      json_pack("{s:s}", "field", "lease_id"),
			      "lease_id: must be a string");
		return -1;
	}
	if (lease_allows(r->net->leases, r->tuner, id, &l)) {
		if (id && lease_get(r->net->leases, r->tuner, &l))
			snprintf(r->label, sizeof(r->label), "api:%.*s",
				 TUNER_LABEL_LEN - 5, l.holder);
		return 0;
	}
	api_error_set(e, 409, "lease_conflict", rest_lease_details(&l),
		      "tuner %u is leased by \"%s\" (priority %d)", r->tuner,
		      l.holder, l.priority);
	return -1;
}

static enum MHD_Result submit(struct rest_req *r, struct tuner *t)
{
	struct api_error e = {0};
	int ret;

	r->t0_ms = loop_now_ms();
	r->lock_deadline_ms = r->t0_ms + r->wait_lock_ms;
	r->in_submit = 1;
	ret = tuner_submit(t, r->op, r->op == TUNER_OP_TUNE ? &r->params : NULL,
			   r->label, command_done, r);
	r->in_submit = 0;
	if (ret < 0) {
		api_error_from_errno(&e, ret, tuner_op_name(r->op));
		if (ret == -EINVAL && r->op == TUNER_OP_TUNE) {
			struct tuner_snapshot s;

			tuner_snapshot(t, &s);
			if (s.have_info)
				e.details = chip_limits_json(&s.info);
		}
		return rest_api_error(r, &e);
	}
	return rest_suspend(r);
}

enum MHD_Result rest_tuner_command(struct rest_req *r)
{
	struct tuner *t = tuner_find(r->net->d, r->tuner);
	struct api_error e = {0};
	struct tuner_snapshot s;
	json_t *body = NULL;
	int bad;

	if (!t)
		return no_tuner(r);
	tuner_snapshot(t, &s);
	r->op = r->route == ROUTE_TUNE    ? TUNER_OP_TUNE
		: r->route == ROUTE_SLEEP ? TUNER_OP_SLEEP
		: r->route == ROUTE_INIT  ? TUNER_OP_INIT
					  : TUNER_OP_STATUS;
	snprintf(r->label, sizeof(r->label), "api%s%s",
		 r->who.token_name ? ":" : "",
		 r->who.token_name ? r->who.token_name : "");
	if (r->op != TUNER_OP_STATUS) {
		if (rest_body_json(r, &body, &e))
			return rest_api_error(r, &e);
		bad = r->op == TUNER_OP_TUNE ? parse_tune(r, body, &s, &e)
					     : parse_power(body, &e);
		if (!bad)
			bad = check_lease(r, body, &e);
		json_decref(body);
		if (bad)
			return rest_api_error(r, &e);
	}
	if (r->op == TUNER_OP_STATUS)
		return rest_status_get(r);
	return submit(r, t);
}

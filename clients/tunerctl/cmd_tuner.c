// SPDX-License-Identifier: MIT
/*
 * cmd_tuner.c - commands on one tuner of one box: tune, status, sleep,
 * init, lease and release.
 */
#include "http.h"
#include "show.h"
#include "tunerctl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ctl_tuner_request(const struct ctl_target *t, const char *method,
		      const char *what, json_t *body, const char *lease,
		      long timeout_ms, json_t **answer)
{
	struct ctl_req req;
	char path[128], hdr[160];
	int ret = CTL_EXIT_API;

	*answer = NULL;
	snprintf(path, sizeof(path), "/api/v1/tuners/%u%s", t->id, what);
	if (lease)
		snprintf(hdr, sizeof(hdr), "X-Tunerd-Lease: %s", lease);
	if (ctl_req_init(&req, t->box, method, path, body, timeout_ms) ||
	    (lease && ctl_req_header(&req, hdr))) {
		ctl_err("out of memory");
		goto out;
	}
	ctl_req_perform(&req);
	ret = ctl_req_check(&req);
	if (ret || req.status == 204)
		goto out;
	*answer = ctl_req_json(&req);
	if (!*answer)
		ret = CTL_EXIT_API;
out:
	ctl_req_free(&req);
	return ret;
}

static void target_label(const struct ctl_target *t, char *out, size_t n)
{
	snprintf(out, n, "%s:%u", t->box->name, t->id);
}

static int parse_rate(const char *opt, const char *s, json_t *body,
		      const char *key)
{
	uint64_t hz;

	if (!s)
		return 0;
	if (ctl_parse_hz(s, &hz) || hz == 0 || hz > INT64_MAX) {
		ctl_err("bad %s '%s' (Hz, or with k/M/G)", opt, s);
		return -1;
	}
	json_object_set_new(body, key, json_integer((json_int_t)hz));
	return 0;
}

/* The tune body: Params (or a channel) plus lease_id and wait_lock_ms. */
static json_t *tune_body(const struct ctl_opts *o)
{
	json_t *body = json_object();
	char sys[32];
	uint64_t hz;
	size_t i;

	if (o->channel || o->lcn >= 0) {
		if (o->channel)
			json_object_set_new(body, "channel",
					    json_string(o->channel));
		else
			json_object_set_new(body, "lcn", json_integer(o->lcn));
		goto common;
	}
	for (i = 0; o->args[1][i] && i < sizeof(sys) - 1; i++)
		sys[i] = (char)toupper((unsigned char)o->args[1][i]);
	sys[i] = '\0';
	if (ctl_parse_hz(o->args[2], &hz) || hz == 0 || hz > INT64_MAX) {
		ctl_err("bad frequency '%s' (Hz, or with k/M/G: 474M)",
			o->args[2]);
		goto fail;
	}
	json_object_set_new(body, "delivery_system", json_string(sys));
	json_object_set_new(body, "frequency", json_integer((json_int_t)hz));
	if (parse_rate("--bandwidth", o->bandwidth, body, "bandwidth") ||
	    parse_rate("--symbol-rate", o->symbol_rate, body, "symbol_rate"))
		goto fail;
	if (o->standard)
		json_object_set_new(body, "standard", json_string(o->standard));
common:
	if (o->lease)
		json_object_set_new(body, "lease_id", json_string(o->lease));
	if (o->wait_lock_ms >= 0)
		json_object_set_new(body, "wait_lock_ms",
				    json_integer(o->wait_lock_ms));
	return body;
fail:
	json_decref(body);
	return NULL;
}

/* The tune answer; a tune by channel says which channel first. */
static void print_tuned_channel(const char *label, json_t *answer)
{
	json_t *ch = json_object_get(answer, "channel");
	json_t *lcn = json_object_get(ch, "lcn");
	json_t *sid = json_object_get(ch, "service_id");
	const char *name = json_string_value(json_object_get(ch, "name"));

	if (name) {
		printf("%s  channel %s", label, name);
		if (json_is_integer(lcn))
			printf("  lcn %lld",
			       (long long)json_integer_value(lcn));
		if (json_is_integer(sid))
			printf("  service %lld",
			       (long long)json_integer_value(sid));
		printf("\n");
	}
	ctl_print_status(label, json_object_get(answer, "params"),
			 json_object_get(answer, "status"), answer);
}

int ctl_cmd_tune(const struct ctl_boxes *boxes, const struct ctl_opts *o)
{
	struct ctl_target t;
	json_t *body, *answer;
	char label[128];
	int ret;

	if (ctl_target_parse(boxes, o->args[0], &t))
		return CTL_EXIT_USAGE;
	body = tune_body(o);
	if (!body)
		return CTL_EXIT_USAGE;
	/* the box answers only once the tune (and the lock wait) is done */
	ret = ctl_tuner_request(&t, "POST", "/tune", body, NULL,
				o->timeout_ms +
				    (o->wait_lock_ms > 0 ? o->wait_lock_ms : 0),
				&answer);
	json_decref(body);
	if (ret)
		return ret;
	target_label(&t, label, sizeof(label));
	if (o->json)
		ctl_print_json(answer);
	else
		print_tuned_channel(label, answer);
	json_decref(answer);
	return CTL_EXIT_OK;
}

int ctl_cmd_status(const struct ctl_boxes *boxes, const struct ctl_opts *o)
{
	struct ctl_target t;
	json_t *answer;
	char label[128];
	int ret;

	if (ctl_target_parse(boxes, o->args[0], &t))
		return CTL_EXIT_USAGE;
	ret = ctl_tuner_request(&t, "GET", "/status", NULL, NULL, o->timeout_ms,
				&answer);
	if (ret)
		return ret;
	target_label(&t, label, sizeof(label));
	if (o->json)
		ctl_print_json(answer);
	else
		ctl_print_status(label, NULL, answer, NULL);
	json_decref(answer);
	return CTL_EXIT_OK;
}

/* op is "sleep" or "init". */
int ctl_cmd_power(const struct ctl_boxes *boxes, const struct ctl_opts *o,
		  const char *op)
{
	struct ctl_target t;
	json_t *body = json_object(), *answer;
	char path[16], label[128];
	const char *state;
	int ret;

	if (ctl_target_parse(boxes, o->args[0], &t)) {
		json_decref(body);
		return CTL_EXIT_USAGE;
	}
	if (o->lease)
		json_object_set_new(body, "lease_id", json_string(o->lease));
	snprintf(path, sizeof(path), "/%s", op);
	ret = ctl_tuner_request(&t, "POST", path, body, NULL, o->timeout_ms,
				&answer);
	json_decref(body);
	if (ret)
		return ret;
	target_label(&t, label, sizeof(label));
	state = json_string_value(json_object_get(answer, "state"));
	if (o->json)
		ctl_print_json(answer);
	else
		printf("%s %s\n", label, state ? state : "?");
	json_decref(answer);
	return CTL_EXIT_OK;
}

/* Who holds a lease taken without --holder: "tunerctl:user@host". */
static void default_holder(char *out, size_t n)
{
	const char *user = getenv("USER");
	char host[64] = "";

	gethostname(host, sizeof(host) - 1);
	snprintf(out, n, "tunerctl:%s@%s", user && *user ? user : "user",
		 *host ? host : "localhost");
}

static json_t *lease_body(const struct ctl_opts *o)
{
	json_t *body = json_object();
	char holder[65];

	if (o->renew) {
		json_object_set_new(body, "lease_id", json_string(o->renew));
	} else {
		if (!o->holder)
			default_holder(holder, sizeof(holder));
		json_object_set_new(
		    body, "holder",
		    json_string(o->holder ? o->holder : holder));
		if (o->priority >= 0)
			json_object_set_new(body, "priority",
					    json_integer(o->priority));
	}
	if (o->ttl_s >= 0)
		json_object_set_new(body, "ttl_s", json_integer(o->ttl_s));
	return body;
}

int ctl_cmd_lease(const struct ctl_boxes *boxes, const struct ctl_opts *o)
{
	struct ctl_target t;
	json_t *body, *answer;
	const char *id;
	int ret;

	if (ctl_target_parse(boxes, o->args[0], &t))
		return CTL_EXIT_USAGE;
	if (o->renew && (o->holder || o->priority >= 0)) {
		ctl_err("--renew keeps the lease's holder and priority; "
			"give only --ttl");
		return CTL_EXIT_USAGE;
	}
	body = lease_body(o);
	ret = ctl_tuner_request(&t, "POST", "/lease", body, NULL, o->timeout_ms,
				&answer);
	json_decref(body);
	if (ret)
		return ret;
	id = json_string_value(json_object_get(answer, "lease_id"));
	if (o->json)
		ctl_print_json(answer);
	else
		printf("%s\n", id ? id : (o->renew ? o->renew : "?"));
	fflush(stdout);
	json_decref(answer);
	return CTL_EXIT_OK;
}

int ctl_cmd_release(const struct ctl_boxes *boxes, const struct ctl_opts *o)
{
	struct ctl_target t;
	json_t *answer, *out;
	char label[128];
	int ret;

	if (ctl_target_parse(boxes, o->args[0], &t))
		return CTL_EXIT_USAGE;
	ret = ctl_tuner_request(&t, "DELETE", "/lease", NULL, o->args[1],
				o->timeout_ms, &answer);
	if (ret)
		return ret;
	json_decref(answer); /* 204: normally none */
	target_label(&t, label, sizeof(label));
	if (o->json) {
		out = json_pack("{s:I,s:s,s:b}", "tuner", (json_int_t)t.id,
				"lease_id", o->args[1], "released", 1);
		ctl_print_json(out);
		json_decref(out);
	} else {
		printf("%s lease released\n", label);
	}
	fflush(stdout);
	return CTL_EXIT_OK;
}

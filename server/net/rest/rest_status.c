// SPDX-License-Identifier: MIT
/*
 * GET /api/v1/tuners/{id}/status: a fresh status, read through the
 * tuner's worker.
 *
 * Requests for the same tuner share status reads.  At most two groups
 * exist per tuner: the one whose read is in flight, and the one gathering
 * the requests that arrived since; when the read in flight ends, its
 * requests get its answer and the gathering group's read is queued.  So
 * every answer comes from a read that started after its request arrived
 * (fresh), a tuner never sees more than two status reads queued however
 * many clients poll it, and N clients cost one worker round trip, not N.
 *
 * ?max_age_ms=N lets a poller accept the last status read if it is at most
 * N ms old (the status sampler keeps one recent): on hardware every fresh
 * read is I2C traffic, and a dashboard polling many tuners does not need
 * a new one per request.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_api.h"
#include "rest.h"

struct status_group {
	struct net_api *net;
	uint32_t tuner;
	int in_flight;
	struct rest_req *members; /* linked by gnext */
	char label[TUNER_LABEL_LEN];
	struct status_group *next; /* net->status_groups */
};

static void group_unlink(struct status_group *g)
{
	struct status_group **pp = &g->net->status_groups;

	while (*pp && *pp != g)
		pp = &(*pp)->next;
	if (*pp)
		*pp = g->next;
}

static struct status_group *group_find(struct net_api *net, uint32_t tuner,
				       int in_flight)
{
	for (struct status_group *g = net->status_groups; g; g = g->next)
		if (g->tuner == tuner && g->in_flight == in_flight)
			return g;
	return NULL;
}

/* Give every member its answer (st when err is 0); g is freed. */
static void group_answer(struct status_group *g, int err,
			 const struct tstub_status *st)
{
	struct tuner *t = tuner_find(g->net->d, g->tuner);
	struct tuner_snapshot s = {0};
	struct rest_req *r, *next;
	struct api_error e = {0};

	if (t)
		tuner_snapshot(t, &s);
	group_unlink(g);
	for (r = g->members; r; r = next) {
		next = r->gnext;
		r->group = NULL;
		r->gnext = NULL;
		if (err) {
			api_error_from_errno(&e, err, "status");
			rest_finish_error(r, &e);
		} else {
			rest_finish(
			    r, 200,
			    status_to_json(st, (uint64_t)s.changed_at_ms));
		}
	}
	free(g);
}

static void group_done(int err, const struct tstub_status *st, void *arg);

/* Queue g's read; on refusal every member gets the error. */
static void group_submit(struct status_group *g)
{
	struct tuner *t = tuner_find(g->net->d, g->tuner);
	int ret;

	g->in_flight = 1;
	ret =
	    t ? tuner_submit(t, TUNER_OP_STATUS, NULL, g->label, group_done, g)
	      : -ENODEV;
	if (ret < 0)
		group_answer(g, ret, NULL);
}

static void group_done(int err, const struct tstub_status *st, void *arg)
{
	struct status_group *g = arg, *next;
	struct net_api *net = g->net;
	uint32_t tuner = g->tuner;

	if (!st && !err)
		err = -EIO;
	group_answer(g, err, st);
	next = group_find(net, tuner, 0);
	if (next)
		group_submit(next);
}

#define STATUS_MAX_AGE_LIMIT_MS 60000

/* Parse ?max_age_ms: 0 when absent, -1 when malformed or too large. */
static long status_max_age(struct rest_req *r)
{
	const char *v = MHD_lookup_connection_value(
	    r->conn, MHD_GET_ARGUMENT_KIND, "max_age_ms");
	char *end;
	long ms;

	if (!v)
		return 0;
	if (*v < '0' || *v > '9')
		return -1;
	ms = strtol(v, &end, 10);
	return *end || ms > STATUS_MAX_AGE_LIMIT_MS ? -1 : ms;
}

/* The text of a tuner's last status read, made again only when another
 * read came in: building it with jansson costs more than the rest of the
 * request. */
struct status_text {
	uint32_t tuner;
	int64_t status_at_ms;
	int64_t changed_at_ms;
	char *text;
	size_t len;
	struct status_text *next; /* net->status_texts */
};

static struct status_text *status_text_of(struct net_api *net,
					  const struct tuner_snapshot *s)
{
	struct status_text *c;

	for (c = net->status_texts; c && c->tuner != s->id; c = c->next)
		;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->tuner = s->id;
		c->next = net->status_texts;
		net->status_texts = c;
	}
	if (c->text && c->status_at_ms == s->status_at_ms &&
	    c->changed_at_ms == s->changed_at_ms)
		return c;
	json_t *o = status_to_json(&s->status, (uint64_t)s->changed_at_ms);

	free(c->text);
	c->text = o ? json_dumps(o, API_JSON_DUMP_FLAGS) : NULL;
	json_decref(o);
	c->len = c->text ? strlen(c->text) : 0;
	c->status_at_ms = s->status_at_ms;
	c->changed_at_ms = s->changed_at_ms;
	return c->text ? c : NULL;
}

/* Answer from the last status read when it is recent enough; 0 if not. */
static int status_from_cache(struct rest_req *r, long max_age_ms,
			     enum MHD_Result *ret)
{
	struct tuner *t = tuner_find(r->net->d, r->tuner);
	struct tuner_snapshot s = {0};
	struct status_text *c;
	char *copy;
	int64_t age;

	if (!t || max_age_ms <= 0)
		return 0;
	tuner_snapshot(t, &s);
	age = (int64_t)api_realtime_ms() - s.status_at_ms;
	if (!s.have_status || s.state != TUNER_READY || age < 0 ||
	    age > max_age_ms)
		return 0;
	c = status_text_of(r->net, &s);
	copy = c ? malloc(c->len + 1) : NULL;
	if (!copy)
		return 0;
	memcpy(copy, c->text, c->len + 1);
	*ret = rest_reply_text(r, 200, copy, c->len);
	return 1;
}

enum MHD_Result rest_status_get(struct rest_req *r)
{
	struct net_api *net = r->net;
	struct status_group *g = group_find(net, r->tuner, 0);
	int submit_now = !g && !group_find(net, r->tuner, 1);
	long max_age_ms = status_max_age(r);
	enum MHD_Result ret;

	if (max_age_ms < 0)
		return rest_error(r, 400, "bad_request",
				  json_pack("{s:s}", "field", "max_age_ms"),
				  "max_age_ms must be 0..%d",
				  STATUS_MAX_AGE_LIMIT_MS);
	if (status_from_cache(r, max_age_ms, &ret))
		return ret;
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return rest_error(r, 500, "internal", NULL,
					  "out of memory");
		g->net = net;
		g->tuner = r->tuner;
		snprintf(g->label, sizeof(g->label), "%s", r->label);
		g->next = net->status_groups;
		net->status_groups = g;
	}
	r->group = g;
	r->gnext = g->members;
	g->members = r;
	r->in_submit = 1;
	if (submit_now)
		group_submit(g);
	r->in_submit = 0;
	if (r->finished)
		return rest_reply(r, r->code, json_incref(r->reply));
	return rest_suspend(r);
}

void rest_status_forget(struct rest_req *r)
{
	struct rest_req **pp;

	if (!r->group)
		return;
	for (pp = &r->group->members; *pp; pp = &(*pp)->gnext)
		if (*pp == r) {
			*pp = r->gnext;
			break;
		}
	r->group = NULL;
}

void rest_status_cancel(struct net_api *net)
{
	while (net->status_texts) {
		struct status_text *c = net->status_texts;

		net->status_texts = c->next;
		free(c->text);
		free(c);
	}
	while (net->status_groups) {
		struct status_group *g = net->status_groups;

		tuner_forget(net->d, g);
		group_answer(g, -ESHUTDOWN, NULL);
	}
}

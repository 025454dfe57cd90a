// SPDX-License-Identifier: MIT
/*
 * GET /api/v1/tuners/{id}/status: a fresh status, read through the
 * tuner's worker by the command service (which shares one read between
 * the requests that wait for it).
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

#include "command.h"
#include "net_api.h"
#include "rest.h"

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

static void status_done(struct command_result *res, void *arg)
{
	rest_finish(arg, res->status, res->body);
}

enum MHD_Result rest_status_get(struct rest_req *r)
{
	struct command_request req = {.tuner = r->tuner, .op = TUNER_OP_STATUS};
	long max_age_ms = status_max_age(r);
	struct command_result res;
	enum MHD_Result ret;

	if (max_age_ms < 0)
		return rest_error(r, 400, "bad_request",
				  json_pack("{s:s}", "field", "max_age_ms"),
				  "max_age_ms must be 0..%d",
				  STATUS_MAX_AGE_LIMIT_MS);
	if (status_from_cache(r, max_age_ms, &ret))
		return ret;
	if (command_submit(&r->client, &req, status_done, r, &res))
		return rest_reply(r, res.status, res.body);
	return rest_suspend(r);
}

void rest_status_cancel(struct net_api *net)
{
	while (net->status_texts) {
		struct status_text *c = net->status_texts;

		net->status_texts = c->next;
		free(c->text);
		free(c);
	}
}

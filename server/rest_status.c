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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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

enum MHD_Result rest_status_get(struct rest_req *r)
{
	struct net_api *net = r->net;
	struct status_group *g = group_find(net, r->tuner, 0);
	int submit_now = !g && !group_find(net, r->tuner, 1);

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
	while (net->status_groups) {
		struct status_group *g = net->status_groups;

		tuner_forget(net->d, g);
		group_answer(g, -ESHUTDOWN, NULL);
	}
}

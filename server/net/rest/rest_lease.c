// SPDX-License-Identifier: MIT
/*
 * POST and DELETE /api/v1/tuners/{id}/lease, translated for the command
 * service (which checks, acts and shapes the answer).  A change is
 * answered once it is saved: the request is suspended until then, like
 * a tune.
 */
#include <string.h>

#include "command.h"
#include "net_api.h"
#include "rest.h"

static void lease_done(struct command_result *res, void *arg)
{
	rest_finish(arg, res->status, res->body);
}

enum MHD_Result rest_lease(struct rest_req *r)
{
	struct command_service *cs = r->net->commands;
	struct command_result res;
	struct api_error e = {0};
	json_t *body;
	int ret;

	if (!command_lease_target(cs, r->tuner))
		return rest_error(
		    r, 404, "not_found",
		    json_pack("{s:I}", "tuner", (json_int_t)r->tuner),
		    "no tuner %u", r->tuner);
	command_client_init(&r->client, cs, r->who.role, r->who.token_name, 1);
	if (!strcmp(r->method, "DELETE")) {
		ret =
		    command_lease_delete(&r->client, r->tuner, rest_lease_id(r),
					 lease_done, r, &res);
	} else {
		if (rest_body_json(r, &body, &e))
			return rest_api_error(r, &e);
		ret = command_lease_post(&r->client, r->tuner, body, lease_done,
					 r, &res);
		json_decref(body);
	}
	if (ret)
		return rest_reply(r, res.status, res.body);
	return rest_suspend(r);
}

// SPDX-License-Identifier: MIT
/*
 * POST and DELETE /api/v1/tuners/{id}/lease, translated for the command
 * service (which checks, acts and shapes the answer).
 */
#include <string.h>

#include "command.h"
#include "net_api.h"
#include "rest.h"

enum MHD_Result rest_lease(struct rest_req *r)
{
	struct command_service *cs = r->net->commands;
	struct command_result res;
	struct api_error e = {0};
	json_t *body;

	if (!command_lease_target(cs, r->tuner))
		return rest_error(
		    r, 404, "not_found",
		    json_pack("{s:I}", "tuner", (json_int_t)r->tuner),
		    "no tuner %u", r->tuner);
	if (!strcmp(r->method, "DELETE")) {
		command_lease_delete(cs, r->tuner, rest_lease_id(r), &res);
		return rest_reply(r, res.status, res.body);
	}
	if (rest_body_json(r, &body, &e))
		return rest_api_error(r, &e);
	command_lease_post(cs, r->tuner, body, &res);
	json_decref(body);
	return rest_reply(r, res.status, res.body);
}

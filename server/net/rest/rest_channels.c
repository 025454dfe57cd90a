// SPDX-License-Identifier: MIT
/*
 * REST endpoints of channels: a tuner's scan (POST starts, GET reads,
 * DELETE cancels) and the channel list (GET as JSON or as a dvbv5
 * channel file, PUT to replace it from either).  The work is the scan
 * hub's and the channel list's (server/channels/); this only translates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "channel_list.h"
#include "net_api.h"
#include "rest.h"
#include "scan_job.h"

static const char *format_of(struct rest_req *r)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
					   "format");
}

int rest_channels_text_body(struct rest_req *r)
{
	const char *f = format_of(r);

	return r->route == ROUTE_CHANNELS && !strcmp(r->method, "PUT") && f &&
	       !strcmp(f, "dvbv5");
}

static enum MHD_Result answer(struct rest_req *r, struct command_result *res)
{
	return rest_reply(r, res->status, res->body);
}

static enum MHD_Result forbidden(struct rest_req *r, const char *what)
{
	return rest_error(r, 403, "forbidden",
			  json_pack("{s:s,s:s}", "required_role", "operator",
				    "role", role_name(r->who.role)),
			  "%s needs the operator role", what);
}

enum MHD_Result rest_scan(struct rest_req *r)
{
	struct scan_caller who = {.role = r->who.role,
				  .name = r->who.token_name,
				  .lease_id = rest_lease_id(r)};
	struct command_result res = {0};
	struct api_error e = {0};
	json_t *body = NULL;

	if (!r->net->scans)
		return rest_error(r, 503, "unavailable", NULL, "no scans here");
	if (!strcmp(r->method, "GET") || !strcmp(r->method, "HEAD")) {
		scan_get(r->net->scans, r->tuner, &res);
		return answer(r, &res);
	}
	if (!strcmp(r->method, "DELETE")) {
		scan_cancel(r->net->scans, r->tuner, &who, &res);
		return answer(r, &res);
	}
	if (rest_body_json(r, &body, &e))
		return rest_api_error(r, &e);
	scan_start(r->net->scans, r->tuner, body, &who, &res);
	json_decref(body);
	return answer(r, &res);
}

static enum MHD_Result reply_dvbv5(struct rest_req *r)
{
	char *text = NULL;
	size_t len = 0;

	if (channel_dvbv5_export(r->net->channels, &text, &len))
		return rest_error(r, 500, "internal", NULL,
				  "cannot write the dvbv5 channel file");
	return rest_reply_typed(r, 200, text, len, "text/plain; charset=utf-8");
}

static enum MHD_Result list(struct rest_req *r)
{
	return rest_reply(r, 200,
			  json_pack("{s:O}", "channels",
				    channel_list_entries(r->net->channels)));
}

static enum MHD_Result put_channels(struct rest_req *r, int dvbv5)
{
	struct api_error e = {0};
	json_t *body = NULL, *arr = NULL;
	int err;

	if (r->who.role < ROLE_OPERATOR)
		return forbidden(r, "replacing the channel list");
	if (dvbv5)
		err = channel_dvbv5_import(r->body ? r->body : "", r->body_len,
					   &arr, &e);
	else if ((err = rest_body_json(r, &body, &e)) == 0) {
		arr = json_incref(json_object_get(body, "channels"));
		if (!json_is_object(body) || json_object_size(body) != 1 ||
		    !arr) {
			api_error_set(&e, 400, "bad_request",
				      json_pack("{s:s}", "field", "channels"),
				      "the body is {\"channels\":[...]}");
			err = -EINVAL;
		}
	}
	if (!err)
		err = channel_list_set(r->net->channels, arr, &e);
	json_decref(arr);
	json_decref(body);
	if (err == -EINVAL || (err && e.status))
		return rest_api_error(r, &e);
	if (err) /* in memory, not on disk: it holds until the daemon stops */
		return rest_error(r, 503, "unavailable", NULL,
				  "the channel list could not be saved: %s",
				  strerror(-err));
	return list(r);
}

enum MHD_Result rest_channels(struct rest_req *r)
{
	const char *f = format_of(r);
	int dvbv5 = f && !strcmp(f, "dvbv5");

	if (!r->net->channels)
		return rest_error(r, 503, "unavailable", NULL,
				  "no channel list here");
	if (f && !dvbv5 && strcmp(f, "json"))
		return rest_error(r, 400, "bad_request",
				  json_pack("{s:s}", "field", "format"),
				  "format: json or dvbv5");
	if (!strcmp(r->method, "PUT"))
		return put_channels(r, dvbv5);
	return dvbv5 ? reply_dvbv5(r) : list(r);
}

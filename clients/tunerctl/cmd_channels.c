// SPDX-License-Identifier: MIT
/*
 * cmd_channels.c - `tunerctl channels`: a box's channel list
 * (GET /api/v1/channels) as a table, as JSON, or as the dvbv5 channel file
 * the box writes (?format=dvbv5), and the table shared with `scan`.
 */
#include "channels.h"
#include "http.h"
#include "show.h"
#include "tunerctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longer names are cut in the table (never in --json or --dvbv5). */
#define NAME_COLUMN_MAX 32

static int name_width(json_t *channels)
{
	size_t i, w = 4;
	json_t *ch;

	json_array_foreach(channels, i, ch)
	{
		const char *name =
		    json_string_value(json_object_get(ch, "name"));
		size_t len = name ? strlen(name) : 1;

		if (len > w)
			w = len;
	}
	return (int)(w > NAME_COLUMN_MAX ? NAME_COLUMN_MAX : w);
}

static void print_number(json_t *v, int width)
{
	if (json_is_integer(v))
		printf("%*lld", width, (long long)json_integer_value(v));
	else
		printf("%*s", width, "-");
}

void ctl_print_channels(json_t *channels)
{
	int w = name_width(channels);
	size_t i;
	json_t *ch;

	printf("%5s  %-*s  %5s  %-5s  %s\n", "LCN", w, "NAME", "SID", "TYPE",
	       "MULTIPLEX");
	json_array_foreach(channels, i, ch)
	{
		json_t *params = json_object_get(ch, "params");
		const char *name =
		    json_string_value(json_object_get(ch, "name"));
		const char *type =
		    json_string_value(json_object_get(ch, "type"));
		const char *sys = json_string_value(
		    json_object_get(params, "delivery_system"));
		char mhz[32];

		ctl_fmt_json_mhz(json_object_get(params, "frequency"), mhz,
				 sizeof(mhz));
		print_number(json_object_get(ch, "lcn"), 5);
		printf("  %-*.*s  ", w, w, name ? name : "-");
		print_number(json_object_get(ch, "service_id"), 5);
		printf("  %-5s  %s %s MHz\n", type ? type : "-",
		       sys ? sys : "-", mhz);
	}
	fflush(stdout);
}

/* GET /api/v1/channels?format=dvbv5: the file as the box wrote it. */
static int print_dvbv5(const struct ctl_box *box, const struct ctl_opts *o)
{
	struct ctl_req req;
	int ret = CTL_EXIT_API;

	if (ctl_req_init(&req, box, "GET", "/api/v1/channels?format=dvbv5",
			 NULL, o->timeout_ms)) {
		ctl_err("out of memory");
		goto out;
	}
	ctl_req_perform(&req);
	ret = ctl_req_check(&req);
	if (ret)
		goto out;
	if (req.resp.len &&
	    fwrite(req.resp.data, 1, req.resp.len, stdout) != req.resp.len)
		ret = CTL_EXIT_API;
	fflush(stdout);
out:
	ctl_req_free(&req);
	return ret;
}

int ctl_cmd_channels(const struct ctl_boxes *boxes, const struct ctl_opts *o)
{
	const struct ctl_box *box =
	    ctl_box_pick(boxes, o->nargs ? o->args[0] : NULL);
	struct ctl_req req;
	json_t *answer = NULL, *list;
	int ret = CTL_EXIT_API;

	if (!box)
		return CTL_EXIT_USAGE;
	if (o->dvbv5)
		return print_dvbv5(box, o);
	if (ctl_req_init(&req, box, "GET", "/api/v1/channels", NULL,
			 o->timeout_ms)) {
		ctl_err("out of memory");
		goto out;
	}
	ctl_req_perform(&req);
	ret = ctl_req_check(&req);
	if (ret)
		goto out;
	answer = ctl_req_json(&req);
	list = json_object_get(answer, "channels");
	if (!json_is_array(list)) {
		ctl_err("%s: the answer has no channel list", box->name);
		ret = CTL_EXIT_API;
		goto out;
	}
	if (o->json)
		ctl_print_json(answer);
	else
		ctl_print_channels(list);
out:
	json_decref(answer);
	ctl_req_free(&req);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * REST endpoints: the box, tuners, plugins, and the commands that go to a
 * tuner's worker (tune, status, sleep, init).  A command is the command
 * service's: the request is suspended and the service's answer resumes
 * it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "daemon.h"
#include "eventbus.h"
#include "net_api.h"
#include "plugin_host.h"
#include "rest.h"
#include "tstub_codec.h"
#include "tunerd_version.h"

enum MHD_Result rest_get_box(struct rest_req *r)
{
	struct daemon *d = r->net->d;
	const struct stub_session ss = d->session;
	char abi[24];
	size_t n = 0;
	uint64_t now = api_realtime_ms();
	int64_t up = (int64_t)now - d->started_ms;

	for (struct tuner *t = tuner_first(d); t; t = tuner_next(t))
		n++;
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
	return rest_reply_tuners(r);
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

/* ---- commands: translated for the command service ---- */

static void command_done(struct command_result *res, void *arg)
{
	rest_finish(arg, res->status, res->body);
}

/* The lease id beside the body: X-Tunerd-Lease, else ?lease_id=. */
const char *rest_lease_id(struct rest_req *r)
{
	const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
						    "X-Tunerd-Lease");

	return h ? h
		 : MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
					       "lease_id");
}

enum MHD_Result rest_tuner_command(struct rest_req *r)
{
	struct command_request req = {.tuner = r->tuner, .args_inline = 1};
	struct command_result res;
	struct api_error e = {0};
	const char *lease_id;
	json_t *body = NULL;
	int ret;

	if (!tuner_find(r->net->d, r->tuner))
		return no_tuner(r); /* before a body's errors, as always */
	command_client_init(&r->client, r->net->commands, r->who.role,
			    r->who.token_name, 1);
	if (r->route == ROUTE_STATUS)
		return rest_status_get(r);
	req.op = r->route == ROUTE_TUNE    ? TUNER_OP_TUNE
		 : r->route == ROUTE_SLEEP ? TUNER_OP_SLEEP
					   : TUNER_OP_INIT;
	if (rest_body_json(r, &body, &e))
		return rest_api_error(r, &e);
	lease_id = rest_lease_id(r);
	req.args = body;
	req.lease_id = lease_id ? json_string_nocheck(lease_id) : NULL;
	ret = command_submit(&r->client, &req, command_done, r, &res);
	json_decref(req.lease_id);
	json_decref(body);
	if (ret)
		return rest_reply(r, res.status, res.body);
	return rest_suspend(r);
}

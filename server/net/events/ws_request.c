// SPDX-License-Identifier: MIT
/*
 * What a WebSocket client asks once its stream is open (the upgrade is
 * ws_handshake.c's): its requests {"id","op":"tune"|"status",...}.
 * A request is translated for the command service (which checks roles,
 * params and leases as for REST, and shapes the answer); its answer is
 * queued on the client's stream like any event, so the loop never waits.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "json_api.h"
#include "tuner.h"
#include "ws_priv.h"

/* A request waiting for its answer: the id it is answered with. */
struct ws_pending {
	struct ws_conn *c;
	json_t *id;
	struct ws_pending *prev, *next;
};

/* ---- replies ---- */

void ws_reply(struct ws_conn *c, json_t *id, json_t *result, json_t *error)
{
	json_t *msg = json_pack("{s:s,s:O?,s:b}", "type", "reply", "id", id,
				"ok", error == NULL);
	size_t len;
	char *text;

	if (msg && error)
		json_object_set(msg, "error", json_object_get(error, "error"));
	else if (msg)
		json_object_set(msg, "result", result ? result : json_null());
	json_decref(result);
	json_decref(error);
	text = event_stream_dump(msg, &len);
	if (text)
		ws_reply_push(c, text, len);
}

static void ws_fail(struct ws_conn *c, json_t *id, struct api_error *e)
{
	ws_reply(c, id, NULL, api_error_to_json(e));
}

/* ---- requests ---- */

static void pending_unlink(struct ws_pending *p)
{
	struct ws_conn *c = p->c;

	if (p->prev)
		p->prev->next = p->next;
	else
		c->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
}

static void pending_free(struct ws_pending *p)
{
	json_decref(p->id);
	free(p);
}

static void ws_done(struct command_result *res, void *arg)
{
	struct ws_pending *p = arg;

	pending_unlink(p);
	if (res->status < 300)
		ws_reply(p->c, p->id, res->body, NULL);
	else
		ws_reply(p->c, p->id, NULL, res->body);
	pending_free(p);
}

void ws_requests_forget(struct ws_conn *c)
{
	struct ws_pending *p, *next;

	command_client_cancel(&c->client);
	for (p = c->pending; p; p = next) {
		next = p->next;
		pending_free(p);
	}
	c->pending = NULL;
}

static int bad_field(struct api_error *e, const char *field, const char *why)
{
	api_error_set(e, 400, "bad_request", json_pack("{s:s}", "field", field),
		      "%s: %s", field, why);
	return -1;
}

static int check_fields(json_t *msg, enum tuner_op op, struct api_error *e)
{
	const char *key;
	json_t *v;

	json_object_foreach(msg, key, v)
	{
		if (!strcmp(key, "id") || !strcmp(key, "op") ||
		    !strcmp(key, "tuner"))
			continue;
		if (op == TUNER_OP_TUNE &&
		    (!strcmp(key, "params") || !strcmp(key, "lease_id")))
			continue;
		return bad_field(e, key, "unknown field");
	}
	return 0;
}

/* The envelope is the WebSocket's own; the command is the service's.
 * Returns 0 when the request was answered or is waiting, -1 with e. */
static int ws_request_run(struct ws_conn *c, json_t *msg, json_t *id,
			  struct api_error *e)
{
	const char *name = json_string_value(json_object_get(msg, "op"));
	json_t *tv = json_object_get(msg, "tuner");
	struct command_request req = {.args_field = "params"};
	struct command_result res;
	struct ws_pending *p;

	if (name && (!strcmp(name, "tune") || !strcmp(name, "status")))
		req.op = name[0] == 't' ? TUNER_OP_TUNE : TUNER_OP_STATUS;
	if (!req.op)
		return bad_field(e, "op", "\"tune\" or \"status\"");
	if (check_fields(msg, req.op, e))
		return -1;
	if (!json_is_integer(tv) || json_integer_value(tv) < 0 ||
	    json_integer_value(tv) > UINT32_MAX)
		return bad_field(e, "tuner", "a tuner id");
	req.tuner = (uint32_t)json_integer_value(tv);
	req.args = json_object_get(msg, "params");
	req.lease_id = json_object_get(msg, "lease_id");
	p = calloc(1, sizeof(*p));
	if (!p) {
		api_error_set(e, 500, "internal", NULL, "out of memory");
		return -1;
	}
	*p = (struct ws_pending){.c = c, .id = json_incref(id)};
	if (command_submit(&c->client, &req, ws_done, p, &res)) {
		ws_reply(c, id, NULL, res.body);
		pending_free(p);
		return 0;
	}
	p->next = c->pending;
	if (p->next)
		p->next->prev = p;
	c->pending = p;
	return 0;
}

void ws_request_handle(struct ws_conn *c, const char *text, size_t len)
{
	json_error_t jerr;
	json_t *msg = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	struct api_error e = {0};
	json_t *id = json_object_get(msg, "id");

	if (id && !json_is_string(id) && !json_is_integer(id)) {
		id = NULL;
		bad_field(&e, "id", "a string or an integer");
	} else if (!msg) {
		api_error_set(&e, 400, "bad_json", NULL,
			      "the message is not JSON: %s", jerr.text);
	} else if (json_depth(msg) > API_JSON_MAX_DEPTH) {
		api_error_set(&e, 400, "bad_json", NULL,
			      "JSON deeper than %d levels", API_JSON_MAX_DEPTH);
	} else if (!json_is_object(msg)) {
		api_error_set(&e, 400, "bad_request", NULL,
			      "a request is a JSON object");
	} else if (!ws_request_run(c, msg, id, &e)) {
		json_decref(msg);
		return;
	}
	ws_fail(c, id, &e);
	json_decref(msg);
}

// SPDX-License-Identifier: MIT
/*
 * Commands over MQTT: a message on <prefix>/<box>/tuner/<id>/cmd,
 *   {"request_id":"r1", "reply_to":"ops/replies", "op":"tune",
 *    "params":{...}, "lease":"<lease id>", "wait_lock_ms":500}
 * goes through the command service (command.h) as a REST request does:
 * the same role checks (the role the configuration grants the bridge),
 * params checks against the chip, leases and queue limits.  The answer
 *   {"request_id":"r1", "ok":true, "result":{...}}  or
 *   {"request_id":"r1", "ok":false, "error":{"code","message",...}}
 * goes to reply_to, or to <prefix>/<box>/tuner/<id>/reply without one
 * (also for a payload too broken to name one).  The result and the error
 * are the REST answer's body and error object.
 *
 * Bounds: a payload over MQTT_CMD_MAX bytes or nested deeper than the
 * API allows is refused unparsed; at most max_inflight commands wait at
 * once (the command client's max_pending: more get too_many_requests).
 * A reply_to under the box's own topics must end in "/reply", so that a
 * command cannot make the box overwrite its own states or status.
 */
#include "mqtt_priv.h"

#include <errno.h>
#include <mosquitto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_api.h"
#include "loop.h"

struct mqtt_cmd {
	struct mqtt_bridge *b;
	json_t *request_id; /* as the client sent it, or null */
	char reply_to[MQTT_TOPIC_MAX];
	struct mqtt_cmd *prev, *next;
};

void mqtt_commands_subscribe(struct mqtt_bridge *b)
{
	char topic[MQTT_TOPIC_MAX];
	int rc;

	snprintf(topic, sizeof(topic), "%s/tuner/+/cmd", b->base);
	rc = mosquitto_subscribe(b->mosq, NULL, topic, 1);
	if (rc != MOSQ_ERR_SUCCESS)
		log_err("mqtt: subscribe %s: %s", topic,
			mosquitto_strerror(rc));
	mqtt_sync_socket(b);
}

static void reply(struct mqtt_bridge *b, const char *topic, json_t *request_id,
		  json_t *body, int ok)
{
	json_t *o =
	    json_pack("{s:O?, s:b}", "request_id", request_id, "ok", ok);
	char *text;

	if (!o)
		return;
	if (ok)
		json_object_set(o, "result", body ? body : json_null());
	else
		json_object_set(o, "error",
				body ? json_object_get(body, "error") : NULL);
	text = json_dumps(o, API_JSON_DUMP_FLAGS);
	json_decref(o);
	if (!text || mqtt_publish_raw(b, topic, text, strlen(text), 1, 0))
		log_limited(&b->drops, loop_now_ms(), LL_WARN,
			    "mqtt: reply to %s not sent", topic);
	free(text);
}

static void reply_error(struct mqtt_bridge *b, const char *topic,
			json_t *request_id, const char *code,
			const char *message)
{
	json_t *body = api_error_json(code, message, NULL);

	reply(b, topic, request_id, body, 0);
	json_decref(body);
}

static void cmd_free(struct mqtt_cmd *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (c->b->cmds == c)
		c->b->cmds = c->next;
	if (c->next)
		c->next->prev = c->prev;
	json_decref(c->request_id);
	free(c);
}

static void cmd_done(struct command_result *res, void *arg)
{
	struct mqtt_cmd *c = arg;

	reply(c->b, c->reply_to, c->request_id, res->body, res->err == 0);
	json_decref(res->body);
	cmd_free(c);
}

/* The tuner id of <base>/tuner/<id>/cmd; -1 when topic is not one. */
static long topic_tuner(const struct mqtt_bridge *b, const char *topic)
{
	size_t n = strlen(b->base);
	unsigned long id;
	char *end;

	if (strncmp(topic, b->base, n) || strncmp(topic + n, "/tuner/", 7))
		return -1;
	topic += n + 7;
	if (*topic < '0' || *topic > '9')
		return -1;
	id = strtoul(topic, &end, 10);
	if (strcmp(end, "/cmd") || id > UINT32_MAX)
		return -1;
	return (long)id;
}

/* reply_to, when the message names one: 0, or -1 with why. */
static int reply_topic(const struct mqtt_bridge *b, json_t *v, char *out,
		       const char **why)
{
	const char *t = json_string_value(v);
	size_t n = strlen(b->base), len = t ? strlen(t) : 0;

	if (!t || !len || len >= MQTT_TOPIC_MAX ||
	    len != json_string_length(v) ||
	    mosquitto_pub_topic_check(t) != MOSQ_ERR_SUCCESS) {
		*why = "reply_to must be a topic without wildcards";
		return -1;
	}
	if (!strncmp(t, b->base, n) && t[n] == '/' &&
	    (len < 6 || strcmp(t + len - 6, "/reply"))) {
		*why = "a reply_to under the box's own topics must end in "
		       "\"/reply\"";
		return -1;
	}
	memcpy(out, t, len + 1);
	return 0;
}

/* The envelope into req; 0, or -1 with why. */
static int parse_envelope(json_t *msg, struct command_request *req,
			  const char **why)
{
	const char *key;
	json_t *v;

	json_object_foreach(msg, key, v)
	{
		if (!strcmp(key, "request_id") || !strcmp(key, "reply_to"))
			continue;
		if (!strcmp(key, "op")) {
			enum tuner_op op = tuner_op_parse(
			    json_is_string(v) ? json_string_value(v) : "");

			if (op != TUNER_OP_TUNE && op != TUNER_OP_SLEEP &&
			    op != TUNER_OP_INIT) {
				*why = "op must be \"tune\", \"sleep\" or "
				       "\"init\"";
				return -1;
			}
			req->op = op;
		} else if (!strcmp(key, "params")) {
			req->args = v;
		} else if (!strcmp(key, "lease")) {
			if (!json_is_string(v)) {
				*why = "lease must be a lease id (a string)";
				return -1;
			}
			req->lease_id = v;
		} else if (!strcmp(key, "wait_lock_ms")) {
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > COMMAND_WAIT_LOCK_MAX_MS) {
				*why = "wait_lock_ms must be an integer "
				       "0..10000";
				return -1;
			}
			req->wait_lock_ms = (unsigned int)json_integer_value(v);
		} else {
			*why = "unknown field (request_id, reply_to, op, "
			       "params, lease, wait_lock_ms)";
			return -1;
		}
	}
	if (!req->op) {
		*why = "op is missing";
		return -1;
	}
	return 0;
}

static int request_id_ok(json_t *v)
{
	return !v || json_is_integer(v) ||
	       (json_is_string(v) && json_string_length(v) <= 128);
}

static void submit(struct mqtt_bridge *b, struct mqtt_cmd *c, json_t *msg,
		   uint32_t tuner)
{
	struct command_request req = {.tuner = tuner, .args_field = "params"};
	struct command_result now = {0};
	const char *why = NULL;

	if (parse_envelope(msg, &req, &why)) {
		reply_error(b, c->reply_to, c->request_id, "bad_request", why);
		cmd_free(c);
		return;
	}
	if (command_submit(&b->client, &req, cmd_done, c, &now) == 0)
		return; /* cmd_done() answers */
	reply(b, c->reply_to, c->request_id, now.body, 0);
	json_decref(now.body);
	cmd_free(c);
}

static void command_json(struct mqtt_bridge *b, struct mqtt_cmd *c, json_t *msg,
			 uint32_t tuner)
{
	json_t *rt = json_object_get(msg, "reply_to");
	const char *why = NULL;

	if (request_id_ok(json_object_get(msg, "request_id")))
		c->request_id = json_incref(json_object_get(msg, "request_id"));
	if (rt && reply_topic(b, rt, c->reply_to, &why)) {
		reply_error(b, c->reply_to, c->request_id, "bad_request", why);
		cmd_free(c);
		return;
	}
	if (!request_id_ok(json_object_get(msg, "request_id"))) {
		reply_error(b, c->reply_to, NULL, "bad_request",
			    "request_id must be an integer or a string of at "
			    "most 128 bytes");
		cmd_free(c);
		return;
	}
	submit(b, c, msg, tuner);
}

void mqtt_command_message(struct mqtt_bridge *b,
			  const struct mosquitto_message *m)
{
	long tuner = topic_tuner(b, m->topic);
	struct mqtt_cmd *c;
	json_error_t jerr;
	json_t *msg;

	if (b->stopping || tuner < 0)
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	*c = (struct mqtt_cmd){.b = b, .next = b->cmds};
	if (c->next)
		c->next->prev = c;
	b->cmds = c;
	snprintf(c->reply_to, sizeof(c->reply_to), "%s/tuner/%ld/reply",
		 b->base, tuner);
	if (m->payloadlen > MQTT_CMD_MAX) {
		reply_error(b, c->reply_to, NULL, "body_too_large",
			    "a command is at most 16384 bytes");
		cmd_free(c);
		return;
	}
	msg = json_loadb(m->payload, (size_t)m->payloadlen,
			 JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(msg) || json_depth(msg) > API_JSON_MAX_DEPTH) {
		reply_error(b, c->reply_to, NULL, "bad_request",
			    msg ? "a command is a JSON object of depth <= 16"
				: "a command must be JSON");
		cmd_free(c);
	} else {
		command_json(b, c, msg, (uint32_t)tuner);
	}
	json_decref(msg);
}

void mqtt_commands_cancel(struct mqtt_bridge *b)
{
	command_client_cancel(&b->client);
	while (b->cmds)
		cmd_free(b->cmds);
}

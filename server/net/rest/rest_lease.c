// SPDX-License-Identifier: MIT
/*
 * POST and DELETE /api/v1/tuners/{id}/lease.
 */
#include <errno.h>
#include <string.h>

#include "lease.h"
#include "net_api.h"
#include "rest.h"
#include "tuner.h"

struct lease_body {
	const char *lease_id;
	const char *holder;
	unsigned int ttl_s; /* 0: not given */
	int priority;
};

static int bad(struct api_error *e, const char *field, const char *why)
{
	api_error_set(e, 400, "bad_request", json_pack("{s:s}", "field", field),
		      "%s: %s", field, why);
	return -1;
}

static int int_field(json_t *v, const char *field, long lo, long hi, long *out,
		     struct api_error *e)
{
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi) {
		char why[64];

		snprintf(why, sizeof(why), "an integer %ld..%ld", lo, hi);
		return bad(e, field, why);
	}
	*out = (long)json_integer_value(v);
	return 0;
}

static int parse_field(const char *key, json_t *v, struct lease_body *b,
		       struct api_error *e)
{
	long n;

	if (!strcmp(key, "lease_id")) {
		if (!json_is_string(v))
			return bad(e, key, "must be a string");
		b->lease_id = json_string_value(v);
	} else if (!strcmp(key, "holder")) {
		if (!json_is_string(v) || !json_string_length(v) ||
		    json_string_length(v) > LEASE_HOLDER_MAX)
			return bad(e, key, "a string of 1..64 characters");
		b->holder = json_string_value(v);
	} else if (!strcmp(key, "ttl_s")) {
		if (int_field(v, key, LEASE_TTL_MIN, LEASE_TTL_MAX, &n, e))
			return -1;
		b->ttl_s = (unsigned int)n;
	} else if (!strcmp(key, "priority")) {
		if (int_field(v, key, 0, LEASE_PRIO_MAX, &n, e))
			return -1;
		b->priority = (int)n;
	} else {
		return bad(e, key, "unknown field");
	}
	return 0;
}

static int parse_body(json_t *body, struct lease_body *b, struct api_error *e)
{
	const char *key;
	json_t *v;

	b->priority = -1;
	if (!json_is_object(body)) {
		api_error_set(e, 400, "bad_request", NULL,
			      "the body must be a JSON object with \"holder\" "
			      "or \"lease_id\"");
		return -1;
	}
	json_object_foreach(body, key, v)
	{
		if (parse_field(key, v, b, e))
			return -1;
	}
	if (b->lease_id && (b->holder || b->priority >= 0))
		return bad(e, b->holder ? "holder" : "priority",
			   "a renewal takes only lease_id and ttl_s");
	if (!b->lease_id && !b->holder)
		return bad(e, "holder", "missing");
	return 0;
}

static json_t *lease_answer(const struct lease *l)
{
	return json_pack(
	    "{s:s, s:I, s:s, s:i, s:o, s:i}", "lease_id", l->id, "tuner",
	    (json_int_t)l->tuner, "holder", l->holder, "priority", l->priority,
	    "expires", api_time_json(l->expires_wall), "ttl_s", (int)l->ttl_s);
}

static enum MHD_Result conflict(struct rest_req *r, const struct lease *l)
{
	return rest_error(r, 409, "lease_conflict", rest_lease_details(l),
			  "tuner %u is leased by \"%s\" (priority %d)",
			  r->tuner, l->holder, l->priority);
}

static enum MHD_Result not_leased(struct rest_req *r)
{
	return rest_error(r, 404, "not_found",
			  json_pack("{s:I}", "tuner", (json_int_t)r->tuner),
			  "tuner %u has no lease", r->tuner);
}

static enum MHD_Result lease_post(struct rest_req *r, struct lease_body *b)
{
	struct lease_table *lt = r->net->leases;
	struct lease l, other;
	int ret;

	if (b->lease_id) {
		ret = lease_renew(lt, r->tuner, b->lease_id, b->ttl_s, &l,
				  &other);
		if (ret == -ENOENT)
			return not_leased(r);
		if (ret == -EPERM)
			return conflict(r, &other);
		return rest_reply(r, 200, lease_answer(&l));
	}
	ret =
	    lease_acquire(lt, r->tuner, b->holder,
			  b->priority >= 0 ? b->priority : LEASE_PRIO_DEFAULT,
			  b->ttl_s ? b->ttl_s : LEASE_TTL_DEFAULT, &l, &other);
	if (ret == -EBUSY)
		return conflict(r, &other);
	if (ret < 0)
		return rest_error(r, 500, "internal", NULL,
				  "cannot create a lease: %s", strerror(-ret));
	return rest_reply(r, 201, lease_answer(&l));
}

static enum MHD_Result lease_delete(struct rest_req *r)
{
	const char *id = rest_lease_id(r, NULL);
	struct lease other;
	int ret = lease_release(r->net->leases, r->tuner, id, &other);

	if (ret == -ENOENT)
		return not_leased(r);
	if (ret == -EPERM)
		return conflict(r, &other);
	return rest_reply(r, 204, NULL);
}

enum MHD_Result rest_lease(struct rest_req *r)
{
	struct lease_body b = {0};
	struct api_error e = {0};
	json_t *body;
	enum MHD_Result ret;

	if (!tuner_find(r->net->d, r->tuner))
		return rest_error(
		    r, 404, "not_found",
		    json_pack("{s:I}", "tuner", (json_int_t)r->tuner),
		    "no tuner %u", r->tuner);
	if (!strcmp(r->method, "DELETE"))
		return lease_delete(r);
	if (rest_body_json(r, &body, &e))
		return rest_api_error(r, &e);
	if (parse_body(body, &b, &e)) {
		json_decref(body);
		return rest_api_error(r, &e);
	}
	ret = lease_post(r, &b);
	json_decref(body);
	return ret;
}

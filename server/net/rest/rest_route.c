// SPDX-License-Identifier: MIT
/*
 * REST routing: a path to its route and tuner id, each route's methods
 * and the role they need, and the query parameters a route takes.  Pure
 * functions of the request, so rest.c's dispatch reads as the order of
 * its checks.
 */
#include <stdint.h>
#include <string.h>

#include "rest.h"

const struct rest_route_info *rest_route_info(enum rest_route rt)
{
	static const struct rest_route_info routes[] = {
	    {ROUTE_BOX, "GET, HEAD", ROLE_VIEWER},
	    {ROUTE_TUNERS, "GET, HEAD", ROLE_VIEWER},
	    {ROUTE_TUNER, "GET, HEAD", ROLE_VIEWER},
	    {ROUTE_STATUS, "GET, HEAD", ROLE_VIEWER},
	    {ROUTE_TUNE, "POST", ROLE_OPERATOR},
	    {ROUTE_SLEEP, "POST", ROLE_OPERATOR},
	    {ROUTE_INIT, "POST", ROLE_OPERATOR},
	    {ROUTE_LEASE, "POST, DELETE", ROLE_OPERATOR},
	    {ROUTE_PLUGINS, "GET, HEAD", ROLE_ADMIN},
	    {ROUTE_EVENTS, "GET, HEAD", ROLE_VIEWER},
	    {ROUTE_STREAM, "GET, HEAD", ROLE_VIEWER},
	    /* POST/PUT/DELETE need the operator role: the handlers check */
	    {ROUTE_SCAN, "GET, HEAD, POST, DELETE", ROLE_VIEWER},
	    {ROUTE_CHANNELS, "GET, HEAD, PUT", ROLE_VIEWER},
	    {ROUTE_STATIC, "GET, HEAD", ROLE_NONE},
	    {ROUTE_HISTORY, "GET, HEAD", ROLE_VIEWER},
	    {ROUTE_METRICS, "GET, HEAD", ROLE_VIEWER},
	};

	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (routes[i].route == rt)
			return &routes[i];
	return NULL;
}

/* A decimal tuner id 1..UINT32_MAX ending at '/' or the end. */
static const char *parse_id(const char *p, uint32_t *id)
{
	unsigned long long v = 0;
	const char *start = p;

	while (*p >= '0' && *p <= '9' && p - start < 10)
		v = v * 10 + (unsigned long long)(*p++ - '0');
	if (p == start || (*p && *p != '/') || !v || v > UINT32_MAX ||
	    *start == '0')
		return NULL;
	*id = (uint32_t)v;
	return p;
}

static enum rest_route route_tuner_sub(const char *sub)
{
	static const struct {
		const char *name;
		enum rest_route route;
	} subs[] = {
	    {"", ROUTE_TUNER},           {"/tune", ROUTE_TUNE},
	    {"/status", ROUTE_STATUS},   {"/sleep", ROUTE_SLEEP},
	    {"/init", ROUTE_INIT},       {"/lease", ROUTE_LEASE},
	    {"/stream", ROUTE_STREAM},   {"/scan", ROUTE_SCAN},
	    {"/history", ROUTE_HISTORY},
	};

	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (!strcmp(sub, subs[i].name))
			return subs[i].route;
	return ROUTE_NONE;
}

enum rest_route rest_route_of(const char *url, uint32_t *tuner)
{
	const char *rest;

	if (!strcmp(url, "/metrics"))
		return ROUTE_METRICS;
	if (strncmp(url, "/api/", 5) != 0)
		return ROUTE_STATIC;
	if (strncmp(url, "/api/v1/", 8) != 0)
		return ROUTE_NONE;
	rest = url + 8;
	if (!strcmp(rest, "box"))
		return ROUTE_BOX;
	if (!strcmp(rest, "tuners"))
		return ROUTE_TUNERS;
	if (!strcmp(rest, "plugins"))
		return ROUTE_PLUGINS;
	if (!strcmp(rest, "events"))
		return ROUTE_EVENTS;
	if (!strcmp(rest, "channels"))
		return ROUTE_CHANNELS;
	if (strncmp(rest, "tuners/", 7) != 0)
		return ROUTE_NONE;
	rest = parse_id(rest + 7, tuner);
	return rest ? route_tuner_sub(rest) : ROUTE_NONE;
}

int rest_method_allowed(const struct rest_route_info *ri, const char *method)
{
	if (!strcmp(method, "GET") || !strcmp(method, "HEAD"))
		return strstr(ri->allow, "GET") != NULL;
	if (!strcmp(method, "POST"))
		return strstr(ri->allow, "POST") != NULL;
	if (!strcmp(method, "DELETE"))
		return strstr(ri->allow, "DELETE") != NULL;
	if (!strcmp(method, "PUT"))
		return strstr(ri->allow, "PUT") != NULL;
	return 0;
}

struct query_check {
	const char *const *allowed;
	const char *bad;
};

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind,
				 const char *key, const char *value)
{
	struct query_check *q = cls;

	(void)kind;
	(void)value;
	for (const char *const *a = q->allowed; a && *a; a++)
		if (!strcmp(key, *a))
			return MHD_YES;
	q->bad = key;
	return MHD_NO;
}

/* The first query parameter a REST route does not know, or NULL.  Only
 * .../lease and .../scan (lease_id), GET .../status, GET .../stream and
 * /channels (format) take any;
 * the event stream checks its own and static files ignore them (cache
 * busting). */
const char *rest_bad_query_param(struct rest_req *r)
{
	static const char *const lease[] = {"lease_id", NULL};
	static const char *const status[] = {"max_age_ms", NULL};
	static const char *const stream[] = {"pids", "service", "lease_id",
					     "access_token", NULL};
	static const char *const channels[] = {"format", NULL};
	static const char *const history[] = {"from", "to", "step", "fields",
					      NULL};
	struct query_check q = {NULL, NULL};

	if (r->route == ROUTE_EVENTS || r->route == ROUTE_STATIC)
		return NULL;
	if (r->route == ROUTE_LEASE || r->route == ROUTE_SCAN)
		q.allowed = lease;
	if (r->route == ROUTE_CHANNELS)
		q.allowed = channels;
	if (r->route == ROUTE_STATUS)
		q.allowed = status;
	if (r->route == ROUTE_STREAM)
		q.allowed = stream;
	if (r->route == ROUTE_HISTORY)
		q.allowed = history;
	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, query_arg,
				  &q);
	return q.bad;
}

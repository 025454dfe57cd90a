// SPDX-License-Identifier: MIT
/*
 * Browsers on the REST API: the Origin rule (web_origin.h), CORS
 * preflights and the Access-Control-* headers of the answers.
 *
 * Only "Access-Control-Allow-Origin: <the origin>" is ever sent, never
 * "*" and never Allow-Credentials: the API's credentials are bearer
 * tokens a page sets itself, so a listed page gets exactly what its token
 * allows and an unlisted one is refused before anything runs.
 */
#include <string.h>

#include "net_api.h"
#include "rest.h"
#include "web_origin.h"

#define CORS_ALLOW_HEADERS  "Authorization, Content-Type, Last-Event-ID"
#define CORS_EXPOSE_HEADERS "Retry-After, WWW-Authenticate, Allow"

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

void rest_cors_headers(const struct net_api *net, struct MHD_Connection *c,
		       struct MHD_Response *resp)
{
	const char *origin = header(c, "Origin");

	if (!origin)
		return;
	MHD_add_response_header(resp, "Vary", "Origin");
	if (!web_origin_listed(&net->cfg, origin))
		return;
	MHD_add_response_header(resp, "Access-Control-Allow-Origin", origin);
	MHD_add_response_header(resp, "Access-Control-Expose-Headers",
				CORS_EXPOSE_HEADERS);
}

int rest_origin_refused(struct rest_req *r, enum MHD_Result *ret)
{
	const char *origin = header(r->conn, "Origin");

	if (r->route == ROUTE_STATIC ||
	    web_origin_allowed(&r->net->cfg, origin,
			       header(r->conn, MHD_HTTP_HEADER_HOST)))
		return 0;
	*ret = rest_error(r, 403, "origin_not_allowed",
			  json_pack("{s:s%}", "origin", origin,
				    strnlen(origin, WEB_ORIGIN_MAX)),
			  "web pages of this origin may not use the API "
			  "(list it in the config's cors.origins)");
	return 1;
}

enum MHD_Result rest_options(struct rest_req *r, const char *allow)
{
	const char *origin = header(r->conn, "Origin");
	const char *want = header(r->conn, "Access-Control-Request-Method");
	struct MHD_Response *resp;
	char age[16];
	enum MHD_Result ret;

	if (origin && want && !web_origin_listed(&r->net->cfg, origin)) {
		enum MHD_Result refused;

		rest_origin_refused(r, &refused);
		return refused;
	}
	resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	if (origin && want) {
		snprintf(age, sizeof(age), "%d", r->net->cfg.cors.max_age_s);
		MHD_add_response_header(resp, "Access-Control-Allow-Methods",
					allow);
		MHD_add_response_header(resp, "Access-Control-Allow-Headers",
					CORS_ALLOW_HEADERS);
		MHD_add_response_header(resp, "Access-Control-Max-Age", age);
	}
	rest_cors_headers(r->net, r->conn, resp);
	ret = MHD_queue_response(r->conn, MHD_HTTP_NO_CONTENT, resp);
	MHD_destroy_response(resp);
	return ret;
}

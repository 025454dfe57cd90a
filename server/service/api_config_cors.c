// SPDX-License-Identifier: MIT
/*
 * The browser and proxy keys of the configuration file: "cors" (the web
 * origins allowed to call the API from a page, web_origin.h) and
 * "trusted_proxies" (who may tell the client's address, client_addr.h).
 * Both default to nothing: no other origin, no proxy believed.
 */
#include <stdlib.h>
#include <string.h>

#include "api_config_priv.h"
#include "web_origin.h"

void cors_config_free(struct cors_config *c)
{
	for (size_t i = 0; i < c->norigins; i++)
		free(c->origins[i]);
	free(c->origins);
	memset(c, 0, sizeof(*c));
	c->max_age_s = CORS_DEFAULT_MAX_AGE_S;
}

int api_config_cors(json_t *v, struct api_config *cfg, char *err, size_t errlen)
{
	const char *key;
	json_t *e;

	if (!json_is_object(v))
		return api_config_fail(err, errlen,
				       "\"cors\" must be an object");
	json_object_foreach(v, key, e)
	{
		if (!strcmp(key, "origins")) {
			if (api_config_strings(
				"cors.origins", e, CORS_ORIGINS_MAX,
				web_origin_check, &cfg->cors.origins,
				&cfg->cors.norigins, err, errlen))
				return -1;
		} else if (!strcmp(key, "max_age_s")) {
			if (!json_is_integer(e) || json_integer_value(e) < 0 ||
			    json_integer_value(e) > 86400)
				return api_config_fail(err, errlen,
						       "cors.max_age_s must "
						       "be an integer "
						       "0..86400");
			cfg->cors.max_age_s = (int)json_integer_value(e);
		} else {
			return api_config_fail(err, errlen,
					       "unknown key \"cors.%s\"", key);
		}
	}
	return 0;
}

int api_config_trusted_proxies(json_t *v, struct api_config *cfg, char *err,
			       size_t errlen)
{
	return api_config_addr_list("trusted_proxies", v, &cfg->trusted_proxies,
				    err, errlen);
}

// SPDX-License-Identifier: MIT
/*
 * The "metrics" section of the configuration file: {"token": "..."}, a
 * bearer token that may read GET /metrics and nothing else, so that a
 * Prometheus server's credentials never open the API itself.  Without it
 * /metrics takes the API's viewer tokens (or the loopback rule).  The
 * token is kept only here and never logged.
 */
#include "api_config_priv.h"

#include <stdlib.h>
#include <string.h>

void metrics_config_free(struct metrics_config *m)
{
	if (m->token) {
		explicit_bzero(m->token, m->token_len);
		free(m->token);
	}
	memset(m, 0, sizeof(*m));
}

/* As the API's tokens: it travels in an Authorization header, so a
 * space, a control character or a byte outside ASCII could never match. */
static int scrape_token_ok(const char *t, size_t len)
{
	if (len < 8 || len > API_TOKEN_MAX || strlen(t) != len)
		return 0;
	for (const unsigned char *p = (const unsigned char *)t; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == ',')
			return 0;
	return 1;
}

int api_config_metrics(json_t *v, struct api_config *cfg, char *err,
		       size_t errlen)
{
	const char *key;
	json_t *e;

	if (!json_is_object(v))
		return api_config_fail(err, errlen,
				       "\"metrics\" must be an object");
	json_object_foreach(v, key, e)
	{
		if (strcmp(key, "token"))
			return api_config_fail(
			    err, errlen, "metrics: unknown key \"%s\"", key);
		if (!json_is_string(e) ||
		    !scrape_token_ok(json_string_value(e),
				     json_string_length(e)))
			return api_config_fail(
			    err, errlen,
			    "metrics.token must be 8..%d visible ASCII "
			    "characters (no spaces or commas)",
			    API_TOKEN_MAX);
		metrics_config_free(&cfg->metrics);
		cfg->metrics.token = strdup(json_string_value(e));
		if (!cfg->metrics.token)
			return api_config_fail(err, errlen, "out of memory");
		cfg->metrics.token_len = json_string_length(e);
	}
	return 0;
}

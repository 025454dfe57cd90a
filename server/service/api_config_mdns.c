// SPDX-License-Identifier: MIT
/*
 * The "mdns" section: {"enabled": true, "name": "studio-3"}.  Off by
 * default: announcing a box on every network it touches is the operator's
 * choice.  The name defaults to the box's name.
 */
#include <stdlib.h>
#include <string.h>

#include "api_config_priv.h"

static int mdns_key(const char *key, json_t *v, struct mdns_config *m,
		    char *err, size_t errlen)
{
	if (!strcmp(key, "enabled")) {
		if (!json_is_boolean(v))
			return api_config_fail(err, errlen,
					       "mdns.enabled must be true or "
					       "false");
		m->enabled = json_is_true(v);
		return 0;
	}
	if (!strcmp(key, "name")) {
		/* A DNS label: at most 63 bytes, any UTF-8 but NUL. */
		if (!json_is_string(v) || !json_string_length(v) ||
		    json_string_length(v) > 63 ||
		    strlen(json_string_value(v)) != json_string_length(v))
			return api_config_fail(err, errlen,
					       "mdns.name must be a string of "
					       "1..63 bytes");
		free(m->name);
		m->name = strdup(json_string_value(v));
		return m->name ? 0
			       : api_config_fail(err, errlen, "out of memory");
	}
	return api_config_fail(err, errlen, "unknown key \"mdns.%s\"", key);
}

int api_config_mdns(json_t *v, struct api_config *cfg, char *err, size_t errlen)
{
	const char *key;
	json_t *e;

	if (!json_is_object(v))
		return api_config_fail(err, errlen,
				       "\"mdns\" must be an object");
	json_object_foreach(v, key, e)
	{
		if (mdns_key(key, e, &cfg->mdns, err, errlen))
			return -1;
	}
	return 0;
}

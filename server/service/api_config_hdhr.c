// SPDX-License-Identifier: MIT
/*
 * The "hdhomerun" section of the configuration file.  The HDHomeRun face
 * has no tokens, so it is off unless the operator turns it on, and then
 * it serves only the networks listed in "allow".
 */
#include "api_config_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hdhr_config_init(struct hdhr_config *h)
{
	memset(h, 0, sizeof(*h));
	h->role = ROLE_OPERATOR;
	h->control_port = HDHR_DEFAULT_PORT;
	h->discovery_port = HDHR_DEFAULT_PORT;
	h->lockkey_ttl_s = HDHR_DEFAULT_LOCKKEY_TTL_S;
	h->target_timeout_s = HDHR_DEFAULT_TARGET_TIMEOUT_S;
}

void hdhr_config_free(struct hdhr_config *h)
{
	addr_list_free(&h->allow);
	for (size_t i = 0; i < h->ndiscovery; i++)
		free(h->discovery[i]);
	free(h->discovery);
	json_decref(h->scan);
	hdhr_config_init(h);
}

int api_config_addr_list(const char *key, json_t *v, struct addr_list *out,
			 char *err, size_t errlen)
{
	size_t i;
	json_t *e;

	if (!json_is_array(v) || json_array_size(v) > ADDR_LIST_MAX)
		return api_config_fail(err, errlen,
				       "\"%s\" must be an array of at most %d "
				       "address ranges",
				       key, ADDR_LIST_MAX);
	json_array_foreach(v, i, e)
	{
		struct addr_range r;
		char why[160];

		if (!json_is_string(e))
			return api_config_fail(
			    err, errlen, "%s[%zu] must be a string", key, i);
		if (addr_range_parse(json_string_value(e), &r, why,
				     sizeof(why)))
			return api_config_fail(err, errlen, "%s[%zu]: %s", key,
					       i, why);
		if (addr_list_add(out, &r))
			return api_config_fail(err, errlen, "out of memory");
	}
	return 0;
}

static int port_value(const char *key, json_t *v, int zero_ok, int *out,
		      char *err, size_t errlen)
{
	if (!json_is_integer(v) || json_integer_value(v) < (zero_ok ? 0 : 1) ||
	    json_integer_value(v) > 65535)
		return api_config_fail(err, errlen,
				       "hdhomerun.%s must be a port number "
				       "%d..65535",
				       key, zero_ok ? 0 : 1);
	*out = (int)json_integer_value(v);
	return 0;
}

static int seconds_value(const char *key, json_t *v, int *out, char *err,
			 size_t errlen)
{
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > 86400)
		return api_config_fail(err, errlen,
				       "hdhomerun.%s must be an integer "
				       "1..86400 (seconds)",
				       key);
	*out = (int)json_integer_value(v);
	return 0;
}

/* "discovery": interface names or local addresses to answer on. */
static int discovery_entry(const char *s, char *why, size_t len)
{
	if (*s && strlen(s) < 64)
		return 0;
	snprintf(why, len, "must be an interface name or an address");
	return -1;
}

static int role_value(json_t *v, struct hdhr_config *h, char *err,
		      size_t errlen)
{
	enum role r =
	    json_is_string(v) ? role_parse(json_string_value(v)) : ROLE_NONE;

	if (r != ROLE_VIEWER && r != ROLE_OPERATOR)
		return api_config_fail(err, errlen,
				       "hdhomerun.role must be \"viewer\" or "
				       "\"operator\" (the face has no "
				       "tokens, so never admin)");
	h->role = r;
	return 0;
}

static int hdhr_key(const char *key, json_t *v, struct hdhr_config *h,
		    char *err, size_t errlen)
{
	if (!strcmp(key, "enabled")) {
		if (!json_is_boolean(v))
			return api_config_fail(err, errlen,
					       "hdhomerun.enabled must be true "
					       "or false");
		h->enabled = json_is_true(v);
		return 0;
	}
	if (!strcmp(key, "allow"))
		return api_config_addr_list("hdhomerun.allow", v, &h->allow,
					    err, errlen);
	if (!strcmp(key, "discovery"))
		return api_config_strings("hdhomerun.discovery", v,
					  HDHR_DISCOVERY_MAX, discovery_entry,
					  &h->discovery, &h->ndiscovery, err,
					  errlen);
	if (!strcmp(key, "http_port"))
		return port_value(key, v, 0, &h->http_port, err, errlen);
	if (!strcmp(key, "control_port"))
		return port_value(key, v, 1, &h->control_port, err, errlen);
	if (!strcmp(key, "discovery_port"))
		return port_value(key, v, 1, &h->discovery_port, err, errlen);
	if (!strcmp(key, "lockkey_ttl_s"))
		return seconds_value(key, v, &h->lockkey_ttl_s, err, errlen);
	if (!strcmp(key, "target_timeout_s"))
		return seconds_value(key, v, &h->target_timeout_s, err, errlen);
	if (!strcmp(key, "role"))
		return role_value(v, h, err, errlen);
	if (!strcmp(key, "scan")) {
		if (!json_is_object(v))
			return api_config_fail(err, errlen,
					       "hdhomerun.scan must be a scan "
					       "body object");
		json_decref(h->scan);
		h->scan = json_incref(v);
		return 0;
	}
	return api_config_fail(err, errlen, "unknown key \"hdhomerun.%s\"",
			       key);
}

int api_config_hdhomerun(json_t *v, struct api_config *cfg, char *err,
			 size_t errlen)
{
	const char *key;
	json_t *e;

	if (!json_is_object(v))
		return api_config_fail(err, errlen,
				       "\"hdhomerun\" must be an object");
	json_object_foreach(v, key, e)
	{
		if (hdhr_key(key, e, &cfg->hdhomerun, err, errlen))
			return -1;
	}
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * The "mqtt" section of the configuration file: the broker the MQTT
 * bridge (server/net/mqtt) connects to, its credentials and TLS files,
 * the topics' prefix, the role its commands get and its bounds.  Off
 * unless enabled.  The password is never written into an error sentence.
 */
#include "api_config_priv.h"

#include <stdlib.h>
#include <string.h>

void mqtt_config_init(struct mqtt_config *m)
{
	memset(m, 0, sizeof(*m));
	m->keepalive_s = MQTT_DEFAULT_KEEPALIVE_S;
	m->role = ROLE_OPERATOR;
	m->state_interval_ms = MQTT_DEFAULT_STATE_MS;
	m->max_queued = MQTT_DEFAULT_MAX_QUEUED;
	m->max_inflight = MQTT_DEFAULT_INFLIGHT;
}

static void free_secret(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

void mqtt_config_free(struct mqtt_config *m)
{
	free(m->host);
	free(m->client_id);
	free(m->username);
	free_secret(m->password);
	free(m->ca_file);
	free(m->cert_file);
	free(m->key_file);
	free(m->topic_prefix);
	mqtt_config_init(m);
}

/* A string of 1..MQTT_STRING_MAX bytes without NUL into *out. */
static int string_value(const char *key, json_t *v, char **out, char *err,
			size_t errlen)
{
	if (!json_is_string(v) || !json_string_length(v) ||
	    json_string_length(v) > MQTT_STRING_MAX ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return api_config_fail(err, errlen,
				       "mqtt.%s must be a string of 1..%d "
				       "bytes",
				       key, MQTT_STRING_MAX);
	free_secret(*out);
	*out = strdup(json_string_value(v));
	return *out ? 0 : api_config_fail(err, errlen, "out of memory");
}

static int int_value(const char *key, json_t *v, long min, long max, int *out,
		     char *err, size_t errlen)
{
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max)
		return api_config_fail(err, errlen,
				       "mqtt.%s must be an integer %ld..%ld",
				       key, min, max);
	*out = (int)json_integer_value(v);
	return 0;
}

static int bool_value(const char *key, json_t *v, int *out, char *err,
		      size_t errlen)
{
	if (!json_is_boolean(v))
		return api_config_fail(err, errlen,
				       "mqtt.%s must be true or false", key);
	*out = json_is_true(v);
	return 0;
}

/* Topic levels are joined with '/': the prefix is one or more levels
 * without wildcards and without an empty level at either end. */
static int prefix_value(json_t *v, struct mqtt_config *m, char *err,
			size_t errlen)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;
	size_t n = s ? strlen(s) : 0;

	if (!s || !n || n > MQTT_PREFIX_MAX || n != json_string_length(v) ||
	    strpbrk(s, "+#") || s[0] == '/' || s[n - 1] == '/')
		return api_config_fail(err, errlen,
				       "mqtt.topic_prefix must be 1..%d bytes "
				       "of topic levels, without '+', '#' or "
				       "a '/' at either end",
				       MQTT_PREFIX_MAX);
	return string_value("topic_prefix", v, &m->topic_prefix, err, errlen);
}

static int role_value(json_t *v, struct mqtt_config *m, char *err,
		      size_t errlen)
{
	enum role r =
	    json_is_string(v) ? role_parse(json_string_value(v)) : ROLE_NONE;

	if (r == ROLE_NONE)
		return api_config_fail(err, errlen,
				       "mqtt.role must be \"viewer\", "
				       "\"operator\" or \"admin\"");
	m->role = r;
	return 0;
}

static int tls_value(json_t *v, struct mqtt_config *m, char *err, size_t errlen)
{
	const char *key;
	json_t *e;

	if (!json_is_object(v))
		return api_config_fail(err, errlen,
				       "mqtt.tls must be an object");
	m->tls = 1;
	json_object_foreach(v, key, e)
	{
		int ret;

		if (!strcmp(key, "ca_file"))
			ret = string_value("tls.ca_file", e, &m->ca_file, err,
					   errlen);
		else if (!strcmp(key, "cert_file"))
			ret = string_value("tls.cert_file", e, &m->cert_file,
					   err, errlen);
		else if (!strcmp(key, "key_file"))
			ret = string_value("tls.key_file", e, &m->key_file, err,
					   errlen);
		else if (!strcmp(key, "insecure"))
			ret = bool_value("tls.insecure", e, &m->insecure, err,
					 errlen);
		else
			ret = api_config_fail(
			    err, errlen, "unknown key \"mqtt.tls.%s\"", key);
		if (ret)
			return ret;
	}
	return 0;
}

static int mqtt_key(const char *key, json_t *v, struct mqtt_config *m,
		    char *err, size_t errlen)
{
	if (!strcmp(key, "enabled"))
		return bool_value(key, v, &m->enabled, err, errlen);
	if (!strcmp(key, "host"))
		return string_value(key, v, &m->host, err, errlen);
	if (!strcmp(key, "port"))
		return int_value(key, v, 1, 65535, &m->port, err, errlen);
	if (!strcmp(key, "client_id")) {
		if (json_is_string(v) &&
		    json_string_length(v) > MQTT_CLIENT_ID_MAX)
			return api_config_fail(err, errlen,
					       "mqtt.client_id must be 1..%d "
					       "bytes",
					       MQTT_CLIENT_ID_MAX);
		return string_value(key, v, &m->client_id, err, errlen);
	}
	if (!strcmp(key, "username"))
		return string_value(key, v, &m->username, err, errlen);
	if (!strcmp(key, "password"))
		return string_value(key, v, &m->password, err, errlen);
	if (!strcmp(key, "tls"))
		return tls_value(v, m, err, errlen);
	if (!strcmp(key, "keepalive_s"))
		return int_value(key, v, 5, 3600, &m->keepalive_s, err, errlen);
	if (!strcmp(key, "topic_prefix"))
		return prefix_value(v, m, err, errlen);
	if (!strcmp(key, "role"))
		return role_value(v, m, err, errlen);
	if (!strcmp(key, "state_interval_ms"))
		return int_value(key, v, 100, 3600000, &m->state_interval_ms,
				 err, errlen);
	if (!strcmp(key, "max_queued"))
		return int_value(key, v, 16, 100000, &m->max_queued, err,
				 errlen);
	if (!strcmp(key, "max_inflight"))
		return int_value(key, v, 1, 1024, &m->max_inflight, err,
				 errlen);
	return api_config_fail(err, errlen, "unknown key \"mqtt.%s\"", key);
}

/* What only the section as a whole can tell. */
static int mqtt_check(const struct mqtt_config *m, char *err, size_t errlen)
{
	if (m->enabled && !m->host)
		return api_config_fail(err, errlen,
				       "mqtt.host is needed when mqtt.enabled "
				       "is true");
	if (!m->cert_file != !m->key_file)
		return api_config_fail(err, errlen,
				       "mqtt.tls.cert_file and "
				       "mqtt.tls.key_file go together");
	if (m->tls && !m->ca_file)
		return api_config_fail(err, errlen,
				       "mqtt.tls needs ca_file (the broker's "
				       "certificate authority)");
	if (m->password && !m->username)
		return api_config_fail(err, errlen,
				       "mqtt.password needs mqtt.username");
	return 0;
}

int api_config_mqtt(json_t *v, struct api_config *cfg, char *err, size_t errlen)
{
	const char *key;
	json_t *e;

	if (!json_is_object(v))
		return api_config_fail(err, errlen,
				       "\"mqtt\" must be an object");
	json_object_foreach(v, key, e)
	{
		if (mqtt_key(key, e, &cfg->mqtt, err, errlen))
			return -1;
	}
	return mqtt_check(&cfg->mqtt, err, errlen);
}

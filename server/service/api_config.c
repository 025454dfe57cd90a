// SPDX-License-Identifier: MIT
/*
 * The configuration file of the network API.  Mistakes stop the daemon
 * at start with a sentence naming the entry: a typo in a role must not
 * quietly leave the API open or closed.
 */
#include "api_config.h"
#include "api_config_priv.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void api_config_init(struct api_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->status_interval_ms = -1;
	cfg->max_request_connections = -1;
	cfg->max_stream_connections = -1;
	hdhr_config_init(&cfg->hdhomerun);
	cfg->history_enabled = 1;
	cfg->cors.max_age_s = CORS_DEFAULT_MAX_AGE_S;
	mqtt_config_init(&cfg->mqtt);
}

void api_config_free(struct api_config *cfg)
{
	for (size_t i = 0; i < cfg->ntokens; i++) {
		free(cfg->tokens[i].name);
		if (cfg->tokens[i].secret) {
			explicit_bzero(cfg->tokens[i].secret,
				       cfg->tokens[i].secret_len);
			free(cfg->tokens[i].secret);
		}
	}
	free(cfg->tokens);
	free(cfg->name);
	free(cfg->state_dir);
	hdhr_config_free(&cfg->hdhomerun);
	cors_config_free(&cfg->cors);
	addr_list_free(&cfg->trusted_proxies);
	free(cfg->mdns.name);
	mqtt_config_free(&cfg->mqtt);
	metrics_config_free(&cfg->metrics);
	api_config_init(cfg);
}

int api_config_fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int any_string(const char *s, char *why, size_t len)
{
	if (*s && strlen(s) < 256)
		return 0;
	snprintf(why, len, "must be a string of 1..255 bytes");
	return -1;
}

int api_config_strings(const char *key, json_t *v, size_t max,
		       int (*check)(const char *s, char *why, size_t len),
		       char ***out, size_t *n, char *err, size_t errlen)
{
	size_t i;
	json_t *e;

	if (!json_is_array(v) || json_array_size(v) > max)
		return api_config_fail(err, errlen,
				       "\"%s\" must be an array of at most %zu "
				       "strings",
				       key, max);
	*out = calloc(json_array_size(v) + 1, sizeof(char *));
	if (!*out)
		return api_config_fail(err, errlen, "out of memory");
	json_array_foreach(v, i, e)
	{
		char why[200];

		if (!json_is_string(e) ||
		    strlen(json_string_value(e)) != json_string_length(e))
			return api_config_fail(
			    err, errlen, "%s[%zu] must be a string", key, i);
		if ((check ? check : any_string)(json_string_value(e), why,
						 sizeof(why)))
			return api_config_fail(err, errlen, "%s[%zu]: %s", key,
					       i, why);
		(*out)[*n] = strdup(json_string_value(e));
		if (!(*out)[(*n)++])
			return api_config_fail(err, errlen, "out of memory");
	}
	return 0;
}

/* A bearer token travels in a header (and as "bearer.<token>" in a
 * Sec-WebSocket-Protocol list): a space, a control character or a byte
 * outside ASCII could never arrive intact, so such a token could never
 * match. */
static int token_chars_ok(const char *secret)
{
	for (const unsigned char *p = (const unsigned char *)secret; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == ',')
			return 0;
	return 1;
}

static int token_from_json(json_t *t, size_t i, struct api_token *out,
			   char *err, size_t errlen)
{
	const char *name = NULL, *secret = NULL, *role = NULL;
	json_error_t jerr;

	if (json_unpack_ex(t, &jerr, JSON_STRICT, "{s:s, s:s, s:s}", "name",
			   &name, "token", &secret, "role", &role))
		return api_config_fail(
		    err, errlen,
		    "tokens[%zu]: needs exactly \"name\", \"token\" "
		    "and \"role\" strings (%s)",
		    i, jerr.text);
	if (!*name || strlen(name) > API_TOKEN_NAME_MAX)
		return api_config_fail(err, errlen,
				       "tokens[%zu]: name must be 1..%d "
				       "characters",
				       i, API_TOKEN_NAME_MAX);
	if (strlen(secret) < 8 || strlen(secret) > API_TOKEN_MAX)
		return api_config_fail(
		    err, errlen,
		    "tokens[%zu] (\"%s\"): token must be 8..%d "
		    "characters",
		    i, name, API_TOKEN_MAX);
	if (!token_chars_ok(secret))
		return api_config_fail(
		    err, errlen,
		    "tokens[%zu] (\"%s\"): token may only hold visible "
		    "ASCII characters (no spaces, commas or control "
		    "characters)",
		    i, name);
	out->role = role_parse(role);
	if (out->role == ROLE_NONE)
		return api_config_fail(
		    err, errlen,
		    "tokens[%zu] (\"%s\"): role must be viewer, "
		    "operator or admin",
		    i, name);
	out->name = strdup(name);
	out->secret = strdup(secret);
	out->secret_len = strlen(secret);
	if (!out->name || !out->secret)
		return api_config_fail(err, errlen, "out of memory");
	return 0;
}

static int tokens_from_json(json_t *arr, struct api_config *cfg, char *err,
			    size_t errlen)
{
	size_t i, j;
	json_t *t;

	if (!json_is_array(arr))
		return api_config_fail(err, errlen,
				       "\"tokens\" must be an array");
	cfg->tokens = calloc(json_array_size(arr) + 1, sizeof(*cfg->tokens));
	if (!cfg->tokens)
		return api_config_fail(err, errlen, "out of memory");
	json_array_foreach(arr, i, t)
	{
		if (token_from_json(t, i, &cfg->tokens[i], err, errlen)) {
			cfg->ntokens = i + 1;
			return -1;
		}
		cfg->ntokens = i + 1;
		for (j = 0; j < i; j++)
			if (!strcmp(cfg->tokens[j].name, cfg->tokens[i].name) ||
			    !strcmp(cfg->tokens[j].secret,
				    cfg->tokens[i].secret))
				return api_config_fail(
				    err, errlen,
				    "tokens[%zu] (\"%s\"): name or "
				    "token used twice",
				    i, cfg->tokens[i].name);
	}
	return 0;
}

/* A connection cap: an integer 1..API_CONNS_MAX into *out. */
static int conn_cap(const char *key, json_t *v, long *out, char *err,
		    size_t errlen)
{
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > API_CONNS_MAX)
		return api_config_fail(err, errlen,
				       "\"%s\" must be an integer 1..%d", key,
				       API_CONNS_MAX);
	*out = (long)json_integer_value(v);
	return 0;
}

static int key_name(json_t *v, struct api_config *cfg, char *err, size_t errlen)
{
	if (!json_is_string(v) || !json_string_length(v) ||
	    json_string_length(v) > 64)
		return api_config_fail(
		    err, errlen,
		    "\"name\" must be a string of 1..64 characters");
	cfg->name = strdup(json_string_value(v));
	return cfg->name ? 0 : api_config_fail(err, errlen, "out of memory");
}

static int key_tokens(json_t *v, struct api_config *cfg, char *err,
		      size_t errlen)
{
	return tokens_from_json(v, cfg, err, errlen);
}

static int key_status_interval(json_t *v, struct api_config *cfg, char *err,
			       size_t errlen)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > 3600000)
		return api_config_fail(
		    err, errlen,
		    "\"status_interval_ms\" must be an integer "
		    "0..3600000");
	cfg->status_interval_ms = json_integer_value(v);
	return 0;
}

static int key_max_request_conns(json_t *v, struct api_config *cfg, char *err,
				 size_t errlen)
{
	return conn_cap("max_request_connections", v,
			&cfg->max_request_connections, err, errlen);
}

static int key_max_stream_conns(json_t *v, struct api_config *cfg, char *err,
				size_t errlen)
{
	return conn_cap("max_stream_connections", v,
			&cfg->max_stream_connections, err, errlen);
}

static int key_state_dir(json_t *v, struct api_config *cfg, char *err,
			 size_t errlen)
{
	if (!json_is_string(v) || json_string_value(v)[0] != '/' ||
	    json_string_length(v) > API_STATE_DIR_MAX ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return api_config_fail(
		    err, errlen,
		    "\"state_dir\" must be an absolute path of at "
		    "most %d bytes",
		    API_STATE_DIR_MAX);
	free(cfg->state_dir);
	cfg->state_dir = strdup(json_string_value(v));
	return cfg->state_dir ? 0
			      : api_config_fail(err, errlen, "out of memory");
}

static int key_history(json_t *v, struct api_config *cfg, char *err,
		       size_t errlen)
{
	json_t *on = json_object_get(v, "enabled");

	if (!json_is_object(v) || json_object_size(v) != 1 ||
	    !json_is_boolean(on))
		return api_config_fail(err, errlen,
				       "\"history\" must be {\"enabled\": "
				       "true or false}");
	cfg->history_enabled = json_is_true(on);
	return 0;
}

/*
 * One line per top-level key.  A section of its own (an object such as
 * "hdhomerun") keeps its parser in its own file, declared in
 * api_config_priv.h, so adding a section touches this table and nothing
 * else here.
 */
static const struct config_key {
	const char *key;
	config_key_fn *parse;
} config_keys[] = {
    {"name", key_name},
    {"tokens", key_tokens},
    {"status_interval_ms", key_status_interval},
    {"max_request_connections", key_max_request_conns},
    {"max_stream_connections", key_max_stream_conns},
    {"state_dir", key_state_dir},
    {"history", key_history},
    {"hdhomerun", api_config_hdhomerun},
    {"cors", api_config_cors},
    {"trusted_proxies", api_config_trusted_proxies},
    {"mdns", api_config_mdns},
    {"mqtt", api_config_mqtt},
    {"metrics", api_config_metrics},
};

static int config_from_json(json_t *root, struct api_config *cfg, char *err,
			    size_t errlen)
{
	const char *key;
	json_t *v;

	if (!json_is_object(root))
		return api_config_fail(err, errlen,
				       "the file must hold a JSON object");
	json_object_foreach(root, key, v)
	{
		size_t i = 0, n = sizeof(config_keys) / sizeof(config_keys[0]);

		while (i < n && strcmp(key, config_keys[i].key))
			i++;
		if (i == n)
			return api_config_fail(err, errlen,
					       "unknown key \"%s\"", key);
		if (config_keys[i].parse(v, cfg, err, errlen))
			return -1;
	}
	return 0;
}

static int config_finish(json_t *root, struct api_config *cfg, char *err,
			 size_t errlen)
{
	int ret;

	api_config_init(cfg);
	ret = config_from_json(root, cfg, err, errlen);
	json_decref(root);
	if (ret)
		api_config_free(cfg);
	return ret;
}

/*
 * jansson's syntax errors quote the text they stopped at ("... near
 * '\"abc'"), which may be the start of a token: the quote is cut, the
 * line number says where to look.
 */
static const char *syntax_error(json_error_t *jerr)
{
	char *near = strstr(jerr->text, " near '");

	if (near)
		*near = '\0';
	return jerr->text;
}

int api_config_parse(const char *text, struct api_config *cfg, char *err,
		     size_t errlen)
{
	json_error_t jerr;
	json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);

	api_config_init(cfg);
	if (!root)
		return api_config_fail(err, errlen, "line %d: %s", jerr.line,
				       syntax_error(&jerr));
	return config_finish(root, cfg, err, errlen);
}

int api_config_load(const char *path, struct api_config *cfg, char *err,
		    size_t errlen)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);

	api_config_init(cfg);
	if (!root)
		return api_config_fail(err, errlen, "%s: line %d: %s", path,
				       jerr.line, syntax_error(&jerr));
	if (config_finish(root, cfg, err, errlen)) {
		char inner[256];

		snprintf(inner, sizeof(inner), "%s", err);
		return api_config_fail(err, errlen, "%s: %s", path, inner);
	}
	return 0;
}

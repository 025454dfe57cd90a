/* SPDX-License-Identifier: MIT */
/*
 * api_config_priv.h - what the configuration file's sections share: the
 * parser signature of one top-level key, the error sentence, and the
 * parsers of the sections kept in files of their own.
 */
#ifndef TUNERD_API_CONFIG_PRIV_H
#define TUNERD_API_CONFIG_PRIV_H

#include <jansson.h>
#include <stddef.h>

#include "api_config.h"

/* Parse the value v of one top-level key into cfg; 0, or -1 and err. */
typedef int config_key_fn(json_t *v, struct api_config *cfg, char *err,
			  size_t errlen);

/* Write the sentence into err and return -1. */
int api_config_fail(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* An array of address ranges (addr_list.h) under key. */
int api_config_addr_list(const char *key, json_t *v, struct addr_list *out,
			 char *err, size_t errlen);

/*
 * An array of at most max strings under key into *out (NULL-terminated)
 * and *n.  Each must pass check(), which writes why it does not into why
 * (a sentence without the key); check NULL: any string of 1..255 bytes
 * with no NUL.
 */
int api_config_strings(const char *key, json_t *v, size_t max,
		       int (*check)(const char *s, char *why, size_t len),
		       char ***out, size_t *n, char *err, size_t errlen);

/* "hdhomerun" (api_config_hdhr.c). */
config_key_fn api_config_hdhomerun;
/* "mdns" (api_config_mdns.c). */
config_key_fn api_config_mdns;
/* "cors" and "trusted_proxies" (api_config_cors.c). */
config_key_fn api_config_cors;
config_key_fn api_config_trusted_proxies;
/* "mqtt" (api_config_mqtt.c). */
config_key_fn api_config_mqtt;
/* "metrics" (api_config_metrics.c). */
config_key_fn api_config_metrics;

#endif /* TUNERD_API_CONFIG_PRIV_H */

/* SPDX-License-Identifier: MIT */
/*
 * api_config.h - the network API's configuration file (--config FILE):
 *   {"name":"box1",
 *    "tokens":[{"name":"ops","token":"...","role":"operator"}],
 *    "status_interval_ms":1000,
 *    "max_request_connections":256, "max_stream_connections":2048,
 *    "state_dir":"/var/lib/tunerd",
 *    "history":{"enabled":true},
 *    "hdhomerun":{"enabled":true, "allow":["192.168.1.0/24"],
 *                 "discovery":["eth0"], "http_port":5004,
 *                 "control_port":65001, "discovery_port":65001,
 *                 "lockkey_ttl_s":30, "target_timeout_s":30,
 *                 "role":"operator", "scan":{"band":"uhf"}},
 *    "cors":{"origins":["https://console.example"], "max_age_s":600},
 *    "trusted_proxies":["127.0.0.1/32"],
 *    "mdns":{"enabled":true, "name":"studio-3"},
 *    "mqtt":{"enabled":true, "host":"broker", "port":8883,
 *            "client_id":"box1", "username":"u", "password":"p",
 *            "tls":{"ca_file":"/etc/ssl/ca.pem", "cert_file":"c.pem",
 *                   "key_file":"k.pem", "insecure":false},
 *            "keepalive_s":30, "topic_prefix":"tunerd",
 *            "role":"operator", "state_interval_ms":1000,
 *            "max_queued":1000, "max_inflight":16},
 *    "metrics":{"token":"..."}}
 * Every key is optional.  Tokens are kept only here and never logged.
 */
#ifndef TUNERD_API_CONFIG_H
#define TUNERD_API_CONFIG_H

#include <stddef.h>

#include "addr_list.h"
#include "auth.h"

#define API_TOKEN_NAME_MAX 64
#define API_TOKEN_MAX      256
#define API_STATE_DIR_MAX  3800 /* bytes; room for names under PATH_MAX */

struct api_token {
	char *name;
	char *secret;
	size_t secret_len;
	enum role role;
};

#define HDHR_DEFAULT_PORT             65001
#define HDHR_DEFAULT_LOCKKEY_TTL_S    30
#define HDHR_DEFAULT_TARGET_TIMEOUT_S 30
#define HDHR_DISCOVERY_MAX            32

/*
 * The HDHomeRun face (net/hdhr): off unless enabled; it answers only
 * peers in allow, never with more than role (operator or viewer).
 */
struct hdhr_config {
	int enabled;
	struct addr_list allow;
	char *
	    *discovery; /* interfaces or local addresses; none: no discovery */
	size_t ndiscovery;
	int http_port;        /* 0: the HTTP face on the main port only */
	int control_port;     /* TCP; 0: no control channel */
	int discovery_port;   /* UDP */
	int lockkey_ttl_s;    /* a lockkey's lease TTL, renewed by use */
	int target_timeout_s; /* a stream target's life without renewal */
	enum role role;
	/* The lineup scan's body (as POST .../scan takes it); NULL: the
	 * band "uhf" of region "eu". */
	struct json_t *scan;
};

#define CORS_ORIGINS_MAX       64
#define CORS_DEFAULT_MAX_AGE_S 600

/* Web pages of other origins allowed to call the API (web_origin.h). */
struct cors_config {
	char **origins;
	size_t norigins;
	int max_age_s; /* a preflight's Access-Control-Max-Age */
};

/* DNS-SD advertising (net/mdns); off unless enabled. */
struct mdns_config {
	int enabled;
	char *name; /* NULL: the box's name */
};

#define MQTT_DEFAULT_PORT        1883
#define MQTT_DEFAULT_TLS_PORT    8883
#define MQTT_DEFAULT_KEEPALIVE_S 30
#define MQTT_DEFAULT_STATE_MS    1000
#define MQTT_DEFAULT_MAX_QUEUED  1000
#define MQTT_DEFAULT_INFLIGHT    16
#define MQTT_STRING_MAX          256 /* host, names, secrets, file paths */
#define MQTT_PREFIX_MAX          64
#define MQTT_CLIENT_ID_MAX       58 /* "mqtt:<id>" names a tuner's changes */

/*
 * The MQTT bridge (net/mqtt): off unless enabled.  The password is kept
 * only here and never logged.  tls: a CA file (or cert/key) turns TLS on.
 */
struct mqtt_config {
	int enabled;
	char *host;
	int port;        /* 0: 1883, or 8883 with TLS */
	char *client_id; /* NULL: "tunerd-<box>" */
	char *username, *password;
	char *ca_file, *cert_file, *key_file;
	int tls;      /* the "tls" object was given */
	int insecure; /* no check of the broker's host name */
	int keepalive_s;
	char *topic_prefix; /* NULL: "tunerd" */
	enum role role;
	int state_interval_ms; /* least time between two states of a tuner */
	int max_queued;        /* messages handed to libmosquitto, unsent */
	int max_inflight;      /* commands waiting at once */
};

/* GET /metrics: a scrape token of its own, beside the API's tokens. */
struct metrics_config {
	char *token; /* NULL: none */
	size_t token_len;
};

struct api_config {
	char *name; /* box name; NULL: not set */
	struct api_token *tokens;
	size_t ntokens;
	long status_interval_ms; /* -1: not set */
	/* The front's connection caps (http_front.h); -1: not set. */
	long max_request_connections, max_stream_connections;
	char *state_dir;     /* absolute path; NULL: not set */
	int history_enabled; /* signal history (server/history); default 1 */
	struct hdhr_config hdhomerun;
	struct cors_config cors;
	/* Proxies whose X-Forwarded-For is believed (client_addr.h). */
	struct addr_list trusted_proxies;
	struct mdns_config mdns;
	struct mqtt_config mqtt;
	struct metrics_config metrics;
};

/* The largest connection cap the file or the command line may set. */
#define API_CONNS_MAX 65536

/* Defaults: no name, no tokens, interval not set. */
void api_config_init(struct api_config *cfg);
/*
 * Read and check path.  Returns 0, or -1 with a sentence in err (the
 * file's line for JSON errors, the bad entry otherwise; never a token).
 */
int api_config_load(const char *path, struct api_config *cfg, char *err,
		    size_t errlen);
/* The same from a JSON text (tests). */
int api_config_parse(const char *text, struct api_config *cfg, char *err,
		     size_t errlen);
void api_config_free(struct api_config *cfg);
void hdhr_config_init(struct hdhr_config *h);
void hdhr_config_free(struct hdhr_config *h);
void cors_config_free(struct cors_config *c);
void mqtt_config_init(struct mqtt_config *m);
void mqtt_config_free(struct mqtt_config *m);
void metrics_config_free(struct metrics_config *m);

/* The auth decision on a configuration alone (auth_check() uses it). */
void auth_check_config(const struct api_config *cfg, const char *bearer,
		       const struct sockaddr *peer, enum role needed,
		       struct auth_result *out);

#endif /* TUNERD_API_CONFIG_H */

/* SPDX-License-Identifier: MIT */
/*
 * api_config.h - the network API's configuration file (--config FILE):
 *   {"name":"box1",
 *    "tokens":[{"name":"ops","token":"...","role":"operator"}],
 *    "status_interval_ms":1000,
 *    "max_request_connections":256, "max_stream_connections":2048,
 *    "state_dir":"/var/lib/tunerd",
 *    "hdhomerun":{"enabled":true, "allow":["192.168.1.0/24"],
 *                 "discovery":["eth0"], "http_port":5004,
 *                 "control_port":65001, "discovery_port":65001,
 *                 "lockkey_ttl_s":30, "target_timeout_s":30,
 *                 "role":"operator", "scan":{"band":"uhf"}}}
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

struct api_config {
	char *name; /* box name; NULL: not set */
	struct api_token *tokens;
	size_t ntokens;
	long status_interval_ms; /* -1: not set */
	/* The front's connection caps (http_front.h); -1: not set. */
	long max_request_connections, max_stream_connections;
	char *state_dir; /* absolute path; NULL: not set */
	struct hdhr_config hdhomerun;
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

/* The auth decision on a configuration alone (auth_check() uses it). */
void auth_check_config(const struct api_config *cfg, const char *bearer,
		       const struct sockaddr *peer, enum role needed,
		       struct auth_result *out);

#endif /* TUNERD_API_CONFIG_H */

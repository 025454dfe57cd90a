/* SPDX-License-Identifier: MIT */
/*
 * net_api.h - the network API's state inside the daemon: configuration,
 * leases, the command service, the HTTP front and the requests waiting on
 * a tuner.  Loop thread only.
 */
#ifndef TUNERD_NET_API_H
#define TUNERD_NET_API_H

#include <stdint.h>

#include "api_config.h"

struct daemon;
struct loop;
struct eventbus;
struct lease_table;
struct command_service;
struct http_front;
struct rest_req;
struct tuner_text;
struct status_text;
struct stream_hub;
struct channel_list;
struct scan_hub;
struct history;
struct mqtt_bridge;
struct hdhr_http;
struct rest_metrics;

struct net_api {
	struct daemon *d;
	struct loop *loop;
	struct eventbus *events;
	struct api_config cfg;
	struct lease_table *leases;
	struct command_service *commands; /* every transport's commands */
	struct http_front *front;
	struct stream_hub *streams;    /* the tuners' transport streams */
	struct channel_list *channels; /* the channel list (server/channels) */
	struct scan_hub *scans;        /* the tuners' scans */
	struct mdns *mdns;             /* DNS-SD advertising, or NULL */
	struct mqtt_bridge *mqtt;      /* the MQTT bridge, NULL: off */
	struct hdhr_http *hdhr_http;   /* the HDHomeRun face's HTTP state */
	int stream_direct;             /* --stream-delivery direct (else mhd) */
	char *listen;                  /* --listen, or NULL */
	char *config_path;             /* --config, or NULL */
	struct api_config *retired;    /* configs replaced by a reload */
	size_t nretired;
	long head_timeout_ms;      /* --head-timeout-ms; 0: HTTP_FRONT_HEAD_S */
	long max_request_conns;    /* --max-request-conns; 0: not given */
	long max_stream_conns;     /* --max-stream-conns; 0: not given */
	char *web_root;            /* realpath of --web-root, or NULL */
	long status_interval_cli;  /* -1: not given */
	long status_heartbeat_cli; /* --status-heartbeat-ms; 0: default */
	struct history *history;   /* NULL: none (rest_history.c) */
	long history_consumer;     /* its status sampler consumer */
	int stopping;              /* api_stop() began: no new work */
	uint64_t started_ms;
	struct rest_req *waiting;         /* suspended requests */
	struct tuner_text *tuner_texts;   /* rest_cache.c */
	struct tuners_list *tuners_list;  /* rest_cache.c: GET /tuners */
	struct status_text *status_texts; /* rest_status.c */
	struct rest_metrics *metrics;     /* rest_metrics.c; NULL: none yet */
};

/*
 * The hooks main() calls (daemon.h): api_options[] lists --listen,
 * --config, --web-root, --status-interval-ms, --head-timeout-ms,
 * --max-request-conns and --max-stream-conns; api_option() takes each
 * (a broken config file stops the daemon with a clear message; its
 * "name" replaces d->name); api_start() serves on --listen (nothing
 * without it); api_stop() stops and frees everything.
 */

#define NET_API_STATUS_INTERVAL_MS 1000
/* At a stop, how long the leases' write in flight is waited for: far
 * above any fsync a working disk takes, short enough for systemd's
 * stop timeout. */
#define NET_API_LEASE_FLUSH_MS 5000
/* The tuner.status sampling period: --status-interval-ms, else the config
 * file's status_interval_ms, else 1000.  0 = off. */
long net_api_status_interval_ms(const struct daemon *d);
/* tuner.status heartbeat: --status-heartbeat-ms, else 30000. */
long net_api_status_heartbeat_ms(const struct daemon *d);

/* The cap of a connection class (streams: 1 for event streams, 0 for
 * request/response): the command line's, else the config file's, else
 * the default (http_front.h).  Read at start. */
unsigned int net_api_max_conns(const struct net_api *net, int streams);

/* The API state of d, or NULL when none was configured. */
struct net_api *net_api_of(const struct daemon *d);
/* The configuration of d (NULL when none was loaded). */
const struct api_config *net_api_config(const struct daemon *d);

#endif /* TUNERD_NET_API_H */

// SPDX-License-Identifier: MIT
/*
 * The network layer's hooks into the daemon (daemon.h: api_start,
 * api_stop) and its state.
 */
#include "net_api.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel_list.h"
#include "command.h"
#include "daemon.h"
#include "event_stream.h"
#include "eventbus.h"
#include "hdhr_http.h"
#include "http_front.h"
#include "lease.h"
#include "log.h"
#include "mdns.h"
#include "mqtt_bridge.h"
#include "rest.h"
#include "scan_job.h"
#include "status_deadband.h"
#include "stream.h"

struct net_api *net_api_of(const struct daemon *d)
{
	return d ? d->api : NULL;
}

const struct api_config *net_api_config(const struct daemon *d)
{
	struct net_api *net = net_api_of(d);

	return net ? &net->cfg : NULL;
}

static void net_api_free(struct net_api *net)
{
	api_config_free(&net->cfg);
	for (size_t i = 0; i < net->nretired; i++)
		api_config_free(&net->retired[i]);
	free(net->retired);
	free(net->config_path);
	free(net->listen);
	free(net->web_root);
	free(net->metrics);
	free(net);
}

static int set_web_root(struct net_api *net, const char *dir)
{
	char real[PATH_MAX];

	if (!realpath(dir, real)) {
		/* The dashboard is optional: every file is then a 404. */
		log_warn("http: web root %s: %s", dir, strerror(errno));
		return 0;
	}
	free(net->web_root); /* given twice: the last one serves */
	net->web_root = strdup(real);
	return net->web_root ? 0 : -ENOMEM;
}

const struct api_option api_options[] = {
    {"listen", 1, "ADDR:PORT",
     "serve the network API (REST, events) on this TCP port"},
    {"config", 1, "FILE", "JSON: name, tokens and roles, status interval"},
    {"web-root", 1, "DIR", "serve the dashboard's files from DIR at /"},
    {"status-interval-ms", 1, "MS",
     "how often tuner.status looks at each tuner (default 1000, 0 = no "
     "tuner.status)"},
    {"status-heartbeat-ms", 1, "MS",
     "tuner.status of a steady tuner at least this often (default 30000)"},
    {"head-timeout-ms", 1, "MS",
     "a connection's whole request head must come within MS (default "
     "10000)"},
    {"max-request-conns", 1, "N",
     "request/response connections open at once (default 256)"},
    {"max-stream-conns", 1, "N",
     "event streams (WebSocket and SSE) open at once (default 2048)"},
    {"stream-delivery", 1, "direct|mhd",
     "streams written by the daemon on the socket (default) or through "
     "libmicrohttpd's content callback"},
    {NULL, 0, NULL, NULL},
};

static struct net_api *net_get(struct daemon *d)
{
	struct net_api *net = d->api;

	if (net)
		return net;
	net = calloc(1, sizeof(*net));
	if (!net)
		return NULL;
	api_config_init(&net->cfg);
	net->stream_direct = 1;
	net->d = d;
	net->status_interval_cli = -1;
	d->api = net;
	return net;
}

/* The file's name replaces the box name (d->name and the events'). */
static int apply_name(struct net_api *net, const char *name)
{
	int ret;

	if (!name)
		return 0;
	snprintf(net->d->name, sizeof(net->d->name), "%s", name);
	ret = eventbus_set_box(net->d->events, net->d->name);
	if (ret)
		log_err("config: %s", strerror(-ret));
	return ret;
}

static void log_loaded(const struct net_api *net, const char *what)
{
	log_info("config: %s %s: %zu token(s)%s", net->config_path, what,
		 net->cfg.ntokens,
		 net->cfg.ntokens ? "" : ", API open to loopback only");
}

static int load_config(struct net_api *net, const char *path)
{
	char err[320];
	int ret;

	free(net->config_path);
	net->config_path = strdup(path);
	if (!net->config_path)
		return -ENOMEM;
	api_config_free(&net->cfg);
	if (api_config_load(path, &net->cfg, err, sizeof(err))) {
		log_err("config: %s", err);
		return -EINVAL;
	}
	ret = apply_name(net, net->cfg.name);
	if (ret)
		return ret;
	/* main() opens it after the options: --state-dir still wins. */
	snprintf(net->d->state_dir_config, sizeof(net->d->state_dir_config),
		 "%s", net->cfg.state_dir ? net->cfg.state_dir : "");
	log_loaded(net, "loaded");
	return 0;
}

/*
 * The replaced configuration is retired, not freed: an open WebSocket
 * keeps pointing at its token's name (auth.h: the strings live as long
 * as the configuration).  A retired file costs its few hundred bytes
 * until the stop; reloads are an operator's act, not a client's.
 */
int api_reload(struct daemon *d)
{
	struct net_api *net = net_api_of(d);
	struct api_config fresh, *retired;
	char err[320];

	if (!net || !net->config_path) {
		log_warn("config: no --config file to reload");
		return -ENOENT;
	}
	api_config_init(&fresh);
	if (api_config_load(net->config_path, &fresh, err, sizeof(err))) {
		log_err("config: reload refused, the old configuration "
			"stays: %s",
			err);
		api_config_free(&fresh);
		return -EINVAL;
	}
	retired =
	    realloc(net->retired, (net->nretired + 1) * sizeof(*net->retired));
	if (!retired) {
		log_err("config: reload refused: out of memory");
		api_config_free(&fresh);
		return -ENOMEM;
	}
	net->retired = retired;
	for (size_t i = 0; i < net->cfg.ntokens; i++) {
		struct api_token *t = &net->cfg.tokens[i];

		explicit_bzero(t->secret, t->secret_len);
		free(t->secret);
		t->secret = NULL; /* only the name stays referenced */
		t->secret_len = 0;
	}
	net->retired[net->nretired++] = net->cfg;
	net->cfg = fresh;
	apply_name(net, net->cfg.name);
	if (net->cfg.status_interval_ms >= 0 &&
	    net->cfg.status_interval_ms !=
		net->retired[net->nretired - 1].status_interval_ms)
		log_warn("config: status_interval_ms applies at the next "
			 "start");
	if (net->cfg.max_request_connections !=
		net->retired[net->nretired - 1].max_request_connections ||
	    net->cfg.max_stream_connections !=
		net->retired[net->nretired - 1].max_stream_connections)
		log_warn("config: the connection caps apply at the next start");
	if (strcmp(net->cfg.state_dir ? net->cfg.state_dir : "",
		   d->state_dir_config))
		log_warn("config: state_dir applies at the next start");
	log_loaded(net, "reloaded");
	return 0;
}

static int set_option(struct net_api *net, const char *name, const char *value)
{
	char *end;
	long v;

	if (!strcmp(name, "listen")) {
		free(net->listen);
		net->listen = strdup(value);
		return net->listen ? 0 : -ENOMEM;
	}
	if (!strcmp(name, "config"))
		return load_config(net, value);
	if (!strcmp(name, "web-root"))
		return set_web_root(net, value);
	if (!strcmp(name, "stream-delivery")) {
		if (strcmp(value, "direct") && strcmp(value, "mhd")) {
			log_err("--stream-delivery: direct or mhd, not %s",
				value);
			return -EINVAL;
		}
		net->stream_direct = !strcmp(value, "direct");
		return 0;
	}
	if (!strcmp(name, "status-interval-ms") ||
	    !strcmp(name, "head-timeout-ms")) {
		int head = name[0] == 'h';

		errno = 0;
		v = strtol(value, &end, 10);
		if (errno || !*value || *end || v < head || v > 3600000) {
			log_err("--%s: %d..3600000, not %s", name, head, value);
			return -EINVAL;
		}
		*(head ? &net->head_timeout_ms : &net->status_interval_cli) = v;
		return 0;
	}
	if (!strcmp(name, "status-heartbeat-ms")) {
		errno = 0;
		v = strtol(value, &end, 10);
		if (errno || !*value || *end || v < 1 || v > 3600000) {
			log_err("--%s: 1..3600000, not %s", name, value);
			return -EINVAL;
		}
		net->status_heartbeat_cli = v;
		return 0;
	}
	if (!strcmp(name, "max-request-conns") ||
	    !strcmp(name, "max-stream-conns")) {
		errno = 0;
		v = strtol(value, &end, 10);
		if (errno || !*value || *end || v < 1 || v > API_CONNS_MAX) {
			log_err("--%s: 1..%d, not %s", name, API_CONNS_MAX,
				value);
			return -EINVAL;
		}
		*(name[4] == 'r' ? &net->max_request_conns
				 : &net->max_stream_conns) = v;
		return 0;
	}
	log_err("unknown network option --%s", name);
	return -EINVAL;
}

int api_option(struct daemon *d, const char *name, const char *value)
{
	struct net_api *net = net_get(d);
	int ret;

	if (!net) {
		log_err("--%s: out of memory", name);
		return -ENOMEM;
	}
	ret = set_option(net, name, value ? value : "");
	if (ret == -ENOMEM)
		log_err("--%s: out of memory", name);
	if (ret == 0)
		return 0;
	/* main() gives up: leave nothing behind. */
	d->api = NULL;
	net_api_free(net);
	return ret;
}

unsigned int net_api_max_conns(const struct net_api *net, int streams)
{
	long cli = streams ? net->max_stream_conns : net->max_request_conns;
	long file = streams ? net->cfg.max_stream_connections
			    : net->cfg.max_request_connections;

	if (cli > 0)
		return (unsigned int)cli;
	if (file > 0)
		return (unsigned int)file;
	return streams ? HTTP_FRONT_MAX_STREAMS : HTTP_FRONT_MAX_REQUESTS;
}

long net_api_status_interval_ms(const struct daemon *d)
{
	const struct net_api *net = net_api_of(d);

	if (net && net->status_interval_cli >= 0)
		return net->status_interval_cli;
	if (net && net->cfg.status_interval_ms >= 0)
		return net->cfg.status_interval_ms;
	return NET_API_STATUS_INTERVAL_MS;
}

long net_api_status_heartbeat_ms(const struct daemon *d)
{
	const struct net_api *net = net_api_of(d);

	return net && net->status_heartbeat_cli > 0
		   ? net->status_heartbeat_cli
		   : STATUS_HEARTBEAT_MS_DEFAULT;
}

int api_start(struct daemon *d)
{
	struct net_api *net = net_api_of(d);
	int err = -ENOMEM;

	if (!net || !net->listen)
		return 0;
	net->loop = d->loop;
	net->events = d->events;
	net->started_ms = api_realtime_ms();
	net->leases = lease_table_new(d->loop, d->events);
	if (net->leases && lease_table_keep(net->leases, d->state) == 0)
		net->commands = command_service_new(d, net->leases);
	if (net->commands)
		net->streams = stream_hub_new(d);
	if (net->streams)
		net->channels = channel_list_new(d->state);
	if (net->channels)
		net->scans =
		    scan_hub_new(d, net->commands, net->streams, net->channels);
	if (!net->scans)
		goto fail;
	command_service_set_channels(net->commands, net->channels);
	errno = 0;
	net->front = http_front_start(net, net->listen);
	err = net->front ? event_streams_start(d, net_api_status_interval_ms(d),
					       net_api_status_heartbeat_ms(d))
			 : (errno ? -errno : -ENOMEM);
	if (!err && net->cfg.mdns.enabled) {
		net->mdns = mdns_start(d, net->cfg.mdns.name,
				       http_front_port(net->front));
		err = net->mdns ? 0 : -ENOMEM;
	}
	if (!err)
		net->mqtt = mqtt_bridge_start(net, &err);
	if (!err)
		err = hdhr_http_start(net);
	if (!err)
		err = rest_history_start(net);
	if (!err)
		return 0;
fail:
	api_stop(d); /* main() does not call it when the start failed */
	return err;
}

void api_stop(struct daemon *d)
{
	struct net_api *net = net_api_of(d);

	if (!net)
		return;
	/* From here on a request that would wait (a tune, a status, a new
	 * event stream) is answered 503 at once: MHD must not stop with a
	 * suspended connection. */
	net->stopping = 1;
	mdns_stop(net->mdns); /* the box leaves the LAN's listings first */
	net->mdns = NULL;
	/* The broker hears "offline" first; the bridge's waiting commands
	 * are dropped before the command service goes. */
	mqtt_bridge_stop(net->mqtt);
	net->mqtt = NULL;
	/* Every stream ends (daemon_stopping) and is resumed to say so
	 * before MHD stops; first, so that the event streams still carry
	 * their stream.stop events. */
	scan_hub_stop(net->scans);
	stream_hub_stop(net->streams);
	/* A lease change in flight is answered (its write ended) before the
	 * front stops; one still in flight past the bound is answered 503
	 * by it, and may or may not be on disk, as at a crash. */
	if (lease_table_flush(net->leases, NET_API_LEASE_FLUSH_MS) ==
	    -ETIMEDOUT)
		log_err("state: the leases' write did not end within %d ms",
			NET_API_LEASE_FLUSH_MS);
	rest_history_stop(net);
	if (net->front)
		event_streams_stop(d);
	http_front_stop(net->front);
	net->front = NULL;
	hdhr_http_free(net);
	stream_hub_free(net->streams);
	net->streams = NULL;
	rest_cache_free(net);
	scan_hub_free(net->scans);
	channel_list_free(net->channels);
	command_service_free(net->commands);
	lease_table_free(net->leases);
	d->api = NULL;
	net_api_free(net);
}

/* SPDX-License-Identifier: MIT */
/*
 * mqtt_priv.h - the MQTT bridge's state, shared by mqtt_bridge.c (the
 * connection on the loop), mqtt_publish.c (events and tuner states) and
 * mqtt_command.c (commands and replies).  Loop thread only.
 */
#ifndef TUNERD_MQTT_PRIV_H
#define TUNERD_MQTT_PRIV_H

#include <jansson.h>
#include <stdint.h>

#include "api_config.h"
#include "command.h"
#include "daemon.h"
#include "log.h"

struct mosquitto;
struct mosquitto_message;
struct net_api;

/* Bounds: a command's payload, a topic the bridge builds or accepts as
 * a reply topic, the wait at a stop, the reconnect back-off. */
#define MQTT_CMD_MAX        16384
#define MQTT_TOPIC_MAX      512
#define MQTT_STOP_MS        1000
#define MQTT_RETRY_MIN_MS   500
#define MQTT_RETRY_MAX_MS   30000
#define MQTT_MISC_PERIOD_MS 1000
#define MQTT_TLS_DRAIN      64 /* packets read per turn from TLS buffers */

/* The last state published for one tuner (retained on the broker). */
struct mqtt_state {
	uint32_t id;
	char *text;       /* as published; NULL: nothing yet */
	int dirty;        /* something changed since */
	uint64_t sent_ms; /* monotonic time of the last publish */
	struct mqtt_state *next;
};

struct mqtt_cmd; /* a command waiting for its answer (mqtt_command.c) */

struct mqtt_bridge {
	struct net_api *net;
	struct daemon *d;
	struct mosquitto *mosq;
	char base[MQTT_PREFIX_MAX + DAEMON_NAME_LEN + 2]; /* prefix/box */
	char label[TUNER_LABEL_LEN];                      /* "mqtt:<id>" */
	char host[MQTT_STRING_MAX + 1];
	int port, keepalive_s;
	int fd;         /* the socket the loop watches, -1 none */
	int connected;  /* CONNACK accepted, not lost since */
	int connecting; /* the socket's TCP connect is pending */
	int tried;      /* a first connect was made (then: reconnects) */
	uint64_t connect_at_ms; /* monotonic time of the last attempt */
	int stopping;
	uint64_t misc_timer;   /* keepalive, reconnects */
	uint64_t drain_timer;  /* TLS bytes left buffered (mqtt_bridge.c) */
	unsigned int retry_ms; /* the next reconnect's delay */
	uint64_t retry_at_ms;  /* monotonic; 0: no reconnect due */
	long subscription;     /* the event bus's */
	/* Messages handed to libmosquitto and not yet written (QoS 0) or
	 * acknowledged (QoS 1); counted from each connection on. */
	unsigned int queued, max_queued;
	uint64_t dropped; /* events not published: offline or queue full */
	struct log_budget drops, refusals;
	/* Tuner states: at most one publish per tuner per interval. */
	struct mqtt_state *states;
	unsigned int state_interval_ms;
	uint64_t state_timer;
	/* Commands. */
	struct command_client client;
	struct mqtt_cmd *cmds;
};

/* mqtt_bridge.c: hand a message to libmosquitto (0, or -1 when it was
 * not: offline, queue full, refused), and refresh the loop's watch. */
int mqtt_publish_raw(struct mqtt_bridge *b, const char *topic,
		     const char *payload, size_t len, int qos, int retain);
void mqtt_sync_socket(struct mqtt_bridge *b);

/* mqtt_publish.c */
int mqtt_publish_start(struct mqtt_bridge *b);
void mqtt_publish_stop(struct mqtt_bridge *b);
/* Connected: every tuner's state again (the broker may have lost it). */
void mqtt_states_republish(struct mqtt_bridge *b);

/* mqtt_command.c */
/* Subscribe to the command topic (at each connect). */
void mqtt_commands_subscribe(struct mqtt_bridge *b);
void mqtt_command_message(struct mqtt_bridge *b,
			  const struct mosquitto_message *msg);
/* Forget the waiting commands (their answers are not sent). */
void mqtt_commands_cancel(struct mqtt_bridge *b);

#endif /* TUNERD_MQTT_PRIV_H */

/* SPDX-License-Identifier: MIT */
/*
 * mqtt_bridge.h - the box on an MQTT broker (the configuration's "mqtt"
 * section): every event, the retained state of every tuner, the box's
 * online/offline status (with a last will), and tune/sleep/init commands
 * through the command service.  libmosquitto runs on the daemon's loop
 * (its socket on a loop watch, a timer for keepalive and reconnects):
 * no thread, so everything happens on the loop thread.
 */
#ifndef TUNERD_MQTT_BRIDGE_H
#define TUNERD_MQTT_BRIDGE_H

struct net_api;
struct mqtt_bridge;

/* Start the bridge when net's configuration enables it (NULL when it
 * does not, *err 0).  Connection failures are retried in the
 * background; only a setup failure returns NULL with *err a negative
 * errno (logged). */
struct mqtt_bridge *mqtt_bridge_start(struct net_api *net, int *err);
/* Publish "offline", disconnect (within MQTT_STOP_MS), free.  After the
 * loop ended or from inside it; NULL is a no-op. */
void mqtt_bridge_stop(struct mqtt_bridge *b);

#endif /* TUNERD_MQTT_BRIDGE_H */

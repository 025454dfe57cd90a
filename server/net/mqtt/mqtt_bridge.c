// SPDX-License-Identifier: MIT
/*
 * The MQTT bridge's connection: libmosquitto driven from the daemon's
 * loop, the way its "external loop" interface intends.  The broker's
 * socket is one loop watch (read always, write while
 * mosquitto_want_write() or while the TCP connect is pending);
 * mosquitto_loop_read()/_write() run from the watch and
 * mosquitto_loop_misc() (keepalive pings) from a one-second timer that
 * also starts the reconnects.  Trade-off against mosquitto_loop_start():
 * no second thread, so the command service, the tuners and the event bus
 * are only ever touched on the loop thread and nothing is locked or
 * marshalled; the price is that a connect resolves the broker's name
 * with a blocking getaddrinfo() (libmosquitto has no asynchronous
 * resolver outside its SRV build), so an address or a name in
 * /etc/hosts is the advice for the host.
 *
 * libmosquitto closes the socket itself when the connection fails
 * (inside loop_read/_write/_misc) and opens a new one in a reconnect.
 * After every call into it mqtt_sync_socket() compares its socket with
 * the watched one; a reconnect drops the watch first, so a new socket
 * with the old number is never mistaken for the watched one.
 */
#include "mqtt_bridge.h"
#include "mqtt_priv.h"

#include <errno.h>
#include <mosquitto.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eventbus.h"
#include "loop.h"
#include "net_api.h"

static int lib_users; /* mosquitto_lib_init() once per process */

/*
 * TLS: OpenSSL may hold decrypted bytes the socket no longer shows as
 * readable, and mosquitto_loop_read() can return after one packet (it
 * stops on an EAGAIN left in errno), so a packet could wait for the
 * next bytes from the broker.  Read on while SSL_pending(), at most
 * MQTT_TLS_DRAIN packets per turn; more go on from a timer at once.
 */
static long drain_tick(struct loop *l, uint64_t id, void *arg);

static void drain_tls(struct mqtt_bridge *b)
{
	SSL *ssl = mosquitto_ssl_get(b->mosq);

	for (int i = 0; ssl && SSL_pending(ssl) > 0; i++) {
		if (i == MQTT_TLS_DRAIN) {
			if (!b->drain_timer)
				b->drain_timer = loop_add_timer(b->d->loop, 0,
								drain_tick, b);
			return;
		}
		mosquitto_loop_read(b->mosq, 1);
		ssl = mosquitto_ssl_get(b->mosq);
	}
}

static long drain_tick(struct loop *l, uint64_t id, void *arg)
{
	struct mqtt_bridge *b = arg;

	(void)l;
	(void)id;
	b->drain_timer = 0;
	drain_tls(b);
	mqtt_sync_socket(b);
	return LOOP_TIMER_DONE;
}

static void mqtt_on_fd(struct loop *l, int fd, unsigned int events, void *arg);

void mqtt_sync_socket(struct mqtt_bridge *b)
{
	int fd = mosquitto_socket(b->mosq);
	unsigned int mask = LOOP_READ;

	if (b->stopping) /* say_goodbye() polls the socket itself */
		fd = -1;
	if (fd != b->fd) {
		if (b->fd >= 0)
			loop_del_fd(b->d->loop, b->fd);
		b->fd = -1;
		if (fd < 0)
			return;
		b->connecting = 1; /* a new socket: its connect is pending */
	}
	if (fd < 0)
		return;
	if (b->connecting || mosquitto_want_write(b->mosq))
		mask |= LOOP_WRITE;
	if (b->fd < 0) {
		if (loop_add_fd(b->d->loop, fd, mask, mqtt_on_fd, b) == 0)
			b->fd = fd;
		else
			log_err("mqtt: cannot watch the broker's socket");
		return;
	}
	loop_set_fd_mask(b->d->loop, fd, mask);
}

static void mqtt_on_fd(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct mqtt_bridge *b = arg;

	(void)l;
	(void)fd;
	if (events & LOOP_READ) {
		mosquitto_loop_read(b->mosq, 1);
		drain_tls(b);
	}
	if ((events & LOOP_WRITE) && mosquitto_socket(b->mosq) == b->fd) {
		b->connecting = 0; /* writable: the TCP connect ended */
		mosquitto_loop_write(b->mosq, 1);
	}
	mqtt_sync_socket(b);
}

static void schedule_retry(struct mqtt_bridge *b)
{
	b->retry_at_ms = loop_now_ms() + b->retry_ms;
	b->retry_ms = b->retry_ms * 2 > MQTT_RETRY_MAX_MS ? MQTT_RETRY_MAX_MS
							  : b->retry_ms * 2;
}

static void try_connect(struct mqtt_bridge *b)
{
	int rc;

	/* The old socket (if any) is closed inside the call, and the new
	 * one may get its number: stop watching first. */
	if (b->fd >= 0)
		loop_del_fd(b->d->loop, b->fd);
	b->fd = -1;
	b->retry_at_ms = 0;
	b->connect_at_ms = loop_now_ms();
	rc = b->tried ? mosquitto_reconnect_async(b->mosq)
		      : mosquitto_connect_async(b->mosq, b->host, b->port,
						b->keepalive_s);
	b->tried = 1;
	if (rc != MOSQ_ERR_SUCCESS) {
		log_limited(&b->refusals, loop_now_ms(), LL_WARN,
			    "mqtt: connect to %s:%d: %s", b->host, b->port,
			    rc == MOSQ_ERR_ERRNO ? strerror(errno)
						 : mosquitto_strerror(rc));
		schedule_retry(b);
		return;
	}
	mqtt_sync_socket(b);
}

static long misc_tick(struct loop *l, uint64_t id, void *arg)
{
	struct mqtt_bridge *b = arg;
	uint64_t now = loop_now_ms();

	(void)l;
	(void)id;
	if (b->fd >= 0) {
		mosquitto_loop_misc(b->mosq);
		/* A connect that neither succeeds nor fails (a broker that
		 * accepts and says nothing) is given a keepalive to answer. */
		if (!b->connected &&
		    now - b->connect_at_ms > (uint64_t)b->keepalive_s * 1000)
			try_connect(b);
	} else if (!b->retry_at_ms) {
		schedule_retry(b);
	}
	if (b->retry_at_ms && now >= b->retry_at_ms)
		try_connect(b);
	mqtt_sync_socket(b);
	return MQTT_MISC_PERIOD_MS;
}

static void on_connect(struct mosquitto *m, void *arg, int rc)
{
	struct mqtt_bridge *b = arg;
	char topic[MQTT_TOPIC_MAX];

	(void)m;
	if (rc) {
		log_limited(&b->refusals, loop_now_ms(), LL_WARN,
			    "mqtt: %s:%d refused the connection: %s", b->host,
			    b->port, mosquitto_connack_string(rc));
		return; /* the disconnect that follows retries */
	}
	b->connected = 1;
	b->queued = 0;
	b->retry_ms = MQTT_RETRY_MIN_MS;
	log_info("mqtt: connected to %s:%d as %s", b->host, b->port,
		 b->label + 5);
	snprintf(topic, sizeof(topic), "%s/status", b->base);
	mqtt_publish_raw(b, topic, "online", 6, 1, 1);
	mqtt_commands_subscribe(b);
	mqtt_states_republish(b);
}

static void on_disconnect(struct mosquitto *m, void *arg, int rc)
{
	struct mqtt_bridge *b = arg;

	(void)m;
	if (b->connected && !b->stopping)
		log_warn("mqtt: connection to %s:%d lost (%s), reconnecting",
			 b->host, b->port,
			 rc ? mosquitto_strerror(rc) : "closed");
	b->connected = 0;
	if (!b->stopping && !b->retry_at_ms)
		schedule_retry(b);
}

static void on_publish(struct mosquitto *m, void *arg, int mid)
{
	struct mqtt_bridge *b = arg;

	(void)m;
	(void)mid;
	if (b->queued)
		b->queued--;
}

static void on_message(struct mosquitto *m, void *arg,
		       const struct mosquitto_message *msg)
{
	(void)m;
	mqtt_command_message(arg, msg);
}

int mqtt_publish_raw(struct mqtt_bridge *b, const char *topic,
		     const char *payload, size_t len, int qos, int retain)
{
	int rc;

	if (!b->connected || b->queued >= b->max_queued || len > INT32_MAX)
		return -1;
	rc = mosquitto_publish(b->mosq, NULL, topic, (int)len, payload, qos,
			       retain);
	if (rc != MOSQ_ERR_SUCCESS)
		return -1;
	b->queued++;
	mqtt_sync_socket(b);
	return 0;
}

/* The box's name as one topic level: '/', '+' and '#' become '_'. */
static void set_base(struct mqtt_bridge *b, const struct mqtt_config *cfg)
{
	char *p;
	size_t n;

	n = (size_t)snprintf(b->base, sizeof(b->base), "%s/",
			     cfg->topic_prefix ? cfg->topic_prefix : "tunerd");
	snprintf(b->base + n, sizeof(b->base) - n, "%s", b->d->name);
	for (p = b->base + n; *p; p++)
		if (*p == '/' || *p == '+' || *p == '#')
			*p = '_';
}

static int setup_client(struct mqtt_bridge *b, const struct mqtt_config *cfg)
{
	char topic[MQTT_TOPIC_MAX], id[TUNER_LABEL_LEN];
	int rc;

	snprintf(id, sizeof(id), "%s", b->label + 5);
	b->mosq = mosquitto_new(id, true, b);
	if (!b->mosq)
		return -ENOMEM;
	mosquitto_connect_callback_set(b->mosq, on_connect);
	mosquitto_disconnect_callback_set(b->mosq, on_disconnect);
	mosquitto_publish_callback_set(b->mosq, on_publish);
	mosquitto_message_callback_set(b->mosq, on_message);
	rc = cfg->username ? mosquitto_username_pw_set(b->mosq, cfg->username,
						       cfg->password)
			   : MOSQ_ERR_SUCCESS;
	if (!rc && cfg->tls)
		rc = mosquitto_tls_set(b->mosq, cfg->ca_file, NULL,
				       cfg->cert_file, cfg->key_file, NULL);
	if (!rc && cfg->tls && cfg->insecure)
		rc = mosquitto_tls_insecure_set(b->mosq, true);
	snprintf(topic, sizeof(topic), "%s/status", b->base);
	if (!rc)
		rc = mosquitto_will_set(b->mosq, topic, 7, "offline", 1, true);
	if (rc) {
		/* tls_set checks that the files can be read. */
		log_err("mqtt: %s", rc == MOSQ_ERR_ERRNO
					? strerror(errno)
					: mosquitto_strerror(rc));
		return -EINVAL;
	}
	return 0;
}

struct mqtt_bridge *mqtt_bridge_start(struct net_api *net, int *err)
{
	const struct mqtt_config *cfg = &net->cfg.mqtt;
	struct mqtt_bridge *b;

	*err = 0;
	if (!cfg->enabled)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b) {
		*err = -ENOMEM;
		return NULL;
	}
	if (!lib_users++)
		mosquitto_lib_init();
	*b = (struct mqtt_bridge){
	    .net = net,
	    .d = net->d,
	    .fd = -1,
	    .port = cfg->port ? cfg->port
			      : (cfg->tls ? MQTT_DEFAULT_TLS_PORT
					  : MQTT_DEFAULT_PORT),
	    .keepalive_s = cfg->keepalive_s,
	    .retry_ms = MQTT_RETRY_MIN_MS,
	    .max_queued = (unsigned int)cfg->max_queued,
	    .state_interval_ms = (unsigned int)cfg->state_interval_ms,
	    .drops = LOG_BUDGET_INIT("mqtt: dropped messages", 5, 60000),
	    .refusals = LOG_BUDGET_INIT("mqtt: connection failures", 5, 60000),
	};
	snprintf(b->host, sizeof(b->host), "%s", cfg->host);
	/* The label (changed_by, "by" of events) is the client id. */
	if (cfg->client_id)
		snprintf(b->label, sizeof(b->label), "mqtt:%.*s",
			 MQTT_CLIENT_ID_MAX, cfg->client_id);
	else
		snprintf(b->label, sizeof(b->label), "mqtt:tunerd-%.*s",
			 MQTT_CLIENT_ID_MAX - 7, net->d->name);
	set_base(b, cfg);
	command_client_init(&b->client, net->commands, cfg->role, NULL,
			    (unsigned int)cfg->max_inflight);
	b->client.label = b->label;
	*err = setup_client(b, cfg);
	if (!*err)
		*err = mqtt_publish_start(b);
	if (!*err) {
		b->misc_timer = loop_add_timer(
		    net->d->loop, MQTT_MISC_PERIOD_MS, misc_tick, b);
		*err = b->misc_timer ? 0 : -ENOMEM;
	}
	if (*err) {
		mqtt_bridge_stop(b);
		return NULL;
	}
	log_info("mqtt: bridge to %s:%d%s, topics %s/...", b->host, b->port,
		 cfg->tls ? " (TLS)" : "", b->base);
	try_connect(b);
	return b;
}

/* At a stop the loop no longer runs: "offline" and the DISCONNECT are
 * written here, polling the socket within MQTT_STOP_MS (poll(), not
 * mosquitto_loop()'s select(), which refuses fds past FD_SETSIZE and the
 * daemon raises its fd limit).  libmosquitto closes the socket once the
 * DISCONNECT is out.  A clean DISCONNECT makes the broker drop the will,
 * so the retained "offline" is published explicitly; a stop that cannot
 * write leaves the will to say it. */
static void say_goodbye(struct mqtt_bridge *b)
{
	char topic[MQTT_TOPIC_MAX];
	uint64_t end = loop_now_ms() + MQTT_STOP_MS, now;
	int fd;

	if (b->fd >= 0)
		loop_del_fd(b->d->loop, b->fd);
	b->fd = -1;
	if (!b->connected)
		return;
	snprintf(topic, sizeof(topic), "%s/status", b->base);
	b->queued = 0;
	mqtt_publish_raw(b, topic, "offline", 7, 0, 1);
	mosquitto_disconnect(b->mosq);
	while ((fd = mosquitto_socket(b->mosq)) >= 0 &&
	       (now = loop_now_ms()) < end) {
		struct pollfd p = {
		    .fd = fd,
		    .events =
			(short)(POLLIN |
				(mosquitto_want_write(b->mosq) ? POLLOUT : 0))};

		if (poll(&p, 1, (int)(end - now)) <= 0)
			break;
		if (p.revents & (POLLIN | POLLHUP | POLLERR))
			mosquitto_loop_read(b->mosq, 1);
		if ((p.revents & POLLOUT) && mosquitto_socket(b->mosq) == fd)
			mosquitto_loop_write(b->mosq, 1);
	}
	b->connected = 0;
}

void mqtt_bridge_stop(struct mqtt_bridge *b)
{
	if (!b)
		return;
	b->stopping = 1;
	mqtt_commands_cancel(b);
	mqtt_publish_stop(b);
	loop_del_timer(b->d->loop, b->misc_timer);
	loop_del_timer(b->d->loop, b->drain_timer);
	if (b->mosq) {
		say_goodbye(b);
		mosquitto_destroy(b->mosq);
	}
	if (!--lib_users)
		mosquitto_lib_cleanup();
	free(b);
}

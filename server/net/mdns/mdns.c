// SPDX-License-Identifier: MIT
/*
 * The DNS-SD advertiser.  Avahi's client runs with AVAHI_CLIENT_NO_FAIL:
 * it waits for avahi-daemon, and when the daemon restarts the client
 * falls back to CONNECTING and the service is registered again once it
 * is RUNNING, with no code here for reconnects.  A name taken by another
 * box is replaced by Avahi's alternative ("box #2"), as every DNS-SD
 * service does.  The tuner count in the TXT records follows attaches and
 * detaches through the event bus.
 */
#include "mdns.h"

#include <avahi-client/client.h>
#include <avahi-client/publish.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avahi_loop.h"
#include "daemon.h"
#include "eventbus.h"
#include "log.h"
#include "loop.h"
#include "tuner.h"
#include "tunerd_version.h"

struct mdns {
	struct daemon *d;
	struct avahi_loop *al;
	AvahiClient *client;
	AvahiEntryGroup *group;
	char *name; /* avahi_malloc'ed: alternatives come from Avahi */
	int port;
	unsigned int tuners; /* in the TXT records now */
	long sub;            /* event bus subscription */
	uint64_t renew;      /* timer: a new client after a lost daemon */
};

/* The TXT records' texts (DNS-SD keeps each under 255 bytes). */
struct mdns_txt {
	char name[DAEMON_NAME_LEN + 8], version[48], tuners[24];
};

static unsigned int tuner_count(struct daemon *d)
{
	unsigned int n = 0;

	for (struct tuner *t = tuner_first(d); t; t = tuner_next(t))
		n++;
	return n;
}

static void txt_fill(const struct mdns *m, struct mdns_txt *txt)
{
	snprintf(txt->name, sizeof(txt->name), "name=%s", m->d->name);
	snprintf(txt->version, sizeof(txt->version), "version=%s",
		 TUNERD_VERSION);
	snprintf(txt->tuners, sizeof(txt->tuners), "tuners=%u", m->tuners);
}

static void group_changed(AvahiEntryGroup *g, AvahiEntryGroupState state,
			  void *arg);

static void publish_renamed(struct mdns *m)
{
	char *next = avahi_alternative_service_name(m->name);

	log_warn("mdns: the name \"%s\" is taken on the network; now \"%s\"",
		 m->name, next ? next : "?");
	if (!next)
		return;
	avahi_free(m->name);
	m->name = next;
}

/* Register the service (again, after a collision or a daemon restart). */
static void publish(struct mdns *m, AvahiClient *c)
{
	struct mdns_txt txt;
	int err;

	if (!m->group)
		m->group = avahi_entry_group_new(c, group_changed, m);
	if (!m->group) {
		log_err("mdns: %s", avahi_strerror(avahi_client_errno(c)));
		return;
	}
	avahi_entry_group_reset(m->group);
	m->tuners = tuner_count(m->d);
	txt_fill(m, &txt);
	for (int tries = 0; tries < 16; tries++) {
		err = avahi_entry_group_add_service(
		    m->group, AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC, 0, m->name,
		    MDNS_SERVICE_TYPE, NULL, NULL, (uint16_t)m->port,
		    "txtvers=1", txt.name, txt.version, "api=" MDNS_API_PATH,
		    txt.tuners, NULL);
		if (err != AVAHI_ERR_COLLISION)
			break;
		publish_renamed(m);
	}
	if (!err)
		err = avahi_entry_group_commit(m->group);
	if (err)
		log_err("mdns: cannot advertise \"%s\": %s", m->name,
			avahi_strerror(err));
}

static void group_changed(AvahiEntryGroup *g, AvahiEntryGroupState state,
			  void *arg)
{
	struct mdns *m = arg;

	if (state == AVAHI_ENTRY_GROUP_ESTABLISHED) {
		log_info("mdns: advertising \"%s\" (%s, port %d)", m->name,
			 MDNS_SERVICE_TYPE, m->port);
	} else if (state == AVAHI_ENTRY_GROUP_COLLISION) {
		publish_renamed(m);
		publish(m, avahi_entry_group_get_client(g));
	} else if (state == AVAHI_ENTRY_GROUP_FAILURE) {
		log_err("mdns: %s", avahi_strerror(avahi_client_errno(
					avahi_entry_group_get_client(g))));
	}
}

static long client_renew(struct loop *l, uint64_t id, void *arg);

static void client_changed(AvahiClient *c, AvahiClientState state, void *arg)
{
	struct mdns *m = arg;

	switch (state) {
	case AVAHI_CLIENT_S_RUNNING:
		publish(m, c);
		break;
	case AVAHI_CLIENT_S_COLLISION:
	case AVAHI_CLIENT_S_REGISTERING:
		/* The host name changes: Avahi wants the records withdrawn
		 * and added again once it is RUNNING. */
		if (m->group)
			avahi_entry_group_reset(m->group);
		break;
	case AVAHI_CLIENT_CONNECTING:
		log_info("mdns: waiting for avahi-daemon");
		break;
	case AVAHI_CLIENT_FAILURE:
		if (avahi_client_errno(c) == AVAHI_ERR_DISCONNECTED) {
			/* avahi-daemon went away (a restart): a new client
			 * waits for it, made outside this callback, which
			 * must not free its own client. */
			log_warn(
			    "mdns: avahi-daemon went away; waiting for it");
			m->group = NULL; /* went with the client */
			if (!m->renew)
				m->renew = loop_add_timer(m->d->loop, 0,
							  client_renew, m);
			break;
		}
		log_err("mdns: %s; not advertising",
			avahi_strerror(avahi_client_errno(c)));
		break;
	}
}

/* The tuner count in the TXT records follows attaches and detaches. */
static void on_event(const struct event *ev, void *arg)
{
	struct mdns *m = arg;
	struct mdns_txt txt;
	unsigned int n;

	if (strcmp(ev->type, "tuner.attach") &&
	    strcmp(ev->type, "tuner.detach"))
		return;
	n = tuner_count(m->d);
	if (n == m->tuners || !m->group || avahi_entry_group_is_empty(m->group))
		return;
	m->tuners = n;
	txt_fill(m, &txt);
	avahi_entry_group_update_service_txt(
	    m->group, AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC, 0, m->name,
	    MDNS_SERVICE_TYPE, NULL, "txtvers=1", txt.name, txt.version,
	    "api=" MDNS_API_PATH, txt.tuners, NULL);
}

static int client_open(struct mdns *m)
{
	int err = 0;

	m->client =
	    avahi_client_new(avahi_loop_poll(m->al), AVAHI_CLIENT_NO_FAIL,
			     client_changed, m, &err);
	if (!m->client)
		log_err("mdns: no Avahi client: %s; not advertising",
			avahi_strerror(err));
	return m->client ? 0 : -1;
}

static long client_renew(struct loop *l, uint64_t id, void *arg)
{
	struct mdns *m = arg;

	(void)l;
	(void)id;
	m->renew = 0;
	avahi_client_free(m->client);
	m->client = NULL;
	client_open(m);
	return LOOP_TIMER_DONE;
}

struct mdns *mdns_start(struct daemon *d, const char *service_name, int port)
{
	struct mdns *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->d = d;
	m->port = port;
	m->name = avahi_strdup(service_name && *service_name ? service_name
							     : d->name);
	m->al = avahi_loop_new(d->loop);
	if (!m->name || !m->al) {
		mdns_stop(m);
		return NULL;
	}
	m->sub = eventbus_subscribe(d->events, on_event, m);
	client_open(m);
	return m;
}

void mdns_stop(struct mdns *m)
{
	if (!m)
		return;
	if (m->sub > 0)
		eventbus_unsubscribe(m->d->events, m->sub);
	loop_del_timer(m->d->loop, m->renew);
	/* Frees the group with it, withdrawing the records. */
	if (m->client)
		avahi_client_free(m->client);
	avahi_loop_free(m->al);
	avahi_free(m->name);
	free(m);
}

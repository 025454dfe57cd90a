// SPDX-License-Identifier: MIT
/*
 * discover.c - boxes found by DNS-SD ("_tunerd._tcp", through the local
 * Avahi daemon) instead of the command line or the config file.
 *
 * The browse ends when Avahi says it has told all it knows for now
 * (ALL_FOR_NOW) and every resolve it started has ended, or at the
 * timeout: a box that answers later is not waited for.  A box is
 * labelled by its service name, which DNS-SD keeps unique on the LAN
 * (two boxes named alike become "box" and "box #2"; the TXT "name" would
 * not be), and found twice (IPv4 and IPv6, two interfaces) it is listed
 * once.
 */
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/simple-watch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "tunerctl.h"

struct browse {
	AvahiSimplePoll *poll;
	struct ctl_boxes *out;
	const char *token;
	unsigned int resolving;
	int all_for_now;
	int failed;
};

static void maybe_done(struct browse *b)
{
	if (b->all_for_now && !b->resolving)
		avahi_simple_poll_quit(b->poll);
}

static int known(const struct ctl_boxes *boxes, const char *name)
{
	for (size_t i = 0; i < boxes->n; i++)
		if (!strcmp(boxes->v[i].name, name))
			return 1;
	return 0;
}

static void add_resolved(struct browse *b, const char *service,
			 const AvahiAddress *a, uint16_t port)
{
	char addr[AVAHI_ADDRESS_STR_MAX];
	char url[AVAHI_ADDRESS_STR_MAX + 32];

	avahi_address_snprint(addr, sizeof(addr), a);
	snprintf(url, sizeof(url),
		 a->proto == AVAHI_PROTO_INET6 ? "http://[%s]:%u"
					       : "http://%s:%u",
		 addr, port);
	if (!known(b->out, service) &&
	    ctl_boxes_add(b->out, service, url, b->token))
		b->failed = 1;
}

static void resolved(AvahiServiceResolver *r, AvahiIfIndex iface,
		     AvahiProtocol proto, AvahiResolverEvent event,
		     const char *name, const char *type, const char *domain,
		     const char *host, const AvahiAddress *a, uint16_t port,
		     AvahiStringList *txt, AvahiLookupResultFlags flags,
		     void *arg)
{
	struct browse *b = arg;

	(void)iface, (void)proto, (void)type, (void)domain, (void)host;
	(void)flags, (void)txt;
	/* A link-local IPv6 address needs its interface in the URL; the
	 * IPv4 answer of the same box serves. */
	if (event == AVAHI_RESOLVER_FOUND &&
	    !(a->proto == AVAHI_PROTO_INET6 &&
	      a->data.ipv6.address[0] == 0xfe &&
	      (a->data.ipv6.address[1] & 0xc0) == 0x80))
		add_resolved(b, name, a, port);
	avahi_service_resolver_free(r);
	b->resolving--;
	maybe_done(b);
}

static void browsed(AvahiServiceBrowser *sb, AvahiIfIndex iface,
		    AvahiProtocol proto, AvahiBrowserEvent event,
		    const char *name, const char *type, const char *domain,
		    AvahiLookupResultFlags flags, void *arg)
{
	struct browse *b = arg;

	(void)flags;
	if (event == AVAHI_BROWSER_NEW) {
		if (avahi_service_resolver_new(
			avahi_service_browser_get_client(sb), iface, proto,
			name, type, domain, AVAHI_PROTO_UNSPEC, 0, resolved, b))
			b->resolving++;
	} else if (event == AVAHI_BROWSER_ALL_FOR_NOW) {
		b->all_for_now = 1;
		maybe_done(b);
	} else if (event == AVAHI_BROWSER_FAILURE) {
		ctl_err("discover: %s",
			avahi_strerror(avahi_client_errno(
			    avahi_service_browser_get_client(sb))));
		b->failed = 1;
		avahi_simple_poll_quit(b->poll);
	}
}

static void client_state(AvahiClient *c, AvahiClientState state, void *arg)
{
	(void)c, (void)state, (void)arg;
}

/* Run the poll until done or until timeout_ms have passed. */
static void run_bounded(struct browse *b, long timeout_ms)
{
	struct timeval end, now;

	gettimeofday(&end, NULL);
	end.tv_sec += timeout_ms / 1000;
	end.tv_usec += (timeout_ms % 1000) * 1000;
	for (;;) {
		long left;

		gettimeofday(&now, NULL);
		left = (end.tv_sec - now.tv_sec) * 1000 +
		       (end.tv_usec - now.tv_usec) / 1000;
		if (left <= 0)
			return;
		if (avahi_simple_poll_iterate(b->poll, (int)left) != 0)
			return; /* quit, or an error */
	}
}

int ctl_boxes_discover(struct ctl_boxes *out, long timeout_ms,
		       const char *token)
{
	struct browse b = {.out = out, .token = token};
	AvahiClient *client = NULL;
	AvahiServiceBrowser *sb = NULL;
	int err = 0;

	memset(out, 0, sizeof(*out));
	b.poll = avahi_simple_poll_new();
	if (b.poll)
		client = avahi_client_new(avahi_simple_poll_get(b.poll), 0,
					  client_state, NULL, &err);
	if (client)
		sb = avahi_service_browser_new(
		    client, AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC,
		    CTL_DISCOVER_TYPE, NULL, 0, browsed, &b);
	if (!sb) {
		ctl_err(
		    "discover: %s (is avahi-daemon running?)",
		    avahi_strerror(client ? avahi_client_errno(client) : err));
		b.failed = 1;
	} else {
		run_bounded(&b, timeout_ms);
	}
	if (client)
		avahi_client_free(client); /* frees browser and resolvers */
	if (b.poll)
		avahi_simple_poll_free(b.poll);
	if (b.failed)
		return CTL_EXIT_CONN;
	if (!out->n) {
		ctl_err("discover: no box found on the network");
		return CTL_EXIT_CONN;
	}
	return CTL_EXIT_OK;
}

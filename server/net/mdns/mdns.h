/* SPDX-License-Identifier: MIT */
/*
 * mdns.h - the box on the LAN's DNS-SD: "_tunerd._tcp" with TXT records
 * (name, version, API path, tuner count), through the system's Avahi
 * daemon.  Off unless the configuration's "mdns" section enables it.
 */
#ifndef TUNERD_MDNS_H
#define TUNERD_MDNS_H

struct daemon;
struct mdns;

#define MDNS_SERVICE_TYPE "_tunerd._tcp"
#define MDNS_API_PATH     "/api/v1"

/*
 * Advertise the API on port.  Never fails the daemon for want of Avahi:
 * without avahi-daemon (or its bus) the advertiser waits for one to
 * appear and registers then, with a log line either way.  NULL only when
 * out of memory.
 */
struct mdns *mdns_start(struct daemon *d, const char *service_name, int port);
void mdns_stop(struct mdns *m);

#endif /* TUNERD_MDNS_H */

/* SPDX-License-Identifier: MIT */
/*
 * avahi_loop.h - Avahi's client library on the daemon's loop: an
 * AvahiPoll whose watches and timeouts are lib/loop fd watches and
 * timers, so mDNS runs on the one loop thread like everything else.
 */
#ifndef TUNERD_AVAHI_LOOP_H
#define TUNERD_AVAHI_LOOP_H

#include <avahi-common/watch.h>

struct loop;
struct avahi_loop;

/* NULL when out of memory.  The loop outlives it. */
struct avahi_loop *avahi_loop_new(struct loop *loop);
/* The AvahiPoll to give avahi_client_new(); valid until the free. */
const AvahiPoll *avahi_loop_poll(struct avahi_loop *al);
/* Free after avahi_client_free(): every watch and timeout must be gone. */
void avahi_loop_free(struct avahi_loop *al);

#endif /* TUNERD_AVAHI_LOOP_H */

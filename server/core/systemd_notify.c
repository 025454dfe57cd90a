// SPDX-License-Identifier: MIT
/*
 * The watchdog is fed from a timer of the daemon's own loop, not from a
 * thread: a ping proves the loop still turns, which is what a hung
 * daemon would not do.  Pings go at half the period systemd gives, the
 * margin sd_watchdog_enabled(3) recommends.
 */
#include "systemd_notify.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "daemon.h"
#include "eventbus.h"
#include "log.h"
#include "loop.h"

static struct {
	struct daemon *d;
	char api[128]; /* "" when the API does not listen */
	long sub;      /* eventbus subscription, 0 none */
	uint64_t watchdog_timer;
	long watchdog_ms;
	int ready; /* READY=1 sent */
} notify;

/* sd_notify() returns 0 without $NOTIFY_SOCKET: nothing to do then. */
static void send_state(const char *state)
{
	int ret = sd_notify(0, state);

	if (ret < 0)
		log_warn("systemd: cannot notify \"%s\": %s", state,
			 strerror(-ret));
}

static void send_ready(void)
{
	char state[256];

	snprintf(state, sizeof(state),
		 "READY=1\nSTATUS=serving: stub connected (%s)%s%s",
		 notify.d->session.kind == TSTUB_KIND_SIM ? "simulated box"
							  : "kernel",
		 notify.api[0] ? ", API on " : ", no network API", notify.api);
	send_state(state);
	notify.ready = 1;
}

static void on_event(const struct event *ev, void *arg)
{
	char where[PATH_MAX + 8], state[PATH_MAX + 64];

	(void)arg;
	if (!strcmp(ev->type, "stub.connected")) {
		send_ready();
	} else if (!strcmp(ev->type, "stub.disconnected")) {
		snprintf(state, sizeof(state),
			 "STATUS=stub %s disconnected: reconnecting",
			 stub_addr_str(&notify.d->stub, where, sizeof(where)));
		send_state(state);
	}
}

static long watchdog_ping(struct loop *l, uint64_t id, void *arg)
{
	(void)l;
	(void)id;
	(void)arg;
	send_state("WATCHDOG=1");
	return notify.watchdog_ms;
}

static int start_watchdog(struct daemon *d)
{
	uint64_t usec = 0;
	int ret = sd_watchdog_enabled(0, &usec);

	if (ret <= 0) {
		if (ret < 0)
			log_warn("systemd: watchdog: %s", strerror(-ret));
		return 0;
	}
	notify.watchdog_ms = (long)(usec / 2000);
	if (notify.watchdog_ms < 1)
		notify.watchdog_ms = 1;
	notify.watchdog_timer = loop_add_timer(
	    d->loop, (uint64_t)notify.watchdog_ms, watchdog_ping, NULL);
	if (!notify.watchdog_timer)
		return -ENOMEM;
	log_info("systemd: watchdog ping every %ld ms", notify.watchdog_ms);
	return 0;
}

int systemd_notify_start(struct daemon *d, const char *api)
{
	char where[PATH_MAX + 8], state[PATH_MAX + 64];
	long sub;

	memset(&notify, 0, sizeof(notify));
	notify.d = d;
	snprintf(notify.api, sizeof(notify.api), "%s", api ? api : "");
	if (!getenv("NOTIFY_SOCKET"))
		return 0;
	sub = eventbus_subscribe(d->events, on_event, NULL);
	if (sub < 0)
		return (int)sub;
	notify.sub = sub;
	if (d->session.connected) {
		send_ready();
	} else {
		snprintf(state, sizeof(state), "STATUS=waiting for the stub %s",
			 stub_addr_str(&d->stub, where, sizeof(where)));
		send_state(state);
	}
	return start_watchdog(d);
}

/* Before READY=1 a reload is not announced: the start is still under
 * way, and READY=1 must wait for the stub. */
void systemd_notify_reloading(void)
{
	if (notify.ready)
		send_state("RELOADING=1\nSTATUS=reloading the configuration");
}

/* READY=1 ends the reload whether or not the file was taken. */
void systemd_notify_reloaded(int err)
{
	if (!notify.ready)
		return;
	if (err)
		send_state("READY=1\nSTATUS=serving; the last reload was "
			   "refused, the old configuration stays");
	else
		send_ready();
}

void systemd_notify_stopping(void)
{
	if (notify.sub)
		send_state("STOPPING=1\nSTATUS=shutting down");
}

void systemd_notify_stop(void)
{
	if (!notify.d)
		return;
	if (notify.watchdog_timer)
		loop_del_timer(notify.d->loop, notify.watchdog_timer);
	if (notify.sub)
		eventbus_unsubscribe(notify.d->events, notify.sub);
	memset(&notify, 0, sizeof(notify));
}

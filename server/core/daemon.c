// SPDX-License-Identifier: MIT
#include "daemon.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "control.h"
#include "eventbus.h"
#include "log.h"
#include "loop.h"
#include "plugin_host.h"
#include "state_file.h"
#include "tuner.h"

/* The errno a constructor returning NULL left, -ENOMEM when it left none
 * (a failed calloc). */
static int errno_or_nomem(void)
{
	return errno > 0 ? -errno : -ENOMEM;
}

/*
 * Events published soon (eventbus_publish_soon()) go out after the
 * answers of the turn that published them.  The front sends answers from
 * a zero-delay timer (http_front_kick_soon()), and libuv runs timers of
 * the same due time in the order they were started; so the flush is a
 * zero-delay timer too, started at the turn's end (a check handle, after
 * every callback of the turn), behind the front's.  An event then waits
 * for the rest of its turn and the next turn's earlier timers, never for
 * a poll; a request read meanwhile that reads the ring flushes it first.
 */
static long events_flush_tick(struct loop *l, uint64_t id, void *arg)
{
	struct daemon *d = arg;

	(void)l;
	(void)id;
	d->events_flush_timer = 0;
	eventbus_flush(d->events);
	return LOOP_TIMER_DONE;
}

static void events_turn_end(uv_check_t *h)
{
	struct daemon *d = h->data;

	uv_check_stop(h);
	if (!d->events_flush_timer)
		d->events_flush_timer =
		    loop_add_timer(d->loop, 0, events_flush_tick, d);
	if (!d->events_flush_timer)
		eventbus_flush(d->events); /* no timer: now, not never */
}

static void events_due(void *arg)
{
	struct daemon *d = arg;

	uv_check_start(d->events_check, events_turn_end);
}

static int events_soon_init(struct daemon *d)
{
	d->events_check = calloc(1, sizeof(*d->events_check));
	if (!d->events_check)
		return -ENOMEM;
	uv_check_init(loop_uv(d->loop), d->events_check);
	uv_unref((uv_handle_t *)d->events_check);
	d->events_check->data = d;
	eventbus_set_flush_hook(d->events, events_due, d);
	return 0;
}

int daemon_init(struct daemon *d, const struct daemon_config *cfg)
{
	int err = 0;

	memset(d, 0, sizeof(*d));
	d->stub = cfg->stub;
	d->deadline_ms =
	    cfg->deadline_ms ? cfg->deadline_ms : DAEMON_DEFAULT_DEADLINE_MS;
	if (cfg->firmware_dir)
		snprintf(d->firmware_dir, sizeof(d->firmware_dir), "%s",
			 cfg->firmware_dir);
	if (cfg->name)
		snprintf(d->name, sizeof(d->name), "%s", cfg->name);
	else if (gethostname(d->name, sizeof(d->name) - 1) < 0)
		snprintf(d->name, sizeof(d->name), "tunerd");
	d->started_ms = eventbus_now_ms();
	errno = 0;
	d->loop = loop_new();
	if (!d->loop) {
		err = errno_or_nomem();
		goto err;
	}
	d->events = eventbus_new(cfg->event_ring ? cfg->event_ring
						 : EVENTBUS_DEFAULT_RING);
	if (!d->events) {
		err = -ENOMEM;
		goto err;
	}
	eventbus_set_retention(d->events,
			       cfg->event_ring_keep_ms
				   ? cfg->event_ring_keep_ms
				   : EVENTBUS_DEFAULT_KEEP_MS,
			       cfg->event_ring_bytes ? cfg->event_ring_bytes
						     : EVENTBUS_DEFAULT_BYTES);
	err = eventbus_set_box(d->events, d->name);
	if (!err)
		err = events_soon_init(d);
	if (err)
		goto err;
	errno = 0;
	d->plugins = plugin_host_new(d->loop, d->events);
	if (!d->plugins) {
		err = errno_or_nomem();
		goto err;
	}
	for (const char *const *dir = cfg->plugin_dirs; dir && *dir; dir++) {
		err = plugin_host_add_dir(d->plugins, *dir);
		if (err)
			goto err;
	}
	return 0;
err:
	daemon_fini(d);
	return err;
}

int daemon_open_state(struct daemon *d, const char *path, const char *source)
{
	int err = state_dir_open(path, &d->state);

	if (err && !source) {
		log_warn("state: %s: %s; leases and params will not survive "
			 "a restart (--state-dir DIR to keep them)",
			 path, strerror(-err));
		return 0;
	}
	if (err) {
		log_err("state: cannot use %s %s: %s", source, path,
			strerror(-err));
		return err;
	}
	log_info("state: kept in %s", path);
	err = tuners_load_saved(d);
	if (err)
		log_err("state: %s", strerror(-err));
	return err;
}

int daemon_start(struct daemon *d)
{
	return control_start(d);
}

void daemon_fini(struct daemon *d)
{
	d->stopping = 1;
	plugin_host_stop(d->plugins); /* waiting loads answered while the
					 control channel is there */
	tuners_shutdown(d);
	control_stop(d);
	plugin_host_free(d->plugins);
	tuners_free_saved(d);
	state_dir_close(d->state);
	d->state = NULL;
	if (d->events)
		eventbus_flush(d->events); /* the shutdown's own events */
	eventbus_free(d->events);
	loop_free(d->loop); /* closes events_check */
	free(d->events_check);
	d->events_check = NULL;
	d->plugins = NULL;
	d->events = NULL;
	d->loop = NULL;
}

// SPDX-License-Identifier: MIT
/*
 * tuner.status published past a deadband or at a heartbeat
 * (status_deadband.h).  Each tuner keeps the status of its last event;
 * a read is compared with it, not with the previous read, so a slow
 * drift is published once it adds up to the deadband.
 */
#include "status_deadband.h"

#include <stdlib.h>

#include "daemon.h"
#include "event_stream.h"
#include "eventbus.h"
#include "json_api.h"
#include "net_api.h"
#include "status_sampler.h"

struct band_tuner {
	uint32_t id;
	int published;
	struct tstub_status last; /* of the last event */
	uint64_t last_changed_at;
	int64_t published_ms, looked_ms;
	struct band_tuner *next;
};

struct status_deadband {
	struct daemon *d;
	struct status_sampler *sampler;
	long consumer;
	unsigned long interval_ms, heartbeat_ms;
	struct band_tuner *tuners;
};

static struct band_tuner *band_tuner_of(struct status_deadband *db, uint32_t id)
{
	struct band_tuner *t;

	for (t = db->tuners; t; t = t->next)
		if (t->id == id)
			return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->id = id;
	t->next = db->tuners;
	db->tuners = t;
	return t;
}

static int moved(long long a, long long b, long long band)
{
	return llabs(a - b) >= band;
}

int status_deadband_moved(const struct tstub_status *st,
			  const struct tstub_status *last)
{
	unsigned int v = st->valid;

	if (v != last->valid || st->fe_status != last->fe_status ||
	    st->pll_locked != last->pll_locked ||
	    st->frequency != last->frequency ||
	    st->bandwidth != last->bandwidth ||
	    api_status_locked(st) != api_status_locked(last))
		return 1;
	return ((v & TSTUB_ST_STRENGTH_DBM) &&
		moved(st->strength_mdbm, last->strength_mdbm,
		      STATUS_DEADBAND_SIGNAL_MDB)) ||
	       ((v & TSTUB_ST_STRENGTH_REL) &&
		moved(st->strength_rel, last->strength_rel,
		      STATUS_DEADBAND_REL)) ||
	       ((v & TSTUB_ST_CNR_DB) &&
		moved(st->cnr_mdb, last->cnr_mdb, STATUS_DEADBAND_CNR_MDB)) ||
	       ((v & TSTUB_ST_CNR_REL) &&
		moved(st->cnr_rel, last->cnr_rel, STATUS_DEADBAND_REL)) ||
	       ((v & TSTUB_ST_AFC) &&
		moved(st->afc_hz, last->afc_hz, STATUS_DEADBAND_AFC_HZ));
}

static void on_sample(uint32_t tuner, int64_t time_ms,
		      const struct tstub_status *st, uint64_t changed_at_ms,
		      void *arg)
{
	struct status_deadband *db = arg;
	struct band_tuner *t = band_tuner_of(db, tuner);

	/* Reads made sooner for another consumer: look at this tuner once
	 * per interval (a tenth early, for the timer's jitter). */
	if (!t || (t->looked_ms &&
		   time_ms - t->looked_ms < (int64_t)db->interval_ms * 9 / 10))
		return;
	t->looked_ms = time_ms;
	if (t->published && changed_at_ms == t->last_changed_at &&
	    time_ms - t->published_ms < (int64_t)db->heartbeat_ms &&
	    !status_deadband_moved(st, &t->last))
		return;
	t->published = 1;
	t->last = *st;
	t->last_changed_at = changed_at_ms;
	t->published_ms = time_ms;
	eventbus_publish(db->d->events, "tuner.status", (long)tuner,
			 json_pack("{s:b,s:o}", "locked", api_status_locked(st),
				   "status",
				   status_to_json(st, changed_at_ms)));
}

/* Someone uses this tuner's reads: an open stream that would receive its
 * tuner.status or tuner.lock (status reads see the lock change), or the
 * MQTT bridge, whose retained states carry lock, signal and CNR. */
static int tuner_followed(uint32_t tuner, void *arg)
{
	const struct status_deadband *db = arg;
	const struct net_api *net = net_api_of(db->d);

	return event_streams_want(db->d, "tuner.status", (long)tuner) ||
	       event_streams_want(db->d, "tuner.lock", (long)tuner) ||
	       (net && net->mqtt);
}

struct status_deadband *status_deadband_start(struct daemon *d,
					      struct status_sampler *s,
					      unsigned long interval_ms,
					      unsigned long heartbeat_ms)
{
	struct status_deadband *db = calloc(1, sizeof(*db));

	if (!db)
		return NULL;
	db->d = d;
	db->sampler = s;
	db->interval_ms = interval_ms;
	db->heartbeat_ms = heartbeat_ms;
	db->consumer =
	    status_sampler_want(s, interval_ms, on_sample, tuner_followed, db);
	if (db->consumer < 0) {
		free(db);
		return NULL;
	}
	return db;
}

void status_deadband_stop(struct status_deadband *db)
{
	struct band_tuner *t, *next;

	if (!db)
		return;
	status_sampler_unwant(db->sampler, db->consumer);
	for (t = db->tuners; t; t = next) {
		next = t->next;
		free(t);
	}
	free(db);
}

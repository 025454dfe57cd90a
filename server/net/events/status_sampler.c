// SPDX-License-Identifier: MIT
/*
 * The tuner.status sampler.  Each tuner has a slot that is the argument
 * of its status reads, so a read in flight is recognised (and skipped)
 * and can be forgotten at stop with tuner_forget().
 *
 * A tuner is read only while someone uses what the reads give
 * (sampler_wanted()): an open stream that would receive its tuner.status
 * or tuner.lock (lock changes are seen by status reads), or the MQTT
 * bridge, whose retained states carry lock, signal and CNR.  A status
 * read is I2C on the tuner's bus and the demodulator's lock in the
 * bridge, which nobody should pay for while nobody listens.  The timer itself keeps ticking
 * (no I2C, a list walk), so a new subscriber's first sample comes within
 * one interval.  A GET of the status reads on demand regardless.
 */
#include "status_sampler.h"

#include <stdlib.h>

#include "daemon.h"
#include "event_stream.h"
#include "eventbus.h"
#include "json_api.h"
#include "loop.h"
#include "net_api.h"
#include "tuner.h"

#define SAMPLER_LABEL "sampler"

struct sampler_slot {
	struct status_sampler *owner;
	uint32_t tuner;
	int pending;
	struct sampler_slot *next;
};

struct status_sampler {
	struct daemon *d;
	unsigned long interval_ms;
	uint64_t timer;
	struct sampler_slot *slots;
};

static void sample_done(int err, const struct tstub_status *st, void *arg)
{
	struct sampler_slot *slot = arg;
	struct daemon *d = slot->owner->d;
	struct tuner *t = tuner_find(d, slot->tuner);
	struct tuner_snapshot snap = {0};

	slot->pending = 0;
	if (err || !st)
		return;
	if (t)
		tuner_snapshot(t, &snap);
	eventbus_publish(
	    d->events, "tuner.status", (long)slot->tuner,
	    json_pack("{s:b,s:o}", "locked", api_status_locked(st), "status",
		      status_to_json(st, (uint64_t)snap.changed_at_ms)));
}

static struct sampler_slot *slot_of(struct status_sampler *s, uint32_t id)
{
	struct sampler_slot *slot;

	for (slot = s->slots; slot; slot = slot->next)
		if (slot->tuner == id)
			return slot;
	slot = calloc(1, sizeof(*slot));
	if (!slot)
		return NULL;
	slot->owner = s;
	slot->tuner = id;
	slot->next = s->slots;
	s->slots = slot;
	return slot;
}

static int sampler_wanted(const struct daemon *d, long tuner)
{
	const struct net_api *net = net_api_of(d);

	return event_streams_want(d, "tuner.status", tuner) ||
	       event_streams_want(d, "tuner.lock", tuner) ||
	       (net && net->mqtt);
}

static long sample_all(struct loop *l, uint64_t id, void *arg)
{
	struct status_sampler *s = arg;
	struct tuner_snapshot snap;

	(void)l;
	(void)id;
	for (struct tuner *t = tuner_first(s->d); t; t = tuner_next(t)) {
		struct sampler_slot *slot;

		tuner_snapshot(t, &snap);
		if (snap.state != TUNER_READY ||
		    !sampler_wanted(s->d, (long)tuner_id(t)))
			continue;
		slot = slot_of(s, tuner_id(t));
		if (!slot || slot->pending)
			continue;
		/* A full queue (-EBUSY) or a tuner going away: next time. */
		if (tuner_submit(t, TUNER_OP_STATUS, NULL, SAMPLER_LABEL,
				 sample_done, slot) == 0)
			slot->pending = 1;
	}
	return (long)s->interval_ms;
}

struct status_sampler *status_sampler_start(struct daemon *d,
					    unsigned long interval_ms)
{
	struct status_sampler *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->d = d;
	s->interval_ms = interval_ms;
	s->timer = loop_add_timer(d->loop, interval_ms, sample_all, s);
	if (!s->timer) {
		free(s);
		return NULL;
	}
	return s;
}

void status_sampler_stop(struct status_sampler *s)
{
	struct sampler_slot *slot, *next;

	if (!s)
		return;
	loop_del_timer(s->d->loop, s->timer);
	for (slot = s->slots; slot; slot = next) {
		next = slot->next;
		if (slot->pending)
			tuner_forget(s->d, slot);
		free(slot);
	}
	free(s);
}

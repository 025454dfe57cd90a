// SPDX-License-Identifier: MIT
/*
 * The status sampler.  Each tuner has a slot that is the argument of its
 * status reads, so a read in flight is recognised (and skipped) and can
 * be forgotten at stop with tuner_forget().  The timer is re-armed at the
 * consumers' shortest interval whenever the set of consumers changes.
 *
 * A tuner is read only while a consumer wants it: a status read is I2C on
 * the tuner's bus and the demodulator's lock in the bridge, which nobody
 * should pay for while nobody uses it.  The tuner.status consumer wants a
 * tuner only while an open stream would receive its tuner.status or
 * tuner.lock, or the MQTT bridge runs (status_deadband.c); the history
 * wants every tuner.  A tick that reads nothing is a list walk, so a new
 * subscriber's first sample comes within one interval.  A GET of the
 * status reads on demand regardless.
 */
#include "status_sampler.h"

#include <errno.h>
#include <stdlib.h>

#include "daemon.h"
#include "eventbus.h"
#include "loop.h"
#include "tuner.h"

#define SAMPLER_LABEL "sampler"

struct sampler_slot {
	struct status_sampler *owner;
	uint32_t tuner;
	int pending;
	struct sampler_slot *next;
};

struct sampler_consumer {
	long id;
	unsigned long interval_ms;
	status_sample_fn fn;
	status_wants_fn wants; /* NULL: every tuner */
	void *arg;
	struct sampler_consumer *next;
};

struct status_sampler {
	struct daemon *d;
	unsigned long interval_ms; /* 0: no timer */
	uint64_t timer;
	long next_id;
	struct sampler_slot *slots;
	struct sampler_consumer *consumers;
};

static void sample_done(int err, const struct tstub_status *st, void *arg)
{
	struct sampler_slot *slot = arg;
	struct status_sampler *s = slot->owner;
	struct tuner *t = tuner_find(s->d, slot->tuner);
	struct tuner_snapshot snap = {0};
	int64_t now = eventbus_now_ms();
	struct sampler_consumer *c, *next;

	slot->pending = 0;
	if (err || !st)
		return;
	if (t)
		tuner_snapshot(t, &snap);
	/* Consumers do not leave from their callbacks. */
	for (c = s->consumers; c; c = next) {
		next = c->next;
		c->fn(slot->tuner, now, st, (uint64_t)snap.changed_at_ms,
		      c->arg);
	}
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

static int tuner_wanted(const struct status_sampler *s, uint32_t tuner)
{
	for (const struct sampler_consumer *c = s->consumers; c; c = c->next)
		if (!c->wants || c->wants(tuner, c->arg))
			return 1;
	return 0;
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
		if (snap.state != TUNER_READY || !tuner_wanted(s, tuner_id(t)))
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

/* The timer at the consumers' shortest interval, or none. */
static void rearm(struct status_sampler *s)
{
	unsigned long want = 0;

	for (struct sampler_consumer *c = s->consumers; c; c = c->next)
		if (!want || c->interval_ms < want)
			want = c->interval_ms;
	if (want == s->interval_ms)
		return;
	if (s->timer)
		loop_del_timer(s->d->loop, s->timer);
	s->timer = 0;
	s->interval_ms = want;
	if (want)
		s->timer = loop_add_timer(s->d->loop, want, sample_all, s);
}

struct status_sampler *status_sampler_new(struct daemon *d)
{
	struct status_sampler *s = calloc(1, sizeof(*s));

	if (s)
		s->d = d;
	return s;
}

long status_sampler_want(struct status_sampler *s, unsigned long interval_ms,
			 status_sample_fn fn, status_wants_fn wants, void *arg)
{
	struct sampler_consumer *c;

	if (!s || !interval_ms || !fn)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct sampler_consumer){++s->next_id, interval_ms, fn,
				       wants,        arg,         s->consumers};
	s->consumers = c;
	rearm(s);
	if (!s->timer) {
		s->consumers = c->next;
		free(c);
		rearm(s);
		return -ENOMEM;
	}
	return c->id;
}

void status_sampler_unwant(struct status_sampler *s, long id)
{
	struct sampler_consumer **p;

	if (!s)
		return;
	for (p = &s->consumers; *p; p = &(*p)->next)
		if ((*p)->id == id) {
			struct sampler_consumer *c = *p;

			*p = c->next;
			free(c);
			break;
		}
	rearm(s);
}

unsigned long status_sampler_interval_ms(const struct status_sampler *s)
{
	return s ? s->interval_ms : 0;
}

void status_sampler_free(struct status_sampler *s)
{
	struct sampler_slot *slot, *next;
	struct sampler_consumer *c, *cnext;

	if (!s)
		return;
	if (s->timer)
		loop_del_timer(s->d->loop, s->timer);
	for (slot = s->slots; slot; slot = next) {
		next = slot->next;
		if (slot->pending)
			tuner_forget(s->d, slot);
		free(slot);
	}
	for (c = s->consumers; c; c = cnext) {
		cnext = c->next;
		free(c);
	}
	free(s);
}

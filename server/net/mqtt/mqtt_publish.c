// SPDX-License-Identifier: MIT
/*
 * What the bridge publishes: every event of the bus, as its text (the
 * very text the WebSocket and SSE streams send), to
 * <prefix>/<box>/events/<type>; and the retained state of each tuner,
 * the Tuner object of GET /api/v1/tuners/{id} (params, status with lock,
 * signal and CNR, lease holder), to <prefix>/<box>/tuner/<id>/state.
 *
 * A tuner's state is rebuilt when an event names the tuner and is
 * published only when its text changed, at most once per
 * state_interval_ms per tuner: the sampler's tuner.status events every
 * second cost a comparison, not a message.  Events go out with QoS 0
 * (a lost one is told by the seq numbers, as on the event stream);
 * states with QoS 1 and retained, the box's status likewise.  Offline,
 * or with max_queued messages not yet written, events are dropped and
 * counted; states stay marked and go out later, and all of them again
 * at each connect (the broker may have lost them).
 */
#include "mqtt_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eventbus.h"
#include "json_api.h"
#include "lease.h"
#include "loop.h"
#include "net_api.h"
#include "tuner.h"

static struct mqtt_state *state_of(struct mqtt_bridge *b, uint32_t id)
{
	struct mqtt_state *s;

	for (s = b->states; s; s = s->next)
		if (s->id == id)
			return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->id = id;
	s->next = b->states;
	b->states = s;
	return s;
}

/* The tuner's state as text, or NULL (gone, out of memory). */
static char *state_text(struct mqtt_bridge *b, uint32_t id)
{
	struct tuner *t = tuner_find(b->d, id);
	struct tuner_snapshot snap;
	struct lease l;
	json_t *o;
	char *text;
	int leased;

	if (!t)
		return NULL;
	tuner_snapshot(t, &snap);
	leased = b->net->leases && lease_get(b->net->leases, id, &l);
	o = tuner_to_json(&snap, leased ? &l : NULL);
	text = o ? json_dumps(o, API_JSON_DUMP_FLAGS) : NULL;
	json_decref(o);
	return text;
}

/* Publish s if it changed; 0 done (or nothing to do), -1 to try later. */
static int state_send(struct mqtt_bridge *b, struct mqtt_state *s, uint64_t now)
{
	char topic[MQTT_TOPIC_MAX];
	char *text = state_text(b, s->id);

	if (!text || (s->text && !strcmp(text, s->text))) {
		free(text);
		s->dirty = 0;
		return 0;
	}
	snprintf(topic, sizeof(topic), "%s/tuner/%u/state", b->base, s->id);
	if (mqtt_publish_raw(b, topic, text, strlen(text), 1, 1)) {
		free(text);
		return -1;
	}
	free(s->text);
	s->text = text;
	s->sent_ms = now;
	s->dirty = 0;
	return 0;
}

/* The timer: every marked state whose interval has passed goes out;
 * the timer comes back for the others (none: it ends). */
static long flush_states(struct loop *l, uint64_t id, void *arg)
{
	struct mqtt_bridge *b = arg;
	uint64_t now = loop_now_ms(), next = UINT64_MAX;

	(void)l;
	(void)id;
	for (struct mqtt_state *s = b->states; s; s = s->next) {
		uint64_t due = s->sent_ms + b->state_interval_ms;

		if (!s->dirty || !b->connected)
			continue;
		if (!s->sent_ms || due <= now) {
			if (!state_send(b, s, now))
				continue;
			due = now + b->state_interval_ms; /* queue full */
		}
		if (due - now < next)
			next = due - now;
	}
	if (next == UINT64_MAX) {
		b->state_timer = 0;
		return LOOP_TIMER_DONE;
	}
	return (long)next;
}

static void arm_states(struct mqtt_bridge *b)
{
	if (!b->state_timer && b->connected)
		b->state_timer = loop_add_timer(b->d->loop, 0, flush_states, b);
}

static void mark(struct mqtt_bridge *b, uint32_t id)
{
	struct mqtt_state *s = state_of(b, id);

	if (s)
		s->dirty = 1;
	arm_states(b);
}

static void mark_all(struct mqtt_bridge *b)
{
	for (struct tuner *t = tuner_first(b->d); t; t = tuner_next(t))
		mark(b, tuner_id(t));
}

static void on_event(const struct event *ev, void *arg)
{
	struct mqtt_bridge *b = arg;
	char topic[MQTT_TOPIC_MAX];

	if (b->stopping)
		return;
	snprintf(topic, sizeof(topic), "%s/events/%s", b->base, ev->type);
	if (mqtt_publish_raw(b, topic, ev->json, ev->json_len, 0, 0)) {
		b->dropped++;
		if (b->connected)
			log_limited(&b->drops, loop_now_ms(), LL_WARN,
				    "mqtt: %u messages unsent, event %llu "
				    "dropped",
				    b->queued, (unsigned long long)ev->seq);
	}
	if (ev->tuner != EVENTBUS_NO_TUNER)
		mark(b, (uint32_t)ev->tuner);
	else if (!strncmp(ev->type, "stub.", 5))
		mark_all(b); /* every tuner went offline or comes back */
}

void mqtt_states_republish(struct mqtt_bridge *b)
{
	for (struct mqtt_state *s = b->states; s; s = s->next) {
		free(s->text);
		s->text = NULL;
		s->sent_ms = 0;
	}
	loop_del_timer(b->d->loop, b->state_timer);
	b->state_timer = 0;
	mark_all(b);
}

int mqtt_publish_start(struct mqtt_bridge *b)
{
	long id = eventbus_subscribe(b->d->events, on_event, b);

	if (id < 0)
		return (int)id;
	b->subscription = id;
	return 0;
}

void mqtt_publish_stop(struct mqtt_bridge *b)
{
	struct mqtt_state *s;

	if (b->subscription > 0)
		eventbus_unsubscribe(b->d->events, b->subscription);
	b->subscription = 0;
	loop_del_timer(b->d->loop, b->state_timer);
	b->state_timer = 0;
	while ((s = b->states)) {
		b->states = s->next;
		free(s->text);
		free(s);
	}
}

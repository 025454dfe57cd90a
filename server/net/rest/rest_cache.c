// SPDX-License-Identifier: MIT
/*
 * The Tuner texts of GET /api/v1/tuners and /tuners/{id}, kept per tuner
 * and made again only when what they show changed.  Dashboards poll these
 * endpoints; building the JSON with jansson costs more than the rest of
 * such a request (about 15 us against a few), so an unchanged tuner is
 * answered from its last text.  The fields the text is made of are
 * compared one by one (the snapshot's padding is not defined).
 */
#include <stdlib.h>
#include <string.h>

#include "lease.h"
#include "net_api.h"
#include "rest.h"
#include "stream.h"

struct tuner_text {
	struct tuner_snapshot s;
	int leased;
	struct lease lease;
	struct stream_stats stream;
	char *text;
	size_t len;
	struct tuner_text *next;
};

#define SAME_BYTES(a, b) (memcmp(&(a), &(b), sizeof(a)) == 0)

static int same_source(const struct tuner_text *c,
		       const struct tuner_snapshot *s, const struct lease *l,
		       const struct stream_stats *st)
{
	const struct tuner_snapshot *o = &c->s;

	if (!SAME_BYTES(c->stream, *st))
		return 0;

	if (o->state != s->state || o->have_info != s->have_info ||
	    o->have_params != s->have_params ||
	    o->have_status != s->have_status ||
	    o->changed_origin != s->changed_origin ||
	    o->changed_at_ms != s->changed_at_ms ||
	    !SAME_BYTES(o->changed_by, s->changed_by) ||
	    !SAME_BYTES(o->attach, s->attach) ||
	    !SAME_BYTES(o->info, s->info) ||
	    !SAME_BYTES(o->params, s->params) ||
	    !SAME_BYTES(o->status, s->status))
		return 0;
	if (c->leased != !!l)
		return 0;
	return !l || (c->lease.priority == l->priority &&
		      c->lease.expires_wall == l->expires_wall &&
		      !strcmp(c->lease.holder, l->holder));
}

static struct tuner_text *entry_for(struct net_api *net, uint32_t id)
{
	struct tuner_text *c;

	for (c = net->tuner_texts; c; c = c->next)
		if (c->s.id == id)
			return c;
	c = calloc(1, sizeof(*c));
	if (c) {
		c->s.id = id;
		c->next = net->tuner_texts;
		net->tuner_texts = c;
	}
	return c;
}

const char *rest_tuner_text(struct net_api *net, const struct tuner_snapshot *s,
			    size_t *len)
{
	struct tuner_text *c = entry_for(net, s->id);
	struct lease l;
	int leased = lease_get(net->leases, s->id, &l);
	struct stream_stats st;
	json_t *o;

	if (!c)
		return NULL;
	stream_hub_stats(net->streams, s->id, &st);
	if (c->text && same_source(c, s, leased ? &l : NULL, &st)) {
		*len = c->len;
		return c->text;
	}
	free(c->text);
	c->text = NULL;
	o = tuner_to_json(s, leased ? &l : NULL);
	if (o) {
		json_object_set_new(o, "stream",
				    stream_stats_json(net->streams, s->id));
		c->text = json_dumps(o, API_JSON_DUMP_FLAGS);
	}
	json_decref(o);
	if (!c->text)
		return NULL;
	c->s = *s;
	memcpy(c->s.changed_by, s->changed_by, sizeof(c->s.changed_by));
	c->leased = leased;
	c->stream = st;
	if (leased)
		c->lease = l;
	c->len = strlen(c->text);
	*len = c->len;
	return c->text;
}

void rest_cache_free(struct net_api *net)
{
	struct tuner_text *c, *next;

	for (c = net->tuner_texts; c; c = next) {
		next = c->next;
		free(c->text);
		free(c);
	}
	net->tuner_texts = NULL;
}

// SPDX-License-Identifier: MIT
/*
 * The Tuner texts of GET /api/v1/tuners and /tuners/{id}, kept per tuner
 * and made again only when what they show changed.  Dashboards poll these
 * endpoints; building the JSON with jansson costs more than the rest of
 * such a request (about 15 us against a few), so an unchanged tuner is
 * answered from its last text.  The fields the text is made of are
 * compared one by one (the snapshot's padding is not defined).
 *
 * GET /api/v1/tuners keeps the whole list too (about 175 KB for 256
 * tuners), with the versions of what it was made from: the tuners
 * (d->tuners_version), the leases and the stream statistics.  While none
 * moved, a request costs three comparisons and sends the one
 * reference-counted copy; checking 256 tuners one by one cost about as
 * much as sending the text.  When one moved, every tuner's text is
 * checked as above and the list joined again.  The versions are bumped
 * where the state changes, so a change they miss would show a stale
 * list: the per-tuner comparison stays the check of record for
 * /tuners/{id}.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "lease.h"
#include "net_api.h"
#include "rest.h"
#include "stream.h"

/* What the list's text was checked against; a stream version of 0
 * matches nothing (stream_hub_stats_version()). */
struct tuners_sources {
	uint64_t tuners, leases, streams;
};

struct tuners_list {
	struct tuners_text *text;      /* NULL until the first request */
	uint64_t changes;              /* tuner texts made again, ever */
	struct tuner_text *hint;       /* the entry after the last one found */
	struct tuners_sources checked; /* when text was last checked */
};

/* One version of the list's text, shared by the cache and responses. */
struct tuners_text {
	unsigned int refs;
	uint64_t changes; /* tuners_list.changes it was made at */
	size_t ntuners;
	size_t len;
	char bytes[];
};

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

static struct tuners_list *list_of(struct net_api *net)
{
	if (!net->tuners_list)
		net->tuners_list = calloc(1, sizeof(*net->tuners_list));
	return net->tuners_list;
}

/* The list is walked in tuner order: the entry after the last one found
 * is tried first, so a walk over all tuners is linear, not quadratic. */
static struct tuner_text *entry_for(struct net_api *net, uint32_t id)
{
	struct tuners_list *l = list_of(net);
	struct tuner_text *c = l ? l->hint : NULL, **tail;

	if (!c || c->s.id != id)
		for (c = net->tuner_texts; c && c->s.id != id; c = c->next)
			;
	if (!c && l) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->s.id = id;
		for (tail = &net->tuner_texts; *tail; tail = &(*tail)->next)
			;
		*tail = c;
	}
	if (l)
		l->hint = c ? c->next : NULL;
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
	if (net->tuners_list)
		net->tuners_list->changes++;
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

static void tuners_text_unref(void *arg)
{
	struct tuners_text *t = arg;

	if (t && --t->refs == 0)
		free(t);
}

/* Every tuner's text, checked; the list made again if any changed. */
static struct tuners_text *tuners_text(struct net_api *net)
{
	static const char head[] = "{\"tuners\":[", tail[] = "]}";
	struct tuners_list *l = list_of(net);
	uint64_t before = l ? l->changes : 0;
	struct tuners_text *t;
	struct tuner_snapshot s;
	size_t n = 0, len = sizeof(head) - 1 + sizeof(tail) - 1, tl;
	struct tuners_sources now = {
	    .tuners = net->d->tuners_version,
	    .leases = lease_table_version(net->leases),
	    .streams = stream_hub_stats_version(net->streams)};

	if (!l)
		return NULL;
	if (l->text && now.streams && l->checked.streams == now.streams &&
	    l->checked.tuners == now.tuners && l->checked.leases == now.leases)
		return l->text;
	l->checked = now;
	l->hint = net->tuner_texts;
	for (struct tuner *tu = tuner_first(net->d); tu; tu = tuner_next(tu)) {
		tuner_snapshot(tu, &s);
		if (!rest_tuner_text(net, &s, &tl))
			return NULL;
		len += tl + (n++ ? 1 : 0);
	}
	if (l->text && l->changes == before && l->text->changes == before &&
	    l->text->ntuners == n)
		return l->text;
	t = malloc(sizeof(*t) + len + 1);
	if (!t)
		return NULL;
	*t = (struct tuners_text){
	    .refs = 1, .changes = l->changes, .ntuners = n, .len = len};
	memcpy(t->bytes, head, sizeof(head) - 1);
	tl = sizeof(head) - 1;
	l->hint = net->tuner_texts;
	for (struct tuner *tu = tuner_first(net->d); tu; tu = tuner_next(tu)) {
		size_t one;
		const char *text;

		tuner_snapshot(tu, &s);
		text = rest_tuner_text(net, &s, &one);
		if (!text || tl + one + (n ? 1 : 0) > len) {
			free(
			    t); /* cannot happen: the texts were just checked */
			return NULL;
		}
		if (tl > sizeof(head) - 1)
			t->bytes[tl++] = ',';
		memcpy(t->bytes + tl, text, one);
		tl += one;
	}
	memcpy(t->bytes + tl, tail, sizeof(tail));
	tuners_text_unref(l->text);
	l->text = t;
	return t;
}

enum MHD_Result rest_reply_tuners(struct rest_req *r)
{
	struct tuners_text *t = tuners_text(r->net);
	struct MHD_Response *resp;

	if (!t)
		return rest_error(r, 500, "internal", NULL, "out of memory");
	resp = MHD_create_response_from_buffer_with_free_callback_cls(
	    t->len, t->bytes, tuners_text_unref, t);
	if (!resp)
		return MHD_NO;
	t->refs++;
	return rest_queue_response(r, 200, resp, 1);
}

void rest_cache_free(struct net_api *net)
{
	struct tuner_text *c, *next;

	if (net->tuners_list) {
		tuners_text_unref(net->tuners_list->text);
		free(net->tuners_list);
		net->tuners_list = NULL;
	}

	for (c = net->tuner_texts; c; c = next) {
		next = c->next;
		free(c->text);
		free(c);
	}
	net->tuner_texts = NULL;
}

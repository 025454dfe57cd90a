// SPDX-License-Identifier: MIT
/*
 * The tuners' streams and their readers (stream.h).
 *
 * A tuner's source is opened by its first reader and closed with its
 * last.  Each read of the source is offered to every reader at once: the
 * whole multiplex is copied into a reader's ring in one piece, a filtered
 * reader gets packet by packet what its filter passes.  A reader whose
 * ring cannot take a batch is dropped there and then, so the cost of a
 * stalled client is bounded by its ring (STREAM_READER_BUF) and the other
 * readers never wait: copying ~3 MB/s per reader is cheaper than sharing
 * reference-counted blocks, and keeps a reader's memory its own.
 *
 * A tuner is gone for its readers when the stub detaches it or it goes
 * offline or fails (learnt from the event bus), or when its source
 * closes.
 */
#include "stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdvbv5/dvb-fe.h>

#include "daemon.h"
#include "eventbus.h"
#include "log.h"
#include "loop.h"
#include "stream_priv.h"
#include "tuner.h"

struct stream_reader {
	struct stream_tuner *st; /* NULL once ended */
	struct stream_hub *hub;
	uint64_t id;
	uint32_t tuner;
	struct stream_filter *filter;
	enum stream_filter_mode mode;
	uint8_t *ring;
	size_t head, len;
	enum stream_end end;
	int reported; /* stream.stop published */
	uint64_t bytes, cc_errors;
	uint64_t started_ms;
	char by[64];
	stream_wake_fn wake;
	stream_write_fn write;
	void *owner;
	struct stream_reader *next;
};

struct stream_tuner {
	uint32_t id;
	struct stream_source src;
	int open;
	struct stream_reader *readers;
	unsigned int nreaders;
	uint64_t dropped;
	uint64_t win_start_ms, win_bytes, bitrate_bps;
	struct stream_tuner *next;
};

struct stream_hub {
	struct daemon *d;
	struct dvb_v5_fe_parms *parms; /* libdvbv5's, for its table parsers */
	struct stream_tuner *tuners;
	unsigned int nreaders;
	uint64_t stats_version; /* readers came or went (stream_hub_stats) */
	uint64_t next_reader;
	long sub;
	int stopping;
};

const char *stream_end_name(enum stream_end e)
{
	switch (e) {
	case STREAM_END_CLIENT:
		return "client_closed";
	case STREAM_END_SLOW:
		return "slow_reader";
	case STREAM_END_GONE:
		return "tuner_gone";
	case STREAM_END_STOPPING:
		return "daemon_stopping";
	case STREAM_END_NONE:
		break;
	}
	return "running";
}

static const char *mode_name(enum stream_filter_mode m)
{
	return m == STREAM_FILTER_PIDS      ? "pids"
	       : m == STREAM_FILTER_SERVICE ? "service"
					    : "all";
}

static struct stream_tuner *tuner_entry(struct stream_hub *h, uint32_t id,
					int create)
{
	struct stream_tuner *st;

	for (st = h->tuners; st; st = st->next)
		if (st->id == id)
			return st;
	if (!create || !(st = calloc(1, sizeof(*st))))
		return NULL;
	st->id = id;
	st->src.fd = st->src.demux_fd = -1;
	st->next = h->tuners;
	h->tuners = st;
	return st;
}

/* ---- ending readers ---- */

static void reader_report(struct stream_reader *r);

static void source_close(struct stream_hub *h, struct stream_tuner *st)
{
	if (!st->open)
		return;
	loop_del_fd(h->d->loop, st->src.fd);
	stream_source_close(&st->src);
	st->open = 0;
	st->bitrate_bps = 0;
}

/* Take r off its tuner (no more data) and tell its owner why. */
static void reader_end(struct stream_reader *r, enum stream_end why)
{
	struct stream_tuner *st = r->st;
	struct stream_reader **pp;

	if (!st)
		return;
	for (pp = &st->readers; *pp && *pp != r; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = r->next;
	st->nreaders--;
	r->hub->nreaders--;
	r->hub->stats_version++;
	r->st = NULL;
	r->end = why;
	if (why == STREAM_END_SLOW) {
		st->dropped++;
		log_info("stream: tuner %u: reader %llu dropped: too slow",
			 st->id, (unsigned long long)r->id);
	}
	if (!st->readers)
		source_close(r->hub, st);
	if (why == STREAM_END_STOPPING)
		reader_report(r);
	if (r->wake)
		r->wake(r->owner);
}

static void tuner_gone(struct stream_hub *h, struct stream_tuner *st,
		       enum stream_end why)
{
	while (st->readers)
		reader_end(st->readers, why);
	source_close(h, st);
}

/* ---- delivery ---- */

static int ring_put(struct stream_reader *r, const uint8_t *p, size_t n)
{
	size_t tail, first;

	if (STREAM_READER_BUF - r->len < n)
		return -1;
	tail = (r->head + r->len) % STREAM_READER_BUF;
	first = STREAM_READER_BUF - tail < n ? STREAM_READER_BUF - tail : n;
	memcpy(r->ring + tail, p, first);
	memcpy(r->ring, p + first, n - first);
	r->len += n;
	return 0;
}

/* A reader that keeps up gets the batch written straight from the
 * source's buffer: the copy into its ring is for what the socket does
 * not take at once. */
static int deliver_all(struct stream_reader *r, const struct stream_source *s,
		       long npkt)
{
	size_t len = (size_t)npkt * TS_PACKET, done = 0;
	ssize_t n;

	if (!r->len && r->write && (n = r->write(r->owner, s->buf, len)) > 0) {
		done = (size_t)n;
		r->bytes += done;
	}
	if (ring_put(r, s->buf + done, len - done))
		return -1;
	for (long i = 0; i < npkt; i++)
		r->cc_errors += s->bad[i];
	return 0;
}

static int deliver_filtered(struct stream_reader *r,
			    const struct stream_source *s, long npkt)
{
	for (long i = 0; i < npkt; i++) {
		const uint8_t *in = s->buf + (size_t)i * TS_PACKET;
		const uint8_t *out = stream_filter_packet(r->filter, in);

		if (!out)
			continue;
		if (ring_put(r, out, TS_PACKET))
			return -1;
		r->cc_errors += out == in ? s->bad[i] : 0;
	}
	return 0;
}

static void rate_update(struct stream_tuner *st, long npkt)
{
	uint64_t now = loop_now_ms();

	st->win_bytes += (uint64_t)npkt * TS_PACKET;
	if (!st->win_start_ms)
		st->win_start_ms = now;
	if (now - st->win_start_ms >= 1000) {
		st->bitrate_bps =
		    st->win_bytes * 8 * 1000 / (now - st->win_start_ms);
		st->win_start_ms = now;
		st->win_bytes = 0;
	}
}

static void source_ready(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct stream_tuner *st = arg;
	struct stream_hub *h = st->readers ? st->readers->hub : NULL;
	struct stream_reader *r, *next;
	long npkt;

	(void)l;
	(void)fd;
	(void)events;
	if (!h)
		return;
	npkt = stream_source_read(&st->src);
	if (npkt < 0) {
		log_info("stream: tuner %u: source ended: %s", st->id,
			 strerror((int)-npkt));
		tuner_gone(h, st, STREAM_END_GONE);
		return;
	}
	if (!npkt)
		return;
	rate_update(st, npkt);
	for (r = st->readers; r; r = next) {
		size_t before = r->len;
		int full = r->mode == STREAM_FILTER_ALL
			       ? deliver_all(r, &st->src, npkt)
			       : deliver_filtered(r, &st->src, npkt);

		next = r->next;
		if (full)
			reader_end(r, STREAM_END_SLOW);
		else if (r->len != before)
			r->wake(r->owner);
	}
}

/* ---- readers ---- */

static json_t *filter_json(json_t *o, const struct stream_filter_spec *f)
{
	json_t *pids;

	json_object_set_new(o, "filter", json_string(mode_name(f->mode)));
	if (f->mode == STREAM_FILTER_SERVICE)
		json_object_set_new(o, "service", json_integer(f->service));
	if (f->mode == STREAM_FILTER_PIDS && (pids = json_array())) {
		for (unsigned int i = 0; i < f->npids; i++)
			json_array_append_new(pids, json_integer(f->pids[i]));
		json_object_set_new(o, "pids", pids);
	}
	return o;
}

static int reader_attach(struct stream_hub *h, struct stream_tuner *st,
			 struct stream_reader *r)
{
	int err;

	if (!st->open) {
		err = stream_source_open(h->d, st->id, &st->src);
		if (!err) {
			err = loop_add_fd(h->d->loop, st->src.fd, LOOP_READ,
					  source_ready, st);
			if (err)
				stream_source_close(&st->src);
		}
		if (err) {
			log_info("stream: tuner %u: no source: %s", st->id,
				 strerror(-err));
			return err == -ENOMEM ? err : -ENODEV;
		}
		st->open = 1;
		st->win_start_ms = st->win_bytes = st->bitrate_bps = 0;
	}
	r->st = st;
	r->next = st->readers;
	st->readers = r;
	st->nreaders++;
	h->nreaders++;
	h->stats_version++;
	return 0;
}

static struct stream_reader *reader_new(struct stream_hub *h, uint32_t tuner,
					const struct stream_filter_spec *f)
{
	struct stream_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->ring = malloc(STREAM_READER_BUF);
	r->filter = stream_filter_new(f, h->parms);
	if (!r->ring || !r->filter) {
		stream_filter_free(r->filter);
		free(r->ring);
		free(r);
		return NULL;
	}
	r->hub = h;
	r->tuner = tuner;
	r->mode = f->mode;
	r->started_ms = loop_now_ms();
	return r;
}

struct stream_reader *stream_reader_open(struct stream_hub *h, uint32_t tuner,
					 const struct stream_filter_spec *f,
					 const char *by, stream_wake_fn wake,
					 void *owner, int *err)
{
	struct stream_tuner *st;
	struct stream_reader *r;

	*err = h->stopping                ? -ESHUTDOWN
	       : !tuner_find(h->d, tuner) ? -ENOENT
					  : 0;
	if (!*err && (h->nreaders >= STREAM_READERS_MAX ||
		      ((st = tuner_entry(h, tuner, 0)) &&
		       st->nreaders >= STREAM_READERS_PER_TUNER)))
		*err = -EAGAIN;
	if (*err)
		return NULL;
	st = tuner_entry(h, tuner, 1);
	r = st ? reader_new(h, tuner, f) : NULL;
	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	r->id = ++h->next_reader;
	r->wake = wake;
	r->owner = owner;
	snprintf(r->by, sizeof(r->by), "%s", by ? by : "api");
	*err = reader_attach(h, st, r);
	if (*err) {
		stream_filter_free(r->filter);
		free(r->ring);
		free(r);
		return NULL;
	}
	eventbus_publish(h->d->events, "stream.start", (long)tuner,
			 filter_json(json_pack("{s:I, s:s, s:i}", "reader",
					       (json_int_t)r->id, "by", r->by,
					       "readers", st->nreaders),
				     f));
	return r;
}

size_t stream_reader_read(struct stream_reader *r, void *buf, size_t max)
{
	size_t n = r->len < max ? r->len : max, first;

	first =
	    STREAM_READER_BUF - r->head < n ? STREAM_READER_BUF - r->head : n;
	memcpy(buf, r->ring + r->head, first);
	memcpy((uint8_t *)buf + first, r->ring, n - first);
	r->head = (r->head + n) % STREAM_READER_BUF;
	r->len -= n;
	r->bytes += n;
	return n;
}

void stream_reader_set_writer(struct stream_reader *r, stream_write_fn fn)
{
	r->write = fn;
}

size_t stream_reader_peek(const struct stream_reader *r, struct iovec iov[2],
			  int *niov)
{
	size_t first = STREAM_READER_BUF - r->head < r->len
			   ? STREAM_READER_BUF - r->head
			   : r->len;

	iov[0] = (struct iovec){r->ring + r->head, first};
	iov[1] = (struct iovec){r->ring, r->len - first};
	*niov = r->len == first ? 1 : 2;
	return r->len;
}

void stream_reader_consume(struct stream_reader *r, size_t n)
{
	if (n > r->len)
		n = r->len;
	r->head = (r->head + n) % STREAM_READER_BUF;
	r->len -= n;
	r->bytes += n;
}

enum stream_end stream_reader_ended(const struct stream_reader *r)
{
	return r->end;
}

/* stream.stop (and a log line): once per reader, when its owner closes
 * it; at a stop of the daemon when it ends, before the network layer
 * that owns it goes away.  (The event streams close at a stop without
 * sending what is queued, so that one stays in the bus's ring.) */
static void reader_report(struct stream_reader *r)
{
	struct stream_tuner *st = tuner_entry(r->hub, r->tuner, 0);

	if (r->reported)
		return;
	r->reported = 1;
	log_info("stream: tuner %u: reader %llu (%s) ended: %s, %llu bytes, "
		 "%llu CC errors",
		 r->tuner, (unsigned long long)r->id, r->by,
		 stream_end_name(r->end), (unsigned long long)r->bytes,
		 (unsigned long long)r->cc_errors);
	eventbus_publish(
	    r->hub->d->events, "stream.stop", (long)r->tuner,
	    json_pack("{s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:i}", "reader",
		      (json_int_t)r->id, "by", r->by, "reason",
		      stream_end_name(r->end), "bytes", (json_int_t)r->bytes,
		      "packets", (json_int_t)(r->bytes / TS_PACKET),
		      "cc_errors", (json_int_t)r->cc_errors, "duration_ms",
		      (json_int_t)(loop_now_ms() - r->started_ms), "readers",
		      st ? st->nreaders : 0));
}

void stream_reader_close(struct stream_reader *r, enum stream_end why)
{
	if (!r->end) {
		r->wake = NULL;
		reader_end(r, why);
	}
	reader_report(r);
	stream_filter_free(r->filter);
	free(r->ring);
	free(r);
}

/* ---- the hub ---- */

/* A tuner the stub detached, or that went offline or failed, is gone
 * for its readers. */
static void hub_event(const struct event *ev, void *arg)
{
	struct stream_hub *h = arg;
	struct stream_tuner *st;
	struct tuner *t;
	struct tuner_snapshot s;

	if (ev->tuner < 0 || (strcmp(ev->type, "tuner.detach") &&
			      strcmp(ev->type, "tuner.state")))
		return;
	st = tuner_entry(h, (uint32_t)ev->tuner, 0);
	if (!st || !st->readers)
		return;
	t = tuner_find(h->d, (uint32_t)ev->tuner);
	if (t && !strcmp(ev->type, "tuner.state")) {
		tuner_snapshot(t, &s);
		if (s.state != TUNER_OFFLINE && s.state != TUNER_FAILED)
			return;
	}
	tuner_gone(h, st, STREAM_END_GONE);
}

struct stream_hub *stream_hub_new(struct daemon *d)
{
	struct stream_hub *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->d = d;
	h->parms = dvb_fe_dummy();
	h->sub = eventbus_subscribe(d->events, hub_event, h);
	if (!h->parms || h->sub < 0) {
		stream_hub_free(h);
		return NULL;
	}
	return h;
}

void stream_hub_stop(struct stream_hub *h)
{
	if (!h)
		return;
	h->stopping = 1;
	for (struct stream_tuner *st = h->tuners; st; st = st->next)
		tuner_gone(h, st, STREAM_END_STOPPING);
}

void stream_hub_free(struct stream_hub *h)
{
	struct stream_tuner *st, *next;

	if (!h)
		return;
	stream_hub_stop(h);
	if (h->sub > 0)
		eventbus_unsubscribe(h->d->events, h->sub);
	for (st = h->tuners; st; st = next) {
		next = st->next;
		free(st);
	}
	if (h->parms)
		dvb_fe_close(h->parms);
	free(h);
}

int stream_hub_stats(struct stream_hub *h, uint32_t tuner,
		     struct stream_stats *s)
{
	struct stream_tuner *st = h ? tuner_entry(h, tuner, 0) : NULL;

	memset(s, 0, sizeof(*s));
	if (!st)
		return 0;
	s->packets = st->src.packets;
	s->bytes = st->src.bytes;
	s->cc_errors = st->src.cc_errors;
	s->tei_errors = st->src.tei_errors;
	s->readers = st->nreaders;
	s->dropped_readers = st->dropped;
	/* No packet for two seconds (no lock): the rate is 0. */
	if (st->open && loop_now_ms() - st->win_start_ms < 2000)
		s->bitrate_bps = st->bitrate_bps;
	return st->open;
}

uint64_t stream_hub_stats_version(const struct stream_hub *h)
{
	/* Sources open only with a reader, and their counters move with
	 * every packet: no version while one is read. */
	if (!h)
		return 1;
	return h->nreaders ? 0 : h->stats_version + 1;
}

json_t *stream_stats_json(struct stream_hub *h, uint32_t tuner)
{
	struct stream_stats s;
	int open = stream_hub_stats(h, tuner, &s);

	return json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:i, s:I}", "active",
			 open, "bitrate_bps", (json_int_t)s.bitrate_bps,
			 "packets", (json_int_t)s.packets, "bytes",
			 (json_int_t)s.bytes, "cc_errors",
			 (json_int_t)s.cc_errors, "tei_errors",
			 (json_int_t)s.tei_errors, "readers", s.readers,
			 "dropped_readers", (json_int_t)s.dropped_readers);
}

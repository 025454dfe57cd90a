// SPDX-License-Identifier: MIT
/*
 * box_stream.c - each client's transport stream socket
 * ("<stub socket>.ts<id>"): connections, pacing and the lock that gates
 * the stream.
 *
 * One precise timer per client runs while somebody is connected: every
 * tick it writes the packets the multiplex's bitrate owes since the lock
 * began, so the stream keeps the real rate with a few ms of granularity.
 * The packets of a tick go to every connection with one non-blocking
 * send; a connection whose socket is full loses the packets that did not
 * fit (the rest of a packet cut in the middle is kept, so what it gets
 * stays whole packets).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "box_i.h"
#include "ts_mux.h"
#include "ts_pkt.h"

#define STREAM_TICK_NS    4000000ull   /* 4 ms */
#define STREAM_LOCK_TICKS 5            /* lock checked every 20 ms */
#define STREAM_CARD_TICKS 25           /* ffmpeg reaped every 100 ms */
#define STREAM_MAX_BEHIND 100000000ull /* at most this is sent late */
#define STREAM_SNDBUF     (1 << 20)
#define STREAM_MAX_CONNS  64

struct stream_conn {
	struct box_list link;
	struct box_stream *st;
	int fd;
	uint8_t tail[TS_PACKET]; /* rest of a packet cut by a short send */
	size_t tail_off, tail_len;
};

struct box_stream {
	struct box_client *client;
	char *path;
	int listen_fd;
	struct box_list conns;
	size_t nconns;
	uint64_t timer;
	unsigned int ticks;
	struct ts_mux *mux;
	bool locked;
	uint64_t t0_ns, sent; /* pacing since the lock began */
	uint64_t skipped;     /* packets the stalls of the box cost */
	uint8_t *buf;
	size_t buf_packets;
	uint64_t dropped;
	uint64_t lock_checks;
	uint64_t stall_skipped; /* of earlier locks */
};

static void conn_close(struct stream_conn *c, const char *why)
{
	struct box_stream *st = c->st;

	box_log(st->client->box, 1, "client %u: stream reader left: %s",
		st->client->id, why);
	loop_del_fd(st->client->box->loop, c->fd);
	close(c->fd);
	box_list_del(&c->link);
	st->nconns--;
	free(c);
	if (!st->nconns) {
		/* nobody listens: stop generating (the timer sees it) */
		ts_mux_free(st->mux);
		st->mux = NULL;
		st->locked = false;
	}
}

/* Readers send nothing; this notices them leaving. */
static void on_conn(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct stream_conn *c = arg;
	char scratch[256];
	ssize_t n;

	(void)l;
	(void)events;
	n = recv(fd, scratch, sizeof(scratch), MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		conn_close(c, n ? strerror(errno) : "closed");
}

/* 0, or -1 when the connection is gone (closed here). */
static int conn_send(struct stream_conn *c, const uint8_t *buf, size_t n)
{
	ssize_t w;
	size_t whole;

	if (c->tail_len) {
		w = send(c->fd, c->tail + c->tail_off, c->tail_len,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			goto gone;
		if (w > 0) {
			c->tail_off += (size_t)w;
			c->tail_len -= (size_t)w;
		}
		if (c->tail_len) {
			c->st->dropped += n;
			return 0;
		}
	}
	w = send(c->fd, buf, n * TS_PACKET, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (w < 0) {
		if (errno != EAGAIN && errno != EINTR)
			goto gone;
		w = 0;
	}
	whole = (size_t)w / TS_PACKET;
	if ((size_t)w % TS_PACKET) {
		c->tail_off = (size_t)w % TS_PACKET;
		c->tail_len = TS_PACKET - c->tail_off;
		memcpy(c->tail, buf + whole * TS_PACKET, TS_PACKET);
		whole++;
	}
	c->st->dropped += n - whole;
	return 0;
gone:
	conn_close(c, strerror(errno));
	return -1;
}

/* Lock and multiplex now; a new multiplex or a relock restarts pacing. */
static void stream_check_lock(struct box_stream *st)
{
	struct box_client *c = st->client;
	struct sim_rf_reading r;
	struct tstub_status status;
	bool lock = box_demod_measure(c, NULL, &r, &status);

	st->lock_checks++;
	if (lock && (!st->mux || ts_mux_carrier(st->mux) != r.carrier)) {
		ts_mux_free(st->mux);
		st->mux = ts_mux_new(c->box->env, r.carrier, c->box->cards,
				     c->box->seed + c->id);
		st->locked = false;
	}
	lock = lock && st->mux;
	if (!lock && st->locked)
		st->stall_skipped += st->skipped;
	if (lock && !st->locked) {
		st->t0_ns = box_now_ns();
		st->sent = st->skipped = 0;
	}
	if (lock)
		ts_mux_set_margin(
		    st->mux,
		    r.cnr_db - sim_rf_cnr_threshold(
				   c->box->env->carriers[r.carrier].delsys));
	st->locked = lock;
}

static void stream_pump(struct box_stream *st)
{
	double rate = ts_mux_bitrate(st->mux) / (TS_PACKET * 8.0);
	uint64_t burst = (uint64_t)(rate * STREAM_MAX_BEHIND / 1e9);
	uint64_t due =
	    (uint64_t)((double)(box_now_ns() - st->t0_ns) * rate / 1e9) -
	    st->skipped;

	if (due > st->sent + burst) {
		/* the box stalled: send at most a burst, skip the rest */
		st->skipped += due - st->sent - burst;
		due = st->sent + burst;
	}
	while (st->sent < due && st->nconns) {
		size_t n = due - st->sent < st->buf_packets
			       ? (size_t)(due - st->sent)
			       : st->buf_packets;
		struct box_list *it = st->conns.next, *next;

		ts_mux_generate(st->mux, st->buf, n, time(NULL));
		st->sent += n;
		for (; it != &st->conns; it = next) {
			next = it->next;
			conn_send(
			    box_container_of(it, struct stream_conn, link),
			    st->buf, n);
		}
	}
}

static long on_tick(struct loop *l, uint64_t id, void *arg)
{
	struct box_stream *st = arg;

	(void)l;
	(void)id;
	if (!st->nconns) {
		st->timer = 0;
		return LOOP_TIMER_DONE;
	}
	if (st->ticks % STREAM_CARD_TICKS == 0 && st->client->box->cards)
		ts_cards_poll(st->client->box->cards);
	if (st->ticks++ % STREAM_LOCK_TICKS == 0 || !st->mux)
		stream_check_lock(st);
	if (st->locked)
		stream_pump(st);
	return (long)STREAM_TICK_NS;
}

static void on_accept(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct box_stream *st = arg;
	int sndbuf = STREAM_SNDBUF;
	struct stream_conn *c;
	int cfd;

	(void)events;
	cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return;
	if (st->nconns >= STREAM_MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
		box_log(st->client->box, 0,
			"client %u: stream connection "
			"refused (at most %d)",
			st->client->id, STREAM_MAX_CONNS);
		close(cfd);
		return;
	}
	setsockopt(cfd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	c->st = st;
	c->fd = cfd;
	if (loop_add_fd(l, cfd, LOOP_READ, on_conn, c)) {
		close(cfd);
		free(c);
		return;
	}
	box_list_add_tail(&st->conns, &c->link);
	st->nconns++;
	if (!st->timer) {
		st->ticks = 0;
		st->timer = loop_add_timer_ns(l, 1, on_tick, st);
	}
	box_log(st->client->box, 1, "client %u: stream reader %zu connected",
		st->client->id, st->nconns);
}

static int stream_new(struct box_client *c, char *err, size_t errlen)
{
	struct sim_box *box = c->box;
	struct box_stream *st = calloc(1, sizeof(*st));
	size_t len = strlen(box->stub_path) + 16;

	if (!st)
		goto nomem;
	c->stream = st;
	st->client = c;
	st->listen_fd = -1;
	box_list_init(&st->conns);
	/* a tick's worth of packets at 100 Mbit/s: any multiplex fits */
	st->buf_packets = 512;
	st->buf = malloc(st->buf_packets * TS_PACKET);
	st->path = malloc(len);
	if (!st->buf || !st->path)
		goto nomem;
	snprintf(st->path, len, "%s.ts%u", box->stub_path, c->id);
	st->listen_fd = box_unix_listen(st->path, SOCK_STREAM, err, errlen);
	if (st->listen_fd < 0)
		return st->listen_fd;
	if (loop_add_fd(box->loop, st->listen_fd, LOOP_READ, on_accept, st)) {
		snprintf(err, errlen, "%s: cannot watch", st->path);
		return -ENOMEM;
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

int box_streams_setup(struct sim_box *box, const struct sim_box_config *cfg,
		      char *err, size_t errlen)
{
	char dir[4096];
	const char *slash = strrchr(box->stub_path, '/');

	box->seed = cfg->seed;
	if (!cfg->no_card) {
		if (cfg->card_dir)
			snprintf(dir, sizeof(dir), "%s", cfg->card_dir);
		else
			snprintf(dir, sizeof(dir), "%.*s/tscard",
				 slash ? (int)(slash - box->stub_path) : 1,
				 slash ? box->stub_path : ".");
		box->cards = ts_cards_new(dir, box->env, box->verbosity);
	}
	for (size_t i = 0; i < box->nclients; i++) {
		int rc = stream_new(&box->clients[i], err, errlen);

		/* A stub path that just fits leaves no room for ".tsN": the
		 * box still serves the daemon, without streams. */
		if (rc == -ENAMETOOLONG) {
			box_log(box, 0, "no stream socket: %s", err);
			err[0] = '\0';
			continue;
		}
		if (rc)
			return rc;
	}
	return 0;
}

static void stream_free(struct box_stream *st)
{
	struct loop *l = st->client->box->loop;

	while (!box_list_empty(&st->conns))
		conn_close(
		    box_container_of(st->conns.next, struct stream_conn, link),
		    "the box exits");
	loop_del_timer(l, st->timer);
	if (st->listen_fd >= 0) {
		loop_del_fd(l, st->listen_fd);
		close(st->listen_fd);
		unlink(st->path);
	}
	ts_mux_free(st->mux);
	free(st->buf);
	free(st->path);
	free(st);
}

void box_streams_free(struct sim_box *box)
{
	for (size_t i = 0; i < box->nclients; i++)
		if (box->clients[i].stream) {
			stream_free(box->clients[i].stream);
			box->clients[i].stream = NULL;
		}
	ts_cards_free(box->cards);
	box->cards = NULL;
}

int sim_box_stream_stats(const struct sim_box *box, uint32_t client,
			 struct sim_box_stream_stats *out)
{
	const struct box_stream *st;
	struct ts_mux_stats ms = {0};

	if (client < 1 || client > box->nclients ||
	    !(st = box->clients[client - 1].stream))
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->connections = (uint32_t)st->nconns;
	out->locked = st->locked;
	out->carrier = st->mux ? ts_mux_carrier(st->mux) : -1;
	if (st->mux) {
		ts_mux_get_stats(st->mux, &ms);
		out->bitrate = ts_mux_bitrate(st->mux);
	}
	out->packets = ms.packets;
	out->null_packets = ms.null_packets;
	out->cc_errors = ms.cc_errors;
	out->tei_packets = ms.tei_packets;
	out->dropped = st->dropped;
	out->lock_checks = st->lock_checks;
	out->skipped = st->stall_skipped + st->skipped;
	return 0;
}

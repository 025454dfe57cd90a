// SPDX-License-Identifier: MIT
/*
 * Writing the event streams to their WebSocket clients (ws_priv.h).
 *
 * One write per client per turn: a client's turn hands up to a batch of
 * its queue (WS_BATCH_MSGS messages, WS_BATCH_BYTES bytes) to wslay
 * (wslay_event_queue_msg()), and wslay_event_send() frames them into
 * ws_send_cb(), which only appends each frame to the client's out
 * buffer; the buffer then goes to the socket with one send().  wslay's
 * send callback is called per frame part, so writing from it would cost
 * a system call per message (two: header and payload); collecting them
 * makes the batch one segment train without corking the socket.  What
 * the socket does not take stays in the buffer, the socket is watched
 * for room, and the client takes no new messages until it drained: its
 * queue in the hub fills instead, which is what closes a client that
 * does not read as a slow consumer (event_stream.c).
 *
 * Fairness and bounded work per loop turn: a client with something to
 * send joins a FIFO of writers.  Before each poll (a uv_prepare_t) the
 * clients at the head of the FIFO are written, up to WS_TURN_MSGS
 * messages queued; the others wait for a later turn (a uv_idle_t keeps
 * the loop from blocking while the FIFO is not empty).  So a turn writes
 * a bounded number of messages, REST requests and everything else ready
 * get served between turns, and a client whose batch left messages
 * behind goes to the back of the FIFO.
 *
 * Each event's text is the bus's serialised JSON, shared by every
 * subscriber; wslay copies it once per client into its queue (its event
 * API owns what it sends), and the framing copies it into the out buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <uv.h>
#include <wslay/wslay.h>

#include "loop.h"
#include "ws_priv.h"

/* One client's batch: how many messages and bytes a turn hands to wslay
 * for it before the others have theirs. */
#define WS_BATCH_MSGS  64
#define WS_BATCH_BYTES (64 * 1024)
/* Messages written per loop turn, all clients together (a client counts
 * its queue, at most a batch, at least one): a turn is about a
 * millisecond of writes on loopback and requests wait no longer.  One
 * event to 1,000 clients still goes out in one turn. */
#define WS_TURN_MSGS 1024
/* Frames waiting in one client's out buffer: a batch and its headers,
 * the control frames; beyond this (pongs for a client that pings and
 * never reads) the connection ends. */
#define WS_OUT_MAX (256 * 1024)
/* An empty buffer larger than this is freed (ws_out_drained()). */
#define WS_OUT_KEEP 4096

/* ---- the FIFO of writers ---- */

/* An active idle handle is all it takes: the poll does not block. */
static void ws_idle_noop(uv_idle_t *h)
{
	(void)h;
}

static void fifo_push(struct ws_writer *w, struct ws_conn *c)
{
	if (c->wq_queued)
		return;
	c->wq_queued = 1;
	c->wq_next = NULL;
	c->wq_prev = w->wq_tail;
	if (w->wq_tail)
		w->wq_tail->wq_next = c;
	else
		w->wq_head = c;
	w->wq_tail = c;
	if (w->idle && !uv_is_active((uv_handle_t *)w->idle))
		uv_idle_start(w->idle, ws_idle_noop);
}

void ws_writer_forget(struct ws_writer *w, struct ws_conn *c)
{
	if (!c->wq_queued)
		return;
	if (c->wq_prev)
		c->wq_prev->wq_next = c->wq_next;
	else
		w->wq_head = c->wq_next;
	if (c->wq_next)
		c->wq_next->wq_prev = c->wq_prev;
	else
		w->wq_tail = c->wq_prev;
	c->wq_queued = 0;
	c->wq_prev = c->wq_next = NULL;
}

void ws_wake(void *owner)
{
	struct ws_conn *c = owner;

	if (!c->ws)
		return;
	fifo_push(ws_writer_of(c->srv), c);
	if (event_sub_is_closed(c->sub))
		ws_close_deadline(c); /* for a client that stopped reading */
}

/* ---- framing and writing ---- */

ssize_t ws_send_cb(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
		   int flags, void *user)
{
	struct ws_conn *c = user;
	size_t need = c->out_len + len;

	(void)flags;
	if (need - c->out_off > WS_OUT_MAX) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	if (need > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		unsigned char *p;

		while (cap < need)
			cap *= 2;
		p = realloc(c->out, cap);
		if (!p) {
			wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
			return -1;
		}
		c->out = p;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, data, len);
	c->out_len += len;
	return (ssize_t)len;
}

/* All of the buffer went.  A buffer a burst grew is given back: an idle
 * subscriber would otherwise keep a burst's size (up to WS_OUT_MAX) for
 * as long as it stays connected; a busy client allocates it again per
 * batch, which costs less than the write it fills. */
static void ws_out_drained(struct ws_conn *c)
{
	c->out_off = c->out_len = 0;
	if (c->out_cap > WS_OUT_KEEP) {
		free(c->out);
		c->out = NULL;
		c->out_cap = 0;
	}
}

/* Both sides closed and everything went: the connection is done. */
static int ws_done(const struct ws_conn *c)
{
	return c->out_off == c->out_len && !wslay_event_want_read(c->ws) &&
	       !wslay_event_want_write(c->ws);
}

int ws_flush(struct ws_conn *c)
{
	ssize_t n = 0;

	if (wslay_event_send(c->ws) != 0) {
		ws_release(c);
		return -1;
	}
	if (c->out_off < c->out_len)
		n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR) {
		ws_release(c); /* the client is gone */
		return -1;
	}
	if (n > 0)
		c->out_off += (size_t)n;
	if (c->out_off == c->out_len)
		ws_out_drained(c);
	if (ws_done(c)) {
		ws_release(c);
		return -1;
	}
	ws_watch(c, c->out_len ? LOOP_READ | LOOP_WRITE : LOOP_READ);
	/* Whoever emptied the buffer (the writer, the socket's room, a
	 * ping, a pong, a reply), the rest of the queue gets its turn: once
	 * the socket is no longer watched for room, nothing else would
	 * bring back a client whose queue is not empty (its hub wakes it
	 * only when the queue was empty, a catch-up never). */
	if (!c->out_len && !c->closing && c->sub && event_sub_peek(c->sub))
		fifo_push(ws_writer_of(c->srv), c);
	return 0;
}

/*
 * Hand up to a batch of c's queue to wslay.  Returns the messages
 * queued, or -1 when the connection must end; *ended is set when the
 * stream's closed message was among them.
 */
static int ws_queue_batch(struct ws_conn *c, int *ended)
{
	const struct stream_item *it;
	size_t bytes = 0;
	int n = 0;

	while (n < WS_BATCH_MSGS && bytes < WS_BATCH_BYTES &&
	       (it = event_sub_peek(c->sub))) {
		enum stream_item_kind kind = it->kind;
		struct wslay_event_msg msg = {.opcode = WSLAY_TEXT_FRAME};

		msg.msg = (const uint8_t *)event_sub_text(it, &msg.msg_length);
		if (wslay_event_queue_msg(c->ws, &msg) != 0)
			return -1;
		event_sub_pop(c->sub);
		n++;
		bytes += msg.msg_length;
		if (kind == STREAM_CLOSED) {
			*ended = 1;
			break;
		}
	}
	return n;
}

/* c's turn: a batch framed and written at once. */
static void ws_turn_write(struct ws_writer *w, struct ws_conn *c)
{
	int ended = 0, n;

	if (c->out_len || c->closing || !c->sub)
		return; /* waiting for room, or done with its stream */
	/* Framed at once (ws_send_cb() takes every frame): wslay sends a
	 * queued control frame ahead of queued data messages, so the close
	 * below must find them framed already. */
	n = ws_queue_batch(c, &ended);
	if (n < 0 || wslay_event_send(c->ws) != 0) {
		ws_release(c);
		return;
	}
	if (n) {
		w->stats.batches++;
		w->stats.messages += (uint64_t)n;
		if ((uint64_t)n > w->stats.max_batch)
			w->stats.max_batch = (uint64_t)n;
	}
	/* The close frame follows the closed message, in the same write;
	 * a stream closed with its queue dropped has nothing more to
	 * say. */
	if (ended || (!event_sub_peek(c->sub) && event_sub_is_closed(c->sub)))
		ws_close_stream(c);
	ws_flush(c); /* the rest, if any, after the others' turn */
}

/* Before the poll: write the turn's clients, as many as the turn's
 * budget of messages holds (at least one). */
static void ws_turn_begin(uv_prepare_t *h)
{
	struct ws_writer *w = h->data;
	size_t msgs = 0;
	struct ws_conn *c;

	while (msgs < WS_TURN_MSGS && (c = w->wq_head)) {
		size_t q = c->sub ? event_sub_queued(c->sub) : 1;

		msgs += q < WS_BATCH_MSGS ? (q ? q : 1) : WS_BATCH_MSGS;
		ws_writer_forget(w, c);
		ws_turn_write(w, c);
	}
	if (w->wq_head)
		w->stats.deferred++;
	else if (uv_is_active((uv_handle_t *)w->idle))
		uv_idle_stop(w->idle);
}

static void ws_handle_freed(uv_handle_t *h)
{
	free(h);
}

int ws_writer_start(struct ws_writer *w, struct loop *l)
{
	w->turn = calloc(1, sizeof(*w->turn));
	w->idle = calloc(1, sizeof(*w->idle));
	if (!w->turn || !w->idle) {
		free(w->turn);
		free(w->idle);
		w->turn = NULL;
		w->idle = NULL;
		return -1;
	}
	w->turn->data = w;
	uv_prepare_init(loop_uv(l), w->turn);
	uv_prepare_start(w->turn, ws_turn_begin);
	uv_idle_init(loop_uv(l), w->idle);
	/* Only the connections' watches and the daemon's keep the loop
	 * running. */
	uv_unref((uv_handle_t *)w->turn);
	uv_unref((uv_handle_t *)w->idle);
	return 0;
}

void ws_writer_stop(struct ws_writer *w)
{
	while (w->wq_head)
		ws_writer_forget(w, w->wq_head);
	if (w->turn)
		uv_close((uv_handle_t *)w->turn, ws_handle_freed);
	if (w->idle)
		uv_close((uv_handle_t *)w->idle, ws_handle_freed);
	w->turn = NULL;
	w->idle = NULL;
}

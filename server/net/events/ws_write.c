// SPDX-License-Identifier: MIT
/*
 * Writing the event streams to their WebSocket clients (ws_priv.h).
 *
 * lws says WRITEABLE when a client's socket takes data; each callback
 * drains that client's queue in one batch, up to WS_BATCH_MSGS messages
 * or WS_BATCH_BYTES bytes.  lws frames every message itself
 * (lws_write(), one call per frame: lws 4.1 has no call that frames
 * several messages into one buffer, and its LWS_WRITE_BUFLIST only
 * defers them, sending one frame per POLLOUT).  So that a batch still
 * leaves as one write to the network, the socket is corked (TCP_CORK)
 * around a batch of more than one message: each lws_write() then only
 * appends to the socket's send queue, and the uncork sends the batch in
 * as few segments as its size needs.  On loopback most of send()'s cost
 * is the delivery to the receiver, which a corked send does not pay.
 * A single message is not corked: the two extra calls would only add
 * latency to the common case of one event at a time.
 *
 * Fairness and bounded work per loop turn: a client with something to
 * send joins a FIFO of writers instead of asking lws at once.  Before
 * each poll (a uv_prepare_t) the clients at the head of the FIFO are
 * armed with lws_callback_on_writable(), up to WS_TURN_MSGS messages
 * queued; the others wait for a later turn (a
 * uv_idle_t keeps the loop from blocking while the FIFO is not empty).
 * So a turn writes a bounded number of messages, REST requests and
 * everything else ready get served between turns, and a client whose
 * batch left messages behind goes to the back of the FIFO.  A stalled client costs one arm: its POLLOUT waits in the
 * kernel, not in the FIFO.
 *
 * Each event's text is the bus's serialised JSON, shared by every
 * subscriber; it is copied once per client into a scratch buffer with
 * LWS_PRE bytes ahead of it, which lws needs for the frame header.
 */
#include <libwebsockets.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "loop.h"
#include "ws_priv.h"

/* One client's batch: how many messages and bytes a WRITEABLE callback
 * hands to lws before it lets the others have their turn. */
#define WS_BATCH_MSGS  64
#define WS_BATCH_BYTES (64 * 1024)
/* Messages armed per loop turn, all clients together (a client counts
 * its queue, at most a batch, at least one): each is one lws_write(), a
 * send() into a corked socket, so a turn is about a millisecond of
 * writes on loopback and requests wait no longer.  One event to 1,000
 * clients still goes out in one turn. */
#define WS_TURN_MSGS 1024

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

/* Before the poll: arm the turn's clients, as many as the turn's budget
 * of messages holds (at least one). */
static void ws_turn_begin(uv_prepare_t *h)
{
	struct ws_writer *w = h->data;
	size_t msgs = 0;
	struct ws_conn *c;

	while (msgs < WS_TURN_MSGS && (c = w->wq_head)) {
		size_t q = c->sub ? event_sub_queued(c->sub) : 1;

		msgs += q < WS_BATCH_MSGS ? (q ? q : 1) : WS_BATCH_MSGS;
		ws_writer_forget(w, c);
		lws_callback_on_writable(c->wsi);
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
	/* Only lws's handles and the daemon's keep the loop running. */
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
	free(w->scratch);
	w->scratch = NULL;
	w->scratch_cap = 0;
}

void ws_wake(void *owner)
{
	struct ws_conn *c = owner;

	if (c->closing)
		return;
	fifo_push(ws_writer_of(c->srv), c);
	if (event_sub_is_closed(c->sub))
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_CLOSE_SEND,
				WS_CLOSE_FLUSH_S);
}

static unsigned char *ws_scratch(struct ws_writer *w, size_t len)
{
	unsigned char *p;

	if (LWS_PRE + len <= w->scratch_cap)
		return w->scratch;
	p = realloc(w->scratch, LWS_PRE + len);
	if (!p)
		return NULL;
	w->scratch = p;
	w->scratch_cap = LWS_PRE + len;
	return p;
}

/* 0 when written; -1 when the connection must close. */
static int ws_write_item(struct ws_conn *c, const struct stream_item *it)
{
	unsigned char *buf;
	const char *text;
	size_t len;

	text = event_sub_text(it, &len);
	buf = ws_scratch(ws_writer_of(c->srv), len);
	if (!buf)
		return -1;
	memcpy(buf + LWS_PRE, text, len);
	/* lws keeps what the socket did not take and sends it first. */
	return lws_write(c->wsi, buf + LWS_PRE, len, LWS_WRITE_TEXT) < (int)len
		   ? -1
		   : 0;
}

static void ws_cork(struct ws_conn *c, int on)
{
	setsockopt(c->fd, IPPROTO_TCP, TCP_CORK, &on, sizeof(on));
}

/*
 * Hand up to a batch of c's queue to lws.  Returns the messages written,
 * or -1 when the connection must close; *ended is set when the stream's
 * closed message went out.
 */
static int ws_write_batch(struct ws_conn *c, int *ended)
{
	const struct stream_item *it;
	size_t bytes = 0;
	int n = 0;

	while (n < WS_BATCH_MSGS && bytes < WS_BATCH_BYTES &&
	       (it = event_sub_peek(c->sub))) {
		enum stream_item_kind kind = it->kind;
		size_t len;

		event_sub_text(it, &len);
		if (ws_write_item(c, it))
			return -1;
		event_sub_pop(c->sub);
		n++;
		bytes += len;
		if (kind == STREAM_CLOSED) {
			*ended = 1;
			break;
		}
		/* The socket is full: lws keeps the rest, wait for room. */
		if (lws_partial_buffered(c->wsi))
			break;
	}
	return n;
}

int ws_writeable(struct ws_conn *c)
{
	struct ws_writer *w = ws_writer_of(c->srv);
	int corked, ended = 0, n;

	if (!c->sub || c->closing)
		return 0;
	corked = event_sub_queued(c->sub) > 1;
	if (corked)
		ws_cork(c, 1);
	n = ws_write_batch(c, &ended);
	if (corked)
		ws_cork(c, 0);
	if (n < 0)
		return -1;
	if (n) {
		w->stats.batches++;
		w->stats.messages += (uint64_t)n;
		if ((uint64_t)n > w->stats.max_batch)
			w->stats.max_batch = (uint64_t)n;
	}
	if (ended)
		return ws_close_stream(c);
	if (event_sub_peek(c->sub))
		fifo_push(w, c); /* the rest after the others' turn */
	else if (event_sub_is_closed(c->sub))
		return ws_close_stream(c); /* its closed message was lost */
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Stub -> daemon requests.
 *
 * A request lives on the heap with a reference count: the caller holds
 * one, the queue or in-flight list another.  It is found by its 64-bit
 * unique id and the channel that read it.  Every wait has a deadline
 * (timeout_ms); a caller that gives up (deadline or signal) unlinks the
 * request, so a late reply finds nothing, and the daemon is told with
 * TSTUB_INTERRUPT if it had already read the request.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "tstub_priv.h"

static struct tstub_hdr *tstub_req_hdr(struct tstub_req *req)
{
	return (struct tstub_hdr *)req->msg;
}

static void tstub_req_release(struct kref *ref)
{
	struct tstub_req *req = container_of(ref, struct tstub_req, ref);

	if (req->client)
		tstub_tuner_put(req->client);
	kfree(req);
}

void tstub_req_put(struct tstub_req *req)
{
	kref_put(&req->ref, tstub_req_release);
}

static struct tstub_req *tstub_req_alloc(struct tstub_tuner *client,
					 u16 opcode, const void *body,
					 u32 body_len)
{
	size_t msg_len = sizeof(struct tstub_hdr) + body_len;
	int reply_len = tstub_body_size(opcode, 1);
	struct tstub_hdr *h;
	struct tstub_req *req;

	if (reply_len < 0)
		reply_len = 0;
	req = kzalloc(struct_size(req, msg, ALIGN(msg_len, 8) + reply_len),
		      GFP_KERNEL);
	if (!req)
		return NULL;
	kref_init(&req->ref);
	INIT_LIST_HEAD(&req->link);
	init_completion(&req->done);
	req->client = client;
	if (client)
		kref_get(&client->ref);
	req->reply = req->msg + ALIGN(msg_len, 8);
	req->reply_len = reply_len;
	h = tstub_req_hdr(req);
	h->len = msg_len;
	h->opcode = opcode;
	h->client = client ? client->id : 0;
	if (body_len)
		memcpy(h + 1, body, body_len);
	return req;
}

static struct list_head *tstub_req_queue_of(struct tstub_req *req)
{
	return req->client ? &req->client->queue : &tstub.ctrl_queue;
}

/* Under tstub.lock: give the request its unique id and queue it. */
static int tstub_req_queue(struct tstub_req *req, u64 session)
{
	struct tstub_tuner *c = req->client;

	lockdep_assert_held(&tstub.lock);
	if (!tstub.ready)
		return -ENOTCONN;
	if (session && session != tstub.session)
		return -ECONNABORTED;
	if (c && c->detached)
		return -ENODEV;
	if (c && c->failed_session == tstub.session)
		return c->announce_err;
	tstub_req_hdr(req)->unique = tstub.next_unique++;
	kref_get(&req->ref);
	list_add_tail(&req->link, tstub_req_queue_of(req));
	req->state = TSTUB_REQ_QUEUED;
	tstub.waiting++;
	tstub_wake();
	return 0;
}

/**
 * tstub_req_complete() - end a request and wake its caller
 * @req: a request not yet done
 * @error: 0 or a negative errno for the caller
 * @body: reply body (only used when @error is 0)
 * @len: its length
 *
 * Called with tstub.lock held.  Drops the list's reference; the caller
 * still holds its own.
 */
void tstub_req_complete(struct tstub_req *req, int error, const void *body,
			u32 len)
{
	lockdep_assert_held(&tstub.lock);
	if (req->state == TSTUB_REQ_DONE)
		return;
	list_del_init(&req->link);
	req->state = TSTUB_REQ_DONE;
	req->chan = NULL;
	req->error = error;
	if (!error && body && len)
		memcpy(req->reply, body, min(len, req->reply_len));
	tstub.waiting--;
	complete(&req->done);
	tstub_req_put(req);
}

/* Under tstub.lock: the caller stops waiting for @req. */
static void tstub_req_give_up(struct tstub_req *req, int error)
{
	struct tstub_hdr *h = tstub_req_hdr(req);
	struct tstub_interrupt intr = { .unique = h->unique };
	struct tstub_chan *chan = req->chan;
	bool sent = req->state == TSTUB_REQ_SENT;

	tstub_req_complete(req, error, NULL, 0);
	if (sent && chan && (tstub.caps & TSTUB_CAP_INTERRUPT))
		tstub_queue_msg(chan, TSTUB_INTERRUPT, 0, 0, 0, h->client,
				&intr, sizeof(intr));
}

static int tstub_req_wait(struct tstub_req *req)
{
	unsigned long tmo = msecs_to_jiffies(READ_ONCE(tstub_timeout_ms));
	long left;
	int err;

	left = wait_for_completion_interruptible_timeout(&req->done,
							 max(tmo, 1UL));
	mutex_lock(&tstub.lock);
	if (req->state != TSTUB_REQ_DONE)
		tstub_req_give_up(req, left < 0 ? -EINTR : -ETIMEDOUT);
	err = req->error;
	mutex_unlock(&tstub.lock);
	return err;
}

static void tstub_count(struct tstub_tuner *c, int err)
{
	struct tstub_tuner_stats *s = &c->stats;

	atomic64_inc(&s->requests);
	if (!err)
		return;
	atomic64_inc(&s->errors);
	if (err == -ETIMEDOUT)
		atomic64_inc(&s->timeouts);
	else if (err == -EINTR)
		atomic64_inc(&s->interrupts);
	else if (err == -ECONNABORTED)
		atomic64_inc(&s->aborts);
}

/**
 * tstub_call() - send a request to the daemon and wait for its reply
 * @client: the tuner client (its tuner channel), or NULL for the control
 *	channel
 * @session: for control requests tied to one daemon: fail with
 *	-ECONNABORTED unless that daemon is still the connected one; 0 for
 *	any
 * @opcode: TSTUB_* request opcode
 * @body: request body
 * @body_len: its length (the exact size the ABI gives the opcode)
 * @reply: where the reply body goes, or NULL
 * @reply_len: its size: 0 or the exact reply body size of the opcode
 *
 * Return: 0, the daemon's negative errno, -ENOTCONN with no daemon,
 * -ETIMEDOUT past timeout_ms, -EINTR on a signal, -ECONNABORTED when the
 * daemon's channel closed, -ENODEV when the client was detached.
 */
int tstub_call(struct tstub_tuner *client, u64 session, u16 opcode,
	       const void *body, u32 body_len, void *reply, u32 reply_len)
{
	struct tstub_req *req;
	int err;

	req = tstub_req_alloc(client, opcode, body, body_len);
	if (!req)
		return -ENOMEM;
	if (reply_len && reply_len != req->reply_len) {
		tstub_req_put(req);
		return -EINVAL;
	}
	mutex_lock(&tstub.lock);
	err = tstub_req_queue(req, session);
	mutex_unlock(&tstub.lock);
	if (!err)
		err = tstub_req_wait(req);
	if (!err && reply_len)
		memcpy(reply, req->reply, reply_len);
	if (client)
		tstub_count(client, err);
	tstub_req_put(req);
	return err;
}

/* Under tstub.lock: the in-flight request a reply on @chan answers. */
struct tstub_req *tstub_req_find(struct tstub_chan *chan,
				 const struct tstub_hdr *h)
{
	struct tstub_req *req;

	lockdep_assert_held(&tstub.lock);
	list_for_each_entry(req, &tstub.inflight, link) {
		const struct tstub_hdr *rh = tstub_req_hdr(req);

		if (rh->unique == h->unique && req->chan == chan &&
		    rh->opcode == h->opcode)
			return req;
	}
	return NULL;
}

/*
 * Under tstub.lock: move the next request for @chan to the in-flight
 * list.  Returns it with a reference for the reader, or NULL.
 */
struct tstub_req *tstub_req_take(struct tstub_chan *chan)
{
	struct list_head *q = NULL;
	struct tstub_req *req;

	lockdep_assert_held(&tstub.lock);
	if (chan->kind == TSTUB_CHAN_CONTROL)
		q = &tstub.ctrl_queue;
	else if (chan->kind == TSTUB_CHAN_TUNER && chan->client)
		q = &chan->client->queue;
	if (!q)
		return NULL;
	req = list_first_entry_or_null(q, struct tstub_req, link);
	if (!req)
		return NULL;
	list_move_tail(&req->link, &tstub.inflight);
	req->state = TSTUB_REQ_SENT;
	req->chan = chan;
	kref_get(&req->ref);
	return req;
}

/*
 * Under tstub.lock: a read that could not copy the request puts it back
 * at the head of its queue.
 */
void tstub_req_unread(struct tstub_req *req, struct tstub_chan *chan)
{
	lockdep_assert_held(&tstub.lock);
	if (req->state != TSTUB_REQ_SENT || req->chan != chan)
		return;
	list_move(&req->link, tstub_req_queue_of(req));
	req->state = TSTUB_REQ_QUEUED;
	req->chan = NULL;
	tstub_wake();
}

static void tstub_abort_list(struct list_head *list, int error,
			     struct tstub_chan *chan,
			     struct tstub_tuner *client)
{
	struct tstub_req *req, *tmp;

	list_for_each_entry_safe(req, tmp, list, link) {
		if (chan && req->chan != chan)
			continue;
		if (client && req->client != client)
			continue;
		tstub_req_complete(req, error, NULL, 0);
	}
}

/* Under tstub.lock: end every request, queued or in flight. */
void tstub_abort_all(int error)
{
	struct tstub_tuner *c;

	lockdep_assert_held(&tstub.lock);
	tstub_abort_list(&tstub.ctrl_queue, error, NULL, NULL);
	tstub_abort_list(&tstub.inflight, error, NULL, NULL);
	list_for_each_entry(c, &tstub.clients, link)
		tstub_abort_list(&c->queue, error, NULL, NULL);
}

/* Under tstub.lock: end the requests @chan read and did not answer. */
void tstub_abort_chan(struct tstub_chan *chan, int error)
{
	lockdep_assert_held(&tstub.lock);
	tstub_abort_list(&tstub.inflight, error, chan, NULL);
}

/* Under tstub.lock: end every request of @client. */
void tstub_abort_tuner(struct tstub_tuner *client, int error)
{
	lockdep_assert_held(&tstub.lock);
	tstub_abort_list(&client->queue, error, NULL, NULL);
	tstub_abort_list(&tstub.inflight, error, NULL, client);
}

/**
 * tstub_queue_msg() - queue a message nobody waits for on a channel
 * @chan: the channel that reads it
 * @opcode: TSTUB_* opcode
 * @flags: TSTUB_F_REPLY or 0
 * @unique: the unique id (a reply repeats the request's)
 * @error: 0 or a negative errno (replies)
 * @client: client id
 * @body: body, or NULL
 * @body_len: its length
 *
 * Called with tstub.lock held.
 *
 * Return: 0 or -ENOMEM.
 */
int tstub_queue_msg(struct tstub_chan *chan, u16 opcode, u16 flags,
		    u64 unique, s32 error, u32 client, const void *body,
		    u32 body_len)
{
	struct tstub_hdr *h;
	struct tstub_msg *m;

	lockdep_assert_held(&tstub.lock);
	if (error)
		body_len = 0;
	m = kzalloc(struct_size(m, data, sizeof(*h) + body_len), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->len = sizeof(*h) + body_len;
	h = (struct tstub_hdr *)m->data;
	h->len = m->len;
	h->opcode = opcode;
	h->flags = flags;
	h->unique = unique;
	h->error = error;
	h->client = client;
	if (body_len)
		memcpy(h + 1, body, body_len);
	list_add_tail(&m->link, &chan->outq);
	tstub_wake();
	return 0;
}

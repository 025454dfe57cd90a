// SPDX-License-Identifier: MIT
/*
 * box_request.c - the requests the box sends the daemon: the kernel-side
 * tuner requests, queued per client with one in flight at a time (the
 * kernel serialises the calls into one tuner), and the control channel's
 * LOAD_PLUGIN/ATTACH.  Each has a fresh unique and a deadline; requests
 * live on the heap, never on a caller's stack, so a late reply finds
 * nothing and is dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "box_i.h"

static void req_complete(struct box_request *r, int err, const void *body,
			 size_t len)
{
	struct sim_box *box = r->box;
	struct box_client *c =
	    r->control ? NULL : box_client_get(box, r->client);

	loop_del_timer(box->loop, r->timer);
	box_list_del(&r->link);
	if (c) {
		if (c->inflight == r)
			c->inflight = NULL;
		c->nqueued--;
	}
	if (r->done)
		r->done(r->arg, err, body, len);
	free(r);
	if (c)
		box_request_pump(c);
}

static void req_interrupt(struct box_request *r)
{
	struct tstub_interrupt intr = {.unique = r->unique};
	union tstub_buf msg;

	if (!r->chan || r->chan->closed ||
	    !(r->box->caps & TSTUB_CAP_INTERRUPT))
		return;
	tstub_build(&msg, TSTUB_INTERRUPT, 0, 0, 0, r->control ? 0 : r->client,
		    &intr, sizeof(intr));
	box_chan_send(r->chan, &msg);
}

static long on_deadline(struct loop *l, uint64_t id, void *arg)
{
	struct box_request *r = arg;

	(void)l;
	(void)id;
	r->timer = 0;
	r->box->stats.timeouts++;
	box_log(r->box, 0, "client %u: %s unique %llu timed out%s", r->client,
		tstub_opcode_name(r->opcode), (unsigned long long)r->unique,
		r->chan ? "" : " before a tuner channel was bound");
	req_interrupt(r);
	req_complete(r, -ETIMEDOUT, NULL, 0);
	return LOOP_TIMER_DONE;
}

static struct box_request *req_new(struct sim_box *box, uint32_t client,
				   uint16_t opcode, const void *body,
				   size_t len, sim_box_done_fn done, void *arg)
{
	struct box_request *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	if (len > sizeof(r->body)) {
		free(r);
		return NULL;
	}
	box_list_init(&r->link);
	r->box = box;
	r->client = client;
	r->opcode = opcode;
	r->unique = ++box->next_unique;
	r->body_len = len;
	if (len)
		memcpy(&r->body, body, len);
	r->done = done;
	r->arg = arg;
	r->timer = loop_add_timer(box->loop, box->deadline_ms, on_deadline, r);
	if (!r->timer) {
		free(r);
		return NULL;
	}
	return r;
}

static void req_send(struct box_request *r, struct box_channel *chan)
{
	union tstub_buf msg;

	tstub_build(&msg, r->opcode, 0, r->unique, 0,
		    r->control ? 0 : r->client, &r->body, r->body_len);
	r->chan = chan;
	box_log(r->box, 2, "channel %u: -> %s unique %llu client %u", chan->id,
		tstub_opcode_name(r->opcode), (unsigned long long)r->unique,
		r->client);
	/* A failed send shows up as the channel's hangup. */
	box_chan_send(chan, &msg);
}

void box_request_pump(struct box_client *c)
{
	struct box_request *r;

	/* Without a daemon the queue is being torn down, not served. */
	if (c->inflight || !c->box->ready || !c->chan || c->chan->closed ||
	    box_list_empty(&c->queue))
		return;
	r = box_container_of(c->queue.next, struct box_request, link);
	box_list_del(&r->link);
	c->inflight = r;
	req_send(r, c->chan);
}

int box_request_submit(struct sim_box *box, uint32_t client, uint16_t opcode,
		       const void *body, size_t len, sim_box_done_fn done,
		       void *arg)
{
	struct box_client *c = box_client_get(box, client);
	struct box_request *r;

	if (!c)
		return -ENOENT;
	if (!box->ready || c->nqueued >= SIM_BOX_QUEUE_MAX) {
		box->stats.refused++;
		return box->ready ? -EBUSY : -ENOTCONN;
	}
	r = req_new(box, client, opcode, body, len, done, arg);
	if (!r)
		return -ENOMEM;
	box_list_add_tail(&c->queue, &r->link);
	c->nqueued++;
	box->stats.requests++;
	box_request_pump(c);
	return 0;
}

int box_control_send(struct sim_box *box, uint16_t opcode, uint32_t client,
		     const void *body, size_t len, sim_box_done_fn done,
		     void *arg)
{
	struct box_request *r;

	if (!box->ready || !box->control)
		return -ENOTCONN;
	r = req_new(box, client, opcode, body, len, done, arg);
	if (!r)
		return -ENOMEM;
	r->control = true;
	box_list_add_tail(&box->ctl_requests, &r->link);
	req_send(r, box->control);
	return 0;
}

static struct box_request *req_find(struct box_channel *chan, uint64_t unique)
{
	struct sim_box *box = chan->box;
	struct box_list *n;

	if (chan->role == CHAN_TUNER) {
		struct box_request *r = chan->client->inflight;

		return r && r->chan == chan && r->unique == unique ? r : NULL;
	}
	if (chan != box->control)
		return NULL;
	for (n = box->ctl_requests.next; n != &box->ctl_requests; n = n->next) {
		struct box_request *r =
		    box_container_of(n, struct box_request, link);

		if (r->unique == unique)
			return r;
	}
	return NULL;
}

int box_request_reply(struct box_channel *chan, const struct tstub_hdr *h)
{
	struct box_request *r = req_find(chan, h->unique);
	struct box_client *c;

	if (!r || r->opcode != h->opcode)
		return -ENOENT;
	c = r->control ? NULL : chan->client;
	if (c && !h->error && r->opcode == TSTUB_SET_PARAMS) {
		/* What a restarted worker gets back in its BIND reply. */
		c->params = r->body.params;
		c->params.flags |= TSTUB_PARAMS_VALID;
	}
	if (!r->control)
		chan->box->stats.completed++;
	req_complete(r, h->error, tstub_body(h), tstub_body_len(h));
	return 0;
}

void box_request_chan_closed(struct box_channel *chan)
{
	struct box_request *r = chan->client ? chan->client->inflight : NULL;

	if (!r || r->chan != chan)
		return;
	chan->box->stats.aborted++;
	req_complete(r, -ECONNABORTED, NULL, 0);
}

static struct box_request *req_first(struct sim_box *box)
{
	if (!box_list_empty(&box->ctl_requests))
		return box_container_of(box->ctl_requests.next,
					struct box_request, link);
	for (size_t i = 0; i < box->nclients; i++) {
		struct box_client *c = &box->clients[i];

		if (c->inflight)
			return c->inflight;
		if (!box_list_empty(&c->queue))
			return box_container_of(c->queue.next,
						struct box_request, link);
	}
	return NULL;
}

/*
 * One at a time from the top: a callback may end or add requests.  New
 * ones are refused while the box has no daemon, so this terminates.
 */
void box_request_abort_all(struct sim_box *box, int err)
{
	struct box_request *r;

	while ((r = req_first(box))) {
		if (!r->control)
			box->stats.aborted++;
		req_complete(r, err, NULL, 0);
	}
}

void box_requests_free(struct sim_box *box)
{
	struct box_request *r;

	while ((r = req_first(box))) {
		struct box_client *c =
		    r->control ? NULL : box_client_get(box, r->client);

		loop_del_timer(box->loop, r->timer);
		box_list_del(&r->link);
		if (c && c->inflight == r)
			c->inflight = NULL;
		if (c)
			c->nqueued--;
		free(r);
	}
}

static int params_check(const struct tstub_params *p)
{
	if (!p || p->delsys == TSTUB_DELSYS_NONE ||
	    p->delsys >= TSTUB_DELSYS_COUNT || p->frequency == 0)
		return -EINVAL;
	return 0;
}

int sim_box_request(struct sim_box *box, uint32_t client, uint16_t opcode,
		    const struct tstub_params *p, sim_box_done_fn done,
		    void *arg)
{
	struct tstub_params params;

	switch (opcode) {
	case TSTUB_TUNER_INIT:
	case TSTUB_TUNER_SLEEP:
	case TSTUB_GET_STATUS:
	case TSTUB_GET_FREQUENCY:
		return box_request_submit(box, client, opcode, NULL, 0, done,
					  arg);
	case TSTUB_SET_PARAMS:
		if (params_check(p))
			return -EINVAL;
		params = (struct tstub_params){
		    .delsys = p->delsys,
		    .frequency = p->frequency,
		    .bandwidth = p->bandwidth,
		    .symbol_rate = p->symbol_rate,
		    .std = p->std,
		    .flags = TSTUB_PARAMS_VALID,
		};
		return box_request_submit(box, client, opcode, &params,
					  sizeof(params), done, arg);
	}
	return -EINVAL;
}

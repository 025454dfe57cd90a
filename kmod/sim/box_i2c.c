// SPDX-License-Identifier: MIT
/*
 * box_i2c.c - the bridge side of a tuner channel: I2C transfers executed
 * on the client's chip model (with the bus time they take, the trace and
 * the NAK and hang faults), the bridge's tuner callback, and what the
 * bridge's demodulator sees.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "box_i.h"

/* A reply held back until the modeled bus would have finished. */
struct box_i2c_reply {
	struct box_list link; /* chan->i2c_replies */
	struct box_channel *chan;
	uint64_t timer;
	union tstub_buf msg;
};

/* Trace format, shared with the kernel module's virtual bridge:
 * "i2c-<adapter> 0x<addr> <W|R> <bytes in hex>[ NAK]". */
void box_trace_segment(struct sim_box *box, const struct box_client *c,
		       const struct tstub_i2c_seg *seg, const uint8_t *data,
		       bool nak)
{
	char line[3 * TSTUB_I2C_DATA_MAX + 64];
	size_t n;

	if (!box->trace)
		return;
	n = (size_t)snprintf(line, sizeof(line), "i2c-%u 0x%02x %c", c->adapter,
			     seg->addr,
			     (seg->flags & TSTUB_I2C_RD) ? 'R' : 'W');
	for (size_t i = 0; data && i < seg->len && n + 8 < sizeof(line); i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, " %02x",
				      data[i]);
	snprintf(line + n, sizeof(line) - n, "%s\n", nak ? " NAK" : "");
	fputs(line, box->trace);
	fflush(box->trace);
}

static uint32_t i2c_rand(uint32_t *state)
{
	uint32_t x = *state ? *state : 0x9E3779B9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

static bool i2c_nak_roll(struct box_client *c)
{
	double rate =
	    c->fault.nak_rate >= 0.0 ? c->fault.nak_rate : c->box->nak_rate;

	if (!(rate > 0.0))
		return false;
	return (double)i2c_rand(&c->rng) / 4294967296.0 < rate;
}

/* One segment on the wire: the address phase first, then the chip. */
static int i2c_segment(struct box_client *c, const struct tstub_i2c_seg *seg,
		       const uint8_t *wdata, uint8_t *rdata, uint64_t now)
{
	int err;

	if (seg->addr != c->addr || i2c_nak_roll(c))
		err = -EREMOTEIO;
	else if (rdata)
		err = c->ops->read(c->chip, rdata, seg->len, now);
	else
		err = c->ops->write(c->chip, wdata, seg->len, now);
	box_trace_segment(c->box, c, seg, rdata ? (err ? NULL : rdata) : wdata,
			  err != 0);
	c->box->stats.i2c_segments++;
	if (err)
		c->box->stats.i2c_naks++;
	else
		c->box->stats.i2c_bytes += seg->len;
	return err;
}

static long on_i2c_reply(struct loop *l, uint64_t id, void *arg)
{
	struct box_i2c_reply *r = arg;

	(void)l;
	(void)id;
	box_list_del(&r->link);
	box_chan_send(r->chan, &r->msg);
	free(r);
	return LOOP_TIMER_DONE;
}

/*
 * Bus time: every byte is 8 bits plus an acknowledge, the address byte
 * included, and each segment starts with a (repeated) start condition;
 * one stop ends the transfer.  The adapter carries one transfer at a time,
 * starting when it was sent (chan->sent_ns), or when the bus is free.
 */
static void i2c_send_later(struct box_channel *chan, const union tstub_buf *m,
			   uint64_t bits)
{
	struct box_client *c = chan->client;
	struct sim_box *box = chan->box;
	uint64_t now = box_now_ns(), start, done;
	struct box_i2c_reply *r;

	if (!box->i2c_khz) {
		box_chan_send(chan, m);
		return;
	}
	start = c->bus_free_ns > chan->sent_ns ? c->bus_free_ns : chan->sent_ns;
	done = start + bits * 1000000ull / box->i2c_khz;
	c->bus_free_ns = done;
	r = done > now ? malloc(sizeof(*r)) : NULL;
	if (!r) {
		box_chan_send(chan, m); /* done already, or no memory */
		return;
	}
	r->chan = chan;
	memcpy(&r->msg, m, m->hdr.len);
	r->timer = loop_add_timer_ns(box->loop, done - now, on_i2c_reply, r);
	if (!r->timer) {
		free(r);
		box_chan_send(chan, m);
		return;
	}
	box_list_add_tail(&chan->i2c_replies, &r->link);
}

void box_i2c_xfer(struct box_channel *chan, const struct tstub_hdr *h)
{
	struct box_client *c = chan->client;
	const struct tstub_i2c_xfer *x = tstub_body(h);
	const uint8_t *wr = (const uint8_t *)(x + 1);
	uint8_t rd[TSTUB_I2C_DATA_MAX];
	uint64_t now = chan->sent_ns, bits = 1;
	size_t rdlen = 0;
	union tstub_buf m;
	int err = 0;

	if (c->fault.hang) {
		c->box->stats.i2c_hung++;
		box_log(c->box, 1, "client %u: I2C transfer unique %llu hangs",
			c->id, (unsigned long long)h->unique);
		return;
	}
	c->box->stats.i2c_transfers++;
	for (uint32_t i = 0; i < x->nsegs && !err; i++) {
		const struct tstub_i2c_seg *seg = &x->segs[i];

		bits += (1u + seg->len) * 9u + 1u;
		if (seg->flags & TSTUB_I2C_RD) {
			err = i2c_segment(c, seg, NULL, rd + rdlen, now);
			rdlen += seg->len;
		} else {
			err = i2c_segment(c, seg, wr, NULL, now);
			wr += seg->len;
		}
	}
	tstub_build_reply(&m, h, err, rd, rdlen);
	i2c_send_later(chan, &m, bits);
}

void box_i2c_chan_closed(struct box_channel *chan)
{
	while (!box_list_empty(&chan->i2c_replies)) {
		struct box_i2c_reply *r = box_container_of(
		    chan->i2c_replies.next, struct box_i2c_reply, link);

		loop_del_timer(chan->box->loop, r->timer);
		box_list_del(&r->link);
		free(r);
	}
}

void box_bridge_ctrl(struct box_channel *chan, const struct tstub_hdr *h)
{
	const struct tstub_ctrl *ctl = tstub_body(h);
	struct box_client *c = chan->client;
	int err = -EOPNOTSUPP;

	if (c->ops->bridge_ctrl)
		err = c->ops->bridge_ctrl(c->chip, ctl->cmd, ctl->arg,
					  box_now_ns());
	box_log(c->box, 2, "client %u: bridge ctrl %u arg %u: %d", c->id,
		ctl->cmd, ctl->arg, err);
	box_chan_reply(chan, h, err, NULL, 0);
}

/*
 * The demodulator sees the carrier at the frequency the tuner's registers
 * really hold, through the filter the params ask for.  An LO that has not
 * locked smears the carrier: at most the AGC still notices a signal.
 */
bool box_demod_measure(struct box_client *c, uint32_t *rng,
		       struct sim_rf_reading *r, struct tstub_status *st)
{
	bool have = c->params.flags & TSTUB_PARAMS_VALID;
	struct sim_tuned t = {0};
	uint32_t bw;

	memset(st, 0, sizeof(*st));
	st->valid = TSTUB_ST_FE_STATUS;
	c->ops->tuned(c->chip, box_now_ns(), &t);
	if (!t.valid) {
		memset(r, 0, sizeof(*r));
		r->carrier = -1;
		return false;
	}
	bw = have && c->params.bandwidth ? c->params.bandwidth : t.bandwidth;
	sim_rf_measure(c->box->env, t.frequency, bw,
		       have ? c->params.delsys : TSTUB_DELSYS_NONE, rng, r);
	sim_rf_status(r, st);
	if (!t.pll_locked) {
		r->fe_status &= TSTUB_FE_HAS_SIGNAL;
		st->fe_status &= TSTUB_FE_HAS_SIGNAL;
		st->valid &= ~(uint32_t)TSTUB_ST_AFC;
		st->afc_hz = 0;
	}
	st->frequency = t.frequency;
	st->bandwidth = bw;
	return r->fe_status & TSTUB_FE_HAS_LOCK;
}

void box_demod_status(struct box_channel *chan, const struct tstub_hdr *h)
{
	struct sim_rf_reading reading;
	struct tstub_status st;

	box_demod_measure(chan->client, &chan->client->rng, &reading, &st);
	box_chan_reply(chan, h, 0, &st, sizeof(st));
}

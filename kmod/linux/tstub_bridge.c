// SPDX-License-Identifier: GPL-2.0
/*
 * What the daemon asks of a client's bridge on its tuner
 * channel: I2C transfers, the bridge's tuner callback, the demodulator's
 * view, params changed elsewhere, and the brackets of its own commands
 * (the gate and the bridge's lock: tstub_hold.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/i2c.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <media/dvb_frontend.h>

#include "tstub_priv.h"

/* The bus's errors as the ABI names them (no ACK is -EREMOTEIO). */
static int tstub_i2c_errno(int ret, int nmsgs)
{
	if (ret == nmsgs)
		return 0;
	if (ret >= 0 || ret == -ENXIO || ret == -EIO)
		return -EREMOTEIO;
	return ret;
}

/*
 * One combined transfer.  Only the client's own chip is addressed: any
 * other address is answered like a device that does not acknowledge.
 */
static int tstub_bridge_i2c(struct tstub_tuner *c, const struct tstub_hdr *h,
			    u8 *rbuf, u32 *rlen)
{
	const struct tstub_i2c_xfer *x = (const void *)(h + 1);
	u8 *wdata = (u8 *)(x + 1);
	struct i2c_msg msgs[TSTUB_I2C_SEGS_MAX];
	u32 woff = 0, roff = 0, i;
	int ret;

	for (i = 0; i < x->nsegs; i++) {
		const struct tstub_i2c_seg *s = &x->segs[i];

		if (s->addr != c->cfg.i2c_addr)
			return -EREMOTEIO;
		msgs[i].addr = s->addr;
		msgs[i].len = s->len;
		if (s->flags & TSTUB_I2C_RD) {
			msgs[i].flags = I2C_M_RD;
			msgs[i].buf = rbuf + roff;
			roff += s->len;
		} else {
			msgs[i].flags = 0;
			msgs[i].buf = wdata + woff;
			woff += s->len;
		}
	}
	ret = i2c_transfer(c->adap, msgs, x->nsegs);
	atomic64_inc(&c->stats.i2c_xfers);
	ret = tstub_i2c_errno(ret, x->nsegs);
	if (ret)
		atomic64_inc(&c->stats.i2c_errors);
	*rlen = roff;
	return ret;
}

static int tstub_bridge_ctrl(struct tstub_tuner *c, const struct tstub_hdr *h)
{
	const struct tstub_ctrl *ctl = (const void *)(h + 1);
	struct dvb_frontend *fe = c->fe;

	atomic64_inc(&c->stats.bridge_ctrls);
	if (ctl->cmd < TSTUB_CTRL_TUNER_RESET || ctl->cmd > TSTUB_CTRL_I2C_FLUSH)
		return -EINVAL;
	if (c->cfg.tuner_callback)
		return c->cfg.tuner_callback(c->cfg.bridge_priv, ctl->cmd,
					     ctl->arg);
	/* The in-kernel convention (xc2028): reset 0, clock 1, flush 2. */
	if (fe && fe->callback)
		return fe->callback(fe->dvb ? fe->dvb->priv : NULL,
				    DVB_FRONTEND_COMPONENT_TUNER,
				    ctl->cmd - TSTUB_CTRL_TUNER_RESET, ctl->arg);
	return -EOPNOTSUPP;
}

static int tstub_bridge_demod(struct tstub_tuner *c, struct tstub_status *st)
{
	memset(st, 0, sizeof(*st));
	if (!c->cfg.demod_status)
		return -EOPNOTSUPP;
	return c->cfg.demod_status(c->cfg.bridge_priv, st);
}

/* A request on the bridge, under the gate and lock of its command. */
static int tstub_bridge_use(struct tstub_tuner *c, const struct tstub_hdr *h,
			    u8 *rbuf, u32 *rlen)
{
	int own = tstub_bridge_enter(c);
	int ret;

	if (own < 0)
		return own;
	if (h->opcode == TSTUB_I2C_XFER) {
		ret = tstub_bridge_i2c(c, h, rbuf, rlen);
	} else if (h->opcode == TSTUB_BRIDGE_CTRL) {
		ret = tstub_bridge_ctrl(c, h);
	} else {
		ret = tstub_bridge_demod(c, (struct tstub_status *)rbuf);
		*rlen = sizeof(struct tstub_status);
	}
	tstub_bridge_leave(c, own);
	return ret;
}

static int tstub_bridge_run(struct tstub_tuner *c, const struct tstub_hdr *h,
			    u8 *rbuf, u32 *rlen)
{
	int ret;

	*rlen = 0;
	down_read(&c->bridge_sem);
	if (c->detached)
		ret = -ENODEV;
	else if (h->opcode == TSTUB_CMD_BEGIN)
		ret = tstub_hold_begin(c);
	else if (h->opcode == TSTUB_CMD_END)
		ret = tstub_hold_end(c);
	else
		ret = tstub_bridge_use(c, h, rbuf, rlen);
	up_read(&c->bridge_sem);
	return ret;
}

/**
 * tstub_chan_request() - a daemon request on a tuner channel
 * @chan: the channel it was written on
 * @h: the checked message (I2C_XFER, BRIDGE_CTRL, DEMOD_STATUS,
 *	PARAMS_CHANGED, CMD_BEGIN or CMD_END)
 *
 * Runs the request on the bound client's bridge and queues the reply on
 * @chan (PARAMS_CHANGED is a notification: no reply).
 *
 * Return: 0 once the reply is queued, or the errno the write() gives.
 */
int tstub_chan_request(struct tstub_chan *chan, const struct tstub_hdr *h)
{
	struct tstub_tuner *c = NULL;
	u8 *rbuf = NULL;
	u32 rlen = 0;
	int ret, err;

	mutex_lock(&tstub.lock);
	if (chan->kind == TSTUB_CHAN_UNBOUND)
		ret = tstub.control ? -EBUSY : -ENOTCONN;
	else if (chan->kind == TSTUB_CHAN_DEAD)
		ret = -EPIPE;
	else if (chan->kind != TSTUB_CHAN_TUNER || !chan->client)
		ret = -EOPNOTSUPP;
	else if (h->client != chan->client->id)
		ret = -EINVAL;
	else
		ret = 0;
	if (!ret) {
		c = chan->client;
		kref_get(&c->ref);
	}
	mutex_unlock(&tstub.lock);
	if (ret)
		return ret;

	if (h->opcode == TSTUB_PARAMS_CHANGED) {
		tstub_tuner_cache_params(c, (const void *)(h + 1));
		goto out;
	}
	rbuf = kzalloc(TSTUB_I2C_DATA_MAX, GFP_KERNEL);
	if (!rbuf) {
		ret = -ENOMEM;
		goto out;
	}
	err = tstub_bridge_run(c, h, rbuf, &rlen);
	mutex_lock(&tstub.lock);
	ret = tstub_queue_msg(chan, h->opcode, TSTUB_F_REPLY, h->unique, err,
			      h->client, rbuf, rlen);
	mutex_unlock(&tstub.lock);
out:
	kfree(rbuf);
	tstub_tuner_put(c);
	return ret;
}

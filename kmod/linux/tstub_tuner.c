// SPDX-License-Identifier: GPL-2.0
/*
 * The tuners bridges attached: ids, announcing them to
 * the daemon (LOAD_PLUGIN + ATTACH, again after every INIT), binding
 * their tuner channels, detaching them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/i2c.h>
#include <media/dvb_frontend.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "tstub_priv.h"

static void tstub_tuner_release(struct kref *ref)
{
	kfree(container_of(ref, struct tstub_tuner, ref));
}

/* Never takes tstub.lock: may be called with it held. */
void tstub_tuner_put(struct tstub_tuner *c)
{
	kref_put(&c->ref, tstub_tuner_release);
}

/**
 * tstub_tuner_create() - a new client with an id, not yet listed
 * @i2c: the bridge's adapter the tuner sits on
 * @cfg: the bridge's wiring
 *
 * Return: the client or an ERR_PTR (-ENOMEM, -ENOSPC with every id used).
 */
struct tstub_tuner *tstub_tuner_create(struct i2c_adapter *i2c,
				       const struct tuner_stub_config *cfg)
{
	struct tstub_tuner *c;
	int id;

	if (!i2c || !cfg || cfg->i2c_addr > 0x7f)
		return ERR_PTR(-EINVAL);
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	id = ida_alloc_range(&tstub.ida, 1, TSTUB_MAX_CLIENTS, GFP_KERNEL);
	if (id < 0) {
		kfree(c);
		return ERR_PTR(id);
	}
	kref_init(&c->ref);
	INIT_LIST_HEAD(&c->link);
	INIT_LIST_HEAD(&c->queue);
	mutex_init(&c->announce_lock);
	INIT_DELAYED_WORK(&c->reannounce_work, tstub_reannounce_work);
	init_rwsem(&c->bridge_sem);
	tstub_hold_init(c);
	c->id = id;
	c->cfg = *cfg;
	strscpy(c->bridge, cfg->bridge_name ? cfg->bridge_name : "",
		sizeof(c->bridge));
	c->cfg.bridge_name = c->bridge;
	c->adap = i2c;
	return c;
}

/* Listed clients are announced to every daemon that connects. */
void tstub_tuner_publish(struct tstub_tuner *c)
{
	mutex_lock(&tstub.lock);
	list_add_tail(&c->link, &tstub.clients);
	mutex_unlock(&tstub.lock);
}

static void tstub_tuner_set_info(struct tstub_tuner *c,
				 const struct tstub_chip_info *info)
{
	mutex_lock(&tstub.lock);
	c->info = *info;
	c->info.name[sizeof(c->info.name) - 1] = '\0';
	c->info.vendor[sizeof(c->info.vendor) - 1] = '\0';
	c->info.plugin[sizeof(c->info.plugin) - 1] = '\0';
	c->have_info = true;
	tstub_dvb_set_info(c);
	mutex_unlock(&tstub.lock);
}

/*
 * A definite refusal (no plugin, chip absent) makes the client's requests
 * fail at once for this daemon; a slow or lost daemon does not.
 */
static void tstub_tuner_set_result(struct tstub_tuner *c, u64 session,
				   int err)
{
	bool definite = err && err != -ETIMEDOUT && err != -EINTR &&
			err != -ECONNABORTED && err != -ENOMEM;

	mutex_lock(&tstub.lock);
	c->announce_err = err;
	c->failed_session = definite ? session : 0;
	mutex_unlock(&tstub.lock);
}

/*
 * fe->dvb is set once the bridge registered its frontend; before that an
 * ATTACH says "none", and a later announce names the adapter.
 */
static u32 tstub_tuner_dvb_adapter(struct tstub_tuner *c)
{
	struct dvb_adapter *dvb = c->fe ? READ_ONCE(c->fe->dvb) : NULL;

	return dvb ? (u32)dvb->num : TSTUB_DVB_ADAPTER_NONE;
}

static int tstub_tuner_send(struct tstub_tuner *c, u64 session)
{
	struct tstub_load load = {
		.chip_id = c->cfg.chip_id,
		.vendor_id = c->cfg.vendor_id,
		.product_id = c->cfg.product_id,
		.config = c->cfg.config,
	};
	struct tstub_attach att = {
		.client = c->id,
		.chip_id = c->cfg.chip_id,
		.vendor_id = c->cfg.vendor_id,
		.product_id = c->cfg.product_id,
		.config = c->cfg.config,
		.adapter = i2c_adapter_id(c->adap),
		.i2c_addr = c->cfg.i2c_addr,
		.dvb_adapter = tstub_tuner_dvb_adapter(c),
	};
	struct tstub_chip_info info;
	int ret;

	memcpy(att.bridge, c->bridge, sizeof(att.bridge));
	ret = tstub_call(NULL, session, TSTUB_LOAD_PLUGIN, &load,
			 sizeof(load), &info, sizeof(info));
	if (ret)
		return ret;
	ret = tstub_call(NULL, session, TSTUB_ATTACH, &att, sizeof(att),
			 &info, sizeof(info));
	if (!ret) {
		tstub_tuner_set_info(c, &info);
		c->announced_adapter = att.dvb_adapter;
	}
	return ret;
}

/*
 * Under announce_lock: another announce in timeout_ms, for what the
 * connected daemon should know and does not: an ATTACH that timed out or
 * was interrupted (a daemon still busy with its cold start), or one that
 * named no DVB adapter because the bridge attached the tuner before
 * registering its frontend (the daemon then re-attaches it with the
 * adapter).  A few tries per daemon; a new daemon's INIT re-sends anyway.
 */
static void tstub_tuner_plan_retry(struct tstub_tuner *c, u64 session,
				   int ret)
{
	bool again;

	if (ret)
		again = ret == -ETIMEDOUT || ret == -EINTR || ret == -ENOMEM;
	else
		again = c->fe &&
			c->announced_adapter == TSTUB_DVB_ADAPTER_NONE;
	if (c->reannounce_session != session) {
		c->reannounce_session = session;
		c->reannounce_tries = 0;
	}
	if (!again || c->reannounce_tries >= TSTUB_REANNOUNCE_TRIES)
		return;
	c->reannounce_tries++;
	schedule_delayed_work(&c->reannounce_work,
			      msecs_to_jiffies(tstub_timeout_ms));
}

void tstub_reannounce_work(struct work_struct *work)
{
	struct tstub_tuner *c = container_of(to_delayed_work(work),
					     struct tstub_tuner,
					     reannounce_work);

	tstub_tuner_announce(c);
}

/**
 * tstub_tuner_announce() - tell the connected daemon about a client
 * @c: the client
 *
 * Sends LOAD_PLUGIN then ATTACH unless this daemon already knows @c
 * with the DVB adapter it has now.  A timeout, or an ATTACH without the
 * adapter, plans another try (tstub_tuner_plan_retry()).
 *
 * Return: 0, -ENOTCONN with no daemon, or the daemon's errno.
 */
int tstub_tuner_announce(struct tstub_tuner *c)
{
	u64 session;
	bool gone;
	int ret;

	mutex_lock(&c->announce_lock);
	mutex_lock(&tstub.lock);
	session = tstub.ready ? tstub.session : 0;
	gone = c->detached;
	mutex_unlock(&tstub.lock);
	if (gone)
		ret = -ENODEV;
	else if (!session)
		ret = -ENOTCONN;
	else if (c->announced == session &&
		 c->announced_adapter == tstub_tuner_dvb_adapter(c))
		ret = 0;
	else
		ret = tstub_tuner_send(c, session);
	if (!ret && session) {
		c->announced = session;
	} else if (ret && ret != -ENOTCONN && ret != -ENODEV) {
		pr_warn("client %u (chip %u at %d-%02x): daemon refused: %d\n",
			c->id, c->cfg.chip_id, i2c_adapter_id(c->adap),
			c->cfg.i2c_addr, ret);
	}
	if (session && ret != -ENODEV) {
		tstub_tuner_set_result(c, session, ret);
		tstub_tuner_plan_retry(c, session, ret);
	}
	mutex_unlock(&c->announce_lock);
	return ret;
}

/* After INIT: a new daemon learns every tuner still attached. */
void tstub_resend_work(struct work_struct *work)
{
	struct tstub_tuner **all;
	struct tstub_tuner *c;
	unsigned int n = 0, i;

	all = kcalloc(TSTUB_MAX_CLIENTS, sizeof(*all), GFP_KERNEL);
	if (!all)
		return;
	mutex_lock(&tstub.lock);
	list_for_each_entry(c, &tstub.clients, link) {
		if (n == TSTUB_MAX_CLIENTS)
			break;
		kref_get(&c->ref);
		all[n++] = c;
	}
	mutex_unlock(&tstub.lock);
	for (i = 0; i < n; i++) {
		tstub_tuner_announce(all[i]);
		tstub_tuner_put(all[i]);
	}
	kfree(all);
}

/**
 * tstub_tuner_destroy() - detach a client and free its id
 * @c: a client from tstub_tuner_create()
 *
 * Waits for daemon requests using the bridge to finish, tells the daemon
 * (DETACH) if it knows the client, ends the client's requests with
 * -ENODEV and closes its tuner channel.
 */
void tstub_tuner_destroy(struct tstub_tuner *c)
{
	struct tstub_client cl = { .client = c->id };
	u64 announced;

	down_write(&c->bridge_sem);
	mutex_lock(&tstub.lock);
	c->detached = true;
	mutex_unlock(&tstub.lock);
	up_write(&c->bridge_sem);
	/* No request uses the bridge now; a bracket left open lets go. */
	tstub_hold_drop(c);
	/* A planned announce finds the client gone (-ENODEV) or is gone. */
	cancel_delayed_work_sync(&c->reannounce_work);

	mutex_lock(&c->announce_lock);
	announced = c->announced;
	c->announced = 0;
	mutex_unlock(&c->announce_lock);
	/* Only the daemon that attached the client learns it is gone. */
	if (announced)
		tstub_call(NULL, announced, TSTUB_DETACH, &cl, sizeof(cl),
			   NULL, 0);

	mutex_lock(&tstub.lock);
	list_del_init(&c->link);
	tstub_abort_tuner(c, -ENODEV);
	if (c->chan)
		tstub_unbind(c->chan, TSTUB_CHAN_DEAD);
	mutex_unlock(&tstub.lock);
	ida_free(&tstub.ida, c->id);
	tstub_tuner_put(c);
}

static struct tstub_tuner *tstub_tuner_lookup(u32 id)
{
	struct tstub_tuner *c;

	lockdep_assert_held(&tstub.lock);
	list_for_each_entry(c, &tstub.clients, link)
		if (c->id == id)
			return c;
	return NULL;
}

/**
 * tstub_bind() - an unbound channel asks to serve a client
 * @chan: the channel that wrote TSTUB_BIND
 * @h: the BIND request
 *
 * Called with tstub.lock held.  The reply (the client's last params, or
 * -ENOTCONN, -ENOENT, -EBUSY) is queued on @chan.
 *
 * Return: 0 or -ENOMEM.
 */
int tstub_bind(struct tstub_chan *chan, const struct tstub_hdr *h)
{
	const struct tstub_client *cl = (const void *)(h + 1);
	struct tstub_params params = {};
	struct tstub_tuner *c = NULL;
	int err = 0;

	lockdep_assert_held(&tstub.lock);
	if (!tstub.ready)
		err = -ENOTCONN;
	else
		c = tstub_tuner_lookup(cl->client);
	if (!err && (!c || c->detached))
		err = -ENOENT;
	else if (!err && c->chan)
		err = -EBUSY;
	if (!err) {
		kref_get(&c->ref);
		c->chan = chan;
		chan->client = c;
		chan->kind = TSTUB_CHAN_TUNER;
		params = c->params;
	}
	return tstub_queue_msg(chan, TSTUB_BIND, TSTUB_F_REPLY, h->unique, err,
			       cl->client, &params, sizeof(params));
}

/**
 * tstub_unbind() - a tuner channel stops serving its client
 * @chan: the channel
 * @kind: what the channel becomes (TSTUB_CHAN_DEAD: end of file)
 *
 * Called with tstub.lock held.  Requests not yet read stay queued for the
 * client's next channel.
 */
void tstub_unbind(struct tstub_chan *chan, enum tstub_chan_kind kind)
{
	struct tstub_tuner *c = chan->client;

	lockdep_assert_held(&tstub.lock);
	if (c) {
		/* A worker gone inside its bracket frees the bridge's lock. */
		tstub_hold_abandon(c);
		c->chan = NULL;
		chan->client = NULL;
		tstub_tuner_put(c);
	}
	chan->kind = kind;
	tstub_wake();
}

/* What the tuner was last told, for a worker that binds again. */
void tstub_tuner_cache_params(struct tstub_tuner *c,
			      const struct tstub_params *p)
{
	mutex_lock(&tstub.lock);
	c->params = *p;
	c->params.flags |= TSTUB_PARAMS_VALID;
	mutex_unlock(&tstub.lock);
}

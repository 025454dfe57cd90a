// SPDX-License-Identifier: MIT
/*
 * box_session.c - a daemon's session with the box: the INIT handshake on
 * the control channel, the LOAD_PLUGIN/ATTACH resend that teaches a new
 * daemon every tuner, and the binding of tuner channels to clients.
 */
#include <errno.h>
#include <string.h>

#include "box_i.h"

static long on_init_deadline(struct loop *l, uint64_t id, void *arg)
{
	struct box_channel *chan = arg;

	(void)l;
	(void)id;
	chan->timer = 0;
	box_chan_close(chan, "INIT not answered in time");
	return LOOP_TIMER_DONE;
}

void box_session_start_init(struct box_channel *chan)
{
	struct sim_box *box = chan->box;
	struct tstub_init init = {
	    .major = TSTUB_MAJOR,
	    .minor = TSTUB_MINOR,
	    .flags =
		TSTUB_CAP_RESEND | TSTUB_CAP_INTERRUPT | TSTUB_CAP_DEMOD_STATUS,
	    .max_msg = TSTUB_MSG_MAX,
	    .kind = TSTUB_KIND_SIM,
	    .settle_permille = (uint32_t)(box->settle_scale * 1000.0 + 0.5),
	    .max_clients = (uint32_t)box->nclients,
	};
	union tstub_buf msg;

	chan->role = CHAN_CONTROL_INIT;
	box->control = chan;
	box->init_unique = ++box->next_unique;
	tstub_build(&msg, TSTUB_INIT, 0, box->init_unique, 0, 0, &init,
		    sizeof(init));
	chan->timer =
	    loop_add_timer(box->loop, box->deadline_ms, on_init_deadline, chan);
	box_log(box, 1, "channel %u: sending INIT", chan->id);
	box_chan_send(chan, &msg);
}

static void on_attach_done(void *arg, int err, const void *body, size_t len)
{
	struct box_client *c = arg;
	const struct tstub_chip_info *info = body;

	if (err || len != sizeof(*info)) {
		box_log(c->box, err == -ECONNABORTED ? 1 : 0,
			"client %u: ATTACH failed: %s", c->id,
			box_errname(err));
		return;
	}
	c->info = *info;
	c->info.name[TSTUB_NAME_LEN - 1] = '\0';
	c->info.vendor[TSTUB_NAME_LEN - 1] = '\0';
	c->info.plugin[TSTUB_NAME_LEN - 1] = '\0';
	c->attached = true;
	box_log(c->box, 1,
		"client %u: attached %s (%s), plugin %s v%u, %u-%u Hz step %u, "
		"caps 0x%x, IF %u Hz",
		c->id, c->info.name, c->info.vendor, c->info.plugin,
		c->info.plugin_version, c->info.freq_min, c->info.freq_max,
		c->info.freq_step, c->info.caps, c->info.if_frequency);
}

static void on_load_done(void *arg, int err, const void *body, size_t len)
{
	struct box_client *c = arg;
	const struct tstub_chip_info *info = body;
	struct tstub_attach at = {
	    .client = c->id,
	    .chip_id = c->chip_id,
	    .vendor_id = c->vendor_id,
	    .product_id = c->product_id,
	    .config = c->config,
	    .adapter = c->adapter,
	    .i2c_addr = c->addr,
	};

	if (err || len != sizeof(*info)) {
		box_log(c->box, err == -ECONNABORTED ? 1 : 0,
			"client %u: LOAD_PLUGIN chip 0x%x failed: %s", c->id,
			c->chip_id, box_errname(err));
		return;
	}
	box_log(c->box, 1, "client %u: plugin %.32s loaded for %.32s", c->id,
		info->plugin, info->name);
	memcpy(at.bridge, c->bridge, sizeof(at.bridge));
	box_control_send(c->box, TSTUB_ATTACH, c->id, &at, sizeof(at),
			 on_attach_done, c);
}

/* TSTUB_CAP_RESEND: a new daemon learns every tuner again. */
static void box_resend(struct sim_box *box)
{
	for (size_t i = 0; i < box->nclients && box->ready; i++) {
		struct box_client *c = &box->clients[i];
		struct tstub_load load = {
		    .chip_id = c->chip_id,
		    .vendor_id = c->vendor_id,
		    .product_id = c->product_id,
		    .config = c->config,
		};

		c->attached = false;
		box_control_send(box, TSTUB_LOAD_PLUGIN, c->id, &load,
				 sizeof(load), on_load_done, c);
	}
}

void box_session_init_reply(struct box_channel *chan, const struct tstub_hdr *h)
{
	struct sim_box *box = chan->box;
	const struct tstub_init *init = tstub_body(h);

	if (h->unique != box->init_unique) {
		box->stats.unknown_uniques++;
		box_log(box, 0,
			"channel %u: INIT reply with unknown unique %llu",
			chan->id, (unsigned long long)h->unique);
		return;
	}
	loop_del_timer(box->loop, chan->timer);
	chan->timer = 0;
	if (h->error) {
		box_chan_close(chan, box_errname(h->error));
		return;
	}
	if (init->major != TSTUB_MAJOR) {
		box_log(box, 0, "channel %u: daemon speaks ABI %u.%u, not %u",
			chan->id, init->major, init->minor, TSTUB_MAJOR);
		box_chan_close(chan, "ABI major mismatch");
		return;
	}
	box->minor = init->minor > TSTUB_MINOR ? TSTUB_MINOR : init->minor;
	box->caps = init->flags & (TSTUB_CAP_RESEND | TSTUB_CAP_INTERRUPT |
				   TSTUB_CAP_DEMOD_STATUS);
	chan->role = CHAN_CONTROL;
	box->ready = true;
	box->stats.daemon_sessions++;
	box_log(box, 1, "channel %u: daemon ready, ABI %u.%u, caps 0x%llx",
		chan->id, TSTUB_MAJOR, box->minor,
		(unsigned long long)box->caps);
	box_resend(box);
}

static int chan_bind_error(struct box_channel *chan, uint32_t id)
{
	struct sim_box *box = chan->box;
	struct box_client *c = box_client_get(box, id);

	if (!box->ready)
		return -ENOTCONN;
	if (chan->role == CHAN_TUNER)
		return -EBUSY;
	if (chan->role == CHAN_CONTROL)
		return -EINVAL;
	if (!c)
		return -ENOENT;
	if (c->chan)
		return -EBUSY;
	return 0;
}

void box_session_bind(struct box_channel *chan, const struct tstub_hdr *h)
{
	const struct tstub_client *body = tstub_body(h);
	struct box_client *c;
	int err;

	if (chan->role == CHAN_CONTROL_INIT) {
		/* A worker that met the INIT meant for a daemon. */
		loop_del_timer(chan->box->loop, chan->timer);
		chan->timer = 0;
		chan->box->control = NULL;
		chan->role = CHAN_OTHER;
	}
	err = chan_bind_error(chan, body->client);
	if (err) {
		box_log(chan->box, 0, "channel %u: BIND client %u: %s",
			chan->id, body->client, box_errname(err));
		box_chan_reply(chan, h, err, NULL, 0);
		return;
	}
	c = box_client_get(chan->box, body->client);
	c->chan = chan;
	chan->client = c;
	chan->role = CHAN_TUNER;
	box_log(chan->box, 1, "channel %u: bound to client %u (%s)", chan->id,
		c->id, c->ops->name);
	box_chan_reply(chan, h, 0, &c->params, sizeof(c->params));
	box_request_pump(c);
}

void box_session_params_changed(struct box_channel *chan,
				const struct tstub_hdr *h)
{
	const struct tstub_params *p = tstub_body(h);

	chan->client->params = *p;
	chan->client->params.flags |= TSTUB_PARAMS_VALID;
	box_log(chan->box, 1, "client %u: params now %s %u Hz",
		chan->client->id, tstub_delsys_name(p->delsys), p->frequency);
}

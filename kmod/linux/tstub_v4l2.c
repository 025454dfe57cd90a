// SPDX-License-Identifier: GPL-2.0
/*
 * The stub as an analog bridge's tuner: a v4l2_subdev
 * with tuner operations.
 *
 * V4L2 frequencies are in units of 62.5 kHz for TV and, with
 * V4L2_TUNER_CAP_LOW (always set here for radio), 62.5 Hz for radio.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/videodev2.h>

#include <media/v4l2-subdev.h>

#include "tstub_priv.h"

struct tstub_v4l2 {
	struct v4l2_subdev sd;
	struct tstub_tuner *client;
	struct mutex lock;		/* the fields below */
	u32 mode;			/* V4L2_TUNER_ANALOG_TV or _RADIO */
	u32 tv_freq;			/* 62.5 kHz units, 0: never tuned */
	u32 radio_freq;			/* 62.5 Hz units */
	v4l2_std_id std;
	u32 audmode;
};

static struct tstub_v4l2 *to_tstub_v4l2(struct v4l2_subdev *sd)
{
	return container_of(sd, struct tstub_v4l2, sd);
}

static u64 tstub_v4l2_hz(u32 mode, u32 freq)
{
	return mode == V4L2_TUNER_RADIO ? (u64)freq * 125 / 2 :
					  (u64)freq * 62500;
}

static u32 tstub_v4l2_units(u32 mode, u64 hz)
{
	return mode == V4L2_TUNER_RADIO ? div_u64(hz * 2, 125) :
					  div_u64(hz, 62500);
}

/* With t->lock held: tune @freq (V4L2 units) in @mode. */
static int tstub_v4l2_tune(struct tstub_v4l2 *t, u32 mode, u32 freq)
{
	struct tstub_params p = {
		.delsys = mode == V4L2_TUNER_RADIO ? TSTUB_DELSYS_RADIO :
						     TSTUB_DELSYS_ANALOG_TV,
		.std = mode == V4L2_TUNER_RADIO ? 0 : t->std,
		.flags = TSTUB_PARAMS_VALID,
	};
	u64 hz = tstub_v4l2_hz(mode, freq);
	int ret;

	if (hz > U32_MAX)
		return -ERANGE;
	p.frequency = hz;
	ret = tstub_call(t->client, 0, TSTUB_SET_PARAMS, &p, sizeof(p),
			 NULL, 0);
	if (ret)
		return ret;
	tstub_tuner_cache_params(t->client, &p);
	t->mode = mode;
	if (mode == V4L2_TUNER_RADIO)
		t->radio_freq = freq;
	else
		t->tv_freq = freq;
	return 0;
}

static int tstub_v4l2_s_frequency(struct v4l2_subdev *sd,
				  const struct v4l2_frequency *f)
{
	struct tstub_v4l2 *t = to_tstub_v4l2(sd);
	int ret;

	if (f->type != V4L2_TUNER_RADIO && f->type != V4L2_TUNER_ANALOG_TV)
		return -EINVAL;
	mutex_lock(&t->lock);
	ret = tstub_v4l2_tune(t, f->type, f->frequency);
	mutex_unlock(&t->lock);
	return ret;
}

static int tstub_v4l2_g_frequency(struct v4l2_subdev *sd,
				  struct v4l2_frequency *f)
{
	struct tstub_v4l2 *t = to_tstub_v4l2(sd);

	mutex_lock(&t->lock);
	f->type = t->mode;
	f->frequency = t->mode == V4L2_TUNER_RADIO ? t->radio_freq :
						     t->tv_freq;
	mutex_unlock(&t->lock);
	return 0;
}

static int tstub_v4l2_g_tuner(struct v4l2_subdev *sd, struct v4l2_tuner *vt)
{
	struct tstub_v4l2 *t = to_tstub_v4l2(sd);
	struct tstub_tuner *c = t->client;
	struct tstub_status st;
	u32 fmin = 0, fmax = 0, mode;

	mutex_lock(&tstub.lock);
	if (c->have_info) {
		fmin = c->info.freq_min;
		fmax = c->info.freq_max;
	}
	mutex_unlock(&tstub.lock);

	mutex_lock(&t->lock);
	mode = t->mode;
	vt->type = mode;
	vt->audmode = t->audmode;
	mutex_unlock(&t->lock);
	vt->capability = V4L2_TUNER_CAP_STEREO |
		(mode == V4L2_TUNER_RADIO ? V4L2_TUNER_CAP_LOW :
					    V4L2_TUNER_CAP_NORM);
	vt->rangelow = tstub_v4l2_units(mode, fmin);
	vt->rangehigh = tstub_v4l2_units(mode, fmax);
	if (!tstub_call(c, 0, TSTUB_GET_STATUS, NULL, 0, &st, sizeof(st))) {
		if (st.valid & TSTUB_ST_STRENGTH_REL)
			vt->signal = min_t(u32, st.strength_rel, 65535);
		else if ((st.valid & TSTUB_ST_PLL_LOCK) && st.pll_locked)
			vt->signal = 65535;
		if (st.valid & TSTUB_ST_AFC)
			vt->afc = st.afc_hz;
	}
	return 0;
}

static int tstub_v4l2_s_tuner(struct v4l2_subdev *sd,
			      const struct v4l2_tuner *vt)
{
	struct tstub_v4l2 *t = to_tstub_v4l2(sd);

	mutex_lock(&t->lock);
	t->audmode = vt->audmode;
	mutex_unlock(&t->lock);
	return 0;
}

static int tstub_v4l2_s_radio(struct v4l2_subdev *sd)
{
	struct tstub_v4l2 *t = to_tstub_v4l2(sd);

	mutex_lock(&t->lock);
	t->mode = V4L2_TUNER_RADIO;
	mutex_unlock(&t->lock);
	return 0;
}

static int tstub_v4l2_s_std(struct v4l2_subdev *sd, v4l2_std_id std)
{
	struct tstub_v4l2 *t = to_tstub_v4l2(sd);
	int ret = 0;

	mutex_lock(&t->lock);
	t->std = std;
	t->mode = V4L2_TUNER_ANALOG_TV;
	/* A new standard changes the tune of the current channel. */
	if (t->tv_freq)
		ret = tstub_v4l2_tune(t, V4L2_TUNER_ANALOG_TV, t->tv_freq);
	mutex_unlock(&t->lock);
	return ret;
}

static int tstub_v4l2_standby(struct v4l2_subdev *sd)
{
	return tstub_call(to_tstub_v4l2(sd)->client, 0, TSTUB_TUNER_SLEEP,
			  NULL, 0, NULL, 0);
}

static const struct v4l2_subdev_tuner_ops tstub_v4l2_tuner_ops = {
	.standby = tstub_v4l2_standby,
	.s_radio = tstub_v4l2_s_radio,
	.s_frequency = tstub_v4l2_s_frequency,
	.g_frequency = tstub_v4l2_g_frequency,
	.g_tuner = tstub_v4l2_g_tuner,
	.s_tuner = tstub_v4l2_s_tuner,
};

static const struct v4l2_subdev_video_ops tstub_v4l2_video_ops = {
	.s_std = tstub_v4l2_s_std,
};

static const struct v4l2_subdev_ops tstub_v4l2_ops = {
	.tuner = &tstub_v4l2_tuner_ops,
	.video = &tstub_v4l2_video_ops,
};

/**
 * tuner_stub_v4l2_attach() - use the tunerd daemon as an analog tuner
 * @i2c: the adapter the tuner chip sits on
 * @cfg: the chip and the bridge's wiring (copied)
 *
 * Returns a subdevice with tuner operations (s_frequency, g_frequency,
 * g_tuner, s_tuner, s_radio, standby) and video s_std, ready for
 * v4l2_device_register_subdev().  The daemon is told as by
 * tuner_stub_attach().
 *
 * Context: process context; may sleep up to twice timeout_ms.
 * Return: the subdevice, or NULL on bad arguments or no memory.
 */
struct v4l2_subdev *tuner_stub_v4l2_attach(struct i2c_adapter *i2c,
					   const struct tuner_stub_config *cfg)
{
	struct tstub_v4l2 *t;
	struct tstub_tuner *c;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return NULL;
	c = tstub_tuner_create(i2c, cfg);
	if (IS_ERR(c)) {
		kfree(t);
		return NULL;
	}
	mutex_init(&t->lock);
	t->client = c;
	t->mode = V4L2_TUNER_ANALOG_TV;
	t->std = V4L2_STD_PAL;
	t->audmode = V4L2_TUNER_MODE_STEREO;
	v4l2_subdev_init(&t->sd, &tstub_v4l2_ops);
	snprintf(t->sd.name, sizeof(t->sd.name), "tuner-stub-%u", c->id);
	c->sd = &t->sd;
	tstub_tuner_publish(c);
	tstub_tuner_announce(c);
	return &t->sd;
}
EXPORT_SYMBOL_GPL(tuner_stub_v4l2_attach);

/**
 * tuner_stub_v4l2_detach() - release a subdevice of tuner_stub_v4l2_attach()
 * @sd: the subdevice, already unregistered from its v4l2_device
 *
 * Context: process context; may sleep up to timeout_ms.
 */
void tuner_stub_v4l2_detach(struct v4l2_subdev *sd)
{
	struct tstub_v4l2 *t;

	if (!sd)
		return;
	t = to_tstub_v4l2(sd);
	tstub_tuner_destroy(t->client);
	mutex_destroy(&t->lock);
	kfree(t);
}
EXPORT_SYMBOL_GPL(tuner_stub_v4l2_detach);

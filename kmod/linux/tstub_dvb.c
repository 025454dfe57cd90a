// SPDX-License-Identifier: GPL-2.0
/*
 * The stub as a DVB frontend's tuner (dvb_tuner_ops).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/string.h>
#include <linux/videodev2.h>

#include <media/dvb_frontend.h>

#include "tstub_priv.h"

static struct tstub_tuner *tstub_fe_client(struct dvb_frontend *fe)
{
	return fe->tuner_priv;
}

/*
 * One tuner operation: the demodulator's gate is open from before the
 * daemon's first transfer for it until after its answer (tstub_hold.c).
 */
static int tstub_dvb_call(struct dvb_frontend *fe, u16 opcode,
			  const void *body, u32 body_len, void *reply,
			  u32 reply_len)
{
	struct tstub_tuner *c = tstub_fe_client(fe);
	int ret;

	if (!c)
		return -ENODEV;	/* released */
	tstub_kcmd_begin(c);
	ret = tstub_call(c, 0, opcode, body, body_len, reply, reply_len);
	tstub_kcmd_end(c);
	return ret;
}

static int tstub_dvb_init(struct dvb_frontend *fe)
{
	struct tstub_tuner *c = tstub_fe_client(fe);

	/* A daemon that refused or missed the tuner gets another chance. */
	tstub_tuner_announce(c);
	return tstub_dvb_call(fe, TSTUB_TUNER_INIT, NULL, 0, NULL, 0);
}

static int tstub_dvb_sleep(struct dvb_frontend *fe)
{
	return tstub_dvb_call(fe, TSTUB_TUNER_SLEEP, NULL, 0, NULL, 0);
}

static int tstub_dvb_delsys(u32 sys, u32 *delsys)
{
	switch (sys) {
	case SYS_DVBT:
		*delsys = TSTUB_DELSYS_DVBT;
		return 0;
	case SYS_DVBT2:
		*delsys = TSTUB_DELSYS_DVBT2;
		return 0;
	case SYS_DVBC_ANNEX_A:
		*delsys = TSTUB_DELSYS_DVBC_A;
		return 0;
	case SYS_DVBS:
		*delsys = TSTUB_DELSYS_DVBS;
		return 0;
	case SYS_DVBS2:
		*delsys = TSTUB_DELSYS_DVBS2;
		return 0;
	case SYS_ATSC:
		*delsys = TSTUB_DELSYS_ATSC;
		return 0;
	}
	return -EINVAL;
}

/* DVBv5 properties to the ABI's params. */
static int tstub_dvb_params(const struct dtv_frontend_properties *p,
			    struct tstub_params *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = tstub_dvb_delsys(p->delivery_system, &out->delsys);
	if (ret)
		return ret;
	out->frequency = p->frequency;
	switch (out->delsys) {
	case TSTUB_DELSYS_DVBS:
	case TSTUB_DELSYS_DVBS2:
		/* DVBv5 gives satellite frequencies in kHz */
		if (p->frequency > U32_MAX / 1000)
			return -EINVAL;
		out->frequency = p->frequency * 1000;
		out->symbol_rate = p->symbol_rate;
		break;
	case TSTUB_DELSYS_DVBC_A:
		out->symbol_rate = p->symbol_rate;
		out->bandwidth = p->bandwidth_hz;
		break;
	default:
		out->bandwidth = p->bandwidth_hz;
		break;
	}
	out->flags = TSTUB_PARAMS_VALID;
	return 0;
}

static int tstub_dvb_set_params(struct dvb_frontend *fe)
{
	struct tstub_tuner *c = tstub_fe_client(fe);
	struct tstub_params p;
	int ret;

	ret = tstub_dvb_params(&fe->dtv_property_cache, &p);
	if (ret)
		return ret;
	ret = tstub_dvb_call(fe, TSTUB_SET_PARAMS, &p, sizeof(p), NULL, 0);
	if (!ret)
		tstub_tuner_cache_params(c, &p);
	return ret;
}

/*
 * Analog TV and FM radio on a hybrid frontend's tuner (what tuner-core
 * calls for a bridge's V4L2 side): TV in 62.5 kHz units, radio in
 * 62.5 Hz units, as the in-kernel drivers read them.
 */
static int tstub_dvb_set_analog_params(struct dvb_frontend *fe,
				       struct analog_parameters *ap)
{
	bool radio = ap->mode == V4L2_TUNER_RADIO;
	struct tstub_params p = {
		.delsys = radio ? TSTUB_DELSYS_RADIO : TSTUB_DELSYS_ANALOG_TV,
		.std = radio ? 0 : ap->std,
		.flags = TSTUB_PARAMS_VALID,
	};
	u64 hz = radio ? (u64)ap->frequency * 125 / 2 :
			 (u64)ap->frequency * 62500;
	int ret;

	if (hz > U32_MAX)
		return -ERANGE;
	p.frequency = hz;
	ret = tstub_dvb_call(fe, TSTUB_SET_PARAMS, &p, sizeof(p), NULL, 0);
	if (!ret)
		tstub_tuner_cache_params(tstub_fe_client(fe), &p);
	return ret;
}

static int tstub_dvb_freq(struct dvb_frontend *fe, struct tstub_freq *f)
{
	return tstub_dvb_call(fe, TSTUB_GET_FREQUENCY, NULL, 0, f, sizeof(*f));
}

static int tstub_dvb_get_frequency(struct dvb_frontend *fe, u32 *frequency)
{
	struct tstub_freq f;
	int ret = tstub_dvb_freq(fe, &f);

	if (!ret)
		*frequency = f.frequency;
	return ret;
}

static int tstub_dvb_get_bandwidth(struct dvb_frontend *fe, u32 *bandwidth)
{
	struct tstub_freq f;
	int ret = tstub_dvb_freq(fe, &f);

	if (!ret)
		*bandwidth = f.bandwidth;
	return ret;
}

static int tstub_dvb_get_if_frequency(struct dvb_frontend *fe, u32 *freq)
{
	struct tstub_freq f;
	int ret = tstub_dvb_freq(fe, &f);

	if (!ret)
		*freq = f.if_frequency;
	return ret;
}

static int tstub_dvb_status(struct dvb_frontend *fe, struct tstub_status *st)
{
	return tstub_dvb_call(fe, TSTUB_GET_STATUS, NULL, 0, st, sizeof(*st));
}

static int tstub_dvb_get_status(struct dvb_frontend *fe, u32 *status)
{
	struct tstub_status st;
	int ret = tstub_dvb_status(fe, &st);

	if (ret)
		return ret;
	*status = 0;
	if ((st.valid & TSTUB_ST_PLL_LOCK) && st.pll_locked)
		*status |= TUNER_STATUS_LOCKED;
	else if ((st.valid & TSTUB_ST_FE_STATUS) &&
		 (st.fe_status & TSTUB_FE_HAS_LOCK))
		*status |= TUNER_STATUS_LOCKED;
	return 0;
}

/* -100 dBm .. -20 dBm spread over 0 .. 65535 when only dBm is known. */
static u16 tstub_dvb_rel_strength(s32 mdbm)
{
	s64 v = ((s64)mdbm + 100000) * 65535 / 80000;

	return clamp_t(s64, v, 0, 65535);
}

static int tstub_dvb_get_rf_strength(struct dvb_frontend *fe, u16 *strength)
{
	struct tstub_status st;
	int ret = tstub_dvb_status(fe, &st);

	if (ret)
		return ret;
	if (st.valid & TSTUB_ST_STRENGTH_REL)
		*strength = min_t(u32, st.strength_rel, 65535);
	else if (st.valid & TSTUB_ST_STRENGTH_DBM)
		*strength = tstub_dvb_rel_strength(st.strength_mdbm);
	else
		return -EOPNOTSUPP;
	return 0;
}

static int tstub_dvb_get_afc(struct dvb_frontend *fe, s32 *afc)
{
	struct tstub_status st;
	int ret = tstub_dvb_status(fe, &st);

	if (ret)
		return ret;
	if (!(st.valid & TSTUB_ST_AFC))
		return -EOPNOTSUPP;
	*afc = st.afc_hz;
	return 0;
}

static void tstub_dvb_release(struct dvb_frontend *fe)
{
	struct tstub_tuner *c = tstub_fe_client(fe);

	if (!c)
		return;
	fe->tuner_priv = NULL;
	tstub_tuner_destroy(c);
}

static const struct dvb_tuner_ops tstub_dvb_tuner_ops = {
	.info = {
		.name = "tuner stub (no daemon yet)",
	},
	.release = tstub_dvb_release,
	.init = tstub_dvb_init,
	.sleep = tstub_dvb_sleep,
	.set_params = tstub_dvb_set_params,
	.set_analog_params = tstub_dvb_set_analog_params,
	.get_frequency = tstub_dvb_get_frequency,
	.get_bandwidth = tstub_dvb_get_bandwidth,
	.get_if_frequency = tstub_dvb_get_if_frequency,
	.get_status = tstub_dvb_get_status,
	.get_rf_strength = tstub_dvb_get_rf_strength,
	.get_afc = tstub_dvb_get_afc,
};

/* Under tstub.lock: the frontend shows the chip the daemon found. */
void tstub_dvb_set_info(struct tstub_tuner *c)
{
	struct dvb_tuner_info *info;

	lockdep_assert_held(&tstub.lock);
	if (!c->fe || !c->have_info)
		return;
	info = &c->fe->ops.tuner_ops.info;
	snprintf(info->name, sizeof(info->name), "%s %s (tunerd)",
		 c->info.vendor, c->info.name);
	info->frequency_min_hz = c->info.freq_min;
	info->frequency_max_hz = c->info.freq_max;
	info->frequency_step_hz = c->info.freq_step;
}

/**
 * tuner_stub_attach() - use the tunerd daemon as a DVB frontend's tuner
 * @fe: the frontend, its demodulator already attached
 * @i2c: the adapter the tuner chip sits on
 * @cfg: the chip and the bridge's wiring (copied)
 *
 * Fills @fe->ops.tuner_ops with the stub's operations and sends
 * LOAD_PLUGIN + ATTACH to the daemon; the tuner info (name, frequency
 * range and step) comes from the chip info the daemon returns.  With no
 * daemon connected yet the tuner is announced when one completes INIT;
 * until then its operations fail with -ENOTCONN.
 *
 * May be called through dvb_attach(): dvb_frontend_detach() then
 * releases the tuner.  A bridge that calls it directly calls
 * tuner_stub_detach() before dvb_frontend_detach(), which would otherwise
 * drop a module reference that was never taken.
 *
 * Context: process context; may sleep up to twice timeout_ms.
 * Return: @fe, or NULL on bad arguments or no memory.
 */
struct dvb_frontend *tuner_stub_attach(struct dvb_frontend *fe,
				       struct i2c_adapter *i2c,
				       const struct tuner_stub_config *cfg)
{
	struct tstub_tuner *c;

	if (!fe)
		return NULL;
	c = tstub_tuner_create(i2c, cfg);
	if (IS_ERR(c))
		return NULL;
	c->fe = fe;
	fe->ops.tuner_ops = tstub_dvb_tuner_ops;
	fe->tuner_priv = c;
	tstub_tuner_publish(c);
	if (tstub_tuner_announce(c) == -ENOTCONN)
		pr_info("client %u (chip %u at %d-%02x) waits for the daemon\n",
			c->id, c->cfg.chip_id, i2c_adapter_id(i2c),
			c->cfg.i2c_addr);
	return fe;
}
EXPORT_SYMBOL_GPL(tuner_stub_attach);

/**
 * tuner_stub_detach() - release the stub as @fe's tuner
 * @fe: a frontend tuner_stub_attach() filled
 *
 * For a bridge that called tuner_stub_attach() directly: tells the
 * daemon the tuner is gone and clears the tuner's release operation, so
 * that a later dvb_frontend_detach() neither releases it again nor drops
 * a module reference for it.
 *
 * Context: process context; may sleep up to timeout_ms.
 */
void tuner_stub_detach(struct dvb_frontend *fe)
{
	if (!fe || fe->ops.tuner_ops.release != tstub_dvb_release)
		return;
	tstub_dvb_release(fe);
	fe->ops.tuner_ops.release = NULL;
}
EXPORT_SYMBOL_GPL(tuner_stub_detach);

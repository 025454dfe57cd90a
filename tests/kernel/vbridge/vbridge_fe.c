// SPDX-License-Identifier: GPL-2.0
/*
 * The virtual DVB-T demodulator and its tuner: the tuner stub, or an
 * in-kernel tuner driver bound to the emulated chip through an I2C client
 * (as bridges do with dvb_module_probe()).
 *
 * The demodulator reports lock when its tuner reports PLL lock, and tunes
 * by calling the tuner's set_params: a tune from userspace travels kernel
 * -> stub -> daemon -> plugin -> I2C -> emulated chip.
 *
 * The chip sits behind the demodulator's I2C gate, and read_status holds
 * the demodulator's lock, which the stub shares (vbridge_rules.c checks
 * both).  The stub opens the gate itself for its tuner operations; the
 * demodulator opens it around its calls into an in-kernel driver, as
 * demodulators do for drivers that leave the gate to them (xc2028).
 */
#include <linux/module.h>
#include <linux/slab.h>

#include "tuner_stub_kernel.h"
#include "vbridge.h"

/*
 * The in-kernel MT2060 driver's platform data, the layout of Linux 6.1's
 * drivers/media/tuners/mt2060.h (see vbridge.h).
 */
struct vb_mt2060_platform_data {
	u8 clock_out;
	u16 if1;
	unsigned int i2c_write_max:5;
	struct dvb_frontend *dvb_frontend;
};

#define VB_LOCK_STATUS (FE_HAS_SIGNAL | FE_HAS_CARRIER | FE_HAS_VITERBI | \
			FE_HAS_SYNC | FE_HAS_LOCK)

static struct vb_fe *to_vb_fe(struct dvb_frontend *fe)
{
	return container_of(fe, struct vb_fe, fe);
}

/* A frontend opened again polls nothing until it is tuned again. */
static int vb_fe_init(struct dvb_frontend *fe)
{
	to_vb_fe(fe)->tuned = false;
	return 0;
}

static int vb_fe_sleep(struct dvb_frontend *fe)
{
	return 0;
}

/* Around the demodulator's calls into an in-kernel tuner driver. */
static void vb_fe_tuner_gate(struct dvb_frontend *fe, int open)
{
	if (to_vb_fe(fe)->kernel_tuner)
		vb_fe_gate_ctrl(fe, open);
}

static int vb_fe_set_frontend(struct dvb_frontend *fe)
{
	int ret;

	if (!fe->ops.tuner_ops.set_params)
		return -EOPNOTSUPP;
	vb_fe_tuner_gate(fe, 1);
	ret = fe->ops.tuner_ops.set_params(fe);
	vb_fe_tuner_gate(fe, 0);
	return ret;
}

/* Without a get_status (the in-kernel MT2060), the chip itself tells. */
static int vb_fe_tuner_locked(struct dvb_frontend *fe, bool *locked)
{
	struct vb_fe *vfe = to_vb_fe(fe);
	struct vbridge *vb = vfe->vb;
	u32 st = 0;
	int ret;

	if (fe->ops.tuner_ops.get_status) {
		vb_fe_tuner_gate(fe, 1);
		ret = fe->ops.tuner_ops.get_status(fe, &st);
		vb_fe_tuner_gate(fe, 0);
		*locked = !ret && (st & TUNER_STATUS_LOCKED);
		return ret;
	}
	mutex_lock(&vb->chip_lock);
	*locked = vfe->chip->type->locked(vfe->chip) &&
		  !vfe->chip->fault_nolock;
	mutex_unlock(&vb->chip_lock);
	return 0;
}

static int vb_fe_read_status(struct dvb_frontend *fe, enum fe_status *status)
{
	bool locked = false;
	int ret;

	*status = 0;
	vb_fe_demod_regs(to_vb_fe(fe));
	ret = vb_fe_tuner_locked(fe, &locked);
	if (ret)
		return ret;
	if (locked)
		*status = VB_LOCK_STATUS;
	return 0;
}

static int vb_fe_read_signal_strength(struct dvb_frontend *fe, u16 *strength)
{
	enum fe_status st;
	int ret = -EOPNOTSUPP;

	vb_fe_tuner_gate(fe, 1);
	if (fe->ops.tuner_ops.get_rf_strength)
		ret = fe->ops.tuner_ops.get_rf_strength(fe, strength);
	vb_fe_tuner_gate(fe, 0);
	if (!ret)
		return 0;
	ret = vb_fe_read_status(fe, &st);
	if (!ret)
		*strength = (st & FE_HAS_LOCK) ? 0xc000 : 0;
	return ret;
}

static enum dvbfe_algo vb_fe_get_algo(struct dvb_frontend *fe)
{
	return DVBFE_ALGO_HW;
}

/*
 * The frontend thread: tune once per request, then poll the lock every
 * second; nothing before the first tune.
 */
static int vb_fe_tune(struct dvb_frontend *fe, bool re_tune,
		      unsigned int mode_flags, unsigned int *delay,
		      enum fe_status *status)
{
	struct vb_fe *vfe = to_vb_fe(fe);
	int ret;

	*delay = HZ;
	*status = 0;
	if (re_tune) {
		ret = vb_fe_set_frontend(fe);
		vfe->tuned = !ret;
		if (ret) {
			*status = FE_TIMEDOUT;
			return ret;
		}
	}
	if (!vfe->tuned)
		return 0;
	return vb_fe_read_status(fe, status);
}

static const struct dvb_frontend_ops vb_fe_ops = {
	.delsys = { SYS_DVBT },
	.info = {
		.name = "vbridge virtual DVB-T demodulator",
		.frequency_min_hz = 42 * MHz,
		.frequency_max_hz = 870 * MHz,
		.frequency_stepsize_hz = 62500,
		.caps = FE_CAN_FEC_AUTO | FE_CAN_QPSK | FE_CAN_QAM_16 |
			FE_CAN_QAM_64 | FE_CAN_QAM_AUTO |
			FE_CAN_TRANSMISSION_MODE_AUTO |
			FE_CAN_GUARD_INTERVAL_AUTO | FE_CAN_HIERARCHY_AUTO |
			FE_CAN_INVERSION_AUTO,
	},
	.init = vb_fe_init,
	.sleep = vb_fe_sleep,
	.set_frontend = vb_fe_set_frontend,
	.get_frontend_algo = vb_fe_get_algo,
	.tune = vb_fe_tune,
	.read_status = vb_fe_read_status,
	.read_signal_strength = vb_fe_read_signal_strength,
	.i2c_gate_ctrl = vb_fe_gate_ctrl,
};

/*
 * The bridge's tuner callback, for the stub (TSTUB_CTRL_*) and for the
 * in-kernel drivers (fe->callback, xc2028's numbering: reset 0, clock 1,
 * flush 2).  Each is recorded in the trace by name; the reset line
 * restarts the chip.
 */
static int vb_chip_callback(struct vb_fe *vfe, u32 cmd, u32 arg)
{
	struct vbridge *vb = vfe->vb;

	vb_trace_note(vb, "i2c-%d 0x%02x C %s %u", vb->adap.nr,
		      vfe->chip->addr, vb_callback_name(cmd), arg);
	if (cmd != TSTUB_CTRL_TUNER_RESET)
		return 0;
	mutex_lock(&vb->chip_lock);
	vfe->chip->resets++;
	vfe->chip->type->reset(vfe->chip);
	mutex_unlock(&vb->chip_lock);
	return 0;
}

static int vb_tuner_callback(void *priv, u32 cmd, u32 arg)
{
	return vb_chip_callback(priv, cmd, arg);
}

/* fe->callback: the adapter's priv is the bridge; one kernel tuner each. */
static int vb_kernel_callback(void *adapter_priv, int component, int cmd,
			      int arg)
{
	struct vbridge *vb = adapter_priv;
	unsigned int i;

	if (component != DVB_FRONTEND_COMPONENT_TUNER || cmd < 0 || cmd > 2)
		return -EINVAL;
	for (i = 0; i < vb->nfe; i++)
		if (vb->fes[i].kattach || vb->fes[i].kclient)
			return vb_chip_callback(&vb->fes[i],
						cmd + TSTUB_CTRL_TUNER_RESET,
						arg);
	return -ENODEV;
}

/* What the demodulator sees: the chip's lock, a fixed good signal. */
static int vb_demod_status(void *priv, struct tstub_status *st)
{
	struct vb_fe *vfe = priv;
	struct vbridge *vb = vfe->vb;
	bool locked;

	mutex_lock(&vb->chip_lock);
	locked = vfe->chip->type->locked(vfe->chip) &&
		 !vfe->chip->fault_nolock;
	mutex_unlock(&vb->chip_lock);
	st->valid = TSTUB_ST_FE_STATUS | TSTUB_ST_STRENGTH_DBM |
		    TSTUB_ST_CNR_DB;
	st->fe_status = locked ? VB_LOCK_STATUS : 0;
	st->strength_mdbm = locked ? -45000 : -100000;
	st->cnr_mdb = locked ? 28000 : 0;
	return 0;
}

/* The board word each plugin reads (plugins/<chip>/<chip>.h). */
static u32 vb_stub_config(const struct vb_chip_type *type)
{
	if (type == &vb_mt2060_type)
		return (u32)VB_MT2060_IF1_MHZ << 16;	/* no clock out, no cap */
	if (type == &vb_xc3028_type)
		return VB_XC3028_MAX_LEN | VB_XC3028_DEMOD_KHZ << 8;
	return 0;
}

static int vb_fe_attach_stub(struct vb_fe *vfe)
{
	struct tuner_stub_config cfg = {
		.chip_id = vfe->chip->type->chip_id,
		.i2c_addr = vfe->chip->addr,
		.vendor_id = 0x1d6b,	/* Linux Foundation: virtual */
		.product_id = 0x7b01,
		.config = vb_stub_config(vfe->chip->type),
		.bridge_name = "vbridge",
		.bridge_priv = vfe,
		.tuner_callback = vb_tuner_callback,
		.demod_status = vb_demod_status,
		.lock = &vfe->demod_lock,
	};

	if (!tuner_stub_attach(&vfe->fe, &vfe->vb->adap, &cfg))
		return -ENOMEM;
	return 0;
}

/* mt2060.ko: an I2C driver, bound as bridges do with dvb_module_probe(). */
static int vb_attach_mt2060(struct vb_fe *vfe)
{
	struct vb_mt2060_platform_data pdata = {
		.if1 = VB_MT2060_IF1_MHZ,
		.dvb_frontend = &vfe->fe,
	};
	struct i2c_board_info info = {
		.addr = vfe->chip->addr,
		.platform_data = &pdata,
	};
	struct i2c_client *client;

	strscpy(info.type, "mt2060", sizeof(info.type));
	request_module("mt2060");
	client = i2c_new_client_device(&vfe->vb->adap, &info);
	if (IS_ERR(client))
		return PTR_ERR(client);
	if (!client->dev.driver ||
	    !try_module_get(client->dev.driver->owner)) {
		i2c_unregister_device(client);
		return -ENODEV;
	}
	vfe->kclient = client;
	return 0;
}

struct dvb_frontend *qt1010_attach(struct dvb_frontend *fe,
				   struct i2c_adapter *i2c,
				   struct vb_qt1010_config *cfg);
struct dvb_frontend *xc2028_attach(struct dvb_frontend *fe,
				   struct vb_xc2028_config *cfg);

/* qt1010.ko: attached with dvb_attach(), as its bridges do. */
static int vb_attach_qt1010(struct vb_fe *vfe)
{
	vfe->qt_cfg.i2c_address = vfe->chip->addr;
	request_module("qt1010");
	if (!dvb_attach(qt1010_attach, &vfe->fe, &vfe->vb->adap,
			&vfe->qt_cfg))
		return -ENODEV;
	vfe->kattach = "qt1010_attach";
	return 0;
}

/*
 * xc2028.ko: dvb_attach(), then set_config with the board: the
 * firmware file, the longest write, the demodulator's IF.  The firmware
 * is requested at once and loaded on the first tune.
 */
static int vb_attach_xc2028(struct vb_fe *vfe)
{
	struct vb_xc2028_config cfg = {
		.i2c_adap = &vfe->vb->adap,
		.i2c_addr = vfe->chip->addr,
	};

	vfe->xc_ctrl.fname = VB_XC3028_FIRMWARE;
	vfe->xc_ctrl.max_len = VB_XC3028_MAX_LEN;
	vfe->xc_ctrl.demod = VB_XC3028_DEMOD_KHZ;
	vfe->vb->dvb.priv = vfe->vb;
	vfe->fe.callback = vb_kernel_callback;
	request_module("xc2028");
	if (!dvb_attach(xc2028_attach, &vfe->fe, &cfg))
		return -ENODEV;
	vfe->kattach = "xc2028_attach";
	if (vfe->fe.ops.tuner_ops.set_config)
		return vfe->fe.ops.tuner_ops.set_config(&vfe->fe,
							&vfe->xc_ctrl);
	return 0;
}

static int vb_fe_attach_kernel_type(struct vb_fe *vfe)
{
	const struct vb_chip_type *type = vfe->chip->type;

	if (type == &vb_mt2060_type)
		return vb_attach_mt2060(vfe);
	if (type == &vb_qt1010_type)
		return vb_attach_qt1010(vfe);
	if (type == &vb_xc3028_type)
		return vb_attach_xc2028(vfe);
	return -EOPNOTSUPP;
}

/* The gate open while the driver probes, as a bridge attaching it does. */
static int vb_fe_attach_kernel(struct vb_fe *vfe)
{
	int ret;

	vb_fe_gate_ctrl(&vfe->fe, 1);
	ret = vb_fe_attach_kernel_type(vfe);
	vb_fe_gate_ctrl(&vfe->fe, 0);
	return ret;
}

/**
 * vb_fe_create() - a frontend with its tuner, registered on the adapter
 * @vb: the bridge, its I2C and DVB adapters registered
 * @vfe: the frontend, its chip set
 * @kernel_tuner: an in-kernel tuner driver instead of the stub
 *
 * Return: 0 or a negative errno.
 */
int vb_fe_create(struct vbridge *vb, struct vb_fe *vfe, bool kernel_tuner)
{
	int ret;

	vfe->vb = vb;
	vfe->kernel_tuner = kernel_tuner;
	mutex_init(&vfe->demod_lock);
	atomic_set(&vfe->gate_open, 0);
	vfe->fe.ops = vb_fe_ops;
	vfe->fe.demodulator_priv = vfe;
	vfe->fe.id = vfe - vb->fes;
	if (kernel_tuner) {
		ret = vb_fe_attach_kernel(vfe);
		if (ret)
			return ret;
	}
	ret = dvb_register_frontend(&vb->dvb, &vfe->fe);
	if (ret) {
		vb_fe_destroy(vfe);
		return ret;
	}
	vfe->registered = true;
	/*
	 * The stub after registering: its ATTACH to a connected daemon
	 * names the frontend's DVB adapter (fe->dvb), the source of the
	 * tuner's stream.  Attached before, a bridge loaded while the
	 * daemon runs would announce "no adapter" until the next daemon.
	 */
	if (!kernel_tuner) {
		ret = vb_fe_attach_stub(vfe);
		if (ret)
			vb_fe_destroy(vfe);
	}
	return ret;
}

/**
 * vb_fe_destroy() - undo vb_fe_create()
 * @vfe: the frontend
 *
 * The tuner and demodulator were attached by direct calls, not
 * dvb_attach(), so their release operations are run (or cleared) here:
 * dvb_frontend_detach() would drop module references never taken.
 */
void vb_fe_destroy(struct vb_fe *vfe)
{
	if (vfe->registered)
		dvb_unregister_frontend(&vfe->fe);
	if (vfe->kclient) {
		module_put(vfe->kclient->dev.driver->owner);
		i2c_unregister_device(vfe->kclient);
		vfe->kclient = NULL;
	} else if (vfe->kattach) {
		/* What dvb_frontend_detach() would do for dvb_attach(). */
		if (vfe->fe.ops.tuner_ops.release)
			vfe->fe.ops.tuner_ops.release(&vfe->fe);
		__symbol_put(vfe->kattach);
		vfe->kattach = NULL;
	} else {
		tuner_stub_detach(&vfe->fe);
	}
	vfe->fe.ops.tuner_ops.release = NULL;
	vfe->fe.ops.release = NULL;
	if (vfe->registered)
		dvb_frontend_detach(&vfe->fe);
	vfe->registered = false;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The parity oracle: the same tuner calls, one request per write to
 * <debugfs>/vbridge/oracle, made on frontend 0's tuner whichever it is
 * (the stub, or an in-kernel driver on the same board).  Each request is
 * bracketed in the I2C trace by two marks, so the segments and callbacks
 * of one request can be compared between the two tuners:
 *	## <n> <request>
 *	... segments and "C <callback> <arg>" lines ...
 *	## <n> = <return value>
 * Requests (frequencies in Hz, standards as v4l2_std_id):
 *	mark TEXT		a mark only (e.g. the end of attach)
 *	init | sleep		tuner_ops.init / sleep (none: 0, as the DVB
 *				core skips a tuner without them)
 *	attach			init, as the frontend's first open does: the
 *				daemon powers a tuner up after its probe, so
 *				the in-kernel side's attach includes one
 *	dvbt HZ BW | dvbc HZ BW	set_params with that delivery system
 *	atv HZ STD		set_analog_params, analog TV (62.5 kHz units)
 *	radio HZ		set_analog_params, FM radio (62.5 Hz units)
 * The frontend must not be open meanwhile: these calls bypass its thread.
 * An in-kernel driver gets the demodulator's gate opened around each call,
 * as the DVB core and demodulators do; the stub opens it itself.
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/uaccess.h>
#include <linux/videodev2.h>

#include "tuner_stub.h"
#include "vbridge.h"

#define VB_ORACLE_LINE 96
#define VB_DVBC_SYMBOL_RATE 6900000

const char *vb_callback_name(u32 cmd)
{
	switch (cmd) {
	case TSTUB_CTRL_TUNER_RESET:
		return "reset";
	case TSTUB_CTRL_CLK_RESET:
		return "clock";
	case TSTUB_CTRL_I2C_FLUSH:
		return "flush";
	}
	return "unknown";
}

static int vb_oracle_digital(struct dvb_frontend *fe, u32 delsys, u64 hz,
			     u64 bw)
{
	struct dtv_frontend_properties *c = &fe->dtv_property_cache;

	if (!fe->ops.tuner_ops.set_params)
		return -EOPNOTSUPP;
	c->delivery_system = delsys;
	c->frequency = hz;
	c->bandwidth_hz = bw;
	c->symbol_rate = delsys == SYS_DVBC_ANNEX_A ? VB_DVBC_SYMBOL_RATE : 0;
	return fe->ops.tuner_ops.set_params(fe);
}

static int vb_oracle_analog(struct dvb_frontend *fe, bool radio, u64 hz,
			    u64 std)
{
	struct analog_parameters p = {
		.mode = radio ? V4L2_TUNER_RADIO : V4L2_TUNER_ANALOG_TV,
		.audmode = V4L2_TUNER_MODE_STEREO,
		.std = radio ? 0 : std,
		.frequency = radio ? div_u64(hz * 2, 125) : div_u64(hz, 62500),
	};

	if (!fe->ops.tuner_ops.set_analog_params)
		return -EOPNOTSUPP;
	return fe->ops.tuner_ops.set_analog_params(fe, &p);
}

/* One request; -EOPNOTSUPP when the tuner cannot tune that way at all. */
static int vb_oracle_run(struct dvb_frontend *fe, const char *req)
{
	const struct dvb_tuner_ops *ops = &fe->ops.tuner_ops;
	char cmd[8];
	u64 a = 0, b = 0;
	int n;

	n = sscanf(req, "%7s %llu %lli", cmd, &a, &b);
	if (n < 1)
		return -EINVAL;
	if (!strcmp(cmd, "init") || !strcmp(cmd, "attach"))
		return ops->init ? ops->init(fe) : 0;
	if (!strcmp(cmd, "sleep"))
		return ops->sleep ? ops->sleep(fe) : 0;
	if (!strcmp(cmd, "radio") && n == 2)
		return vb_oracle_analog(fe, true, a, 0);
	if (n != 3)
		return -EINVAL;
	if (!strcmp(cmd, "dvbt"))
		return vb_oracle_digital(fe, SYS_DVBT, a, b);
	if (!strcmp(cmd, "dvbc"))
		return vb_oracle_digital(fe, SYS_DVBC_ANNEX_A, a, b);
	if (!strcmp(cmd, "atv"))
		return vb_oracle_analog(fe, false, a, b);
	return -EINVAL;
}

static ssize_t vb_oracle_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct vbridge *vb = file->private_data;
	char req[VB_ORACLE_LINE];
	unsigned int seq;
	int ret;

	if (count >= sizeof(req))
		return -EINVAL;
	if (copy_from_user(req, ubuf, count))
		return -EFAULT;
	req[count] = '\0';
	strim(req);
	if (!vb->nfe)
		return -ENODEV;
	mutex_lock(&vb->oracle_lock);
	seq = ++vb->oracle_seq;
	vb_trace_note(vb, "## %u %s", seq, req);
	if (!strncmp(req, "mark", 4)) {
		mutex_unlock(&vb->oracle_lock);
		return count;
	}
	if (vb->fes[0].kernel_tuner)
		vb_fe_gate_ctrl(&vb->fes[0].fe, 1);
	ret = vb_oracle_run(&vb->fes[0].fe, req);
	if (vb->fes[0].kernel_tuner)
		vb_fe_gate_ctrl(&vb->fes[0].fe, 0);
	vb_trace_note(vb, "## %u = %d", seq, ret);
	mutex_unlock(&vb->oracle_lock);
	return count;
}

static const struct file_operations vb_oracle_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vb_oracle_write,
	.llseek = no_llseek,
};

void vb_oracle_init(struct vbridge *vb)
{
	debugfs_create_file("oracle", 0200, vb->dbg, vb, &vb_oracle_fops);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The virtual bridge, a test-only module: an I2C adapter with emulated
 * tuner chips, a DVB adapter with one DVB-T frontend per chip, each using
 * the tuner stub (default) or an in-kernel tuner driver as its tuner, and
 * a software demux fed with a synthetic TS while a frontend has lock.
 *
 *   modprobe vbridge chips=mt2060,qt1010,xc3028 tuners=stub,stub,stub
 *
 * chips: the emulated chips, one frontend each (mt2060, qt1010, xc3028);
 * addrs: their 7-bit addresses (0: the chip's usual one);
 * tuners: "stub" or "kernel" per frontend (Linux's mt2060.ko, qt1010.ko,
 * xc2028.ko on the same board, see vbridge_fe.c);
 * analog: one more chip (e.g. xc3028), no frontend, whose tuner is the
 * stub's V4L2 subdevice; analog_addr: its address (default 0x64).
 */
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "vbridge.h"

DVB_DEFINE_MOD_OPT_ADAPTER_NR(adapter_nr);

static char *chips[VB_MAX_FE] = { "mt2060", "qt1010", "xc3028" };
static int nchips = 3;
module_param_array(chips, charp, &nchips, 0444);
MODULE_PARM_DESC(chips, "emulated chips, one frontend each");

static ushort addrs[VB_MAX_FE];
static int naddrs;
module_param_array(addrs, ushort, &naddrs, 0444);
MODULE_PARM_DESC(addrs, "7-bit I2C addresses of the chips (0: usual)");

static char *tuners[VB_MAX_FE];
static int ntuners;
module_param_array(tuners, charp, &ntuners, 0444);
MODULE_PARM_DESC(tuners, "per frontend: stub (default) or kernel");

static char *analog;
module_param(analog, charp, 0444);
MODULE_PARM_DESC(analog, "chip of the analog (V4L2) tuner, none by default");

static ushort analog_addr = 0x64;
module_param(analog_addr, ushort, 0444);
MODULE_PARM_DESC(analog_addr, "7-bit I2C address of the analog tuner");

static struct vbridge *vbridge;

static const struct vb_chip_type *const vb_types[] = {
	&vb_mt2060_type,
	&vb_qt1010_type,
	&vb_xc3028_type,
};

static int vb_chip_setup(struct vb_chip *c, const char *name, u16 addr)
{
	unsigned int t;

	for (t = 0; t < ARRAY_SIZE(vb_types); t++)
		if (name && !strcmp(name, vb_types[t]->name))
			break;
	if (t == ARRAY_SIZE(vb_types)) {
		pr_err("vbridge: unknown chip '%s'\n", name);
		return -EINVAL;
	}
	c->type = vb_types[t];
	c->addr = addr ? addr : c->type->addr;
	if (c->addr > 0x7f)
		return -EINVAL;
	c->type->reset(c);
	return 0;
}

static bool vb_kernel_tuner(unsigned int i)
{
	return i < ntuners && tuners[i] && !strcmp(tuners[i], "kernel");
}

static int vb_setup_frontends(struct vbridge *vb)
{
	unsigned int i;
	int ret;

	for (i = 0; i < nchips; i++) {
		struct vb_fe *vfe = &vb->fes[i];

		vfe->chip = &vb->chips[i];
		ret = vb_fe_create(vb, vfe, vb_kernel_tuner(i));
		if (ret) {
			pr_err("vbridge: frontend %u (%s): %d\n", i,
			       vfe->chip->type->name, ret);
			return ret;
		}
		vb->nfe++;
	}
	return 0;
}

static void vb_teardown(struct vbridge *vb)
{
	/* First: the debugfs files call into the tuners. */
	debugfs_remove_recursive(vb->dbg);
	vb_ts_destroy(vb);
	while (vb->nfe)
		vb_fe_destroy(&vb->fes[--vb->nfe]);
	vb_analog_destroy(vb);
	if (vb->dvb_registered)
		dvb_unregister_adapter(&vb->dvb);
	vb_i2c_del(vb);
	vb_trace_clear(vb);
	if (!IS_ERR_OR_NULL(vb->dev))
		root_device_unregister(vb->dev);
	kfree(vb);
}

static int vb_setup(struct vbridge *vb)
{
	unsigned int i;
	int ret;

	if (nchips < 1 || nchips > VB_MAX_FE)
		return -EINVAL;
	for (i = 0; i < nchips; i++) {
		ret = vb_chip_setup(&vb->chips[i], chips[i],
				    i < naddrs ? addrs[i] : 0);
		if (ret)
			return ret;
	}
	vb->nchips = nchips;
	if (analog) {
		ret = vb_chip_setup(&vb->chips[nchips], analog, analog_addr);
		if (ret)
			return ret;
		vb->nchips++;
	}
	vb->dev = root_device_register("vbridge");
	if (IS_ERR(vb->dev))
		return PTR_ERR(vb->dev);
	vb_debugfs_init(vb);
	vb_oracle_init(vb);
	vb_rules_init(vb);
	ret = vb_i2c_add(vb);
	if (ret)
		return ret;
	ret = dvb_register_adapter(&vb->dvb, "vbridge", THIS_MODULE, vb->dev,
				   adapter_nr);
	if (ret < 0)
		return ret;
	vb->dvb_registered = true;
	ret = vb_ts_create(vb);
	if (ret)
		return ret;
	ret = vb_setup_frontends(vb);
	if (ret || !analog)
		return ret;
	return vb_analog_create(vb, &vb->chips[nchips]);
}

static int __init vb_init(void)
{
	struct vbridge *vb;
	int ret;

	vb = kzalloc(sizeof(*vb), GFP_KERNEL);
	if (!vb)
		return -ENOMEM;
	mutex_init(&vb->chip_lock);
	mutex_init(&vb->trace_lock);
	mutex_init(&vb->oracle_lock);
	INIT_LIST_HEAD(&vb->trace);
	ret = vb_setup(vb);
	if (ret) {
		vb_teardown(vb);
		return ret;
	}
	vbridge = vb;
	pr_info("vbridge: i2c-%d, DVB adapter %d, %u frontends\n",
		vb->adap.nr, vb->dvb.num, vb->nfe);
	return 0;
}

static void __exit vb_exit(void)
{
	vb_rules_report(vbridge);
	vb_teardown(vbridge);
}

module_init(vb_init);
module_exit(vb_exit);

MODULE_DESCRIPTION("Virtual tuner bridge for testing the tuner stub");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0
/*
 * An analog tuner, for the V4L2 side of the stub: one more emulated chip
 * whose tuner is the subdevice tuner_stub_v4l2_attach() returns.  The
 * test drives it through <debugfs>/vbridge/analog: write "tv HZ",
 * "radio HZ" or "std 0xID" to call the subdevice; read the last call's
 * result, g_frequency and g_tuner.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include <media/v4l2-subdev.h>

#include "tuner_stub_kernel.h"
#include "vbridge.h"

static int vb_analog_callback(void *priv, u32 cmd, u32 arg)
{
	struct vbridge *vb = priv;

	if (cmd != TSTUB_CTRL_TUNER_RESET)
		return 0;
	mutex_lock(&vb->chip_lock);
	vb->analog_chip->resets++;
	vb->analog_chip->type->reset(vb->analog_chip);
	mutex_unlock(&vb->chip_lock);
	return 0;
}

static int vb_analog_run(struct vbridge *vb, const char *cmd, u64 arg)
{
	struct v4l2_frequency f = { .type = V4L2_TUNER_ANALOG_TV };

	if (!strcmp(cmd, "std"))
		return v4l2_subdev_call(vb->analog_sd, video, s_std, arg);
	if (!strcmp(cmd, "radio")) {
		f.type = V4L2_TUNER_RADIO;
		f.frequency = div_u64(arg * 2, 125);	/* 62.5 Hz units */
	} else if (!strcmp(cmd, "tv")) {
		f.frequency = div_u64(arg, 62500);
	} else {
		return -EINVAL;
	}
	return v4l2_subdev_call(vb->analog_sd, tuner, s_frequency, &f);
}

static ssize_t vb_analog_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	struct seq_file *m = file->private_data;
	struct vbridge *vb = m->private;
	char buf[48], cmd[8];
	unsigned long long arg;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(buf, "%7s %lli", cmd, &arg) != 2)
		return -EINVAL;
	mutex_lock(&vb->analog_lock);
	vb->analog_err = vb_analog_run(vb, cmd, arg);
	snprintf(vb->analog_last, sizeof(vb->analog_last), "%s %llu", cmd,
		 arg);
	mutex_unlock(&vb->analog_lock);
	return count;
}

static int vb_analog_show(struct seq_file *m, void *unused)
{
	struct vbridge *vb = m->private;
	struct v4l2_frequency f = {};
	struct v4l2_tuner t = {};
	int ret;

	mutex_lock(&vb->analog_lock);
	seq_printf(m, "last=%s err=%d\n", vb->analog_last, vb->analog_err);
	ret = v4l2_subdev_call(vb->analog_sd, tuner, g_frequency, &f);
	seq_printf(m, "g_frequency=%d type=%u frequency=%u\n", ret, f.type,
		   f.frequency);
	ret = v4l2_subdev_call(vb->analog_sd, tuner, g_tuner, &t);
	seq_printf(m, "g_tuner=%d type=%u capability=0x%x range=%u-%u signal=%u\n",
		   ret, t.type, t.capability, t.rangelow, t.rangehigh,
		   t.signal);
	mutex_unlock(&vb->analog_lock);
	return 0;
}

static int vb_analog_open(struct inode *inode, struct file *file)
{
	return single_open(file, vb_analog_show, inode->i_private);
}

static const struct file_operations vb_analog_fops = {
	.owner = THIS_MODULE,
	.open = vb_analog_open,
	.read = seq_read,
	.write = vb_analog_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/**
 * vb_analog_create() - the analog tuner on @chip
 * @vb: the bridge, its I2C adapter registered
 * @chip: an emulated chip no frontend uses
 *
 * Return: 0 or a negative errno.
 */
int vb_analog_create(struct vbridge *vb, struct vb_chip *chip)
{
	struct tuner_stub_config cfg = {
		.chip_id = chip->type->chip_id,
		.i2c_addr = chip->addr,
		.vendor_id = 0x1d6b,
		.product_id = 0x7b02,
		.bridge_name = "vbridge-analog",
		.bridge_priv = vb,
		.tuner_callback = vb_analog_callback,
	};

	mutex_init(&vb->analog_lock);
	vb->analog_chip = chip;
	vb->analog_sd = tuner_stub_v4l2_attach(&vb->adap, &cfg);
	if (!vb->analog_sd)
		return -ENOMEM;
	strscpy(vb->analog_last, "-", sizeof(vb->analog_last));
	debugfs_create_file("analog", 0644, vb->dbg, vb, &vb_analog_fops);
	return 0;
}

void vb_analog_destroy(struct vbridge *vb)
{
	if (!vb->analog_sd)
		return;
	tuner_stub_v4l2_detach(vb->analog_sd);
	vb->analog_sd = NULL;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The virtual I2C bus: every segment goes to the emulated chip at its
 * address and is recorded in the trace, one line per segment in the
 * simulated box's format:
 *	i2c-<adapter> 0x<addr> <W|R> <hex bytes>[ NAK]
 * <debugfs>/vbridge/ holds "trace" (write anything to clear it), "chips"
 * (each chip's state), "info" (adapter numbers) and "control" (test
 * faults: "nak ADDR", "nolock ADDR", "ok ADDR").
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vbridge.h"

/* Enough for a firmware upload or two; the oldest lines go first. */
#define VB_TRACE_MAX_BYTES (4 << 20)

static struct vb_chip *vb_chip_at(struct vbridge *vb, u16 addr)
{
	unsigned int i;

	for (i = 0; i < vb->nchips; i++)
		if (vb->chips[i].addr == addr)
			return &vb->chips[i];
	return NULL;
}

static void vb_trace_append(struct vbridge *vb, struct vb_trace_line *line)
{
	mutex_lock(&vb->trace_lock);
	list_add_tail(&line->link, &vb->trace);
	vb->trace_bytes += line->len;
	while (vb->trace_bytes > VB_TRACE_MAX_BYTES) {
		struct vb_trace_line *old;

		old = list_first_entry(&vb->trace, struct vb_trace_line, link);
		list_del(&old->link);
		vb->trace_bytes -= old->len;
		vb->trace_dropped++;
		kfree(old);
	}
	mutex_unlock(&vb->trace_lock);
}

static void vb_trace_add(struct vbridge *vb, const struct i2c_msg *msg,
			 bool data, bool nak)
{
	struct vb_trace_line *line;
	size_t max = 32 + 3 * msg->len, n;
	u16 i;

	line = kmalloc(struct_size(line, text, max), GFP_KERNEL);
	if (!line)
		return;
	n = scnprintf(line->text, max, "i2c-%d 0x%02x %c", vb->adap.nr,
		      msg->addr, (msg->flags & I2C_M_RD) ? 'R' : 'W');
	for (i = 0; data && i < msg->len; i++)
		n += scnprintf(line->text + n, max - n, " %02x", msg->buf[i]);
	n += scnprintf(line->text + n, max - n, "%s\n", nak ? " NAK" : "");
	line->len = n;
	vb_trace_append(vb, line);
}

/**
 * vb_trace_note() - one line of text in the trace, between the segments
 * @vb: the bridge
 * @fmt: printf format of the line, without its newline
 *
 * The bridge callbacks and the oracle's request marks (vbridge_oracle.c).
 */
void vb_trace_note(struct vbridge *vb, const char *fmt, ...)
{
	struct vb_trace_line *line;
	va_list ap;
	size_t max = 160, n;

	line = kmalloc(struct_size(line, text, max), GFP_KERNEL);
	if (!line)
		return;
	va_start(ap, fmt);
	n = vscnprintf(line->text, max - 1, fmt, ap);
	va_end(ap);
	line->text[n++] = '\n';
	line->len = n;
	vb_trace_append(vb, line);
}

void vb_trace_clear(struct vbridge *vb)
{
	struct vb_trace_line *line, *tmp;

	mutex_lock(&vb->trace_lock);
	list_for_each_entry_safe(line, tmp, &vb->trace, link) {
		list_del(&line->link);
		kfree(line);
	}
	vb->trace_bytes = 0;
	mutex_unlock(&vb->trace_lock);
}

static int vb_segment(struct vbridge *vb, struct i2c_msg *msg)
{
	struct vb_chip *c;
	int ret;

	mutex_lock(&vb->chip_lock);
	c = vb_chip_at(vb, msg->addr);
	if (!c || c->fault_nak) {
		ret = -ENXIO;
	} else if (msg->flags & I2C_M_RD) {
		c->reads++;
		ret = c->type->read(c, msg->buf, msg->len);
	} else {
		c->writes++;
		ret = c->type->write(c, msg->buf, msg->len);
	}
	mutex_unlock(&vb->chip_lock);
	/* A read that failed has no data to show. */
	vb_trace_add(vb, msg, !ret || !(msg->flags & I2C_M_RD), ret != 0);
	return ret;
}

static int vb_master_xfer(struct i2c_adapter *adap, struct i2c_msg *msgs,
			  int num)
{
	struct vbridge *vb = i2c_get_adapdata(adap);
	struct vb_fe *vfe;
	int i, ret = 0;

	for (i = 0; i < num; i++)
		if (msgs[i].flags & ~I2C_M_RD)
			return -EOPNOTSUPP;
	vfe = num ? vb_rules_xfer_begin(vb, msgs[0].addr) : NULL;
	for (i = 0; i < num && !ret; i++)
		ret = vb_segment(vb, &msgs[i]);
	vb_rules_xfer_end(vfe);
	if (ret)
		return ret == -ENXIO ? -ENXIO : -EREMOTEIO;
	return num;
}

static u32 vb_functionality(struct i2c_adapter *adap)
{
	return I2C_FUNC_I2C;
}

static const struct i2c_algorithm vb_algo = {
	.master_xfer = vb_master_xfer,
	.functionality = vb_functionality,
};

int vb_i2c_add(struct vbridge *vb)
{
	int ret;

	vb->adap.owner = THIS_MODULE;
	vb->adap.algo = &vb_algo;
	vb->adap.dev.parent = vb->dev;
	strscpy(vb->adap.name, "vbridge virtual tuner bus",
		sizeof(vb->adap.name));
	i2c_set_adapdata(&vb->adap, vb);
	ret = i2c_add_adapter(&vb->adap);
	if (!ret)
		vb->adap_added = true;
	return ret;
}

void vb_i2c_del(struct vbridge *vb)
{
	if (vb->adap_added)
		i2c_del_adapter(&vb->adap);
	vb->adap_added = false;
}

/* --- debugfs --------------------------------------------------------- */

static void *vb_trace_start(struct seq_file *m, loff_t *pos)
{
	struct vbridge *vb = m->private;

	mutex_lock(&vb->trace_lock);
	return seq_list_start(&vb->trace, *pos);
}

static void *vb_trace_next(struct seq_file *m, void *v, loff_t *pos)
{
	struct vbridge *vb = m->private;

	return seq_list_next(v, &vb->trace, pos);
}

static void vb_trace_stop(struct seq_file *m, void *v)
{
	struct vbridge *vb = m->private;

	mutex_unlock(&vb->trace_lock);
}

static int vb_trace_show(struct seq_file *m, void *v)
{
	struct vb_trace_line *line = list_entry(v, struct vb_trace_line, link);

	seq_write(m, line->text, line->len);
	return 0;
}

static const struct seq_operations vb_trace_seq_ops = {
	.start = vb_trace_start,
	.next = vb_trace_next,
	.stop = vb_trace_stop,
	.show = vb_trace_show,
};

static int vb_trace_open(struct inode *inode, struct file *file)
{
	int ret = seq_open(file, &vb_trace_seq_ops);

	if (!ret)
		((struct seq_file *)file->private_data)->private =
			inode->i_private;
	return ret;
}

static ssize_t vb_trace_write(struct file *file, const char __user *buf,
			      size_t count, loff_t *ppos)
{
	struct seq_file *m = file->private_data;

	vb_trace_clear(m->private);
	return count;
}

static const struct file_operations vb_trace_fops = {
	.owner = THIS_MODULE,
	.open = vb_trace_open,
	.read = seq_read,
	.write = vb_trace_write,
	.llseek = seq_lseek,
	.release = seq_release,
};

static int vb_chips_show(struct seq_file *m, void *unused)
{
	struct vbridge *vb = m->private;
	unsigned int i;

	mutex_lock(&vb->chip_lock);
	for (i = 0; i < vb->nchips; i++) {
		struct vb_chip *c = &vb->chips[i];

		seq_printf(m, "chip=%s addr=0x%02x tuned=%d locked=%d",
			   c->type->name, c->addr, c->tuned,
			   c->type->locked(c) && !c->fault_nolock);
		seq_printf(m, " frequency=%u writes=%u reads=%u resets=%u",
			   c->type->frequency(c), c->writes, c->reads,
			   c->resets);
		seq_printf(m, " fw_bytes=%u nak=%d nolock=%d\n", c->fw_bytes,
			   c->fault_nak, c->fault_nolock);
	}
	mutex_unlock(&vb->chip_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vb_chips);

static int vb_info_show(struct seq_file *m, void *unused)
{
	struct vbridge *vb = m->private;
	unsigned int i;

	seq_printf(m, "i2c_adapter %d\n", vb->adap.nr);
	seq_printf(m, "dvb_adapter %d\n", vb->dvb_registered ? vb->dvb.num : -1);
	mutex_lock(&vb->trace_lock);
	seq_printf(m, "trace_bytes %zu\n", vb->trace_bytes);
	seq_printf(m, "trace_dropped %llu\n", vb->trace_dropped);
	mutex_unlock(&vb->trace_lock);
	for (i = 0; i < vb->nfe; i++)
		seq_printf(m, "frontend%u %s@0x%02x %s\n", i,
			   vb->fes[i].chip->type->name, vb->fes[i].chip->addr,
			   vb->fes[i].kernel_tuner ? "kernel" : "stub");
	if (vb->analog_sd)
		seq_printf(m, "analog %s@0x%02x v4l2\n",
			   vb->analog_chip->type->name, vb->analog_chip->addr);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vb_info);

static int vb_control_apply(struct vbridge *vb, const char *cmd, u16 addr)
{
	struct vb_chip *c;
	int ret = 0;

	mutex_lock(&vb->chip_lock);
	c = vb_chip_at(vb, addr);
	if (!c) {
		ret = -ENODEV;
	} else if (!strcmp(cmd, "nak")) {
		c->fault_nak = true;
	} else if (!strcmp(cmd, "nolock")) {
		c->fault_nolock = true;
	} else if (!strcmp(cmd, "ok")) {
		c->fault_nak = false;
		c->fault_nolock = false;
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&vb->chip_lock);
	return ret;
}

static ssize_t vb_control_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	struct vbridge *vb = file->private_data;
	char buf[32], cmd[8];
	unsigned int addr;
	int ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(buf, "%7s %i", cmd, &addr) != 2 || addr > 0x7f)
		return -EINVAL;
	ret = vb_control_apply(vb, cmd, addr);
	return ret ? ret : count;
}

static const struct file_operations vb_control_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vb_control_write,
	.llseek = no_llseek,
};

void vb_debugfs_init(struct vbridge *vb)
{
	vb->dbg = debugfs_create_dir("vbridge", NULL);
	debugfs_create_file("trace", 0644, vb->dbg, vb, &vb_trace_fops);
	debugfs_create_file("chips", 0444, vb->dbg, vb, &vb_chips_fops);
	debugfs_create_file("info", 0444, vb->dbg, vb, &vb_info_fops);
	debugfs_create_file("control", 0200, vb->dbg, vb, &vb_control_fops);
}

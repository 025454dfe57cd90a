// SPDX-License-Identifier: GPL-2.0
/*
 * The frontend's rules, checked: each frontend's demodulator has an I2C
 * gate in front of its tuner chip and a lock its read_status holds, and
 * a transfer to the chip
 *  - with the gate closed (a real chip would not answer), or
 *  - while read_status is in the demodulator (the DVB core's calls and a
 *    tuner command running at once)
 * breaks them, as does a read_status that starts while the gate is open
 * for a tuner command.  Each break is counted and logged ("frontend rules
 * broken"); <debugfs>/vbridge/rules has the counters, and the bridge
 * logs them once more when it goes, so that the kernel test sees the
 * breaks of every load.
 *
 * The analog chip (vbridge_analog.c) has no demodulator and no gate.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/seq_file.h>

#include "vbridge.h"

static struct vb_fe *vb_fe_of_addr(struct vbridge *vb, u16 addr)
{
	unsigned int i;

	for (i = 0; i < vb->nfe; i++)
		if (vb->fes[i].chip && vb->fes[i].chip->addr == addr)
			return &vb->fes[i];
	return NULL;
}

/* The gate only: a register of the demodulator, no lock (the rule). */
int vb_fe_gate_ctrl(struct dvb_frontend *fe, int enable)
{
	struct vb_fe *vfe = container_of(fe, struct vb_fe, fe);

	atomic_set(&vfe->gate_open, !!enable);
	return 0;
}

/**
 * vb_fe_demod_regs() - read_status in the demodulator itself
 * @vfe: the frontend
 *
 * Holds the demodulator's lock for a register read of 1-2 ms, the time a
 * real demodulator's status read takes on its bus; a tuner command of the
 * daemon that does not hold the same lock overlaps it and is seen.
 */
void vb_fe_demod_regs(struct vb_fe *vfe)
{
	struct vbridge *vb = vfe->vb;

	mutex_lock(&vfe->demod_lock);
	atomic_inc(&vfe->in_status);
	atomic64_inc(&vb->rules.status_reads);
	if (atomic_read(&vfe->gate_open) || atomic_read(&vfe->tuner_xfers)) {
		atomic64_inc(&vb->rules.status_in_cmd);
		pr_err_ratelimited("vbridge: frontend rules broken: read_status on frontend %u while its tuner command runs\n",
				   vfe->fe.id);
	}
	usleep_range(1000, 2000);
	atomic_dec(&vfe->in_status);
	mutex_unlock(&vfe->demod_lock);
}

/**
 * vb_rules_xfer_begin() - a transfer to the chip at @addr starts
 * @vb: the bridge
 * @addr: its first segment's address
 *
 * Return: the frontend whose chip it is (for vb_rules_xfer_end()), or
 * NULL for a chip no demodulator stands in front of.
 */
struct vb_fe *vb_rules_xfer_begin(struct vbridge *vb, u16 addr)
{
	struct vb_fe *vfe = vb_fe_of_addr(vb, addr);

	if (!vfe)
		return NULL;
	atomic_inc(&vfe->tuner_xfers);
	atomic64_inc(&vb->rules.checked);
	if (!atomic_read(&vfe->gate_open)) {
		atomic64_inc(&vb->rules.gate_closed);
		pr_err_ratelimited("vbridge: frontend rules broken: transfer to 0x%02x with the gate closed\n",
				   addr);
	}
	if (atomic_read(&vfe->in_status)) {
		atomic64_inc(&vb->rules.during_status);
		pr_err_ratelimited("vbridge: frontend rules broken: transfer to 0x%02x during read_status\n",
				   addr);
	}
	return vfe;
}

void vb_rules_xfer_end(struct vb_fe *vfe)
{
	if (vfe)
		atomic_dec(&vfe->tuner_xfers);
}

#define VB_RULES_LINE 160

static void vb_rules_line(struct vbridge *vb, char *buf)
{
	struct vb_rules *r = &vb->rules;
	u64 broken = atomic64_read(&r->gate_closed) +
		     atomic64_read(&r->during_status) +
		     atomic64_read(&r->status_in_cmd);

	scnprintf(buf, VB_RULES_LINE,
		  "checked=%lld gate_closed=%lld during_status=%lld status_in_cmd=%lld status_reads=%lld broken=%llu",
		  atomic64_read(&r->checked), atomic64_read(&r->gate_closed),
		  atomic64_read(&r->during_status),
		  atomic64_read(&r->status_in_cmd),
		  atomic64_read(&r->status_reads), broken);
}

static int vb_rules_show(struct seq_file *m, void *unused)
{
	char line[VB_RULES_LINE];

	vb_rules_line(m->private, line);
	seq_printf(m, "%s\n", line);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vb_rules);

void vb_rules_init(struct vbridge *vb)
{
	debugfs_create_file("rules", 0444, vb->dbg, vb, &vb_rules_fops);
}

/* At unload: the counters of this load, into the kernel log. */
void vb_rules_report(struct vbridge *vb)
{
	char line[VB_RULES_LINE];

	vb_rules_line(vb, line);
	pr_info("vbridge: frontend rules: %s\n", line);
}

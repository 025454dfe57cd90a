// SPDX-License-Identifier: GPL-2.0
/*
 * Register-file emulations of the tuner chips: enough of each to pass
 * its driver's identification, answer its lock polls and show what it
 * was tuned to.  Facts from tuner-chips.md.
 */
#include <linux/errno.h>
#include <linux/string.h>

#include "tuner_stub.h"
#include "vbridge.h"

/* Register writes with auto-increment: start register, then data. */
static int vb_regs_write(struct vb_chip *c, const u8 *buf, u16 len, u8 count)
{
	u16 i;

	if (len == 0)
		return 0;
	if (buf[0] >= count || len - 1 > count - buf[0])
		return -EREMOTEIO;
	for (i = 1; i < len; i++)
		c->regs[buf[0] + i - 1] = buf[i];
	c->ptr = buf[0] + len - 1;
	return 0;
}

static int vb_regs_read(struct vb_chip *c, u8 *buf, u16 len, u8 count)
{
	if (c->ptr >= count || len > count - c->ptr)
		return -EREMOTEIO;
	memcpy(buf, &c->regs[c->ptr], len);
	c->ptr += len;
	return 0;
}

/* --- Microtune MT2060 ------------------------------------------------ */

#define MT2060_REGS		0x14
#define MT2060_PART_REV		0x63
#define MT2060_REG_LO_STATUS	0x06
#define MT2060_LOCKED		0x88	/* L1LK | L2LK */
#define MT2060_REG_FM_FREQ	0x07
#define MT2060_REG_MISC_STAT	0x08
#define MT2060_FM_CAL_DONE	0x40

static void vb_mt2060_reset(struct vb_chip *c)
{
	memset(c->regs, 0, sizeof(c->regs));
	c->regs[0] = MT2060_PART_REV;
	c->regs[MT2060_REG_FM_FREQ] = 0x4a;
	c->regs[MT2060_REG_MISC_STAT] = MT2060_FM_CAL_DONE;
	c->tuned = false;
}

static int vb_mt2060_write(struct vb_chip *c, const u8 *buf, u16 len)
{
	u8 keep[4] = { c->regs[0], c->regs[6], c->regs[7], c->regs[8] };
	int ret = vb_regs_write(c, buf, len, MT2060_REGS);

	if (ret)
		return ret;
	/* Read-only registers keep their value. */
	c->regs[0] = keep[0];
	c->regs[6] = keep[1];
	c->regs[7] = keep[2];
	c->regs[8] = keep[3];
	/* The synthesizers start when the 1..5 burst reaches register 5. */
	if (buf[0] <= 5 && buf[0] + len - 1 > 5) {
		c->tuned = true;
		c->regs[MT2060_REG_LO_STATUS] = MT2060_LOCKED;
	}
	return 0;
}

static int vb_mt2060_read(struct vb_chip *c, u8 *buf, u16 len)
{
	u8 lock = c->regs[MT2060_REG_LO_STATUS];
	int ret;

	if (c->fault_nolock)
		c->regs[MT2060_REG_LO_STATUS] = 0;
	ret = vb_regs_read(c, buf, len, MT2060_REGS);
	c->regs[MT2060_REG_LO_STATUS] = lock;
	return ret;
}

static bool vb_mt2060_locked(const struct vb_chip *c)
{
	return c->tuned &&
	       (c->regs[MT2060_REG_LO_STATUS] & MT2060_LOCKED) ==
	       MT2060_LOCKED;
}

/* RF = LO1 - LO2 - IF2 (36.15 MHz), to the 50 kHz step; in 1/8 Hz. */
static u32 vb_mt2060_frequency(const struct vb_chip *c)
{
	const u8 *r = c->regs;
	s64 num1 = ((r[1] & 0x0f) << 2) | ((r[3] >> 4) & 0x03);
	s64 num2 = (r[3] & 0x0f) | (r[4] << 4) | ((r[5] & 0x01) << 12);
	s64 lo1 = (r[2] * 64 + num1) * 250000 * 8;
	s64 lo2 = ((r[5] >> 1) * 8192 + num2) * 15625;
	s64 rf = lo1 - lo2 - 36150000LL * 8;

	if (!c->tuned || rf <= 0)
		return 0;
	return div_s64(rf + 200000, 400000) * 50000;
}

const struct vb_chip_type vb_mt2060_type = {
	.name = "mt2060",
	.chip_id = TSTUB_CHIP_MT2060,
	.addr = 0x60,
	.reset = vb_mt2060_reset,
	.write = vb_mt2060_write,
	.read = vb_mt2060_read,
	.locked = vb_mt2060_locked,
	.frequency = vb_mt2060_frequency,
};

/* --- Quantek QT1010 -------------------------------------------------- */

#define QT1010_REGS		0x30
#define QT1010_REG_ID		0x29
#define QT1010_ID		0x39
#define QT1010_REG_CTRL		0x01

static void vb_qt1010_reset(struct vb_chip *c)
{
	memset(c->regs, 0, sizeof(c->regs));
	c->regs[QT1010_REG_ID] = QT1010_ID;
	/* Calibration counters read back as steady values. */
	c->regs[0x1f] = 0x1e;
	c->regs[0x20] = 0x1c;
	c->regs[0x25] = 0x2a;
	c->tuned = false;
}

static int vb_qt1010_write(struct vb_chip *c, const u8 *buf, u16 len)
{
	int ret = vb_regs_write(c, buf, len, QT1010_REGS);

	if (ret)
		return ret;
	c->regs[QT1010_REG_ID] = QT1010_ID;
	/* A tune ends with 0x01 = 0x00 after 0x01 = 0x80. */
	if (len == 2 && buf[0] == QT1010_REG_CTRL && buf[1] == 0x00 &&
	    c->regs[0x07])
		c->tuned = true;
	return 0;
}

static int vb_qt1010_read(struct vb_chip *c, u8 *buf, u16 len)
{
	return vb_regs_read(c, buf, len, QT1010_REGS);
}

static bool vb_qt1010_locked(const struct vb_chip *c)
{
	return c->tuned;
}

static u32 vb_qt1010_frequency(const struct vb_chip *c)
{
	u32 n = (1 - (c->regs[0x0a] & 7)) & 7;
	u32 k = ((0x78 - c->regs[0x1a]) & 0xff) >> 3;
	s64 rf = (s64)c->regs[0x07] * 32000000 + n * 4000000 + k * 125000 -
		 1246000000LL;

	return c->tuned && rf > 0 ? rf : 0;
}

const struct vb_chip_type vb_qt1010_type = {
	.name = "qt1010",
	.chip_id = TSTUB_CHIP_QT1010,
	.addr = 0x62,
	.reset = vb_qt1010_reset,
	.write = vb_qt1010_write,
	.read = vb_qt1010_read,
	.locked = vb_qt1010_locked,
	.frequency = vb_qt1010_frequency,
};

/* --- Xceive XC3028 --------------------------------------------------- */

#define XC3028_CMD_RF_FREQ	0x0002
#define XC3028_CMD_POWER_DOWN	0x0008
#define XC3028_REG_FREQ_ERROR	0x0001
#define XC3028_REG_LOCK		0x0002
#define XC3028_REG_VERSION	0x0004
#define XC3028_REG_PRODUCT_ID	0x0008
#define XC3028_REG_SNR		0x0040
#define XC3028_PRODUCT_ID	3028
#define XC3028_VERSION		0x1227	/* hardware 1.2, firmware 2.7 */

static void vb_xc3028_reset(struct vb_chip *c)
{
	c->reg16 = 0;
	c->divider = 0;
	c->freq_pending = false;
	c->tuned = false;
	c->fw_bytes = 0;
}

/*
 * 2-byte writes select the register to read; 4-byte writes with bit 7
 * set are commands, the one after RF_FREQ the divider; everything else
 * is firmware and accepted.
 */
static int vb_xc3028_write(struct vb_chip *c, const u8 *buf, u16 len)
{
	u16 cmd;

	if (len == 2) {
		c->reg16 = buf[0] << 8 | buf[1];
		return 0;
	}
	if (len == 4 && c->freq_pending && !(buf[0] & 0x80)) {
		c->divider = buf[0] << 24 | buf[1] << 16 | buf[2] << 8 | buf[3];
		c->freq_pending = false;
		c->tuned = true;
		return 0;
	}
	if (len == 4 && (buf[0] & 0x80)) {
		cmd = (buf[0] & 0x7f) << 8 | buf[1];
		if (cmd == XC3028_CMD_RF_FREQ)
			c->freq_pending = true;
		else if (cmd == XC3028_CMD_POWER_DOWN)
			c->tuned = false;
		return 0;
	}
	c->fw_bytes += len;
	return 0;
}

static u16 vb_xc3028_reg(const struct vb_chip *c)
{
	switch (c->reg16) {
	case XC3028_REG_PRODUCT_ID:
		return XC3028_PRODUCT_ID;
	case XC3028_REG_VERSION:
		return XC3028_VERSION;
	case XC3028_REG_LOCK:
		if (!c->tuned)
			return 0;
		return c->fault_nolock ? 2 : 1;
	case XC3028_REG_SNR:
		return c->tuned ? 5 : 0;
	default:
		return 0;
	}
}

static int vb_xc3028_read(struct vb_chip *c, u8 *buf, u16 len)
{
	u16 v = vb_xc3028_reg(c);

	if (len != 2)
		return -EREMOTEIO;
	buf[0] = v >> 8;
	buf[1] = v & 0xff;
	return 0;
}

static bool vb_xc3028_locked(const struct vb_chip *c)
{
	return c->tuned;
}

/*
 * The last divider, kept through power-down.  The offset depends on the
 * loaded standard: DTV7/DTV8 assumed.
 */
static u32 vb_xc3028_frequency(const struct vb_chip *c)
{
	return c->divider ? c->divider * 15625 + 2750000 : 0;
}

const struct vb_chip_type vb_xc3028_type = {
	.name = "xc3028",
	.chip_id = TSTUB_CHIP_XC3028,
	.addr = 0x61,
	.reset = vb_xc3028_reset,
	.write = vb_xc3028_write,
	.read = vb_xc3028_read,
	.locked = vb_xc3028_locked,
	.frequency = vb_xc3028_frequency,
};

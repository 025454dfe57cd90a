// SPDX-License-Identifier: MIT
/*
 * chip_mt2060.c - register model of the Microtune MT2060 dual-conversion
 * tuner.
 *
 * The tune is read back from the two synthesizers: LO1 = 16 MHz *
 * (DIV1 + NUM1/64), LO2 = 16 MHz * (DIV2 + NUM2/8192), and RF = LO1 -
 * LO2 - IF2 (36.15 MHz), rounded to the 50 kHz step.  Writing register 5
 * (the last of the 1..5 burst) starts the synthesizers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_chip_i.h"

#define MT2060_REG_PART_REV  0x00
#define MT2060_REG_LO1C1     0x01
#define MT2060_REG_LO1C2     0x02
#define MT2060_REG_LO2C1     0x03
#define MT2060_REG_LO2C2     0x04
#define MT2060_REG_LO2C3     0x05
#define MT2060_REG_LO_STATUS 0x06
#define MT2060_REG_FM_FREQ   0x07
#define MT2060_REG_MISC_STAT 0x08
#define MT2060_REG_COUNT     0x14 /* 0x00..0x13 */

#define MT2060_PART_REV    0x63
#define MT2060_L1LK        0x80
#define MT2060_L2LK        0x08
#define MT2060_FM1SS       0x40
#define MT2060_FM_CAL_DONE 0x40

#define MT2060_REF_HZ    16000000LL
#define MT2060_IF2_HZ    36150000LL
#define MT2060_STEP_HZ   50000LL
#define MT2060_SETTLE_MS 10.0

struct mt2060_chip {
	uint8_t regs[MT2060_REG_COUNT];
	int ptr; /* register pointer, -1 until a write sets it */
	uint64_t settle_ns;
	uint32_t faults;
	unsigned int fm1ss_toggles;
	int tuned;
	uint32_t frequency;
	uint64_t tuned_at_ns;
};

static struct mt2060_chip *to_mt2060(struct sim_chip *chip)
{
	return (struct mt2060_chip *)(void *)chip;
}

static struct sim_chip *mt2060_create(const struct sim_chip_setup *setup,
				      char *err, size_t errlen)
{
	struct mt2060_chip *mt = calloc(1, sizeof(*mt));

	if (!mt) {
		sim_set_err(err, errlen, "out of memory");
		return NULL;
	}
	mt->ptr = -1;
	mt->settle_ns = sim_settle_ns(MT2060_SETTLE_MS, setup->settle_scale);
	mt->regs[MT2060_REG_PART_REV] = MT2060_PART_REV;
	/* FM filter calibration count: differs a little between parts. */
	mt->regs[MT2060_REG_FM_FREQ] = (uint8_t)(0x48 + setup->seed % 8);
	return (struct sim_chip *)(void *)mt;
}

static void mt2060_destroy(struct sim_chip *chip)
{
	free(to_mt2060(chip));
}

/* RF in Hz from the synthesizer registers; <= 0 if they make no sense. */
static long long mt2060_decode(const uint8_t *r)
{
	long long num1 = ((r[1] & 0x0F) << 2) | ((r[3] >> 4) & 0x03);
	long long div1 = r[2];
	long long num2 = (r[3] & 0x0F) | (r[4] << 4) | ((r[5] & 0x01) << 12);
	long long div2 = r[5] >> 1;
	/* In 1/8 Hz: LO2 = (DIV2 * 8192 + NUM2) * 15625 / 8 Hz exactly. */
	long long lo1 = (div1 * MT2060_REF_HZ + num1 * MT2060_REF_HZ / 64) * 8;
	long long lo2 = (div2 * 8192 + num2) * 15625;
	long long rf = lo1 - lo2 - MT2060_IF2_HZ * 8;
	long long step = MT2060_STEP_HZ * 8;

	if (rf <= 0)
		return 0;
	return (rf + step / 2) / step * MT2060_STEP_HZ;
}

static void mt2060_set_reg(struct mt2060_chip *mt, unsigned int reg,
			   uint8_t val)
{
	switch (reg) {
	case MT2060_REG_PART_REV:
	case MT2060_REG_LO_STATUS:
	case MT2060_REG_FM_FREQ:
	case MT2060_REG_MISC_STAT:
		return; /* read-only */
	case MT2060_REG_LO2C1:
		/* Calibration: the FM filter is measured while FM1SS is
		 * toggled; two edges are enough for the model. */
		if ((mt->regs[reg] ^ val) & MT2060_FM1SS &&
		    ++mt->fm1ss_toggles >= 2)
			mt->regs[MT2060_REG_MISC_STAT] |= MT2060_FM_CAL_DONE;
		break;
	}
	mt->regs[reg] = val;
}

static int mt2060_write(struct sim_chip *chip, const uint8_t *buf, size_t len,
			uint64_t now_ns)
{
	struct mt2060_chip *mt = to_mt2060(chip);
	size_t start, n;
	long long rf;

	if (len == 0)
		return 0;
	start = buf[0];
	n = len - 1;
	if (start >= MT2060_REG_COUNT || n > MT2060_REG_COUNT - start)
		return -EREMOTEIO;
	for (size_t i = 0; i < n; i++)
		mt2060_set_reg(mt, (unsigned int)(start + i), buf[1 + i]);
	mt->ptr = (int)(start + n);
	if (start <= MT2060_REG_LO2C3 && start + n > MT2060_REG_LO2C3) {
		rf = mt2060_decode(mt->regs);
		mt->tuned = rf > 0 && rf <= UINT32_MAX;
		mt->frequency = mt->tuned ? (uint32_t)rf : 0;
		mt->tuned_at_ns = now_ns;
	}
	return 0;
}

/* LO1 locks before LO2: the model reports L1LK from half the settle. */
static uint8_t mt2060_lock_bits(struct mt2060_chip *mt, uint64_t now_ns)
{
	if (!mt->tuned || mt->faults & SIM_CHIP_FAULT_NEVER_LOCK)
		return 0;
	if (sim_settled(now_ns, mt->tuned_at_ns, mt->settle_ns))
		return MT2060_L1LK | MT2060_L2LK;
	if (sim_settled(now_ns, mt->tuned_at_ns, mt->settle_ns / 2))
		return MT2060_L1LK;
	return 0;
}

static int mt2060_read(struct sim_chip *chip, uint8_t *buf, size_t len,
		       uint64_t now_ns)
{
	struct mt2060_chip *mt = to_mt2060(chip);

	if (len == 0)
		return 0;
	if (mt->ptr < 0 || (size_t)mt->ptr + len > MT2060_REG_COUNT)
		return -EREMOTEIO;
	for (size_t i = 0; i < len; i++) {
		unsigned int reg = (unsigned int)mt->ptr + (unsigned int)i;

		buf[i] = reg == MT2060_REG_LO_STATUS
			     ? mt2060_lock_bits(mt, now_ns)
			     : mt->regs[reg];
	}
	mt->ptr += (int)len;
	return 0;
}

static void mt2060_tuned(struct sim_chip *chip, uint64_t now_ns,
			 struct sim_tuned *out)
{
	struct mt2060_chip *mt = to_mt2060(chip);

	memset(out, 0, sizeof(*out));
	out->valid = mt->tuned;
	out->frequency = mt->frequency;
	out->pll_locked =
	    mt2060_lock_bits(mt, now_ns) == (MT2060_L1LK | MT2060_L2LK);
	out->tuned_at_ns = mt->tuned_at_ns;
}

static void mt2060_set_faults(struct sim_chip *chip, uint32_t faults)
{
	to_mt2060(chip)->faults = faults;
}

const struct sim_chip_ops sim_mt2060_ops = {
    .name = "mt2060",
    .chip_id = TSTUB_CHIP_MT2060,
    .default_addr = 0x60,
    .create = mt2060_create,
    .destroy = mt2060_destroy,
    .write = mt2060_write,
    .read = mt2060_read,
    .bridge_ctrl = sim_chip_no_reset_line,
    .tuned = mt2060_tuned,
    .set_faults = mt2060_set_faults,
};

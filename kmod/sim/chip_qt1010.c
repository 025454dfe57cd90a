// SPDX-License-Identifier: MIT
/*
 * chip_qt1010.c - register model of the Quantek QT1010 tuner.
 *
 * A tune is the register writes between 0x01 = 0x80 (start) and
 * 0x01 = 0x00 (stop).  The LO (RF + 1246 MHz) is read back from three
 * registers: 0x07 the 32 MHz part, 0x0A the 4 MHz part (n = (1 - r0A) & 7)
 * and 0x1A the 125 kHz part (k = (0x78 - r1A) >> 3).  Register 0x1E runs
 * measurements (D0/E0/F0) whose results the host reads back; the
 * calibration registers give a stable value after one settling read, so
 * "re-read until two reads agree" ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_chip_i.h"

#define QT1010_REG_TUNE_CTRL 0x01
#define QT1010_REG_BAND      0x05
#define QT1010_REG_LO32      0x07
#define QT1010_REG_LO4       0x0A
#define QT1010_REG_LO125     0x1A
#define QT1010_REG_OPER      0x1E
#define QT1010_REG_CAL_1F    0x1F
#define QT1010_REG_CAL_20    0x20
#define QT1010_REG_MEAS_22   0x22
#define QT1010_REG_MEAS_24   0x24
#define QT1010_REG_CAL_25    0x25
#define QT1010_REG_ID        0x29
#define QT1010_REG_COUNT     0x30

#define QT1010_ID           0x39
#define QT1010_TUNE_START   0x80
#define QT1010_TUNE_STOP    0x00
#define QT1010_LO_OFFSET_HZ 1246000000LL
#define QT1010_SETTLE_MS    5.0

struct qt1010_chip {
	uint8_t regs[QT1010_REG_COUNT];
	uint8_t measured[QT1010_REG_COUNT];
	uint8_t has_measure[QT1010_REG_COUNT]; /* an op ran since the write */
	uint8_t settling[QT1010_REG_COUNT];    /* next read is still moving */
	int ptr;
	uint64_t settle_ns;
	uint32_t faults;
	uint32_t seed;
	int in_tune;
	int tuned;
	uint32_t frequency;
	uint64_t tuned_at_ns;
};

static struct qt1010_chip *to_qt1010(struct sim_chip *chip)
{
	return (struct qt1010_chip *)(void *)chip;
}

static struct sim_chip *qt1010_create(const struct sim_chip_setup *setup,
				      char *err, size_t errlen)
{
	struct qt1010_chip *qt = calloc(1, sizeof(*qt));

	if (!qt) {
		sim_set_err(err, errlen, "out of memory");
		return NULL;
	}
	qt->ptr = -1;
	qt->seed = setup->seed;
	qt->settle_ns = sim_settle_ns(QT1010_SETTLE_MS, setup->settle_scale);
	qt->regs[QT1010_REG_ID] = QT1010_ID;
	return (struct sim_chip *)(void *)qt;
}

static void qt1010_destroy(struct sim_chip *chip)
{
	free(to_qt1010(chip));
}

static int qt1010_is_calibration(unsigned int reg)
{
	return reg == QT1010_REG_CAL_1F || reg == QT1010_REG_CAL_20 ||
	       reg == QT1010_REG_CAL_25;
}

static int qt1010_is_measured(unsigned int reg)
{
	return reg == QT1010_REG_BAND || qt1010_is_calibration(reg) ||
	       (reg >= QT1010_REG_MEAS_22 && reg <= QT1010_REG_MEAS_24);
}

/*
 * An operation latches results: the loop registers (0x22..0x24, band)
 * settle where they were set; calibration counters land a few counts
 * from their start value, by part.
 */
static void qt1010_run_operation(struct qt1010_chip *qt)
{
	for (unsigned int reg = 0; reg < QT1010_REG_COUNT; reg++) {
		if (!qt1010_is_measured(reg))
			continue;
		qt->measured[reg] = qt->regs[reg];
		if (qt1010_is_calibration(reg)) {
			qt->measured[reg] +=
			    (uint8_t)(2 + (qt->seed + reg) % 5);
			qt->settling[reg] = 1;
		}
		qt->has_measure[reg] = 1;
	}
}

/* RF in Hz; <= 0 when the registers do not describe a usable LO. */
static long long qt1010_decode(const uint8_t *r)
{
	long long n = (1 - (r[QT1010_REG_LO4] & 7)) & 7;
	long long k = ((0x78 - r[QT1010_REG_LO125]) & 0xFF) >> 3;

	return r[QT1010_REG_LO32] * 32000000LL + n * 4000000LL + k * 125000LL -
	       QT1010_LO_OFFSET_HZ;
}

static void qt1010_tune_ctrl(struct qt1010_chip *qt, uint8_t val,
			     uint64_t now_ns)
{
	long long rf;

	if (val == QT1010_TUNE_START) {
		qt->in_tune = 1;
		return;
	}
	if (val != QT1010_TUNE_STOP || !qt->in_tune)
		return;
	qt->in_tune = 0;
	rf = qt1010_decode(qt->regs);
	qt->tuned = rf > 0 && rf <= UINT32_MAX;
	qt->frequency = qt->tuned ? (uint32_t)rf : 0;
	qt->tuned_at_ns = now_ns;
}

static void qt1010_set_reg(struct qt1010_chip *qt, unsigned int reg,
			   uint8_t val, uint64_t now_ns)
{
	if (reg == QT1010_REG_ID)
		return;
	qt->regs[reg] = val;
	qt->has_measure[reg] = 0;
	qt->settling[reg] = 0;
	if (reg == QT1010_REG_TUNE_CTRL)
		qt1010_tune_ctrl(qt, val, now_ns);
	else if (reg == QT1010_REG_OPER &&
		 (val == 0xD0 || val == 0xE0 || val == 0xF0))
		qt1010_run_operation(qt);
}

static int qt1010_write(struct sim_chip *chip, const uint8_t *buf, size_t len,
			uint64_t now_ns)
{
	struct qt1010_chip *qt = to_qt1010(chip);
	size_t start, n;

	if (len == 0)
		return 0;
	start = buf[0];
	n = len - 1;
	if (start >= QT1010_REG_COUNT || n > QT1010_REG_COUNT - start)
		return -EREMOTEIO;
	for (size_t i = 0; i < n; i++)
		qt1010_set_reg(qt, (unsigned int)(start + i), buf[1 + i],
			       now_ns);
	qt->ptr = (int)(start + n);
	return 0;
}

static uint8_t qt1010_get_reg(struct qt1010_chip *qt, unsigned int reg)
{
	if (!qt->has_measure[reg])
		return qt->regs[reg];
	if (qt->settling[reg]) {
		qt->settling[reg] = 0;
		return (uint8_t)(qt->measured[reg] - 1);
	}
	return qt->measured[reg];
}

static int qt1010_read(struct sim_chip *chip, uint8_t *buf, size_t len,
		       uint64_t now_ns)
{
	struct qt1010_chip *qt = to_qt1010(chip);

	(void)now_ns;
	if (len == 0)
		return 0;
	if (qt->ptr < 0 || (size_t)qt->ptr + len > QT1010_REG_COUNT)
		return -EREMOTEIO;
	for (size_t i = 0; i < len; i++)
		buf[i] =
		    qt1010_get_reg(qt, (unsigned int)qt->ptr + (unsigned int)i);
	qt->ptr += (int)len;
	return 0;
}

static void qt1010_tuned(struct sim_chip *chip, uint64_t now_ns,
			 struct sim_tuned *out)
{
	struct qt1010_chip *qt = to_qt1010(chip);

	memset(out, 0, sizeof(*out));
	out->valid = qt->tuned;
	out->frequency = qt->frequency;
	out->pll_locked = qt->tuned && !qt->in_tune &&
			  !(qt->faults & SIM_CHIP_FAULT_NEVER_LOCK) &&
			  sim_settled(now_ns, qt->tuned_at_ns, qt->settle_ns);
	out->tuned_at_ns = qt->tuned_at_ns;
}

static void qt1010_set_faults(struct sim_chip *chip, uint32_t faults)
{
	to_qt1010(chip)->faults = faults;
}

const struct sim_chip_ops sim_qt1010_ops = {
    .name = "qt1010",
    .chip_id = TSTUB_CHIP_QT1010,
    .default_addr = 0x62,
    .create = qt1010_create,
    .destroy = qt1010_destroy,
    .write = qt1010_write,
    .read = qt1010_read,
    .bridge_ctrl = sim_chip_no_reset_line,
    .tuned = qt1010_tuned,
    .set_faults = qt1010_set_faults,
};

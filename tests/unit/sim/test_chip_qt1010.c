// SPDX-License-Identifier: MIT
/*
 * test_chip_qt1010 - the QT1010 model decodes the tune sequence a
 * correct driver writes (register values computed here from the
 * datasheet formulas) and answers the ID, measurement and calibration
 * reads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sim_chip.h"

#define MS  1000000ull
#define MHZ 1000000u

static struct sim_chip *make_chip(double scale)
{
	struct sim_chip_setup setup = {
	    .i2c_addr = 0x62, .settle_scale = scale, .seed = 7};
	char err[128] = "";
	struct sim_chip *chip = sim_qt1010_ops.create(&setup, err, sizeof(err));

	CHECK(chip != NULL);
	return chip;
}

static void wr_reg(struct sim_chip *chip, uint8_t reg, uint8_t val,
		   uint64_t now)
{
	uint8_t buf[2] = {reg, val};

	CHECK_EQ_INT(sim_qt1010_ops.write(chip, buf, 2, now), 0);
}

static int rd_reg(struct sim_chip *chip, uint8_t reg, uint64_t now)
{
	uint8_t val = 0;

	if (sim_qt1010_ops.write(chip, &reg, 1, now) ||
	    sim_qt1010_ops.read(chip, &val, 1, now))
		return -1;
	return val;
}

struct qt_regs {
	uint8_t r05, r07, r09, r0a, r0b, r1a;
};

static struct qt_regs qt_compute(uint32_t rf_hz)
{
	struct qt_regs q;
	uint32_t div = (uint32_t)(((uint64_t)rf_hz + 1246ull * MHZ) / 125000);
	uint64_t lo = (uint64_t)div * 125000;
	uint32_t mod1 = (uint32_t)(lo % (32 * MHZ));
	uint32_t n = mod1 / (4 * MHZ);
	uint32_t mod2 = (uint32_t)(lo % (4 * MHZ));

	q.r07 = (uint8_t)(lo / (32 * MHZ));
	q.r0a = (uint8_t)(0x08 | ((1 - n) & 7));
	q.r1a = (uint8_t)(0x78 - (mod2 / 125000) * 8);
	q.r09 = mod1 < 8 * MHZ ? 0x1D : 0x1C;
	q.r0b = mod2 < 2 * MHZ ? 0x45 : 0x44;
	q.r05 = rf_hz < 290 * MHZ   ? 0x14
		: rf_hz < 610 * MHZ ? 0x34
		: rf_hz < 802 * MHZ ? 0x54
				    : 0x74;
	return q;
}

/* Start, the synthesizer and helper registers, the measurement loop with
 * its read-backs, stop. */
static void qt_tune(struct sim_chip *chip, uint32_t rf_hz, uint64_t now,
		    int check_before_stop)
{
	struct qt_regs q = qt_compute(rf_hz);
	struct sim_tuned before, t;
	int v22;

	sim_qt1010_ops.tuned(chip, now, &before);
	wr_reg(chip, 0x01, 0x80, now);
	wr_reg(chip, 0x02, 0x3F, now);
	wr_reg(chip, 0x05, q.r05, now);
	wr_reg(chip, 0x06, 0x44, now);
	wr_reg(chip, 0x07, q.r07, now);
	wr_reg(chip, 0x08, 0x08, now);
	wr_reg(chip, 0x09, q.r09, now);
	wr_reg(chip, 0x0A, q.r0a, now);
	wr_reg(chip, 0x0B, q.r0b, now);
	wr_reg(chip, 0x0C, 0xE1, now);
	wr_reg(chip, 0x1A, q.r1a, now);
	wr_reg(chip, 0x11, 0xFD, now);
	wr_reg(chip, 0x12, 0x91, now);
	wr_reg(chip, 0x22, 0x70, now);
	wr_reg(chip, 0x23, 0xD0, now);
	wr_reg(chip, 0x24, 0x30, now);
	wr_reg(chip, 0x1E, 0xD0, now);
	v22 = rd_reg(chip, 0x22, now);
	CHECK(v22 >= 0);
	wr_reg(chip, 0x1E, 0x00, now);
	wr_reg(chip, 0x22, (uint8_t)(v22 + 2), now);
	wr_reg(chip, 0x1E, 0xE0, now);
	CHECK(rd_reg(chip, 0x23, now) >= 0);
	wr_reg(chip, 0x1E, 0xF0, now);
	CHECK_EQ_INT(rd_reg(chip, 0x05, now), q.r05);
	CHECK(rd_reg(chip, 0x24, now) >= 0);
	wr_reg(chip, 0x1E, 0x00, now);
	if (check_before_stop) {
		/* Mid-sequence nothing new is tuned yet. */
		sim_qt1010_ops.tuned(chip, now, &t);
		CHECK_EQ_INT(t.valid, before.valid);
		CHECK_EQ_INT(t.frequency, before.frequency);
		CHECK_EQ_INT(t.pll_locked, 0);
	}
	wr_reg(chip, 0x01, 0x00, now);
	wr_reg(chip, 0x00, 0x92, now);
}

static void test_example_and_id(void)
{
	struct sim_chip *chip = make_chip(0);
	struct qt_regs q = qt_compute(474 * MHZ);
	struct sim_tuned t;
	uint8_t buf[2];

	if (!chip)
		return;
	CHECK_EQ_INT(sim_qt1010_ops.read(chip, buf, 1, 0), -EREMOTEIO);
	CHECK_EQ_INT(rd_reg(chip, 0x29, 0), 0x39);
	wr_reg(chip, 0x29, 0x00, 0);
	CHECK_EQ_INT(rd_reg(chip, 0x29, 0), 0x39);
	CHECK_EQ_INT(sim_qt1010_ops.write(chip, (uint8_t[]){0x30, 1}, 2, 0),
		     -EREMOTEIO);
	CHECK_EQ_INT(sim_qt1010_ops.write(chip, (uint8_t[]){0x2F, 1, 2}, 3, 0),
		     -EREMOTEIO);
	CHECK(q.r07 == 0x35 && q.r0a == 0x0B && q.r1a == 0x78);
	sim_qt1010_ops.tuned(chip, 0, &t);
	CHECK_EQ_INT(t.valid, 0);
	/* A stop without a start is no tune. */
	wr_reg(chip, 0x07, q.r07, 0);
	wr_reg(chip, 0x01, 0x00, 0);
	sim_qt1010_ops.tuned(chip, 0, &t);
	CHECK_EQ_INT(t.valid, 0);
	qt_tune(chip, 474 * MHZ, 0, 1);
	sim_qt1010_ops.tuned(chip, 0, &t);
	CHECK_EQ_INT(t.valid, 1);
	CHECK_EQ_INT(t.frequency, 474 * MHZ);
	CHECK_EQ_INT(t.pll_locked, 1);
	sim_qt1010_ops.destroy(chip);
}

static void test_sweep(void)
{
	struct sim_chip *chip = make_chip(0);
	struct sim_tuned t;

	if (!chip)
		return;
	for (uint32_t f = 48 * MHZ; f <= 860 * MHZ; f += 1234567) {
		qt_tune(chip, f, f, f % 3 == 0);
		sim_qt1010_ops.tuned(chip, f, &t);
		CHECK(t.valid);
		CHECK(t.frequency <= f && f - t.frequency < 125000);
		CHECK_EQ_INT(t.frequency % 125000, 0);
	}
	sim_qt1010_ops.destroy(chip);
}

/* Init's calibration: write the start value, 0x1E = 00, 0x1E = op, then
 * read until two reads agree. */
static int calibrate(struct sim_chip *chip, uint8_t reg, uint8_t init,
		     uint8_t op, int *reads)
{
	int prev, cur;

	wr_reg(chip, reg, init, 0);
	wr_reg(chip, 0x1E, 0x00, 0);
	wr_reg(chip, 0x1E, op, 0);
	prev = rd_reg(chip, reg, 0);
	*reads = 1;
	for (;;) {
		cur = rd_reg(chip, reg, 0);
		++*reads;
		if (cur == prev || *reads > 20)
			return cur;
		prev = cur;
	}
}

static void test_calibration(void)
{
	struct sim_chip *chip = make_chip(1.0);
	const uint8_t regs[3] = {0x25, 0x1F, 0x20};
	const uint8_t init[3] = {0x10, 0xD0, 0x08};
	const uint8_t ops[3] = {0xF0, 0xD0, 0xE0};
	int reads, val;

	if (!chip)
		return;
	for (int i = 0; i < 3; i++) {
		val = calibrate(chip, regs[i], init[i], ops[i], &reads);
		CHECK(val >= 0);
		CHECK(reads <= 4);
		CHECK(val != init[i]);
		CHECK_EQ_INT(rd_reg(chip, regs[i], 0), val);
		/* The same calibration again measures the same. */
		CHECK_EQ_INT(calibrate(chip, regs[i], init[i], ops[i], &reads),
			     val);
	}
	/* Before any operation a register reads what was written. */
	wr_reg(chip, 0x22, 0x5A, 0);
	CHECK_EQ_INT(rd_reg(chip, 0x22, 0), 0x5A);
	sim_qt1010_ops.destroy(chip);
}

static void test_settle(void)
{
	struct sim_chip *chip = make_chip(1.0);
	const uint64_t t0 = 77 * MS;
	struct sim_tuned t;

	if (!chip)
		return;
	qt_tune(chip, 545 * MHZ, t0, 1);
	sim_qt1010_ops.tuned(chip, t0, &t);
	CHECK(t.valid && t.pll_locked == 0 && t.tuned_at_ns == t0);
	sim_qt1010_ops.tuned(chip, t0 + 4 * MS, &t);
	CHECK_EQ_INT(t.pll_locked, 0);
	sim_qt1010_ops.tuned(chip, t0 + 5 * MS, &t);
	CHECK_EQ_INT(t.pll_locked, 1);
	sim_qt1010_ops.set_faults(chip, SIM_CHIP_FAULT_NEVER_LOCK);
	sim_qt1010_ops.tuned(chip, t0 + 500 * MS, &t);
	CHECK_EQ_INT(t.pll_locked, 0);
	CHECK_EQ_INT(t.frequency, 545 * MHZ);
	sim_qt1010_ops.set_faults(chip, 0);
	sim_qt1010_ops.tuned(chip, t0 + 500 * MS, &t);
	CHECK_EQ_INT(t.pll_locked, 1);
	sim_qt1010_ops.destroy(chip);
}

static void test_fuzz(void)
{
	struct sim_chip *chip = make_chip(1.0);
	static uint8_t buf[1024];
	uint32_t x = 0xBADC0DE;
	struct sim_tuned t;

	if (!chip)
		return;
	for (int i = 0; i < 20000; i++) {
		size_t len;
		int ret;

		x = x * 1664525u + 1013904223u;
		len = (x >> 8) % (i % 10 ? 6 : 1025);
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)(rand() & (j ? 0xFF : 0x3F));
		if (x & 0x20000)
			ret = sim_qt1010_ops.write(chip, buf, len, (uint64_t)i);
		else
			ret = sim_qt1010_ops.read(chip, buf, len, (uint64_t)i);
		CHECK(ret == 0 || ret == -EREMOTEIO);
		if (i % 89 == 0)
			sim_qt1010_ops.bridge_ctrl(chip, x % 5, x, (uint64_t)i);
		sim_qt1010_ops.tuned(chip, (uint64_t)i, &t);
	}
	sim_qt1010_ops.destroy(chip);
}

int main(void)
{
	CHECK_EQ_INT(sim_qt1010_ops.chip_id, TSTUB_CHIP_QT1010);
	CHECK_EQ_INT(sim_qt1010_ops.default_addr, 0x62);
	test_example_and_id();
	test_sweep();
	test_calibration();
	test_settle();
	test_fuzz();
	return check_done("test_chip_qt1010");
}

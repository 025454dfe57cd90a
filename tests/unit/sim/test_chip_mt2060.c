// SPDX-License-Identifier: MIT
/*
 * test_chip_mt2060 - the MT2060 model decodes the register writes a
 * correct driver makes (computed here from the datasheet formulas), and
 * answers ID, lock and calibration reads like the chip.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sim_chip.h"

#define MS 1000000ull

static struct sim_chip *make_chip(double scale)
{
	struct sim_chip_setup setup = {
	    .i2c_addr = 0x60, .settle_scale = scale, .seed = 42};
	char err[128] = "";
	struct sim_chip *chip = sim_mt2060_ops.create(&setup, err, sizeof(err));

	CHECK(chip != NULL);
	return chip;
}

static int wr(struct sim_chip *chip, const uint8_t *buf, size_t len,
	      uint64_t now)
{
	return sim_mt2060_ops.write(chip, buf, len, now);
}

static int read_reg(struct sim_chip *chip, uint8_t reg, uint64_t now)
{
	uint8_t val = 0;

	if (wr(chip, &reg, 1, now))
		return -1;
	if (sim_mt2060_ops.read(chip, &val, 1, now))
		return -1;
	return val;
}

static uint8_t lnaband(uint32_t rf_khz)
{
	static const struct {
		uint32_t max_mhz;
		uint8_t band;
	} table[] = {{95, 0xB0},  {180, 0xA0}, {260, 0x90}, {335, 0x80},
		     {425, 0x70}, {480, 0x60}, {570, 0x50}, {645, 0x40},
		     {730, 0x30}, {810, 0x20}};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (rf_khz <= table[i].max_mhz * 1000)
			return table[i].band;
	return 0x10;
}

/* Registers 1..5 for rf_khz, as the datasheet's tuning procedure gives. */
static void tune_regs(uint32_t rf_khz, uint32_t if1_khz, uint8_t r[5])
{
	const uint32_t if2 = 36150;
	uint32_t f_lo1 = (rf_khz + if1_khz) / 250 * 250;
	uint32_t f_lo2 = f_lo1 - rf_khz - if2;
	uint32_t num1t, div1, num1, n, div2, num2;

	f_lo2 = (f_lo2 + 25) / 50 * 50;
	num1t = f_lo1 / 250;
	div1 = num1t / 64;
	num1 = num1t & 0x3F;
	n = f_lo2 * 64 / 125;
	div2 = n / 8192;
	num2 = n & 0x1FFF;
	r[0] = (uint8_t)(lnaband(rf_khz) | ((num1 >> 2) & 0x0F));
	r[1] = (uint8_t)div1;
	r[2] = (uint8_t)((num2 & 0x0F) | ((num1 & 3) << 4));
	r[3] = (uint8_t)((num2 >> 4) & 0xFF);
	r[4] = (uint8_t)(((num2 >> 12) & 1) | (div2 << 1));
}

static void program(struct sim_chip *chip, uint32_t rf_khz, int one_by_one,
		    uint64_t now)
{
	uint8_t lo1b[2] = {0x0C, 0xFF};
	uint8_t burst[6] = {0x01};

	CHECK_EQ_INT(wr(chip, lo1b, 2, now), 0);
	tune_regs(rf_khz, 1220000, burst + 1);
	if (!one_by_one) {
		CHECK_EQ_INT(wr(chip, burst, 6, now), 0);
		return;
	}
	for (int i = 1; i <= 5; i++) {
		uint8_t pair[2] = {(uint8_t)i, burst[i]};

		CHECK_EQ_INT(wr(chip, pair, 2, now), 0);
	}
}

static void test_example_and_id(void)
{
	struct sim_chip *chip = make_chip(0);
	uint8_t r[5];
	const uint8_t want[5] = {0x6E, 0x69, 0x03, 0xFB, 0x93};
	uint8_t buf[4];
	struct sim_tuned t;

	if (!chip)
		return;
	/* A fresh chip has no register pointer: the read is NAKed. */
	CHECK_EQ_INT(sim_mt2060_ops.read(chip, buf, 1, 0), -EREMOTEIO);
	CHECK_EQ_INT(read_reg(chip, 0x00, 0), 0x63);
	/* Writes to the ID register do not change it. */
	CHECK_EQ_INT(wr(chip, (uint8_t[]){0x00, 0x12}, 2, 0), 0);
	CHECK_EQ_INT(read_reg(chip, 0x00, 0), 0x63);
	CHECK_EQ_INT(wr(chip, (uint8_t[]){0x14, 0x00}, 2, 0), -EREMOTEIO);
	CHECK_EQ_INT(wr(chip, (uint8_t[]){0x13, 0x00, 0x00}, 3, 0), -EREMOTEIO);
	CHECK_EQ_INT(wr(chip, (uint8_t[]){0x13}, 1, 0), 0);
	CHECK_EQ_INT(sim_mt2060_ops.read(chip, buf, 2, 0), -EREMOTEIO);

	tune_regs(474000, 1220000, r);
	CHECK(memcmp(r, want, 5) == 0);
	sim_mt2060_ops.tuned(chip, 0, &t);
	CHECK_EQ_INT(t.valid, 0);
	program(chip, 474000, 0, 5 * MS);
	sim_mt2060_ops.tuned(chip, 5 * MS, &t);
	CHECK_EQ_INT(t.valid, 1);
	CHECK_EQ_INT(t.frequency, 474000000);
	CHECK_EQ_INT(t.bandwidth, 0);
	CHECK_EQ_INT(t.tuned_at_ns, 5 * MS);
	/* Auto-increment reads: regs 0x00..0x03 in one segment. */
	CHECK_EQ_INT(wr(chip, (uint8_t[]){0x00}, 1, 0), 0);
	CHECK_EQ_INT(sim_mt2060_ops.read(chip, buf, 4, 0), 0);
	CHECK(buf[0] == 0x63 && buf[1] == 0x6E && buf[2] == 0x69 &&
	      buf[3] == 0x03);
	sim_mt2060_ops.destroy(chip);
}

static void test_sweep(void)
{
	struct sim_chip *chip = make_chip(0);
	struct sim_tuned t;
	int worst = 0;

	if (!chip)
		return;
	for (uint32_t khz = 48000; khz <= 860000; khz += 1237) {
		int err;

		program(chip, khz, khz % 2, khz);
		sim_mt2060_ops.tuned(chip, khz, &t);
		CHECK(t.valid);
		err = abs((int)t.frequency - (int)(khz * 1000));
		if (err > worst)
			worst = err;
		CHECK(err <= 50000);
		CHECK_EQ_INT(t.frequency % 50000, 0);
	}
	CHECK(worst > 0); /* the sweep does hit off-grid frequencies */
	/* A board IF1 a few MHz off still decodes the same RF. */
	{
		uint8_t burst[6] = {0x01};

		tune_regs(506000, 1223000, burst + 1);
		CHECK_EQ_INT(wr(chip, burst, 6, 0), 0);
		sim_mt2060_ops.tuned(chip, 0, &t);
		CHECK(abs((int)t.frequency - 506000000) <= 50000);
	}
	sim_mt2060_ops.destroy(chip);
}

static void test_lock_timing(void)
{
	struct sim_chip *chip = make_chip(1.0);
	const uint64_t t0 = 1000 * MS;
	struct sim_tuned t;

	if (!chip)
		return;
	CHECK_EQ_INT(read_reg(chip, 0x06, 0) & 0x88, 0);
	program(chip, 690000, 0, t0);
	CHECK((read_reg(chip, 0x06, t0) & 0x88) != 0x88);
	CHECK((read_reg(chip, 0x06, t0 + 4 * MS) & 0x88) != 0x88);
	CHECK((read_reg(chip, 0x06, t0 + 9 * MS) & 0x88) != 0x88);
	sim_mt2060_ops.tuned(chip, t0 + 9 * MS, &t);
	CHECK_EQ_INT(t.pll_locked, 0);
	CHECK_EQ_INT(read_reg(chip, 0x06, t0 + 10 * MS) & 0x88, 0x88);
	sim_mt2060_ops.tuned(chip, t0 + 10 * MS, &t);
	CHECK_EQ_INT(t.pll_locked, 1);
	/* A new tune loses lock until it settles again. */
	program(chip, 698000, 0, t0 + 50 * MS);
	CHECK((read_reg(chip, 0x06, t0 + 51 * MS) & 0x88) != 0x88);
	CHECK_EQ_INT(read_reg(chip, 0x06, t0 + 60 * MS) & 0x88, 0x88);

	sim_mt2060_ops.set_faults(chip, SIM_CHIP_FAULT_NEVER_LOCK);
	CHECK_EQ_INT(read_reg(chip, 0x06, t0 + 2000 * MS) & 0x88, 0);
	sim_mt2060_ops.tuned(chip, t0 + 2000 * MS, &t);
	CHECK_EQ_INT(t.pll_locked, 0);
	sim_mt2060_ops.set_faults(chip, 0);
	CHECK_EQ_INT(read_reg(chip, 0x06, t0 + 2000 * MS) & 0x88, 0x88);
	sim_mt2060_ops.destroy(chip);

	chip = make_chip(0);
	if (!chip)
		return;
	program(chip, 474000, 0, t0);
	CHECK_EQ_INT(read_reg(chip, 0x06, t0) & 0x88, 0x88);
	sim_mt2060_ops.destroy(chip);
}

static void test_calibration(void)
{
	struct sim_chip *chip = make_chip(1.0);
	const uint8_t lo[6] = {0x01, 0x3F, 0x74, 0x00, 0x08, 0x93};
	const uint8_t misc[10] = {0x09, 0x20, 0x1E, 0x30, 0xFF,
				  0x80, 0xFF, 0x00, 0x2C, 0x42};
	int rounds = 0, fm_freq;
	uint64_t now = 0;

	if (!chip)
		return;
	CHECK_EQ_INT(wr(chip, lo, sizeof(lo), now), 0);
	CHECK_EQ_INT(wr(chip, misc, sizeof(misc), now), 0);
	CHECK_EQ_INT(read_reg(chip, 0x08, now) & 0x40, 0);
	/* Toggle FM1SS (FM1CA on the first round) until the filter is
	 * measured, as the probe does. */
	for (uint8_t r3 = 0x00; rounds < 9; rounds++) {
		r3 ^= 0x40;
		if (rounds == 0)
			r3 |= 0x80;
		CHECK_EQ_INT(wr(chip, (uint8_t[]){0x03, r3}, 2, now), 0);
		now += 20 * MS;
		if (read_reg(chip, 0x08, now) & 0x40)
			break;
	}
	CHECK(rounds >= 1 && rounds < 9);
	fm_freq = read_reg(chip, 0x07, now);
	CHECK(fm_freq > 0 && fm_freq < 0xFF);
	CHECK_EQ_INT(read_reg(chip, 0x07, now + MS), fm_freq);
	sim_mt2060_ops.destroy(chip);
}

static void test_fuzz(void)
{
	struct sim_chip *chip = make_chip(1.0);
	static uint8_t buf[1024];
	uint32_t x = 0xC0FFEE;
	struct sim_tuned t;

	if (!chip)
		return;
	for (int i = 0; i < 20000; i++) {
		size_t len;
		int ret;

		x = x * 1103515245u + 12345u;
		len = (x >> 8) % (i % 10 ? 8 : 1025);
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)(rand() & (j ? 0xFF : 0x1F));
		if (x & 0x10000)
			ret = sim_mt2060_ops.write(chip, buf, len, (uint64_t)i);
		else
			ret = sim_mt2060_ops.read(chip, buf, len, (uint64_t)i);
		CHECK(ret == 0 || ret == -EREMOTEIO);
		if (i % 97 == 0)
			sim_mt2060_ops.bridge_ctrl(chip, x % 5, x, (uint64_t)i);
		sim_mt2060_ops.tuned(chip, (uint64_t)i, &t);
	}
	sim_mt2060_ops.destroy(chip);
}

int main(void)
{
	CHECK(sim_chip_find("mt2060") == &sim_mt2060_ops);
	CHECK(sim_chip_find("MT2060") == &sim_mt2060_ops);
	CHECK(sim_chip_find("qt1010") == &sim_qt1010_ops);
	CHECK(sim_chip_find("xc3028") == &sim_xc3028_ops);
	CHECK(sim_chip_find("tda18271") == NULL);
	CHECK(sim_chip_find(NULL) == NULL);
	CHECK_EQ_INT(sim_mt2060_ops.chip_id, TSTUB_CHIP_MT2060);
	CHECK_EQ_INT(sim_mt2060_ops.default_addr, 0x60);
	test_example_and_id();
	test_sweep();
	test_lock_timing();
	test_calibration();
	test_fuzz();
	return check_done("test_chip_mt2060");
}

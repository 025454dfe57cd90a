// SPDX-License-Identifier: MIT
/*
 * test_chip_xc3028 - the XC3028 model recognises firmware uploaded the
 * way a driver does it (the file walked here independently of the
 * model's parser, sent in 13- and 64-byte chunks), then decodes tunes and
 * answers the status registers from the RF environment.
 *
 * argv[1], if given, is a firmware file made by tunerd-mkfw-xc3028; it
 * must equal the generator's output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sim_chip.h"
#include "xc3028_fwgen.h"
#include "xc3028_host.h"

static char fw_path[] = "/tmp/test_chip_xc3028_XXXXXX";
static struct sim_rf_env *env;

static struct sim_chip *make_chip(double scale, const char *path, char *err,
				  size_t errlen)
{
	struct sim_chip_setup setup = {.i2c_addr = 0x61,
				       .settle_scale = scale,
				       .rf = env,
				       .firmware_path = path,
				       .seed = 3};

	return sim_xc3028_ops.create(&setup, err, errlen);
}

static void test_file_layout(void)
{
	const struct img *base = host_find(T_BASE, 0);
	const uint32_t want[] = {
	    T_BASE,  T_BASE | T_F8MHZ, T_DTV6 | T_QAM,   T_DTV6, T_DTV7,
	    T_DTV78, T_DTV8,           T_ATSC | T_D2633, T_FM,   T_INIT1};
	uint8_t *again;
	size_t again_len, bytes = 0;
	int sleeps = 0;

	CHECK(strcmp((const char *)fw_data, XC3028_FWGEN_NAME) == 0);
	CHECK_EQ_INT(host_le(fw_data + 32, 2), 0x0207);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(host_find(want[i], 0) != NULL);
	CHECK(host_find(0, STD_PAL_BG) && host_find(0, STD_PAL_I));
	CHECK(host_find_scode(4560) && host_find_scode(5200) &&
	      host_find_scode(6000));
	CHECK(host_find_scode(4560)->size == 16 * 12);
	CHECK(base && host_le(base->data, 2) == 0x0000);
	for (const uint8_t *p = base ? base->data + 2 : NULL; p;) {
		uint32_t len = host_le(p, 2);

		if (len == 0xFFFF)
			break;
		sleeps += (len & 0x8000) != 0;
		p += 2 + (len & 0x8000 ? 0 : len);
	}
	CHECK_EQ_INT(sleeps, 1);
	/* BASE F8MHZ + DTV8 at 400 kHz: tens of milliseconds. */
	bytes =
	    host_find(T_BASE | T_F8MHZ, 0)->size + host_find(T_DTV8, 0)->size;
	CHECK(bytes * 9 * 2500 < 100 * MS);
	CHECK(bytes > 500);
	CHECK_EQ_INT(xc3028_fwgen_build(&again, &again_len), 0);
	CHECK(again_len == fw_len && !memcmp(again, fw_data, fw_len));
	free(again);
}

static void expect_create_fails(const uint8_t *data, size_t len,
				const char *want)
{
	char path[] = "/tmp/test_chip_xc3028_bad_XXXXXX";
	char err[256] = "";
	int fd = mkstemp(path);
	struct sim_chip *chip;

	CHECK(fd >= 0 && write(fd, data, len) == (ssize_t)len);
	close(fd);
	chip = make_chip(1, path, err, sizeof(err));
	CHECK(chip == NULL);
	CHECK(strstr(err, want) != NULL);
	if (!strstr(err, want))
		fprintf(stderr, "  got '%s', wanted '%s'\n", err, want);
	if (chip)
		sim_xc3028_ops.destroy(chip);
	unlink(path);
}

static void test_create_errors(void)
{
	char err[256] = "";
	uint8_t *copy = malloc(fw_len);
	size_t base_at = (size_t)(host_find(T_BASE, 0)->data - fw_data);
	size_t f8_at = (size_t)(host_find(T_BASE | T_F8MHZ, 0)->data - fw_data);
	size_t fm_at = (size_t)(host_find(T_BASE | T_FM, 0)->data - fw_data);

	CHECK(make_chip(1, NULL, err, sizeof(err)) == NULL && err[0]);
	CHECK(make_chip(1, "/nonexistent/xc3028-v27.fw", err, sizeof(err)) ==
	      NULL);
	CHECK(strstr(err, "/nonexistent/xc3028-v27.fw") != NULL);
	expect_create_fails(fw_data, 20, "shorter than");
	expect_create_fails(fw_data, fw_len / 2, "runs past the file");
	memcpy(copy, fw_data, fw_len);
	copy[34] = copy[35] = 0;
	expect_create_fails(copy, fw_len, "image count");
	memcpy(copy, fw_data, fw_len);
	copy[base_at + 2] = 0xF0; /* first data record: 0x7FF0 bytes */
	copy[base_at + 3] = 0x7F;
	expect_create_fails(copy, fw_len, "runs past the image");
	memcpy(copy, fw_data, fw_len);
	copy[base_at - 16] = 0;
	copy[f8_at - 16] = 0;
	copy[fm_at - 16] = 0;
	copy[host_find(T_BASE | T_FM | T_INPUT1, 0)->data - fw_data - 16] = 0;
	expect_create_fails(copy, fw_len, "no BASE");
	memcpy(copy, fw_data, fw_len);
	copy[base_at + 2] = 0x34; /* an invalid reset code */
	copy[base_at + 3] = 0xFF;
	expect_create_fails(copy, fw_len, "invalid reset code");
	/* The kernel refuses bytes after the last image and empty images. */
	expect_create_fails(fw_data, fw_len - 1, "runs past");
	free(copy);
	copy = malloc(fw_len + 3);
	memcpy(copy, fw_data, fw_len);
	memset(copy + fw_len, 0, 3);
	expect_create_fails(copy, fw_len + 3, "trailing bytes");
	free(copy);
}

/* The record after a BASE image's first data record is a tuner reset,
 * as in the real v2.7 file (2 payload bytes or more a record). */
static size_t first_reset_after_data(const struct img *m)
{
	const uint8_t *p = m->data;
	size_t payload = 0;

	for (int seen_data = 0;;) {
		uint32_t len = host_le(p, 2);

		if (len == 0xFFFF)
			return 0;
		p += 2;
		if (len == 0 && seen_data)
			return payload;
		if (len && len < 0x8000) {
			seen_data = 1;
			payload += len - 1;
			p += len;
		}
	}
}

/* A reset record inside BASE does not make the model forget the upload:
 * the chunks after it are taken and BASE runs.  Both layouts load. */
static void test_reset_inside_base(void)
{
	const struct img *base = host_find(T_BASE | T_F8MHZ, 0);
	char err[256];
	struct sim_chip *chip = make_chip(1, fw_path, err, sizeof(err));
	struct sim_tuned t;
	uint8_t *plain;
	size_t plain_len;

	CHECK(chip && base && first_reset_after_data(base) > 0);
	if (!chip || !base)
		return;
	for (size_t max_len = 13; max_len <= 64; max_len += 51) {
		sim_xc3028_ops.bridge_ctrl(chip, TSTUB_CTRL_TUNER_RESET, 0,
					   xc_now);
		CHECK_EQ_INT(host_upload(chip, base, max_len, -1), 0);
		sim_xc3028_ops.tuned(chip, xc_now, &t);
		CHECK(strcmp(t.firmware, "BASE F8MHZ") == 0);
		CHECK_EQ_INT(host_read_reg(chip, 0x0008), 3028);
	}
	/* A reset where the image has none still starts over. */
	sim_xc3028_ops.bridge_ctrl(chip, TSTUB_CTRL_TUNER_RESET, 0, xc_now);
	CHECK_EQ_INT(host_write(chip, base->data + 6, 3), 0); /* reg, 2 bytes */
	sim_xc3028_ops.bridge_ctrl(chip, TSTUB_CTRL_TUNER_RESET, 0, xc_now);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(t.firmware[0] == '\0');
	sim_xc3028_ops.destroy(chip);

	CHECK_EQ_INT(xc3028_fwgen_build_flags(&plain, &plain_len, 0), 0);
	CHECK(plain_len + 2 * 4 == fw_len); /* one record less per BASE */
	free(plain);
}

static void test_before_firmware(void)
{
	char err[256];
	struct sim_chip *chip = make_chip(1, fw_path, err, sizeof(err));
	uint8_t buf[2];
	struct sim_tuned t;

	CHECK(chip != NULL);
	if (!chip)
		return;
	CHECK_EQ_INT(sim_xc3028_ops.read(chip, buf, 2, xc_now), -EREMOTEIO);
	CHECK_EQ_INT(host_read_reg(chip, 0x0008), 0);
	CHECK_EQ_INT(host_read_reg(chip, 0x0004), 0);
	CHECK_EQ_INT(host_write(chip, (uint8_t[]){0x80, 0x02, 0, 0}, 4),
		     -EREMOTEIO);
	CHECK_EQ_INT(host_write(chip, (uint8_t[]){0x80, 0x08, 0, 0}, 4), 0);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(!t.valid && t.firmware[0] == '\0');
	sim_xc3028_ops.destroy(chip);
}

static void settle_and_check_lock(struct sim_chip *chip, int want)
{
	CHECK_EQ_INT(host_read_reg(chip, 0x0002), 0);
	xc_now += 60 * MS;
	CHECK_EQ_INT(host_read_reg(chip, 0x0002), 0);
	xc_now += 40 * MS;
	CHECK_EQ_INT(host_read_reg(chip, 0x0002), want);
}

/* Reset, BASE F8MHZ, DTV8, SCODE as a DVB-T driver loads them. */
static void upload_dtv8(struct sim_chip *chip, size_t max_len)
{
	struct sim_tuned t;

	sim_xc3028_ops.bridge_ctrl(chip, TSTUB_CTRL_TUNER_RESET, 0, xc_now);
	CHECK_EQ_INT(
	    host_upload(chip, host_find(T_BASE | T_F8MHZ, 0), max_len, -1), 0);
	CHECK_EQ_INT(host_read_reg(chip, 0x0008), 3028);
	CHECK_EQ_INT(host_read_reg(chip, 0x0004), 0x1227);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(strcmp(t.firmware, "BASE F8MHZ") == 0 && !t.valid);
	CHECK_EQ_INT(host_upload(chip, host_find(T_DTV8, 0), max_len, -1), 0);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(strcmp(t.firmware, "BASE F8MHZ,DTV8") == 0);
	CHECK_EQ_INT(host_scode(chip, 4560, 0), 0);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(strcmp(t.firmware, "BASE F8MHZ,DTV8,SCODE 4560") == 0);
	if (strcmp(t.firmware, "BASE F8MHZ,DTV8,SCODE 4560"))
		fprintf(stderr, "  firmware '%s'\n", t.firmware);
}

static void test_dtv8(size_t max_len)
{
	char err[256];
	struct sim_chip *chip = make_chip(1, fw_path, err, sizeof(err));
	struct sim_tuned t;

	CHECK(chip != NULL);
	if (!chip)
		return;
	upload_dtv8(chip, max_len);
	CHECK_EQ_INT((474000000 - 2750000 + 7812) / 15625, 30160);
	CHECK_EQ_INT(host_tune(chip, 474000000, 2750000), 0);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(t.valid && t.frequency == 474000000 && t.bandwidth == 8000000);
	CHECK_EQ_INT(t.pll_locked, 0);
	settle_and_check_lock(chip, 1);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK_EQ_INT(t.pll_locked, 1);
	CHECK_EQ_INT(host_read_reg(chip, 0x0001), 0);
	CHECK_EQ_INT(host_read_reg(chip, 0x0040), 7);
	CHECK_EQ_INT(host_read_reg(chip, 0x0010), 0);
	CHECK_EQ_INT(host_tune(chip, 474000000 + 31250, 2750000), 0);
	xc_now += 100 * MS;
	CHECK_EQ_INT(host_read_reg(chip, 0x0001), 2);
	CHECK_EQ_INT(host_tune(chip, 474000000 - 31250, 2750000), 0);
	xc_now += 100 * MS;
	CHECK_EQ_INT(host_read_reg(chip, 0x0001), 0xFFFE);
	CHECK_EQ_INT(host_tune(chip, 482000000, 2750000), 0);
	settle_and_check_lock(chip, 1);
	CHECK_EQ_INT(host_read_reg(chip, 0x0040), 5);
	CHECK_EQ_INT(host_tune(chip, 600000000, 2750000), 0);
	settle_and_check_lock(chip, 2);
	CHECK_EQ_INT(host_read_reg(chip, 0x0040), 0);
	for (uint32_t k = 0; k < 49; k++) {
		uint32_t f = 474000000 + k * 8000000 + (k * 7919) % 15625;

		CHECK_EQ_INT(host_tune(chip, f, 2750000), 0);
		sim_xc3028_ops.tuned(chip, xc_now, &t);
		CHECK(t.valid && abs((int)t.frequency - (int)f) <= 7813);
	}
	sim_xc3028_ops.destroy(chip);
}

static void test_power_down(void)
{
	char err[256];
	struct sim_chip *chip = make_chip(1, fw_path, err, sizeof(err));
	struct sim_tuned t;

	CHECK(chip != NULL);
	if (!chip)
		return;
	upload_dtv8(chip, 64);
	CHECK_EQ_INT(host_tune(chip, 474000000, 2750000), 0);
	settle_and_check_lock(chip, 1);
	CHECK_EQ_INT(host_write(chip, (uint8_t[]){0x80, 0x08, 0, 0}, 4), 0);
	xc_now += 200 * MS;
	CHECK_EQ_INT(host_read_reg(chip, 0x0002), 2);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK_EQ_INT(t.pll_locked, 0);
	CHECK_EQ_INT(host_write(chip, (uint8_t[]){0x00, 0x00}, 2), 0);
	CHECK_EQ_INT(host_tune(chip, 474000000, 2750000), 0);
	settle_and_check_lock(chip, 1);
	sim_xc3028_ops.destroy(chip);
}

struct std_case {
	uint32_t base, type;
	uint64_t std;
	uint32_t freq, offset, bandwidth;
	int lock;
	const char *firmware;
};

static const struct std_case std_cases[] = {
    {T_BASE | T_F8MHZ, T_DTV7, 0, 177500000, 2750000, 7000000, 1,
     "BASE F8MHZ,DTV7"},
    {T_BASE | T_F8MHZ, T_DTV78, 0, 177500000, 2750000, 7000000, 1, NULL},
    {T_BASE | T_F8MHZ, T_DTV78, 0, 474000000, 2750000, 8000000, 1, NULL},
    {T_BASE | T_F8MHZ, T_DTV7, 0, 474000000, 2750000, 7000000, 2, NULL},
    {T_BASE, T_DTV6, 0, 533000000, 1750000, 6000000, 1, "BASE,DTV6"},
    {T_BASE, T_DTV6 | T_QAM, 0, 533000000, 1750000, 6000000, 1, NULL},
    {T_BASE, T_ATSC | T_D2633, 0, 533000000, 1750000, 6000000, 1,
     "BASE,D2633 ATSC"},
    {T_BASE, T_ATSC | T_D2633, 0, 474000000, 1750000, 6000000, 2, NULL},
    {T_BASE, T_FM, 0, 88800000, 0, 200000, 1, "BASE,FM"},
    {T_BASE, T_FM, 0, 474000000, 0, 200000, 2, NULL},
    {T_BASE, 0, STD_PAL_I, 583250000, 0, 8000000, 1, "BASE,PAL_I"},
    {T_BASE, 0, STD_PAL_BG, 189250000, 0, 7000000, 1, "BASE,PAL_BG"},
    {T_BASE, 0, STD_PAL_BG, 474000000, 0, 8000000, 2, NULL},
};

static void run_std_case(struct sim_chip *chip, const struct std_case *c,
			 size_t max_len)
{
	struct sim_tuned t;
	int analog = c->std != 0;

	CHECK_EQ_INT(host_load(chip, c->base, c->type, c->std, 0, max_len), 0);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	if (c->firmware && strcmp(t.firmware, c->firmware)) {
		CHECK(!"firmware names");
		fprintf(stderr, "  firmware '%s', wanted '%s'\n", t.firmware,
			c->firmware);
	}
	if (analog)
		CHECK_EQ_INT(host_write(chip, (uint8_t[]){0x00, 0x00}, 2), 0);
	CHECK_EQ_INT(host_tune(chip, c->freq, c->offset), 0);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(t.valid && abs((int)t.frequency - (int)c->freq) <= 7813);
	CHECK_EQ_INT(t.bandwidth, c->bandwidth);
	settle_and_check_lock(chip, c->lock);
	CHECK_EQ_INT(host_read_reg(chip, 0x0010),
		     analog && c->lock == 1 ? 15625 : 0);
	CHECK_EQ_INT(host_read_reg(chip, 0x0020),
		     analog && c->lock == 1 ? 625 : 0);
}

static void test_other_standards(void)
{
	char err[256];
	struct sim_chip *chip = make_chip(1, fw_path, err, sizeof(err));
	struct sim_tuned t;

	CHECK(chip != NULL);
	if (!chip)
		return;
	for (size_t i = 0; i < sizeof(std_cases) / sizeof(std_cases[0]); i++)
		run_std_case(chip, &std_cases[i], i % 2 ? 13 : 64);
	CHECK_EQ_INT(host_load(chip, T_BASE, T_DTV8, 0, 1, 13), 0);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(strcmp(t.firmware, "BASE,INIT1,DTV8") == 0);
	/* A standard replaced without a reset. */
	CHECK_EQ_INT(host_upload(chip, host_find(T_DTV7, 0), 13, -1), 0);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(strcmp(t.firmware, "BASE,INIT1,DTV7") == 0);
	CHECK_EQ_INT(host_tune(chip, 177500000, 2750000), 0);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(t.valid && t.bandwidth == 7000000);
	sim_xc3028_ops.bridge_ctrl(chip, TSTUB_CTRL_TUNER_RESET, 0, xc_now);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(!t.valid && t.firmware[0] == '\0');
	CHECK_EQ_INT(host_read_reg(chip, 0x0008), 0);
	sim_xc3028_ops.destroy(chip);
}

static void test_upload_errors(void)
{
	char err[256];
	struct sim_chip *chip = make_chip(0, fw_path, err, sizeof(err));
	struct sim_tuned t;

	CHECK(chip != NULL);
	if (!chip)
		return;
	sim_xc3028_ops.bridge_ctrl(chip, TSTUB_CTRL_TUNER_RESET, 0, xc_now);
	CHECK_EQ_INT(host_upload(chip, host_find(T_BASE, 0), 13, 3),
		     -EREMOTEIO);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(t.firmware[0] == '\0');
	/* A standard without BASE does not run. */
	sim_xc3028_ops.bridge_ctrl(chip, TSTUB_CTRL_TUNER_RESET, 0, xc_now);
	CHECK_EQ_INT(host_upload(chip, host_find(T_DTV8, 0), 64, -1), 0);
	CHECK_EQ_INT(host_read_reg(chip, 0x0008), 0);
	CHECK_EQ_INT(host_write(chip, (uint8_t[]){0x80, 0x02, 0, 0}, 4),
		     -EREMOTEIO);
	CHECK_EQ_INT(host_upload(chip, host_find(T_BASE, 0), 64, -1), 0);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(strcmp(t.firmware, "BASE") == 0);
	CHECK_EQ_INT(host_write(chip, (uint8_t[]){0x80, 0x02, 0, 0}, 4),
		     -EREMOTEIO);
	CHECK_EQ_INT(host_upload(chip, host_find(T_DTV8, 0), 64, -1), 0);
	CHECK_EQ_INT(host_write(chip, (uint8_t[]){0x12, 0x34, 0x56, 0x78}, 4),
		     -EREMOTEIO);
	CHECK_EQ_INT(host_write(chip, (uint8_t[]){1, 2, 3, 4, 5, 6, 7}, 7),
		     -EREMOTEIO);
	CHECK_EQ_INT(host_tune(chip, 474000000, 2750000), 0);
	CHECK_EQ_INT(host_read_reg(chip, 0x0002), 1); /* settle scale 0 */
	sim_xc3028_ops.destroy(chip);
}

static void test_faults(void)
{
	char err[256];
	struct sim_chip *chip = make_chip(1, fw_path, err, sizeof(err));
	struct sim_tuned t;
	uint8_t buf[2] = {0xFF, 0xFF};

	CHECK(chip != NULL);
	if (!chip)
		return;
	CHECK_EQ_INT(host_load(chip, T_BASE | T_F8MHZ, T_DTV8, 0, 0, 64), 0);
	CHECK_EQ_INT(host_tune(chip, 474000000, 2750000), 0);
	sim_xc3028_ops.set_faults(chip, SIM_CHIP_FAULT_NEVER_LOCK);
	xc_now += 500 * MS;
	CHECK_EQ_INT(host_read_reg(chip, 0x0002), 2);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(t.valid && !t.pll_locked);
	sim_xc3028_ops.set_faults(chip, 0);
	CHECK_EQ_INT(host_read_reg(chip, 0x0002), 1);

	sim_xc3028_ops.set_faults(chip, SIM_CHIP_FAULT_NO_FIRMWARE);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(!t.valid && t.firmware[0] == '\0');
	CHECK_EQ_INT(sim_xc3028_ops.read(chip, buf, 2, xc_now), 0);
	CHECK(buf[0] == 0 && buf[1] == 0);
	CHECK_EQ_INT(host_load(chip, T_BASE | T_F8MHZ, T_DTV8, 0, 0, 64), 0);
	CHECK_EQ_INT(host_read_reg(chip, 0x0008), 0);
	CHECK_EQ_INT(host_write(chip, (uint8_t[]){0x80, 0x02, 0, 0}, 4), 0);
	sim_xc3028_ops.tuned(chip, xc_now, &t);
	CHECK(!t.valid && t.firmware[0] == '\0');
	sim_xc3028_ops.set_faults(chip, 0);
	CHECK_EQ_INT(host_load(chip, T_BASE | T_F8MHZ, T_DTV8, 0, 0, 64), 0);
	CHECK_EQ_INT(host_read_reg(chip, 0x0008), 3028);
	sim_xc3028_ops.destroy(chip);
}

static void test_fuzz(void)
{
	char err[256];
	struct sim_chip *chip = make_chip(1, fw_path, err, sizeof(err));
	static uint8_t buf[1024];
	uint32_t x = 0x3028;
	struct sim_tuned t;

	CHECK(chip != NULL);
	if (!chip)
		return;
	for (int i = 0; i < 30000; i++) {
		size_t len;
		int ret;

		if (i % 5000 == 0) /* fuzz the running firmware too */
			CHECK_EQ_INT(
			    host_load(chip, T_BASE | T_F8MHZ, T_DTV8, 0, 0, 64),
			    0);
		x = x * 1103515245u + 12345u;
		len = (x >> 8) % (i % 16 ? 7 : 1025);
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)rand();
		if (len && x & 0x40000)
			buf[0] = (uint8_t)(0x80 | (buf[0] & 1));
		xc_now += MS;
		if (x & 0x10000)
			ret = sim_xc3028_ops.write(chip, buf, len, xc_now);
		else
			ret = sim_xc3028_ops.read(chip, buf, len, xc_now);
		CHECK(ret == 0 || ret == -EREMOTEIO);
		if (i % 211 == 0)
			sim_xc3028_ops.bridge_ctrl(chip, x % 5, x, xc_now);
		if (i % 1009 == 0)
			sim_xc3028_ops.set_faults(chip, x & 3);
		sim_xc3028_ops.tuned(chip, xc_now, &t);
		CHECK(memchr(t.firmware, 0, sizeof(t.firmware)) != NULL);
	}
	sim_xc3028_ops.destroy(chip);
}

static int setup_files(const char *mkfw_output)
{
	char err[256];
	int fd = mkstemp(fw_path);

	if (fd < 0)
		return -1;
	close(fd);
	if (xc3028_fwgen_write(fw_path, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (xc3028_fwgen_build(&fw_data, &fw_len))
		return -1;
	if (mkfw_output) {
		FILE *f = fopen(mkfw_output, "rb");
		uint8_t *other = malloc(fw_len + 1);
		size_t n = f && other ? fread(other, 1, fw_len + 1, f) : 0;

		CHECK(n == fw_len && memcmp(other, fw_data, fw_len) == 0);
		free(other);
		if (f)
			fclose(f);
	}
	env = sim_rf_env_parse("DVBT 474000000 8000000 -55 30 t474\n"
			       "DVBT2 482000000 8000000 -55 20.8 t2-weak\n"
			       "DVBT 177500000 7000000 -60 26 vhf7\n"
			       "ATSC 533000000 6000000 -60 22 atsc\n"
			       "RADIO 88800000 200000 -50 35 fm\n"
			       "ANALOG_TV 583250000 8000000 -60 40 pal-i\n"
			       "ANALOG_TV 189250000 7000000 -60 40 pal-b\n",
			       err, sizeof(err));
	return env && host_walk_file() == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (setup_files(argc > 1 ? argv[1] : NULL)) {
		CHECK(!"test setup (firmware file, environment)");
		return check_done("test_chip_xc3028");
	}
	test_file_layout();
	test_create_errors();
	test_before_firmware();
	test_reset_inside_base();
	test_dtv8(64);
	test_dtv8(13);
	test_power_down();
	test_other_standards();
	test_upload_errors();
	test_faults();
	test_fuzz();
	unlink(fw_path);
	free(fw_data);
	sim_rf_env_free(env);
	return check_done("test_chip_xc3028");
}

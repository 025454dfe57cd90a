// SPDX-License-Identifier: MIT
/*
 * xc3028_testcases.c - the XC3028 plugin under other board words and
 * firmware versions, and when things fail: chip readback, NAKs, bridge
 * callbacks, damaged firmware files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xc3028_test.h"

/* Board words: the image variant and SCODE the kernel's rules pick, the
 * chunk length after the kernel's clamping, the IF reported. */
static const struct {
	uint32_t config;
	unsigned int max_len;
	int dtv8, scode;
	uint32_t if_hz;
} words[] = {
    {5380u << 8, 64, IMG_DTV8_D2620, IMG_SCODE_5580, 5380000},
    {1u << 24 | 5380u << 8, 64, IMG_DTV8_D2633, IMG_SCODE_5580, 5380000},
    {2u << 24 | 4560u << 8, 64, IMG_DTV8_D2620, IMG_SCODE_4760, 4560000},
    /* No demod IF: the first SCODE of standard 0, D2620. */
    {0xFFFFu << 8, 64, IMG_DTV8_D2620, IMG_SCODE_3280, 0},
    /* 6200 kHz: a table of the wrong size; 7200: none.  Nothing sent. */
    {6000u << 8, 64, IMG_DTV8_D2620, -1, 6000000},
    {7000u << 8, 64, IMG_DTV8_D2620, -1, 7000000},
    {13, 13, IMG_DTV8_D2633, IMG_SCODE_4760, 4560000},
    {5, 13, IMG_DTV8_D2633, IMG_SCODE_4760, 4560000},
    {9, 9, IMG_DTV8_D2633, IMG_SCODE_4760, 4560000},
    {100, 80, IMG_DTV8_D2633, IMG_SCODE_4760, 4560000},
    {255, 80, IMG_DTV8_D2633, IMG_SCODE_4760, 4560000},
};

void test_board_words(void)
{
	char what[64];
	struct tstub_freq f;
	struct rig r;

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		snprintf(what, sizeof(what), "board word 0x%08x",
			 words[i].config);
		rig_probe(&r, words[i].config, fw_path);
		r.max_len = words[i].max_len;
		run_step(&r,
			 &(struct step){TSTUB_DELSYS_DVBT, 530 * MHZ, 8 * MHZ,
					0, IMG_BASE_F8, words[i].dtv8,
					words[i].scode, D78, 8 * MHZ},
			 what);
		CHECK_EQ_INT(plugin->ops->get_frequency(r.priv, &f), 0);
		CHECK_EQ_INT(f.if_frequency, words[i].if_hz);
		rig_done(&r);
	}
}

/* A whole first DVB-T 8 MHz tune for another firmware version. */
static void check_version(uint16_t file_version, uint16_t chip_version,
			  int scode, uint8_t flag)
{
	struct mock_events want = {0};
	struct tstub_params p =
	    mock_params(TSTUB_DELSYS_DVBT, 530 * MHZ, 8 * MHZ);
	struct testfw other;
	char path[64], what[64];
	struct rig r;

	snprintf(what, sizeof(what), "firmware 0x%04x", file_version);
	testfw_build(&other, file_version, 0);
	CHECK_EQ_INT(testfw_write(other.file, other.file_len, path), 0);
	rig_probe(&r, 0, path);
	r.chip.version = chip_version;
	CHECK_EQ_INT(plugin->ops->set_params(r.priv, &p), 0);
	expect_base(&want, &other, IMG_BASE_F8, 64);
	expect_image(&want, &other, IMG_DTV8_D2633, 64);
	expect_scode(&want, &other, scode, flag);
	expect_readback(&want, chip_version, 3028);
	expect_tune(&want, divider(530 * MHZ, D78), 0, flag);
	check_events(&r, &want, what);
	CHECK_EQ_INT(plugin->ops->sleep(r.priv), 0);
	mock_ev_write(&want, CHIP_ADDR, (uint8_t[]){flag, 0x08, 0x00, 0x00}, 4);
	check_events(&r, &want, "sleep");
	rig_done(&r);
	unlink(path);
	testfw_free(&other);
	mock_events_free(&want);
}

/* From 3.2 the SCODE is the demod's IF itself; before 2.2 commands and
 * the SCODE header go without the 0x80 flag. */
void test_firmware_versions(void)
{
	check_version(0x0302, 0x1232, IMG_SCODE_4560, 0x80);
	check_version(0x0201, 0x1221, IMG_SCODE_4760, 0x00);
}

/* An SCODE table in the old layout: found by type and standard (no demod
 * IF), the entry after its le16 length; a wrong length: nothing sent. */
void test_old_scode(void)
{
	struct tstub_params p =
	    mock_params(TSTUB_DELSYS_DVBT, 530 * MHZ, 8 * MHZ);
	struct mock_events want = {0};
	struct testfw other;
	char path[64];
	struct rig r;

	testfw_build(&other, 0x0207, TESTFW_OLD_SCODE);
	for (int bad = 0; bad < 2; bad++) {
		if (bad)
			other.file[other.image_offset[IMG_SCODE_3280] + 16] =
			    13;
		CHECK_EQ_INT(testfw_write(other.file, other.file_len, path), 0);
		rig_probe(&r, 0xFFFFu << 8, path);
		CHECK_EQ_INT(plugin->ops->set_params(r.priv, &p), 0);
		expect_base(&want, &other, IMG_BASE_F8, 64);
		expect_image(&want, &other, IMG_DTV8_D2620, 64);
		if (!bad)
			expect_scode(&want, &other, IMG_SCODE_3280, 0x80);
		expect_readback(&want, 0x1227, 3028);
		expect_tune(&want, divider(530 * MHZ, D78), 0, 0x80);
		check_events(&r, &want, bad ? "old SCODE, bad" : "old SCODE");
		rig_done(&r);
		unlink(path);
	}
	testfw_free(&other);
	mock_events_free(&want);
}

/* A file with INIT1: BASE INIT1 after BASE, found without F8MHZ. */
void test_init1(void)
{
	struct mock_events want = {0};
	struct tstub_params p =
	    mock_params(TSTUB_DELSYS_DVBT, 530 * MHZ, 8 * MHZ);
	struct testfw other;
	char path[64];
	struct rig r;

	testfw_build(&other, 0x0207, TESTFW_INIT1);
	CHECK_EQ_INT(testfw_write(other.file, other.file_len, path), 0);
	rig_probe(&r, 0, path);
	CHECK_EQ_INT(plugin->ops->set_params(r.priv, &p), 0);
	expect_base(&want, &other, IMG_BASE_F8, 64);
	expect_image(&want, &other, IMG_INIT1, 64);
	expect_image(&want, &other, IMG_DTV8_D2633, 64);
	expect_scode(&want, &other, IMG_SCODE_4760, 0x80);
	expect_readback(&want, 0x1227, 3028);
	expect_tune(&want, divider(530 * MHZ, D78), 0, 0x80);
	check_events(&r, &want, "INIT1");
	rig_done(&r);
	unlink(path);
	testfw_free(&other);
	mock_events_free(&want);
}

static const struct step first = {
    TSTUB_DELSYS_DVBT, 474 * MHZ,      8 * MHZ, 0,      IMG_BASE_F8,
    IMG_DTV8_D2633,    IMG_SCODE_4760, D78,     8 * MHZ};

/* A failed tune leaves nothing known: the next one starts at the reset. */
static void check_fails_then_reloads(struct rig *r, int want_ret,
				     const char *what)
{
	struct tstub_params p = mock_params(first.delsys, first.freq, first.bw);

	CHECK_EQ_INT(plugin->ops->set_params(r->priv, &p), want_ret);
	mock_events_clear(&r->mh.events);
	r->chip.version = 0x1227;
	r->chip.product_id = 3028;
	memset(r->chip.ctrl_ret, 0, sizeof(r->chip.ctrl_ret));
	r->mh.nak_at = 0;
	run_step(r, &first, what);
}

static void test_readback_failures(void)
{
	struct rig r;

	rig_probe(&r, 0, fw_path);
	r.chip.version = 0x1228; /* firmware 2.8, the file holds 2.7 */
	check_fails_then_reloads(&r, -ENODEV, "after a wrong version");
	r.chip.product_id = 2028; /* the model changed under us */
	check_fails_then_reloads(&r, -ENODEV, "after a wrong model");
	rig_done(&r);
	rig_probe(&r, 0, fw_path);
	r.chip.product_id = 1234;
	check_fails_then_reloads(&r, -ENODEV, "after an unknown model");
	rig_done(&r);
	/* An XC2028 runs the same firmware. */
	rig_probe(&r, 0, fw_path);
	r.chip.product_id = 2028;
	CHECK_EQ_INT(plugin->ops->set_params(
			 r.priv, &(struct tstub_params){.delsys = first.delsys,
							.frequency = first.freq,
							.bandwidth = first.bw}),
		     0);
	rig_done(&r);
}

static void test_bridge_failures(void)
{
	struct rig r;

	/* No flush on this bridge (-EINVAL, -EOPNOTSUPP): skipped. */
	rig_probe(&r, 0, fw_path);
	r.chip.ctrl_ret[TSTUB_CTRL_I2C_FLUSH] = -EINVAL;
	run_step(&r, &first, "flush -EINVAL");
	rig_done(&r);
	rig_probe(&r, 0, fw_path);
	r.chip.ctrl_ret[TSTUB_CTRL_I2C_FLUSH] = -EOPNOTSUPP;
	run_step(&r, &first, "flush -EOPNOTSUPP");
	rig_done(&r);
	/* Any other error stops the upload. */
	rig_probe(&r, 0, fw_path);
	r.chip.ctrl_ret[TSTUB_CTRL_I2C_FLUSH] = -EIO;
	check_fails_then_reloads(&r, -EIO, "after a flush error");
	rig_done(&r);
	rig_probe(&r, 0, fw_path);
	r.chip.ctrl_ret[TSTUB_CTRL_TUNER_RESET] = -EIO;
	check_fails_then_reloads(&r, -EIO, "after a reset error");
	rig_done(&r);
	/* The tune's clock reset only matters to some bridges: its error
	 * does not count (the 6 MHz BASE has no clock reset record). */
	rig_probe(&r, 0, fw_path);
	r.chip.ctrl_ret[TSTUB_CTRL_CLK_RESET] = -EIO;
	run_step(&r,
		 &(struct step){TSTUB_DELSYS_DVBT, 473 * MHZ, 6 * MHZ, 0,
				IMG_BASE, IMG_QAM6_D2633, IMG_SCODE_4760, D6,
				6 * MHZ},
		 "clock reset error");
	rig_done(&r);
}

void test_failures(void)
{
	unsigned int total;
	struct rig r;

	test_readback_failures();
	test_bridge_failures();
	/*
	 * A NAK in the first tune.  Its last transfers: SCODE (3), VERSION,
	 * PRODUCT_ID, RF_FREQ, divider.  Before the divider part: an error
	 * and a full reload next time.  In the SCODE: not counted, as in the
	 * kernel.  In RF_FREQ or the divider: an error, the firmware stays.
	 */
	rig_probe(&r, 0, fw_path);
	run_step(&r, &first, "count");
	total = r.mh.xfers;
	rig_done(&r);
	CHECK(total > 20);
	for (unsigned int at = 1; at <= total; at++) {
		int in_scode = at >= total - 6 && at <= total - 4;
		int in_tune = at >= total - 1;
		struct tstub_params p =
		    mock_params(first.delsys, first.freq, first.bw);

		if (at > 3 && at < total - 12 && at % 5)
			continue; /* a sample of the BASE chunks */
		rig_probe(&r, 0, fw_path);
		r.mh.nak_at = at;
		if (!in_scode && !in_tune) {
			check_fails_then_reloads(&r, -EREMOTEIO, "after a NAK");
			rig_done(&r);
			continue;
		}
		CHECK_EQ_INT(plugin->ops->set_params(r.priv, &p),
			     in_scode ? 0 : -EREMOTEIO);
		mock_events_clear(&r.mh.events);
		run_step(&r,
			 &(struct step){first.delsys, first.freq, first.bw, 0,
					-1, -1, -1, D78, 8 * MHZ},
			 "after a late NAK");
		rig_done(&r);
	}
	/* The analog soft reset's NAK does not count. */
	rig_probe(&r, 0, fw_path);
	run_step(&r,
		 &(struct step){TSTUB_DELSYS_ANALOG_TV, 503250000, 0, STD_PAL_I,
				IMG_BASE_F8, IMG_PAL_I, IMG_SCODE_6240, 0,
				8 * MHZ},
		 "PAL-I");
	r.mh.nak_at = r.mh.xfers + 3; /* after VERSION and PRODUCT_ID */
	CHECK_EQ_INT(
	    plugin->ops->set_params(
		r.priv, &(struct tstub_params){.delsys = TSTUB_DELSYS_ANALOG_TV,
					       .frequency = 511250000,
					       .std = STD_PAL_I}),
	    0);
	rig_done(&r);
}

void test_probe_failures(void)
{
	struct tunerd_host host;
	struct rig r;

	rig_init(&r, 0, NULL);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), -ENOENT);
	CHECK_EQ_INT(r.mh.xfers, 0);
	CHECK(r.mh.log_errors >= 1);
	rig_done(&r);
	rig_init(&r, 0, fw_path);
	r.cfg.size = 8;
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), -EINVAL);
	r.cfg.size = sizeof(r.cfg);
	host = r.mh.host;
	host.bridge_ctrl = NULL;
	CHECK_EQ_INT(plugin->ops->probe(&host, &r.cfg, &r.priv), -EINVAL);
	CHECK(r.priv == NULL);
	rig_done(&r);
}

static void put_le(uint8_t *p, uint32_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A damaged file: -EINVAL with a log line, nothing sent to the chip. */
static void check_malformed(const uint8_t *buf, size_t len, const char *what)
{
	char path[64];
	struct rig r;

	CHECK_EQ_INT(testfw_write(buf, len, path), 0);
	rig_init(&r, 0, path);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), -EINVAL);
	if (r.mh.log_errors < 1 || r.mh.events.n)
		fprintf(stderr, "malformed %s: %u errors logged, %zu events\n",
			what, r.mh.log_errors, r.mh.events.n);
	CHECK(r.mh.log_errors >= 1);
	CHECK_EQ_INT(r.mh.events.n, 0);
	rig_done(&r);
	unlink(path);
}

/* What the kernel's parser refuses, and records it would fail on. */
void test_malformed(void)
{
	uint8_t *copy = malloc(fw.file_len + 7);
	size_t dtv7 = fw.image_offset[IMG_DTV7_D2633];
	size_t base = fw.image_offset[IMG_BASE];

	check_malformed(fw.file, fw.image_offset[IMG_DTV8_D2633] + 20,
			"truncated image");
	check_malformed(fw.file, fw.image_offset[IMG_SCODE_4560] + 13,
			"truncated header");
	check_malformed(fw.file, 10, "shorter than a header");
	check_malformed(fw.file, 0, "empty");
	memcpy(copy, fw.file, fw.file_len);
	memset(copy + fw.file_len, 0xAB, 7);
	check_malformed(copy, fw.file_len + 7, "bytes after the last image");

	memcpy(copy, fw.file, fw.file_len);
	put_le(copy + 34, fw.count + 5, 2);
	check_malformed(copy, fw.file_len, "count too large");
	put_le(copy + 34, fw.count - 1, 2);
	check_malformed(copy, fw.file_len, "count too small");
	put_le(copy + 34, 0, 2);
	check_malformed(copy, fw.file_len, "no images");

	memcpy(copy, fw.file, fw.file_len);
	put_le(copy + fw.image_offset[IMG_FM] + 12, 0xFFFFFFF0u, 4);
	check_malformed(copy, fw.file_len, "image size");
	/* A last image of size 0: the kernel calls it corrupt. */
	memcpy(copy, fw.file, fw.file_len);
	put_le(copy + 34, IMG_FM + 1, 2);
	put_le(copy + fw.image_offset[IMG_FM] + 12, 0, 4);
	check_malformed(copy, fw.image_offset[IMG_FM] + 16, "empty image");

	/* DTV7's first record claims more bytes than the image holds. */
	memcpy(copy, fw.file, fw.file_len);
	put_le(copy + dtv7 + 16, 0x7FF0, 2);
	check_malformed(copy, fw.file_len, "record length");
	/* BASE's head reset record becomes the invalid code 0xFF34. */
	memcpy(copy, fw.file, fw.file_len);
	put_le(copy + base + 16, 0xFF34, 2);
	check_malformed(copy, fw.file_len, "invalid reset code");
	free(copy);
}

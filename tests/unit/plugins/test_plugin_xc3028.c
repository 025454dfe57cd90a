// SPDX-License-Identifier: MIT
/*
 * test_plugin_xc3028.c - the XC3028 plugin (argv[1]) on a mock host with a
 * synthetic firmware file.  Every attach, tune, standard change, sleep and
 * status read is compared event by event (I2C segments, bridge callbacks
 * with their argument, sleeps) with the sequence Linux's tuner-xc2028
 * produces, as plugins/README.md writes it down.  The damaged-file and
 * refusal cases are in xc3028_testcases.c.
 */
#include "xc3028_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct mock_plugin *plugin;
struct testfw fw;
char fw_path[64];

static int chip_write(void *ctx, uint16_t addr, const uint8_t *buf,
		      uint16_t len)
{
	struct chip *c = ctx;

	if (addr != CHIP_ADDR)
		return -EREMOTEIO;
	if (len == 2)
		c->ptr = (uint16_t)(buf[0] << 8 | buf[1]);
	return 0;
}

static uint16_t chip_lock(struct chip *c)
{
	uint16_t v = c->nlocks ? c->locks[c->lock_reads % c->nlocks] : c->lock;

	c->lock_reads++;
	return v;
}

static int chip_read(void *ctx, uint16_t addr, uint8_t *buf, uint16_t len)
{
	struct chip *c = ctx;
	uint16_t v;

	if (addr != CHIP_ADDR || len != 2)
		return -EREMOTEIO;
	v = c->ptr == 0x0008   ? c->product_id
	    : c->ptr == 0x0004 ? c->version
	    : c->ptr == 0x0002 ? chip_lock(c)
	    : c->ptr == 0x0001 ? c->ferr
	    : c->ptr == 0x0040 ? c->snr
			       : 0;
	buf[0] = (uint8_t)(v >> 8);
	buf[1] = (uint8_t)v;
	return 0;
}

static int chip_ctrl(void *ctx, uint32_t cmd, uint32_t arg)
{
	struct chip *c = ctx;

	(void)arg;
	return cmd < 4 ? c->ctrl_ret[cmd] : -EINVAL;
}

void rig_init(struct rig *r, uint32_t config, const char *path)
{
	struct mock_chip mc = {.ctx = &r->chip,
			       .write = chip_write,
			       .read = chip_read,
			       .ctrl = chip_ctrl};

	memset(r, 0, sizeof(*r));
	r->chip.product_id = 3028;
	r->chip.version = 0x1227;
	r->chip.lock = 1;
	mock_host_init(&r->mh, &mc);
	r->mh.fw_name = FW_NAME;
	r->mh.fw_path = path;
	r->cfg.size = sizeof(r->cfg);
	r->cfg.chip_id = TSTUB_CHIP_XC3028;
	r->cfg.config = config;
}

void rig_probe(struct rig *r, uint32_t config, const char *path)
{
	rig_init(r, config, path);
	CHECK_EQ_INT(plugin->ops->probe(&r->mh.host, &r->cfg, &r->priv), 0);
	CHECK_EQ_INT(r->mh.events.n, 0);
}

void rig_done(struct rig *r)
{
	if (r->priv)
		plugin->ops->release(r->priv);
	r->priv = NULL;
	CHECK_EQ_INT(r->mh.fw_puts, r->mh.fw_gets);
	CHECK_EQ_INT(r->mh.violations, 0);
	mock_host_free(&r->mh);
}

void check_events(struct rig *r, struct mock_events *want, const char *what)
{
	char why[400];
	long diff = mock_events_diff(&r->mh.events, 0, want, why, sizeof(why));

	if (diff >= 0)
		fprintf(stderr, "%s: %s\n", what, why);
	CHECK_EQ_INT(diff, -1);
	if (r->mh.events.n != want->n)
		fprintf(stderr, "%s: %zu events, want %zu\n", what,
			r->mh.events.n, want->n);
	CHECK_EQ_INT(r->mh.events.n, want->n);
	mock_events_clear(want);
	mock_events_clear(&r->mh.events);
}

void expect_reg_read(struct mock_events *want, uint16_t reg, uint16_t val)
{
	mock_ev_write(want, CHIP_ADDR,
		      (uint8_t[]){(uint8_t)(reg >> 8), (uint8_t)reg}, 2);
	mock_ev_read(want, CHIP_ADDR,
		     (uint8_t[]){(uint8_t)(val >> 8), (uint8_t)val}, 2);
}

uint32_t divider(uint32_t freq, uint32_t offset)
{
	return (freq - offset + 7812) / 15625;
}

/* One tune and the exact traffic it must cause. */
void run_step(struct rig *r, const struct step *s, const char *what)
{
	struct mock_events want = {0};
	struct tstub_params p = mock_params(s->delsys, s->freq, s->bw);
	uint32_t div = divider(s->freq, s->offset);
	struct tstub_freq f;

	p.std = s->std;
	CHECK_EQ_INT(plugin->ops->set_params(r->priv, &p), 0);
	if (s->base >= 0)
		expect_base(&want, &fw, s->base, r->max_len ? r->max_len : 64);
	if (s->std_img >= 0)
		expect_image(&want, &fw, s->std_img,
			     r->max_len ? r->max_len : 64);
	if (s->scode >= 0)
		expect_scode(&want, &fw, s->scode, 0x80);
	expect_readback(&want, 0x1227, 3028);
	expect_tune(&want, div, s->delsys == TSTUB_DELSYS_ANALOG_TV, 0x80);
	check_events(r, &want, what);
	CHECK_EQ_INT(plugin->ops->get_frequency(r->priv, &f), 0);
	CHECK_EQ_INT(f.frequency, div * 15625 + s->offset);
	CHECK_EQ_INT(f.bandwidth, s->status_bw);
	mock_events_free(&want);
}

static void test_abi(void)
{
	const struct tstub_chip_info *info = &plugin->desc->info;

	CHECK(!strcmp(info->name, "XC3028"));
	CHECK(!strcmp(info->vendor, "Xceive"));
	CHECK(!strcmp(info->plugin, "xc3028"));
	CHECK_EQ_INT(info->chip_id, TSTUB_CHIP_XC3028);
	CHECK_EQ_INT(info->freq_min, 42 * MHZ);
	CHECK_EQ_INT(info->freq_max, 864 * MHZ);
	CHECK_EQ_INT(info->freq_step, 15625);
	/* DVB-T2 like DVB-T, no DVB-C: what the kernel driver takes. */
	CHECK_EQ_INT(info->delsys_mask, (1u << TSTUB_DELSYS_DVBT) |
					    (1u << TSTUB_DELSYS_DVBT2) |
					    (1u << TSTUB_DELSYS_ATSC) |
					    (1u << TSTUB_DELSYS_ANALOG_TV) |
					    (1u << TSTUB_DELSYS_RADIO));
	CHECK(info->caps & TSTUB_CHIPCAP_FIRMWARE);
	CHECK(info->caps & TSTUB_CHIPCAP_PLL_LOCK);
	CHECK(mock_plugin_sym(plugin, "xc3028_fw_parse") == NULL);
	CHECK(mock_plugin_sym(plugin, "xc3028_write") == NULL);
}

/* Attach and init touch nothing; a sleep before any tune is POWER_DOWN
 * once; the first tune then loads everything. */
static void test_attach_init_sleep(void)
{
	struct mock_events want = {0};
	struct rig r;

	rig_probe(&r, 0, fw_path);
	CHECK_EQ_INT(r.mh.fw_gets, 1);
	CHECK_EQ_INT(plugin->ops->init(r.priv), 0);
	CHECK_EQ_INT(r.mh.events.n, 0);
	CHECK_EQ_INT(plugin->ops->sleep(r.priv), 0);
	mock_ev_write(&want, CHIP_ADDR, (uint8_t[]){0x80, 0x08, 0x00, 0x00}, 4);
	check_events(&r, &want, "sleep before a tune");
	CHECK_EQ_INT(plugin->ops->sleep(r.priv), 0);
	CHECK_EQ_INT(plugin->ops->init(r.priv), 0);
	check_events(&r, &want, "sleep again, init");
	run_step(&r,
		 &(struct step){TSTUB_DELSYS_DVBT, 474 * MHZ, 8 * MHZ, 0,
				IMG_BASE_F8, IMG_DTV8_D2633, IMG_SCODE_4760,
				D78, 8 * MHZ},
		 "first tune");
	/* Asleep, the chip needs BASE again even for the same channel. */
	CHECK_EQ_INT(plugin->ops->sleep(r.priv), 0);
	mock_ev_write(&want, CHIP_ADDR, (uint8_t[]){0x80, 0x08, 0x00, 0x00}, 4);
	check_events(&r, &want, "sleep after a tune");
	run_step(&r,
		 &(struct step){TSTUB_DELSYS_DVBT, 474 * MHZ, 8 * MHZ, 0,
				IMG_BASE_F8, IMG_DTV8_D2633, IMG_SCODE_4760,
				D78, 8 * MHZ},
		 "tune after sleep");
	rig_done(&r);
	mock_events_free(&want);
}

/*
 * The board's default word (ZARLINK456: D2633, SCODE 4760) through every
 * kind of tune.  base/std/scode -1: not sent.  The history: DTV78 once a
 * 7 MHz VHF and an 8 MHz UHF channel were the last of their kinds.
 */
static const struct step walk[] = {
    {TSTUB_DELSYS_DVBT, 474 * MHZ, 8 * MHZ, 0, IMG_BASE_F8, IMG_DTV8_D2633,
     IMG_SCODE_4760, D78, 8 * MHZ},
    {TSTUB_DELSYS_DVBT, 474249700, 8 * MHZ, 0, -1, -1, -1, D78, 8 * MHZ},
    {TSTUB_DELSYS_DVBT, 177500000, 7 * MHZ, 0, -1, IMG_DTV78_D2633,
     IMG_SCODE_4760, D78, 7 * MHZ},
    {TSTUB_DELSYS_DVBT, 184500000, 7 * MHZ, 0, -1, -1, -1, D78, 7 * MHZ},
    {TSTUB_DELSYS_DVBT, 506 * MHZ, 7 * MHZ, 0, -1, IMG_DTV7_D2633,
     IMG_SCODE_4760, D78, 7 * MHZ},
    {TSTUB_DELSYS_DVBT, 200 * MHZ, 8 * MHZ, 0, -1, IMG_DTV8_D2633,
     IMG_SCODE_4760, D78, 8 * MHZ},
    {TSTUB_DELSYS_DVBT, 858 * MHZ, 8 * MHZ, 0, -1, -1, -1, D78, 8 * MHZ},
    /* Standard changes under the same F8MHZ BASE: the standard only. */
    {TSTUB_DELSYS_ANALOG_TV, 175250000, 0, STD_PAL_BG, -1, IMG_PAL_BG_A2_A,
     IMG_SCODE_5320, 0, 7 * MHZ},
    {TSTUB_DELSYS_ANALOG_TV, 503250000, 0, STD_PAL_I, -1, IMG_PAL_I,
     IMG_SCODE_6240, 0, 8 * MHZ},
    {TSTUB_DELSYS_ANALOG_TV, 511250000, 0, STD_PAL_I, -1, -1, -1, 0, 8 * MHZ},
    {TSTUB_DELSYS_DVBT, 474 * MHZ, 8 * MHZ, 0, -1, IMG_DTV8_D2633,
     IMG_SCODE_4760, D78, 8 * MHZ},
    /* 6 MHz: the plain BASE, QAM, the history cleared. */
    {TSTUB_DELSYS_DVBT, 473 * MHZ, 6 * MHZ, 0, IMG_BASE, IMG_QAM6_D2633,
     IMG_SCODE_4760, D6, 6 * MHZ},
    {TSTUB_DELSYS_DVBT2, 602 * MHZ, 6 * MHZ, 0, -1, -1, -1, D6, 6 * MHZ},
    {TSTUB_DELSYS_ATSC, 575 * MHZ, 6 * MHZ, 0, -1, IMG_ATSC, IMG_SCODE_4760, D6,
     6 * MHZ},
    /* NTSC: M/N image, not the LCD one; SCODE by most standards shared. */
    {TSTUB_DELSYS_ANALOG_TV, 61250000, 0, STD_NTSC_M, -1, IMG_NTSC,
     IMG_SCODE_4320, 0, 6 * MHZ},
    /* No standard is M/N: another request, the same image again. */
    {TSTUB_DELSYS_ANALOG_TV, 67250000, 0, 0, -1, IMG_NTSC, IMG_SCODE_4320, 0,
     6 * MHZ},
    {TSTUB_DELSYS_RADIO, 98100000, 0, 0, IMG_BASE_FM, IMG_FM, -1, 0, 200000},
    {TSTUB_DELSYS_RADIO, 88 * MHZ, 0, 0, -1, -1, -1, 0, 200000},
    /* History cleared by the 6 MHz tune: VHF 7 MHz is DTV7 again. */
    {TSTUB_DELSYS_DVBT, 177500000, 7 * MHZ, 0, IMG_BASE_F8, IMG_DTV7_D2633,
     IMG_SCODE_4760, D78, 7 * MHZ},
};

static void test_walk(void)
{
	struct tstub_params p;
	char what[64];
	struct rig r;

	rig_probe(&r, 0, fw_path);
	for (size_t i = 0; i < sizeof(walk) / sizeof(walk[0]); i++) {
		snprintf(what, sizeof(what), "walk step %zu (%u Hz)", i,
			 walk[i].freq);
		run_step(&r, &walk[i], what);
	}
	/* The documented divider: 474 MHz DTV8 is 00 00 75 D0. */
	CHECK_EQ_INT(divider(474 * MHZ, D78), 0x75D0);
	/* Refused before the bus: DVB-C, SECAM-L (no image), ATSC 8 MHz (no
	 * ATSC DTV8 image). */
	p = mock_params(TSTUB_DELSYS_DVBC_A, 602 * MHZ, 8 * MHZ);
	CHECK_EQ_INT(plugin->ops->set_params(r.priv, &p), -EINVAL);
	p = mock_params(TSTUB_DELSYS_ANALOG_TV, 503250000, 0);
	p.std = STD_SECAM_L;
	CHECK_EQ_INT(plugin->ops->set_params(r.priv, &p), -EINVAL);
	p = mock_params(TSTUB_DELSYS_ATSC, 575 * MHZ, 8 * MHZ);
	CHECK_EQ_INT(plugin->ops->set_params(r.priv, &p), -EINVAL);
	CHECK_EQ_INT(r.mh.events.n, 0);
	/* Nothing was sent, but the ATSC 8 MHz request counted as an 8 MHz
	 * UHF channel, as in the kernel: 7 MHz VHF is now DTV78. */
	run_step(&r,
		 &(struct step){TSTUB_DELSYS_DVBT, 177500000, 7 * MHZ, 0, -1,
				IMG_DTV78_D2633, IMG_SCODE_4760, D78, 7 * MHZ},
		 "after refusals");
	rig_done(&r);
}

/* DVB-T 8 MHz across the band, sub-kHz frequencies included: one upload,
 * then readback and divider only. */
static void test_sweep(void)
{
	struct rig r;
	char what[64];

	rig_probe(&r, 0, fw_path);
	run_step(&r,
		 &(struct step){TSTUB_DELSYS_DVBT, 474 * MHZ, 8 * MHZ, 0,
				IMG_BASE_F8, IMG_DTV8_D2633, IMG_SCODE_4760,
				D78, 8 * MHZ},
		 "sweep start");
	for (uint32_t f = 482 * MHZ + 7811; f <= 862 * MHZ;
	     f += 8 * MHZ + 333) {
		snprintf(what, sizeof(what), "sweep %u Hz", f);
		run_step(&r,
			 &(struct step){TSTUB_DELSYS_DVBT, f, 8 * MHZ, 0, -1,
					-1, -1, D78, 8 * MHZ},
			 what);
	}
	rig_done(&r);
}

/* get_rf_strength then get_afc: LOCK polled up to 3 times, 6 ms after
 * each 0, then SNR and FREQ_ERROR unless LOCK says "no lock". */
static void test_status(void)
{
	struct mock_events want = {0};
	struct tstub_status st;
	struct rig r;

	/* Before the first tune the kernel reads too; a chip without
	 * firmware answers 2 here: no lock, nothing else read. */
	rig_probe(&r, 0, fw_path);
	r.chip.lock = 2;
	CHECK_EQ_INT(plugin->ops->get_status(r.priv, &st), 0);
	expect_reg_read(&want, 0x0002, 2);
	expect_reg_read(&want, 0x0002, 2);
	check_events(&r, &want, "status before a tune");
	CHECK_EQ_INT(st.pll_locked, 0);
	run_step(&r, &walk[0], "status tune");
	r.chip.lock = 1;
	r.chip.ferr = 0xFFFD; /* -3 steps */
	r.chip.snr = 5;
	CHECK_EQ_INT(plugin->ops->get_status(r.priv, &st), 0);
	expect_reg_read(&want, 0x0002, 1);
	expect_reg_read(&want, 0x0040, 5);
	expect_reg_read(&want, 0x0002, 1);
	expect_reg_read(&want, 0x0001, 0xFFFD);
	check_events(&r, &want, "status, locked");
	CHECK_EQ_INT(st.pll_locked, 1);
	CHECK_EQ_INT(st.fe_status, TSTUB_FE_HAS_SIGNAL | TSTUB_FE_HAS_CARRIER);
	CHECK_EQ_INT(st.afc_hz, -3 * 15625);
	CHECK_EQ_INT(st.cnr_rel, 5 * 65535 / 7);
	CHECK_EQ_INT(st.valid, TSTUB_ST_FE_STATUS | TSTUB_ST_PLL_LOCK |
				   TSTUB_ST_AFC | TSTUB_ST_CNR_REL);
	CHECK_EQ_INT(st.frequency, 474 * MHZ);
	CHECK_EQ_INT(st.bandwidth, 8 * MHZ);

	r.chip.lock = 2;
	CHECK_EQ_INT(plugin->ops->get_status(r.priv, &st), 0);
	expect_reg_read(&want, 0x0002, 2);
	expect_reg_read(&want, 0x0002, 2);
	check_events(&r, &want, "status, no lock");
	CHECK_EQ_INT(st.pll_locked, 0);
	CHECK_EQ_INT(st.fe_status, 0);
	CHECK(!(st.valid & TSTUB_ST_AFC));

	/* Still deciding: three reads, a 6 ms wait after each, then SNR. */
	r.chip.lock = 0;
	CHECK_EQ_INT(plugin->ops->get_status(r.priv, &st), 0);
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < 3; i++) {
			expect_reg_read(&want, 0x0002, 0);
			mock_ev_sleep(&want, 6);
		}
		expect_reg_read(&want, pass ? 0x0001 : 0x0040,
				pass ? 0xFFFD : 5);
	}
	check_events(&r, &want, "status, settling");
	CHECK_EQ_INT(st.pll_locked, 0);

	CHECK_EQ_INT(plugin->ops->sleep(r.priv), 0);
	mock_events_clear(&r.mh.events);
	CHECK_EQ_INT(plugin->ops->get_status(r.priv, &st), 0);
	CHECK_EQ_INT(r.mh.events.n, 0); /* asleep: no I2C */
	rig_done(&r);
	mock_events_free(&want);
}

int main(int argc, char **argv)
{
	struct mock_plugin p;

	if (argc != 2) {
		fprintf(stderr, "usage: %s xc3028.so\n", argv[0]);
		return 2;
	}
	if (mock_plugin_open(argv[1], &p))
		return 1;
	plugin = &p;
	testfw_build(&fw, 0x0207, 0);
	if (testfw_write(fw.file, fw.file_len, fw_path)) {
		fprintf(stderr, "cannot write the test firmware\n");
		return 1;
	}
	test_abi();
	test_attach_init_sleep();
	test_walk();
	test_sweep();
	test_status();
	test_board_words();
	test_firmware_versions();
	test_init1();
	test_old_scode();
	test_failures();
	test_probe_failures();
	test_malformed();
	unlink(fw_path);
	testfw_free(&fw);
	mock_plugin_close(&p);
	return check_done("test_plugin_xc3028");
}

// SPDX-License-Identifier: MIT
/*
 * test_plugin_xc3028.c - the XC3028 plugin (argv[1]) on a mock host with a
 * synthetic firmware file.  Every upload and tune is compared event by
 * event with the traffic the chip facts call for (xc3028_testfw.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "mock_host.h"
#include "xc3028_testfw.h"

#define CHIP_ADDR 0x61
#define FW_NAME   "xc3028-v27.fw"
#define MHZ       1000000u

struct chip {
	uint16_t ptr;
	uint16_t product_id, version, lock, ferr, snr;
};

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

static int chip_read(void *ctx, uint16_t addr, uint8_t *buf, uint16_t len)
{
	struct chip *c = ctx;
	uint16_t v;

	if (addr != CHIP_ADDR || len != 2)
		return -EREMOTEIO;
	v = c->ptr == 0x0008   ? c->product_id
	    : c->ptr == 0x0004 ? c->version
	    : c->ptr == 0x0002 ? c->lock
	    : c->ptr == 0x0001 ? c->ferr
	    : c->ptr == 0x0040 ? c->snr
			       : 0;
	buf[0] = (uint8_t)(v >> 8);
	buf[1] = (uint8_t)v;
	return 0;
}

struct rig {
	struct chip chip;
	struct mock_host mh;
	struct tunerd_tuner_config cfg;
	void *priv;
};

static const struct mock_plugin *plugin;
static struct testfw fw;
static char fw_path[64];

static void rig_init(struct rig *r, uint32_t config, const char *path)
{
	struct mock_chip mc = {
	    .ctx = &r->chip, .write = chip_write, .read = chip_read};

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

static void rig_done(struct rig *r)
{
	if (r->priv)
		plugin->ops->release(r->priv);
	r->priv = NULL;
	CHECK_EQ_INT(r->mh.fw_puts, r->mh.fw_gets);
	CHECK_EQ_INT(r->mh.violations, 0);
	mock_host_free(&r->mh);
}

/* The events since the last clear are exactly want. */
static void check_events(struct rig *r, struct mock_events *want,
			 const char *what)
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

static void expect_identify(struct mock_events *want)
{
	mock_ev_write(want, CHIP_ADDR, (uint8_t[]){0x00, 0x08}, 2);
	mock_ev_read(want, CHIP_ADDR, (uint8_t[]){0x0B, 0xD4}, 2);
	mock_ev_write(want, CHIP_ADDR, (uint8_t[]){0x00, 0x04}, 2);
	mock_ev_read(want, CHIP_ADDR, (uint8_t[]){0x12, 0x27}, 2);
}

/* The divider of the facts: (f - offset + 7812) / 15625. */
static uint32_t divider(uint32_t freq, uint32_t offset)
{
	return (freq - offset + 7812) / 15625;
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
	CHECK_EQ_INT(info->delsys_mask, (1u << TSTUB_DELSYS_DVBT) |
					    (1u << TSTUB_DELSYS_DVBC_A) |
					    (1u << TSTUB_DELSYS_ATSC) |
					    (1u << TSTUB_DELSYS_ANALOG_TV) |
					    (1u << TSTUB_DELSYS_RADIO));
	CHECK(info->caps & TSTUB_CHIPCAP_FIRMWARE);
	CHECK(info->caps & TSTUB_CHIPCAP_PLL_LOCK);
	CHECK(mock_plugin_sym(plugin, "xc3028_fw_parse") == NULL);
	CHECK(mock_plugin_sym(plugin, "xc3028_write") == NULL);
}

static void test_probe(void)
{
	struct mock_events want = {0};
	struct rig r;

	/* BASE F8MHZ, INIT1, DTV8 and the 4560 kHz SCODE, then the ID. */
	rig_init(&r, 0, fw_path);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	CHECK_EQ_INT(r.mh.fw_gets, 1);
	expect_load(&want, &fw, IMG_BASE_F8, IMG_DTV8, IMG_SCODE_4560, 64,
		    0x80);
	expect_identify(&want);
	check_events(&r, &want, "probe");
	rig_done(&r);

	/* 13-byte writes and a 5380 kHz demodulator. */
	rig_init(&r, 13u | 5380u << 8, fw_path);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	expect_load(&want, &fw, IMG_BASE_F8, IMG_DTV8, IMG_SCODE_5380, 13,
		    0x80);
	expect_identify(&want);
	check_events(&r, &want, "probe, 13-byte writes");
	{
		struct tstub_freq f;

		CHECK_EQ_INT(plugin->ops->get_frequency(r.priv, &f), 0);
		CHECK_EQ_INT(f.if_frequency, 5380000);
	}
	rig_done(&r);

	/* No SCODE for a 6000 kHz demodulator in this file: none sent. */
	rig_init(&r, 6000u << 8, fw_path);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	expect_load(&want, &fw, IMG_BASE_F8, IMG_DTV8, -1, 64, 0x80);
	expect_identify(&want);
	check_events(&r, &want, "probe, no SCODE");
	rig_done(&r);
	mock_events_free(&want);
}

/* DVB-T 8 MHz across the band: the DTV8 set stays, only tunes happen. */
static void test_sweep(void)
{
	static const uint32_t edges[] = {42 * MHZ, 864 * MHZ, 474 * MHZ + 7811,
					 474 * MHZ + 7813, 858 * MHZ - 1};
	struct mock_events want = {0};
	struct tstub_params params;
	struct tstub_freq f;
	struct rig r;
	uint32_t freqs[140];
	size_t n = 0;

	for (uint32_t fr = 50 * MHZ; fr <= 858 * MHZ; fr += 7 * MHZ)
		freqs[n++] = fr;
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		freqs[n++] = edges[i];
	CHECK_EQ_INT(divider(474 * MHZ, 2750000), 30160);

	rig_init(&r, 0, fw_path);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	mock_events_clear(&r.mh.events);
	params = mock_params(TSTUB_DELSYS_DVBT, 474 * MHZ, 8 * MHZ);
	CHECK_EQ_INT(plugin->ops->set_params(r.priv, &params), 0);
	/* The documented example, byte for byte. */
	CHECK(r.mh.events.n == 4 && r.mh.events.ev[2].len == 4 &&
	      !memcmp(r.mh.events.ev[2].data,
		      (uint8_t[]){0x00, 0x00, 0x75, 0xD0}, 4));
	mock_events_clear(&r.mh.events);
	for (size_t i = 0; i < n; i++) {
		uint32_t div = divider(freqs[i], 2750000);

		params = mock_params(TSTUB_DELSYS_DVBT, freqs[i], 8 * MHZ);
		CHECK_EQ_INT(plugin->ops->set_params(r.priv, &params), 0);
		expect_tune(&want, div, 0, 0x80);
		check_events(&r, &want, "DVB-T 8 MHz tune");
		CHECK_EQ_INT(plugin->ops->get_frequency(r.priv, &f), 0);
		CHECK_EQ_INT(f.frequency, div * 15625 + 2750000);
		CHECK_EQ_INT(f.bandwidth, 8 * MHZ);
	}
	rig_done(&r);
	mock_events_free(&want);
}

struct step {
	uint32_t delsys, freq, bw;
	uint64_t std;
	int base, std_img, scode; /* base -1: no reload expected */
	uint32_t offset;
	int analog;
	uint32_t status_bw;
};

static void run_step(struct rig *r, const struct step *s, size_t i)
{
	struct mock_events want = {0};
	struct tstub_params params = mock_params(s->delsys, s->freq, s->bw);
	struct tstub_status st;
	char what[64];

	params.std = s->std;
	snprintf(what, sizeof(what), "step %zu (%u Hz)", i, s->freq);
	CHECK_EQ_INT(plugin->ops->set_params(r->priv, &params), 0);
	if (s->base >= 0)
		expect_load(&want, &fw, s->base, s->std_img, s->scode, 64,
			    0x80);
	expect_tune(&want, divider(s->freq, s->offset), s->analog, 0x80);
	check_events(r, &want, what);
	CHECK_EQ_INT(plugin->ops->get_status(r->priv, &st), 0);
	CHECK_EQ_INT(st.frequency,
		     divider(s->freq, s->offset) * 15625 + s->offset);
	CHECK_EQ_INT(st.bandwidth, s->status_bw);
	mock_events_clear(&r->mh.events);
	mock_events_free(&want);
}

/* The sequence of modes: each loads its images, once, after a reset;
 * DTV78 once both 7 MHz VHF and 8 MHz UHF were tuned. */
#define D78 2750000u
#define D6  1750000u
#define F8  IMG_BASE_F8
#define SC  IMG_SCODE_4560
static const struct step steps[] = {
    {TSTUB_DELSYS_DVBT, 177500000, 7 * MHZ, 0, F8, IMG_DTV7, SC, D78, 0,
     7 * MHZ},
    {TSTUB_DELSYS_DVBT, 474 * MHZ, 8 * MHZ, 0, F8, IMG_DTV78, SC, D78, 0,
     8 * MHZ},
    {TSTUB_DELSYS_DVBT, 184500000, 7 * MHZ, 0, -1, 0, 0, D78, 0, 7 * MHZ},
    {TSTUB_DELSYS_DVBT, 506 * MHZ, 7 * MHZ, 0, F8, IMG_DTV7, SC, D78, 0,
     7 * MHZ},
    {TSTUB_DELSYS_DVBT, 200 * MHZ, 8 * MHZ, 0, F8, IMG_DTV8, SC, D78, 0,
     8 * MHZ},
    {TSTUB_DELSYS_DVBT, 473 * MHZ, 6 * MHZ, 0, IMG_BASE, IMG_QAM_DTV6, SC, D6,
     0, 6 * MHZ},
    {TSTUB_DELSYS_DVBC_A, 602 * MHZ, 6 * MHZ, 0, -1, 0, 0, D6, 0, 6 * MHZ},
    {TSTUB_DELSYS_DVBC_A, 354 * MHZ, 0, 0, F8, IMG_DTV8, SC, D78, 0, 8 * MHZ},
    {TSTUB_DELSYS_ATSC, 575 * MHZ, 6 * MHZ, 0, IMG_BASE, IMG_ATSC, SC, D6, 0,
     6 * MHZ},
    {TSTUB_DELSYS_ANALOG_TV, 175250000, 0, STD_PAL_BG, F8, IMG_PAL_BG, SC, 0, 1,
     7 * MHZ},
    {TSTUB_DELSYS_ANALOG_TV, 503250000, 0, STD_PAL_BG, -1, 0, 0, 0, 1, 8 * MHZ},
    {TSTUB_DELSYS_ANALOG_TV, 503250000, 0, STD_PAL_I, F8, IMG_PAL_ALL, SC, 0, 1,
     8 * MHZ},
    /* B, G and I: more in common with all-PAL than with B/G. */
    {TSTUB_DELSYS_ANALOG_TV, 210250000, 0, 0x15, -1, 0, 0, 0, 1, 8 * MHZ},
    {TSTUB_DELSYS_ANALOG_TV, 210250000, 0, 0x4 /* PAL-G */, -1, 0, 0, 0, 1,
     7 * MHZ},
    {TSTUB_DELSYS_ANALOG_TV, 61250000, 0, 0x1000 /* NTSC-M */, IMG_BASE,
     IMG_NTSC, SC, 0, 1, 6 * MHZ},
    {TSTUB_DELSYS_RADIO, 98100000, 0, 0, IMG_BASE, IMG_FM, -1, 0, 0, 200000},
};

/* Walk the steps, then a standard no image serves, then sleep. */
static void test_firmware_switching(void)
{
	struct tstub_params params;
	struct rig r;

	rig_init(&r, 0, fw_path);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	mock_events_clear(&r.mh.events);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		run_step(&r, &steps[i], i);

	/* No image for SECAM-L: -ENOENT, the chip left as it was. */
	params = mock_params(TSTUB_DELSYS_ANALOG_TV, 503250000, 0);
	params.std = STD_SECAM_L;
	CHECK_EQ_INT(plugin->ops->set_params(r.priv, &params), -ENOENT);
	CHECK_EQ_INT(r.mh.events.n, 0);
	run_step(&r,
		 &(struct step){TSTUB_DELSYS_RADIO, 88 * MHZ, 0, 0, -1, 0, 0, 0,
				0, 200000},
		 99);

	/* Sleep: POWER_DOWN. */
	CHECK_EQ_INT(plugin->ops->sleep(r.priv), 0);
	CHECK(r.mh.events.n == 1 && r.mh.events.ev[0].len == 4 &&
	      !memcmp(r.mh.events.ev[0].data,
		      (uint8_t[]){0x80, 0x08, 0x00, 0x00}, 4));
	rig_done(&r);
}

static void test_status(void)
{
	struct tstub_params params =
	    mock_params(TSTUB_DELSYS_DVBT, 474 * MHZ, 8 * MHZ);
	struct tstub_status st;
	struct rig r;
	int lock_reads = 0;

	rig_init(&r, 0, fw_path);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	CHECK_EQ_INT(plugin->ops->set_params(r.priv, &params), 0);
	r.chip.lock = 1;
	r.chip.ferr = 0xFFFD; /* -3 steps */
	r.chip.snr = 5;
	CHECK_EQ_INT(plugin->ops->get_status(r.priv, &st), 0);
	CHECK_EQ_INT(st.pll_locked, 1);
	CHECK_EQ_INT(st.fe_status, TSTUB_FE_HAS_SIGNAL | TSTUB_FE_HAS_CARRIER);
	CHECK_EQ_INT(st.afc_hz, -3 * 15625);
	CHECK_EQ_INT(st.cnr_rel, 5 * 65535 / 7);
	CHECK_EQ_INT(st.valid, TSTUB_ST_FE_STATUS | TSTUB_ST_PLL_LOCK |
				   TSTUB_ST_AFC | TSTUB_ST_CNR_REL);
	CHECK_EQ_INT(st.frequency, 474 * MHZ);
	CHECK_EQ_INT(st.bandwidth, 8 * MHZ);

	r.chip.lock = 2; /* no lock */
	CHECK_EQ_INT(plugin->ops->get_status(r.priv, &st), 0);
	CHECK_EQ_INT(st.pll_locked, 0);
	CHECK_EQ_INT(st.fe_status, 0);
	CHECK(st.valid & TSTUB_ST_PLL_LOCK);
	CHECK(!(st.valid & TSTUB_ST_AFC));

	r.chip.lock = 0; /* still deciding: three reads 6 ms apart */
	mock_events_clear(&r.mh.events);
	r.mh.sleep_total_ms = 0;
	CHECK_EQ_INT(plugin->ops->get_status(r.priv, &st), 0);
	for (size_t i = 0; i < r.mh.events.n; i++)
		if (r.mh.events.ev[i].kind == MOCK_EV_WRITE &&
		    r.mh.events.ev[i].len == 2 &&
		    r.mh.events.ev[i].data[1] == 0x02)
			lock_reads++;
	CHECK_EQ_INT(lock_reads, 3);
	CHECK_EQ_INT(r.mh.sleep_total_ms, 12);
	CHECK_EQ_INT(st.pll_locked, 0);
	rig_done(&r);
}

static void test_refusals(void)
{
	static const struct {
		uint32_t delsys, freq, bw;
		uint64_t std;
	} bad[] = {
	    {TSTUB_DELSYS_DVBT, 41999999, 8 * MHZ, 0},
	    {TSTUB_DELSYS_DVBT, 864000001, 8 * MHZ, 0},
	    {TSTUB_DELSYS_DVBT2, 474 * MHZ, 8 * MHZ, 0},
	    {TSTUB_DELSYS_DVBS, 474 * MHZ, 8 * MHZ, 0},
	    {TSTUB_DELSYS_DVBT, 474 * MHZ, 5 * MHZ, 0},
	    {TSTUB_DELSYS_ATSC, 474 * MHZ, 8 * MHZ, 0},
	    {TSTUB_DELSYS_ANALOG_TV, 175250000, 0, 0},
	    {99, 474 * MHZ, 8 * MHZ, 0},
	};
	struct tstub_params params;
	struct rig r;

	rig_init(&r, 0, fw_path);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	mock_events_clear(&r.mh.events);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		params = mock_params(bad[i].delsys, bad[i].freq, bad[i].bw);
		params.std = bad[i].std;
		CHECK_EQ_INT(plugin->ops->set_params(r.priv, &params), -EINVAL);
	}
	CHECK_EQ_INT(r.mh.events.n, 0);
	/* A NAK in the middle of an upload, then the next tune reloads. */
	params = mock_params(TSTUB_DELSYS_ATSC, 575 * MHZ, 0);
	r.mh.nak_at = r.mh.xfers + 7;
	CHECK_EQ_INT(plugin->ops->set_params(r.priv, &params), -EREMOTEIO);
	mock_events_clear(&r.mh.events);
	CHECK_EQ_INT(plugin->ops->set_params(r.priv, &params), 0);
	CHECK(r.mh.events.n > 10 && r.mh.events.ev[0].kind == MOCK_EV_CTRL);
	rig_done(&r);
}

/* Probe: firmware missing, wrong product, NAKs, short writes. */
static void test_probe_failures(void)
{
	unsigned int probe_xfers;
	struct rig r;

	rig_init(&r, 0, NULL);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), -ENOENT);
	CHECK_EQ_INT(r.mh.xfers, 0);
	CHECK(r.mh.log_errors >= 1);
	rig_done(&r);
	rig_init(&r, 0, fw_path);
	r.chip.product_id = 2028;
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), -ENODEV);
	CHECK(r.priv == NULL);
	rig_done(&r);
	rig_init(&r, 0, fw_path);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	probe_xfers = r.mh.xfers;
	rig_done(&r);
	CHECK(probe_xfers > 20);
	for (unsigned int at = 1; at <= probe_xfers; at += probe_xfers / 7) {
		rig_init(&r, 0, fw_path);
		r.mh.nak_at = at;
		CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv),
			     -EREMOTEIO);
		rig_done(&r);
	}
	rig_init(&r, 12, fw_path);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), -EINVAL);
	rig_done(&r);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
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

static void test_malformed(void)
{
	uint8_t *copy = malloc(fw.file_len);
	size_t dtv7 = fw.image_offset[IMG_DTV7];

	check_malformed(fw.file, fw.image_offset[IMG_DTV8] + 20,
			"truncated image");
	check_malformed(fw.file, fw.image_offset[IMG_SCODE_4560] + 13,
			"truncated header");
	check_malformed(fw.file, 10, "shorter than a header");
	check_malformed(fw.file, 0, "empty");

	memcpy(copy, fw.file, fw.file_len);
	copy[34] = IMG_COUNT + 5; /* le16 count */
	check_malformed(copy, fw.file_len, "count too large");
	copy[34] = 0;
	check_malformed(copy, fw.file_len, "no images");

	memcpy(copy, fw.file, fw.file_len);
	put_le32(copy + fw.image_offset[IMG_FM] + 12, 0xFFFFFFF0u);
	check_malformed(copy, fw.file_len, "image size");

	/* DTV7's first record claims more bytes than the image holds. */
	memcpy(copy, fw.file, fw.file_len);
	copy[dtv7 + 16] = 0xF0;
	copy[dtv7 + 17] = 0x7F;
	check_malformed(copy, fw.file_len, "record length");
	free(copy);
}

/* Bytes after the last image are ignored with a warning. */
static void test_trailing_bytes(void)
{
	uint8_t *longer = malloc(fw.file_len + 7);
	char path[64];
	struct rig r;

	memcpy(longer, fw.file, fw.file_len);
	memset(longer + fw.file_len, 0xAB, 7);
	CHECK_EQ_INT(testfw_write(longer, fw.file_len + 7, path), 0);
	rig_init(&r, 0, path);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	CHECK_EQ_INT(r.mh.log_errors, 0);
	rig_done(&r);
	unlink(path);
	free(longer);
}

/* Firmware before 2.2: commands without the 0x80 flag. */
static void test_old_firmware(void)
{
	struct mock_events want = {0};
	struct testfw old;
	struct tstub_params params =
	    mock_params(TSTUB_DELSYS_DVBT, 530 * MHZ, 8 * MHZ);
	char path[64];
	struct rig r;

	testfw_build(&old, 0x0201);
	CHECK_EQ_INT(testfw_write(old.file, old.file_len, path), 0);
	rig_init(&r, 0, path);
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	expect_load(&want, &old, IMG_BASE_F8, IMG_DTV8, IMG_SCODE_4560, 64,
		    0x00);
	expect_identify(&want);
	check_events(&r, &want, "old firmware probe");
	CHECK_EQ_INT(plugin->ops->set_params(r.priv, &params), 0);
	expect_tune(&want, divider(530 * MHZ, 2750000), 0, 0x00);
	check_events(&r, &want, "old firmware tune");
	rig_done(&r);
	unlink(path);
	testfw_free(&old);
	mock_events_free(&want);
}

int main(int argc, char **argv)
{
	struct mock_plugin p;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s xc3028.so\n", argv[0]);
		return 2;
	}
	if (mock_plugin_open(argv[1], &p))
		return 1;
	plugin = &p;
	testfw_build(&fw, 0x0207);
	if (testfw_write(fw.file, fw.file_len, fw_path)) {
		fprintf(stderr, "cannot write the test firmware\n");
		return 1;
	}
	test_abi();
	test_probe();
	test_sweep();
	test_firmware_switching();
	test_status();
	test_refusals();
	test_probe_failures();
	test_malformed();
	test_trailing_bytes();
	test_old_firmware();
	unlink(fw_path);
	testfw_free(&fw);
	mock_plugin_close(&p);
	ret = check_done("test_plugin_xc3028");
	return ret;
}

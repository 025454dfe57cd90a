// SPDX-License-Identifier: MIT
/*
 * test_plugin_mt2060.c - the MT2060 plugin (argv[1]) against a register
 * file on a mock host.  Expected register bytes come from the formulas of
 * the chip facts, written again here.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "mock_host.h"

#define CHIP_ADDR 0x60

struct chip {
	uint16_t addr;
	uint8_t regs[0x20];
	uint8_t ptr;
	uint8_t lock;    /* what register 6 reads */
	uint8_t part_id; /* what register 0 reads */
};

static int chip_write(void *ctx, uint16_t addr, const uint8_t *buf,
		      uint16_t len)
{
	struct chip *c = ctx;

	if (addr != c->addr || buf[0] + len - 1 > (int)sizeof(c->regs))
		return -EREMOTEIO;
	c->ptr = buf[0];
	for (int i = 1; i < len; i++)
		c->regs[buf[0] + i - 1] = buf[i];
	return 0;
}

static int chip_read(void *ctx, uint16_t addr, uint8_t *buf, uint16_t len)
{
	struct chip *c = ctx;

	if (addr != c->addr)
		return -EREMOTEIO;
	for (int i = 0; i < len; i++) {
		int reg = c->ptr + i;

		buf[i] = reg == 0x00   ? c->part_id
			 : reg == 0x06 ? c->lock
			 : reg == 0x07 ? 0x4B
			 : reg == 0x08 ? 0x40
				       : c->regs[reg];
	}
	return 0;
}

struct rig {
	struct chip chip;
	struct mock_host mh;
	struct tunerd_tuner_config cfg;
	void *priv;
};

static void rig_init(struct rig *r, uint32_t config, uint16_t addr)
{
	struct mock_chip mc = {
	    .ctx = &r->chip, .write = chip_write, .read = chip_read};

	memset(r, 0, sizeof(*r));
	r->chip.addr = addr ? addr : CHIP_ADDR;
	r->chip.lock = 0x88;
	r->chip.part_id = 0x63;
	mock_host_init(&r->mh, &mc);
	r->cfg.size = sizeof(r->cfg);
	r->cfg.chip_id = TSTUB_CHIP_MT2060;
	r->cfg.config = config;
	r->cfg.i2c_addr = addr;
}

/* ---- the facts, again ---- */

static uint8_t lnaband(long rf_khz)
{
	static const long top_mhz[] = {95,  180, 260, 335, 425,
				       480, 570, 645, 730, 810};
	static const uint8_t band[] = {0xB0, 0xA0, 0x90, 0x80, 0x70, 0x60,
				       0x50, 0x40, 0x30, 0x20, 0x10};
	int i = 0;

	while (i < 10 && rf_khz > top_mhz[i] * 1000)
		i++;
	return band[i];
}

/* Registers 1..5 for freq (Hz) and the RF they decode to. */
static void expect_tune(uint32_t freq, long if1_khz, uint8_t r[5],
			uint32_t *tuned)
{
	long rf = (long)freq / 1000; /* truncated, as Linux's driver does */
	long f_lo1 = (rf + if1_khz) / 250 * 250;
	long f_lo2 = (f_lo1 - rf - 36150 + 25) / 50 * 50;
	long num1 = (f_lo1 / 250) & 0x3F, div1 = f_lo1 / 250 / 64;
	long n = f_lo2 * 64 / 125, div2 = n / 8192, num2 = n & 0x1FFF;
	double lo1 = 16e6 * (div1 + num1 / 64.0);
	double lo2 = 16e6 * (div2 + num2 / 8192.0);

	r[0] = (uint8_t)(lnaband(rf) | ((num1 >> 2) & 0xF));
	r[1] = (uint8_t)div1;
	r[2] = (uint8_t)((num2 & 0xF) | ((num1 & 3) << 4));
	r[3] = (uint8_t)((num2 >> 4) & 0xFF);
	r[4] = (uint8_t)(((num2 >> 12) & 1) | (div2 << 1));
	*tuned = (uint32_t)(floor((lo1 - lo2 - 36.15e6) / 50e3 + 0.5) * 50e3);
}

/* ---- tests ---- */

static void test_abi(const struct mock_plugin *p, const char *path)
{
	const struct tstub_chip_info *info = &p->desc->info;
	const int other[] = {2, 3}, mixed[] = {7, TUNERD_PLUGIN_ABI};
	struct mock_plugin again;

	CHECK(!strcmp(info->name, "MT2060"));
	CHECK(!strcmp(info->vendor, "Microtune"));
	CHECK(!strcmp(info->plugin, "mt2060"));
	CHECK_EQ_INT(info->chip_id, TSTUB_CHIP_MT2060);
	CHECK_EQ_INT(info->delsys_mask, (1u << TSTUB_DELSYS_DVBT) |
					    (1u << TSTUB_DELSYS_DVBT2) |
					    (1u << TSTUB_DELSYS_DVBC_A));
	CHECK_EQ_INT(info->freq_min, 48000000);
	CHECK_EQ_INT(info->freq_max, 860000000);
	CHECK_EQ_INT(info->freq_step, 50000);
	CHECK_EQ_INT(info->if_frequency, 36150000);
	CHECK_EQ_INT(info->caps, TSTUB_CHIPCAP_PLL_LOCK);
	CHECK_EQ_INT(p->desc->abi, TUNERD_PLUGIN_ABI);
	CHECK_EQ_INT(p->desc->size, sizeof(struct tunerd_plugin));
	CHECK_EQ_INT(p->ops->size, sizeof(struct tunerd_plugin_ops));
	CHECK(p->ops->get_frequency != NULL);

	CHECK_EQ_INT(mock_plugin_open(path, &again), 0);
	{
		tunerd_plugin_version_fn version =
		    (tunerd_plugin_version_fn)mock_plugin_sym(
			&again, TUNERD_PLUGIN_VERSION_SYM);
		tunerd_plugin_describe_fn describe =
		    (tunerd_plugin_describe_fn)mock_plugin_sym(
			&again, TUNERD_PLUGIN_DESCRIBE_SYM);

		CHECK_EQ_INT(version(2, other), -1);
		CHECK_EQ_INT(version(2, mixed), TUNERD_PLUGIN_ABI);
		CHECK_EQ_INT(version(0, NULL), -1);
		CHECK(describe(TUNERD_PLUGIN_ABI + 1) == NULL);
		/* Only the two ABI symbols are visible. */
		CHECK(mock_plugin_sym(&again, "mt2060_probe") == NULL);
		CHECK(mock_plugin_sym(&again, "mt2060_ops") == NULL);
	}
	mock_plugin_close(&again);
}

static void test_probe_calibration(const struct mock_plugin *p)
{
	struct mock_events want = {0};
	struct rig r;
	char why[300];
	long diff;

	rig_init(&r, 0, 0);
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);

	mock_ev_write(&want, CHIP_ADDR, (uint8_t[]){0x00}, 1);
	mock_ev_read(&want, CHIP_ADDR, (uint8_t[]){0x63}, 1);
	/* Powered up for the calibration (MISC_CTRL), asleep after it. */
	mock_ev_write(&want, CHIP_ADDR, (uint8_t[]){0x09, 0x20}, 2);
	mock_ev_write(&want, CHIP_ADDR,
		      (uint8_t[]){0x01, 0x3F, 0x74, 0x00, 0x08, 0x93}, 6);
	mock_ev_write(&want, CHIP_ADDR,
		      (uint8_t[]){0x09, 0x20, 0x1E, 0x30, 0xFF, 0x80, 0xFF,
				  0x00, 0x2C, 0x42},
		      10);
	mock_ev_write(&want, CHIP_ADDR, (uint8_t[]){0x0B, 0x30}, 2);
	/* FM1SS first; FM1CA joins it once, in the first round. */
	for (int round = 0; round < 9; round++) {
		mock_ev_write(&want, CHIP_ADDR, (uint8_t[]){0x03, 0x40}, 2);
		mock_ev_sleep(&want, 20);
		if (round == 0) {
			mock_ev_write(&want, CHIP_ADDR, (uint8_t[]){0x03, 0xC0},
				      2);
			mock_ev_sleep(&want, 20);
		}
		mock_ev_write(&want, CHIP_ADDR, (uint8_t[]){0x03, 0x00}, 2);
		mock_ev_sleep(&want, 20);
	}
	mock_ev_write(&want, CHIP_ADDR, (uint8_t[]){0x08}, 1);
	mock_ev_read(&want, CHIP_ADDR, (uint8_t[]){0x40}, 1);
	mock_ev_write(&want, CHIP_ADDR, (uint8_t[]){0x07}, 1);
	mock_ev_read(&want, CHIP_ADDR, (uint8_t[]){0x4B}, 1);
	mock_ev_write(&want, CHIP_ADDR, (uint8_t[]){0x09, 0xE8}, 2);
	diff = mock_events_diff(&r.mh.events, 0, &want, why, sizeof(why));
	if (diff >= 0)
		fprintf(stderr, "calibration: %s\n", why);
	CHECK_EQ_INT(diff, -1);
	CHECK_EQ_INT(r.mh.events.n, want.n);
	CHECK_EQ_INT(r.mh.violations, 0);

	/* Power: init and sleep. */
	CHECK_EQ_INT(p->ops->init(r.priv), 0);
	CHECK_EQ_INT(r.chip.regs[0x09], 0x20);
	CHECK_EQ_INT(r.chip.regs[0x0B], 0x33);
	CHECK_EQ_INT(p->ops->sleep(r.priv), 0);
	CHECK_EQ_INT(r.chip.regs[0x0B], 0x30);
	CHECK_EQ_INT(r.chip.regs[0x09], 0xE8);
	p->ops->release(r.priv);
	mock_host_free(&r.mh);
	mock_events_free(&want);
}

/* One tune: the 0x0C write, then regs 1..5 in one burst, then the lock
 * poll; the chip's registers and the reported frequency match the facts. */
static void check_tune(const struct mock_plugin *p, struct rig *r,
		       uint32_t freq, long if1_khz)
{
	struct tstub_params params = mock_params(TSTUB_DELSYS_DVBT, freq, 0);
	struct tstub_status st;
	struct tstub_freq f;
	uint8_t regs[5];
	uint32_t tuned;
	const struct mock_event *ev;

	expect_tune(freq, if1_khz, regs, &tuned);
	mock_events_clear(&r->mh.events);
	CHECK_EQ_INT(p->ops->set_params(r->priv, &params), 0);
	ev = r->mh.events.ev;
	CHECK(r->mh.events.n >= 4);
	CHECK(ev[0].kind == MOCK_EV_WRITE && ev[0].len == 2 &&
	      ev[0].data[0] == 0x0C && ev[0].data[1] == 0xFF);
	CHECK(ev[1].kind == MOCK_EV_WRITE && ev[1].len == 6 &&
	      ev[1].data[0] == 0x01);
	if (memcmp(ev[1].data + 1, regs, 5) ||
	    memcmp(r->chip.regs + 1, regs, 5)) {
		fprintf(stderr,
			"%u Hz: wrote %02x %02x %02x %02x %02x, want "
			"%02x %02x %02x %02x %02x\n",
			freq, ev[1].data[1], ev[1].data[2], ev[1].data[3],
			ev[1].data[4], ev[1].data[5], regs[0], regs[1], regs[2],
			regs[3], regs[4]);
		CHECK(0);
	}
	CHECK_EQ_INT(p->ops->get_frequency(r->priv, &f), 0);
	CHECK_EQ_INT(f.frequency, tuned);
	CHECK_EQ_INT(f.bandwidth, 8000000);
	CHECK_EQ_INT(f.if_frequency, 36150000);
	CHECK_EQ_INT(p->ops->get_status(r->priv, &st), 0);
	CHECK_EQ_INT(st.pll_locked, 1);
	CHECK(st.valid & TSTUB_ST_PLL_LOCK);
	CHECK_EQ_INT(st.frequency, tuned);
}

static void test_sweep(const struct mock_plugin *p)
{
	static const uint32_t extra[] = {
	    48000000,  860000000, 95000000,  95050000,  180000000,
	    180050000, 425000000, 425050000, 810000000, 810050000,
	    474012345, 177524999, 100025000, 666666666};
	uint8_t regs[5];
	uint32_t tuned;
	struct rig r;
	unsigned int tunes = 0;

	/* The documented example. */
	expect_tune(474000000, 1220000, regs, &tuned);
	CHECK(!memcmp(regs, (uint8_t[]){0x6E, 0x69, 0x03, 0xFB, 0x93}, 5));
	CHECK_EQ_INT(tuned, 474000000);

	rig_init(&r, 0, 0);
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	check_tune(p, &r, 474000000, 1220000);
	CHECK(!memcmp(r.chip.regs + 1,
		      (uint8_t[]){0x6E, 0x69, 0x03, 0xFB, 0x93}, 5));
	for (uint32_t f = 50000000; f <= 858000000; f += 7000000, tunes++)
		check_tune(p, &r, f, 1220000);
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++, tunes++)
		check_tune(p, &r, extra[i], 1220000);
	CHECK(tunes > 100);
	CHECK_EQ_INT(r.mh.violations, 0);
	p->ops->release(r.priv);
	mock_host_free(&r.mh);
}

/* Board word: clock_out 2, writes capped at 4 registers, IF1 1218 MHz,
 * chip at 0x61. */
static void test_config_word(const struct mock_plugin *p)
{
	uint32_t config = 2u | 4u << 8 | 1218u << 16;
	struct rig r;

	rig_init(&r, config, 0x61);
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	for (size_t i = 0; i < r.mh.events.n; i++) {
		const struct mock_event *e = &r.mh.events.ev[i];

		if (e->kind == MOCK_EV_WRITE)
			CHECK(e->len <= 5);
		if (e->kind == MOCK_EV_WRITE || e->kind == MOCK_EV_READ)
			CHECK_EQ_INT(e->addr, 0x61);
	}
	/* The split writes still land on the right registers (MISC_CTRL
	 * asleep after the calibration). */
	CHECK(!memcmp(
	    r.chip.regs + 0x09,
	    (uint8_t[]){0xE8, 0x1E, 0xB0, 0xFF, 0x80, 0xFF, 0x00, 0x2C, 0x42},
	    9));
	CHECK_EQ_INT(p->ops->init(r.priv), 0);
	CHECK_EQ_INT(r.chip.regs[0x0B], 0xB3);
	for (uint32_t f = 52500000; f <= 860000000; f += 31000000) {
		struct tstub_params params =
		    mock_params(TSTUB_DELSYS_DVBC_A, f, 8000000);
		struct tstub_freq fr;
		uint8_t regs[5];
		uint32_t tuned;

		expect_tune(f, 1218000, regs, &tuned);
		CHECK_EQ_INT(p->ops->set_params(r.priv, &params), 0);
		CHECK(!memcmp(r.chip.regs + 1, regs, 5));
		CHECK_EQ_INT(p->ops->get_frequency(r.priv, &fr), 0);
		CHECK_EQ_INT(fr.frequency, tuned);
	}
	CHECK_EQ_INT(p->ops->sleep(r.priv), 0);
	CHECK_EQ_INT(r.chip.regs[0x0B], 0xB0);
	CHECK_EQ_INT(r.mh.violations, 0);
	p->ops->release(r.priv);
	mock_host_free(&r.mh);
}

static void test_no_lock(const struct mock_plugin *p)
{
	struct tstub_params params =
	    mock_params(TSTUB_DELSYS_DVBT, 474000000, 8000000);
	struct tstub_status st;
	struct rig r;
	int lock_reads = 0;

	rig_init(&r, 0, 0);
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	r.chip.lock = 0x80; /* LO1 only */
	mock_events_clear(&r.mh.events);
	r.mh.sleep_total_ms = 0;
	CHECK_EQ_INT(p->ops->set_params(r.priv, &params), 0);
	for (size_t i = 0; i < r.mh.events.n; i++)
		if (r.mh.events.ev[i].kind == MOCK_EV_WRITE &&
		    r.mh.events.ev[i].len == 1 &&
		    r.mh.events.ev[i].data[0] == 0x06)
			lock_reads++;
	CHECK_EQ_INT(lock_reads, 10);
	CHECK_EQ_INT(r.mh.sleep_total_ms, 9 * 4);
	CHECK_EQ_INT(p->ops->get_status(r.priv, &st), 0);
	CHECK_EQ_INT(st.pll_locked, 0);
	CHECK(st.valid & TSTUB_ST_PLL_LOCK);
	CHECK_EQ_INT(st.frequency, 474000000);
	p->ops->release(r.priv);
	mock_host_free(&r.mh);
}

static void test_refusals(const struct mock_plugin *p)
{
	static const struct {
		uint32_t delsys, freq, bw;
	} bad[] = {
	    {TSTUB_DELSYS_DVBT, 47950000, 8000000},
	    {TSTUB_DELSYS_DVBT, 860050000, 8000000},
	    {TSTUB_DELSYS_DVBT, 0, 8000000},
	    {TSTUB_DELSYS_DVBS, 474000000, 8000000},
	    {TSTUB_DELSYS_ATSC, 474000000, 6000000},
	    {TSTUB_DELSYS_ANALOG_TV, 474000000, 0},
	    {TSTUB_DELSYS_COUNT + 40, 474000000, 8000000},
	    {TSTUB_DELSYS_DVBT, 474000000, 10000000},
	    {TSTUB_DELSYS_DVBT, 474000000, 5000000},
	};
	struct tstub_params params;
	struct rig r;

	/* Out of range, unsupported system or bandwidth: -EINVAL, no I2C. */
	rig_init(&r, 0, 0);
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned int xfers = r.mh.xfers;

		params = mock_params(bad[i].delsys, bad[i].freq, bad[i].bw);
		CHECK_EQ_INT(p->ops->set_params(r.priv, &params), -EINVAL);
		CHECK_EQ_INT(r.mh.xfers, xfers);
	}
	/* I2C NAK in the middle of a tune. */
	params = mock_params(TSTUB_DELSYS_DVBT, 474000000, 8000000);
	r.mh.nak_at = r.mh.xfers + 2;
	CHECK_EQ_INT(p->ops->set_params(r.priv, &params), -EREMOTEIO);
	r.mh.nak_all = 1;
	CHECK_EQ_INT(p->ops->init(r.priv), -EREMOTEIO);
	CHECK_EQ_INT(p->ops->sleep(r.priv), -EREMOTEIO);
	{
		struct tstub_status st;

		CHECK_EQ_INT(p->ops->get_status(r.priv, &st), -EREMOTEIO);
	}
	p->ops->release(r.priv);
	mock_host_free(&r.mh);
}

static void test_probe_refusals(const struct mock_plugin *p)
{
	struct rig r;
	void *priv = NULL;

	/* Wrong part id. */
	rig_init(&r, 0, 0);
	r.chip.part_id = 0x64;
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &priv), -ENODEV);
	CHECK(priv == NULL);
	CHECK_EQ_INT(r.mh.xfers, 1);
	mock_host_free(&r.mh);

	/* NAK at probe: nothing at the address, or a bus error later. */
	for (unsigned int at = 1; at <= 4; at++) {
		rig_init(&r, 0, 0);
		r.mh.nak_at = at;
		priv = NULL;
		CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &priv),
			     -EREMOTEIO);
		CHECK(priv == NULL);
		mock_host_free(&r.mh);
	}
	/* A chip at another address does not answer ours. */
	rig_init(&r, 0, 0);
	r.chip.addr = 0x61;
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &priv), -EREMOTEIO);
	mock_host_free(&r.mh);
	/* An IF1 the synthesizers cannot reach. */
	rig_init(&r, 100u << 16, 0);
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &priv), -EINVAL);
	mock_host_free(&r.mh);
}

int main(int argc, char **argv)
{
	struct mock_plugin p;

	if (argc != 2) {
		fprintf(stderr, "usage: %s mt2060.so\n", argv[0]);
		return 2;
	}
	if (mock_plugin_open(argv[1], &p))
		return 1;
	test_abi(&p, argv[1]);
	test_probe_calibration(&p);
	test_sweep(&p);
	test_config_word(&p);
	test_no_lock(&p);
	test_refusals(&p);
	test_probe_refusals(&p);
	mock_plugin_close(&p);
	return check_done("test_plugin_mt2060");
}

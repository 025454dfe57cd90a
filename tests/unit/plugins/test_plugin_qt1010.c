// SPDX-License-Identifier: MIT
/*
 * test_plugin_qt1010.c - the QT1010 plugin (argv[1]) against a register
 * file on a mock host.  Expected register bytes come from the formulas of
 * the chip facts, written again here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "mock_host.h"

#define CHIP_ADDR 0x62
#define NREGS     0x30

struct chip {
	uint16_t addr;
	uint8_t id;
	uint8_t regs[NREGS];
	uint8_t ptr;
	int settle[NREGS];  /* reads left before the value is stable */
	int never_settles;  /* calibration counters keep moving */
	int in_tune;        /* between TUNE_CTRL 0x80 and 0x00 */
	int tunes;          /* completed start..stop brackets */
	unsigned int opers; /* operations run (0x1E = D0/E0/F0) */
	uint8_t last_oper;
};

static int is_cal(int reg)
{
	return reg == 0x1F || reg == 0x20 || reg == 0x25;
}

static void chip_set(struct chip *c, int reg, uint8_t val)
{
	c->regs[reg] = val;
	c->settle[reg] = 0;
	if (reg == 0x01 && val == 0x80)
		c->in_tune = 1;
	if (reg == 0x01 && val == 0x00 && c->in_tune) {
		c->in_tune = 0;
		c->tunes++;
	}
	if (reg == 0x1E && (val == 0xD0 || val == 0xE0 || val == 0xF0)) {
		c->opers++;
		c->last_oper = val;
		/* The counters land 3 counts up, reading low twice first. */
		for (int r = 0; r < NREGS; r++) {
			if (!is_cal(r))
				continue;
			c->regs[r] = (uint8_t)(c->regs[r] + 3);
			c->settle[r] = 2;
		}
	}
}

static int chip_write(void *ctx, uint16_t addr, const uint8_t *buf,
		      uint16_t len)
{
	struct chip *c = ctx;

	if (addr != c->addr || buf[0] + len - 1 > NREGS)
		return -EREMOTEIO;
	c->ptr = buf[0];
	for (int i = 1; i < len; i++)
		chip_set(c, buf[0] + i - 1, buf[i]);
	return 0;
}

static int chip_read(void *ctx, uint16_t addr, uint8_t *buf, uint16_t len)
{
	struct chip *c = ctx;

	if (addr != c->addr || c->ptr + len > NREGS)
		return -EREMOTEIO;
	for (int i = 0; i < len; i++) {
		int reg = c->ptr + i;

		if (reg == 0x29) {
			buf[i] = c->id;
		} else if (c->never_settles && is_cal(reg)) {
			buf[i] = ++c->regs[reg];
		} else if (c->settle[reg]) {
			buf[i] = (uint8_t)(c->regs[reg] - c->settle[reg]);
			c->settle[reg]--;
		} else {
			buf[i] = c->regs[reg];
		}
	}
	return 0;
}

struct rig {
	struct chip chip;
	struct mock_host mh;
	struct tunerd_tuner_config cfg;
	void *priv;
};

static void rig_init(struct rig *r)
{
	struct mock_chip mc = {
	    .ctx = &r->chip, .write = chip_write, .read = chip_read};

	memset(r, 0, sizeof(*r));
	r->chip.addr = CHIP_ADDR;
	r->chip.id = 0x39;
	mock_host_init(&r->mh, &mc);
	r->cfg.size = sizeof(r->cfg);
	r->cfg.chip_id = TSTUB_CHIP_QT1010;
}

/* ---- the facts, again ---- */

struct expect {
	uint8_t r07, r0a, r1a, r09, r0b, r05;
	uint32_t tuned; /* decoded back from r07, r0A, r1A */
};

static struct expect expect_tune(uint32_t freq)
{
	const uint64_t mhz = 1000000;
	uint64_t lo = ((uint64_t)freq + 1246 * mhz) / 125000 * 125000;
	uint64_t mod1 = lo % (32 * mhz), mod2 = lo % (4 * mhz);
	uint64_t n = mod1 / (4 * mhz);
	struct expect e;
	long k, n_back;

	e.r07 = (uint8_t)(lo / (32 * mhz));
	e.r0a = (uint8_t)(0x08 | ((1 - n) & 7));
	e.r1a = (uint8_t)((0x78 - (mod2 / 125000) * 8) % 256);
	e.r09 = mod1 < 8 * mhz ? 0x1D : 0x1C;
	e.r0b = mod2 < 2 * mhz ? 0x45 : 0x44;
	e.r05 = freq < 290 * mhz   ? 0x14
		: freq < 610 * mhz ? 0x34
		: freq < 802 * mhz ? 0x54
				   : 0x74;
	n_back = (1 - (e.r0a & 7)) & 7;
	k = ((0x78 - e.r1a) & 0xFF) >> 3;
	e.tuned = (uint32_t)(e.r07 * 32 * mhz + (uint64_t)n_back * 4 * mhz +
			     (uint64_t)k * 125000 - 1246 * mhz);
	return e;
}

/* ---- tests ---- */

static void test_abi(const struct mock_plugin *p)
{
	const struct tstub_chip_info *info = &p->desc->info;
	tunerd_plugin_version_fn version =
	    (tunerd_plugin_version_fn)mock_plugin_sym(
		p, TUNERD_PLUGIN_VERSION_SYM);
	const int other[] = {0, 2};

	CHECK(!strcmp(info->name, "QT1010"));
	CHECK(!strcmp(info->vendor, "Quantek"));
	CHECK(!strcmp(info->plugin, "qt1010"));
	CHECK_EQ_INT(info->chip_id, TSTUB_CHIP_QT1010);
	CHECK_EQ_INT(info->freq_min, 48000000);
	CHECK_EQ_INT(info->freq_max, 860000000);
	CHECK_EQ_INT(info->freq_step, 125000);
	CHECK_EQ_INT(info->if_frequency, 36125000);
	CHECK_EQ_INT(info->caps, 0);
	CHECK_EQ_INT(info->delsys_mask, (1u << TSTUB_DELSYS_DVBT) |
					    (1u << TSTUB_DELSYS_DVBT2) |
					    (1u << TSTUB_DELSYS_DVBC_A));
	CHECK_EQ_INT(version(2, other), -1);
	CHECK(mock_plugin_sym(p, "qt1010_tune") == NULL);
}

/* The tune just made: one start..stop bracket, the registers of the
 * facts, the loop operations run and their results read back. */
static void check_tune(struct rig *r, uint32_t freq, int after_init)
{
	struct expect e = expect_tune(freq);
	const struct mock_events *ev = &r->mh.events;
	const struct mock_event *first = NULL, *last = NULL;
	int loop_reads = 0, band_reads = 0;
	uint8_t *regs = r->chip.regs;
	size_t start = 0;

	/* After init's calibration writes, the tune starts at its bracket. */
	for (size_t i = 0; after_init && i < ev->n; i++)
		if (ev->ev[i].kind == MOCK_EV_WRITE && ev->ev[i].len == 2 &&
		    ev->ev[i].data[0] == 0x01 && ev->ev[i].data[1] == 0x80)
			start = i;
	for (size_t i = start; i < ev->n; i++) {
		const struct mock_event *x = &ev->ev[i];

		if (x->kind == MOCK_EV_WRITE && x->len == 2) {
			if (!first)
				first = x;
			last = x;
		}
		if (x->kind == MOCK_EV_READ && x->len == 1 && i &&
		    ev->ev[i - 1].data[0] == 0x22)
			loop_reads++;
		if (x->kind == MOCK_EV_READ && x->len == 1 && i &&
		    ev->ev[i - 1].data[0] == 0x05)
			band_reads++;
	}
	CHECK(first && first->data[0] == 0x01 && first->data[1] == 0x80);
	CHECK(last && last->data[0] == 0x01 && last->data[1] == 0x00);
	CHECK_EQ_INT(r->chip.in_tune, 0);
	CHECK_EQ_INT(loop_reads, 2);
	CHECK_EQ_INT(band_reads, 1);
	if (regs[0x07] != e.r07 || regs[0x0A] != e.r0a || regs[0x1A] != e.r1a) {
		fprintf(stderr,
			"%u Hz: 07=%02x 0A=%02x 1A=%02x, want %02x "
			"%02x %02x\n",
			freq, regs[0x07], regs[0x0A], regs[0x1A], e.r07, e.r0a,
			e.r1a);
		CHECK(0);
	}
	CHECK_EQ_INT(regs[0x09], e.r09);
	CHECK_EQ_INT(regs[0x0B], e.r0b);
	/* Register 5: the band, then only its high nibble. */
	CHECK_EQ_INT(regs[0x05], e.r05 & 0xF0);
	CHECK_EQ_INT(regs[0x00], 0x92);
	CHECK_EQ_INT(regs[0x11], 0xFD);
	CHECK_EQ_INT(regs[0x12], 0x91);
	CHECK_EQ_INT(r->mh.violations, 0);
}

static uint32_t tuned_frequency(const struct mock_plugin *p, void *priv)
{
	struct tstub_freq f;

	CHECK_EQ_INT(p->ops->get_frequency(priv, &f), 0);
	CHECK_EQ_INT(f.if_frequency, 36125000);
	return f.frequency;
}

static void test_init_and_sweep(const struct mock_plugin *p)
{
	static const uint32_t extra[] = {
	    48000000,  860000000, 289999999, 290000000, 609875000, 610000000,
	    801875000, 802000000, 474100000, 474124999, 545062500};
	struct expect ex = expect_tune(474000000);
	struct tstub_params params;
	struct rig r;
	int tunes;

	/* The documented example. */
	CHECK_EQ_INT(ex.r07, 0x35);
	CHECK_EQ_INT(ex.r0a, 0x0B);
	CHECK_EQ_INT(ex.r1a, 0x78);
	CHECK_EQ_INT(ex.tuned, 474000000);

	rig_init(&r);
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	CHECK_EQ_INT(r.chip.tunes, 0);
	/* init measures the counters (each re-read until stable: start + 3)
	 * and, nothing asked yet, tunes 545 MHz. */
	mock_events_clear(&r.mh.events);
	CHECK_EQ_INT(p->ops->init(r.priv), 0);
	CHECK_EQ_INT(r.chip.tunes, 1);
	check_tune(&r, 545000000, 1);
	CHECK_EQ_INT(tuned_frequency(p, r.priv), 545000000);
	CHECK(r.chip.opers >= 3);

	for (uint32_t f = 50000000; f <= 858000000; f += 7000000) {
		params = mock_params(TSTUB_DELSYS_DVBT, f, 8000000);
		mock_events_clear(&r.mh.events);
		tunes = r.chip.tunes;
		CHECK_EQ_INT(p->ops->set_params(r.priv, &params), 0);
		CHECK_EQ_INT(r.chip.tunes, tunes + 1);
		check_tune(&r, f, 0);
		CHECK_EQ_INT(tuned_frequency(p, r.priv), expect_tune(f).tuned);
	}
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		params = mock_params(TSTUB_DELSYS_DVBC_A, extra[i], 0);
		mock_events_clear(&r.mh.events);
		CHECK_EQ_INT(p->ops->set_params(r.priv, &params), 0);
		check_tune(&r, extra[i], 0);
		CHECK_EQ_INT(tuned_frequency(p, r.priv),
			     expect_tune(extra[i]).tuned);
	}
	/* Off the 125 kHz grid: snapped down. */
	CHECK_EQ_INT(expect_tune(474124999).tuned, 474000000);
	p->ops->release(r.priv);
	mock_host_free(&r.mh);
}

static void test_status_and_power(const struct mock_plugin *p)
{
	struct tstub_params params;
	struct tstub_status st;
	struct rig r;

	rig_init(&r);
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	/* Never tuned: no lock claimed, no frequency. */
	CHECK_EQ_INT(p->ops->get_status(r.priv, &st), 0);
	CHECK(!(st.valid & (TSTUB_ST_PLL_LOCK | TSTUB_ST_FE_STATUS)));
	CHECK_EQ_INT(st.pll_locked, 0);
	CHECK_EQ_INT(st.frequency, 0);
	CHECK_EQ_INT(p->ops->init(r.priv), 0);
	/* Status: only the tuned frequency, no lock bit to read. */
	params = mock_params(TSTUB_DELSYS_DVBT, 474000000, 7000000);
	CHECK_EQ_INT(p->ops->set_params(r.priv, &params), 0);
	CHECK_EQ_INT(p->ops->get_status(r.priv, &st), 0);
	CHECK_EQ_INT(st.valid, 0);
	CHECK_EQ_INT(st.pll_locked, 0);
	CHECK_EQ_INT(st.frequency, 474000000);
	CHECK_EQ_INT(st.bandwidth, 7000000);

	/* After a sleep, init returns to the asked channel. */
	CHECK_EQ_INT(p->ops->sleep(r.priv), 0);
	mock_events_clear(&r.mh.events);
	CHECK_EQ_INT(p->ops->init(r.priv), 0);
	check_tune(&r, 474000000, 1);
	CHECK_EQ_INT(tuned_frequency(p, r.priv), 474000000);
	p->ops->release(r.priv);
	mock_host_free(&r.mh);
}

/* The value register 0x20 read back during init: the last read whose
 * register pointer was 0x20. */
static int read_back(const struct mock_events *ev, uint8_t reg)
{
	int value = -1;

	for (size_t i = 1; i < ev->n; i++) {
		const struct mock_event *x = &ev->ev[i], *w = &ev->ev[i - 1];

		if (x->kind == MOCK_EV_READ && w->kind == MOCK_EV_WRITE &&
		    w->len == 1 && w->data[0] == reg)
			value = x->data[0];
	}
	return value;
}

/* What a tune writes to 0x1f, 0x20 and 0x25, as Linux's driver computes
 * it: 0x1f = 0x0e + step, 0x20 = init read-back + 0x0d + step, 0x25 = 0;
 * the step counts the LO's place in its 32 MHz cycle. */
static void test_calibration(const struct mock_plugin *p)
{
	/* LOs 24, 16, 16, 10 and 4 MHz into their 32 MHz cycle. */
	static const uint32_t freqs[] = {602000000, 474000000, 50000000,
					 860000000, 178000000};
	struct rig r;
	int back20;

	rig_init(&r);
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	mock_events_clear(&r.mh.events);
	CHECK_EQ_INT(p->ops->init(r.priv), 0);
	back20 = read_back(&r.mh.events, 0x20);
	CHECK(back20 >= 0);
	for (size_t i = 0; i < sizeof(freqs) / sizeof(freqs[0]); i++) {
		struct tstub_params params =
		    mock_params(TSTUB_DELSYS_DVBT, freqs[i], 8000000);
		uint64_t lo =
		    ((uint64_t)freqs[i] + 1246000000u) / 125000 * 125000;
		uint32_t mhz = (uint32_t)(lo % 32000000u / 1000000u);
		uint8_t s1f = mhz < 8    ? 0
			      : mhz < 12 ? 1
			      : mhz < 16 ? 2
			      : mhz < 24 ? 3
			      : mhz < 28 ? 4
					 : 5;
		uint8_t s20 = mhz < 8    ? 0
			      : mhz < 12 ? 1
			      : mhz < 20 ? 2
			      : mhz < 24 ? 3
			      : mhz < 28 ? 4
					 : 5;

		if (i == 0) /* 24 MHz: 0x1f and 0x20 both 4 steps up */
			CHECK(s1f == 4 && s20 == 4);
		CHECK_EQ_INT(p->ops->set_params(r.priv, &params), 0);
		CHECK_EQ_INT(r.chip.regs[0x1F], 0x0E + s1f);
		CHECK_EQ_INT(r.chip.regs[0x20], (uint8_t)(back20 + 0x0D + s20));
		CHECK_EQ_INT(r.chip.regs[0x25], 0x00);
	}
	p->ops->release(r.priv);
	mock_host_free(&r.mh);

	/* Counters that never settle: -ETIMEDOUT with a log line. */
	rig_init(&r);
	r.chip.never_settles = 1;
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	CHECK_EQ_INT(p->ops->init(r.priv), -ETIMEDOUT);
	CHECK(r.mh.log_errors >= 1);
	p->ops->release(r.priv);
	mock_host_free(&r.mh);
}

static void test_refusals(const struct mock_plugin *p)
{
	static const struct {
		uint32_t delsys, freq, bw;
	} bad[] = {
	    {TSTUB_DELSYS_DVBT, 47999999, 8000000},
	    {TSTUB_DELSYS_DVBT, 860000001, 8000000},
	    {TSTUB_DELSYS_DVBS2, 474000000, 8000000},
	    {TSTUB_DELSYS_RADIO, 98000000, 0},
	    {TSTUB_DELSYS_DVBT, 474000000, 1712000},
	};
	struct tstub_params params;
	struct tstub_freq f;
	struct rig r;
	void *priv = NULL;

	rig_init(&r);
	r.chip.id = 0x38;
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &priv), -ENODEV);
	CHECK(priv == NULL);
	mock_host_free(&r.mh);

	rig_init(&r);
	r.mh.nak_all = 1;
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &priv), -EREMOTEIO);
	mock_host_free(&r.mh);

	rig_init(&r);
	r.cfg.i2c_addr = 0x63; /* nobody there */
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &priv), -EREMOTEIO);
	mock_host_free(&r.mh);

	rig_init(&r);
	CHECK_EQ_INT(p->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned int xfers = r.mh.xfers;

		params = mock_params(bad[i].delsys, bad[i].freq, bad[i].bw);
		CHECK_EQ_INT(p->ops->set_params(r.priv, &params), -EINVAL);
		CHECK_EQ_INT(r.mh.xfers, xfers);
	}
	/* A NAK inside the sequence: the error, and no frequency claimed. */
	params = mock_params(TSTUB_DELSYS_DVBT, 474000000, 8000000);
	r.mh.nak_at = r.mh.xfers + 5;
	CHECK_EQ_INT(p->ops->set_params(r.priv, &params), -EREMOTEIO);
	CHECK_EQ_INT(p->ops->get_frequency(r.priv, &f), 0);
	CHECK_EQ_INT(f.frequency, 0);
	r.mh.nak_at = r.mh.xfers + 1;
	CHECK_EQ_INT(p->ops->init(r.priv), -EREMOTEIO);
	p->ops->release(r.priv);
	mock_host_free(&r.mh);
}

int main(int argc, char **argv)
{
	struct mock_plugin p;

	if (argc != 2) {
		fprintf(stderr, "usage: %s qt1010.so\n", argv[0]);
		return 2;
	}
	if (mock_plugin_open(argv[1], &p))
		return 1;
	test_abi(&p);
	test_init_and_sweep(&p);
	test_status_and_power(&p);
	test_calibration(&p);
	test_refusals(&p);
	mock_plugin_close(&p);
	return check_done("test_plugin_qt1010");
}

// SPDX-License-Identifier: MIT
/*
 * qt1010.c - Quantek QT1010 tuner, 48-860 MHz, as a tunerd plugin.
 *
 * The LO sits 1246 MHz above RF on a 125 kHz grid and is split over three
 * registers (32 MHz, 4 MHz and 125 kHz parts).  A tune is a fixed write
 * sequence bracketed by TUNE_CTRL start/stop, with loop measurements run
 * through the operation register.  The chip has no lock bit: the plugin
 * reports the tuned frequency and nothing else.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "qt1010.h"
#include "qt1010_priv.h"

#define QT1010_EXPORT __attribute__((visibility("default")))

#define qt1010_log(priv, level, ...)                                           \
	(priv)->host->log((priv)->host->ctx, (level), __VA_ARGS__)
#define qt1010_dbg(priv, ...) qt1010_log(priv, TUNERD_LOG_DEBUG, __VA_ARGS__)

#define QT1010_DELSYS                                                          \
	((1u << TSTUB_DELSYS_DVBT) | (1u << TSTUB_DELSYS_DVBT2) |              \
	 (1u << TSTUB_DELSYS_DVBC_A))
#define QT1010_BANDWIDTHS (TSTUB_BW_6MHZ | TSTUB_BW_7MHZ | TSTUB_BW_8MHZ)

/*
 * The init and tune sequences are those of Linux's qt1010.c, the driver
 * proven on the boards that carry this chip; nothing beyond them is
 * documented.  A step writes a register, reads one (the value is not
 * used: the read is part of what makes the loops settle), or measures one
 * (QT1010_MEASURE: start value, idle, operation, re-read until two reads
 * agree, idle).
 */
enum qt1010_op { QT1010_WR, QT1010_RD, QT1010_MEASURE };

/* Where a tune step's value comes from. */
enum qt1010_val {
	QT1010_V_FIXED,
	QT1010_V_BAND,    /* 0x05: RF band */
	QT1010_V_BAND_HI, /* 0x05 again: its high nibble */
	QT1010_V_LO_32M,  /* 0x07 */
	QT1010_V_LO_32M_HI,
	QT1010_V_LO_4M,
	QT1010_V_LO_4M_HI,
	QT1010_V_LO_125K,
	QT1010_V_LOOP_22, /* 0x22: loop start by RF */
	QT1010_V_CAL_1F,
	QT1010_V_CAL_20,
	QT1010_V_CAL_25,
};

struct qt1010_step {
	uint8_t op;
	uint8_t reg;
	uint8_t val;   /* written value, or the operation of a measure */
	uint8_t from;  /* enum qt1010_val (tune steps) */
	uint8_t start; /* a measure's start value */
};

#define W(r, v)                                                                \
	{                                                                      \
		QT1010_WR, (r), (v), QT1010_V_FIXED, 0                         \
	}
#define WV(r, from)                                                            \
	{                                                                      \
		QT1010_WR, (r), 0, (from), 0                                   \
	}
#define R(r)                                                                   \
	{                                                                      \
		QT1010_RD, (r), 0, QT1010_V_FIXED, 0                           \
	}
#define M(r, s, oper)                                                          \
	{                                                                      \
		QT1010_MEASURE, (r), (oper), QT1010_V_FIXED, (s)               \
	}

/* Register 0x05 is written twice: the band, then its high nibble after
 * the loops ran. */
static const struct qt1010_step qt1010_tune_steps[] = {
    W(0x01, 0x80),
    W(0x02, 0x3f),
    WV(0x05, QT1010_V_BAND),
    W(0x06, 0x44),
    WV(0x07, QT1010_V_LO_32M),
    W(0x08, 0x08),
    WV(0x09, QT1010_V_LO_32M_HI),
    WV(0x0a, QT1010_V_LO_4M),
    WV(0x0b, QT1010_V_LO_4M_HI),
    W(0x0c, 0xe1),
    WV(0x1a, QT1010_V_LO_125K),
    W(0x1b, 0x00),
    W(0x1c, 0x89),
    W(0x11, 0xfd),
    W(0x12, 0x91),
    WV(0x22, QT1010_V_LOOP_22),
    W(0x1e, 0x00),
    W(0x1e, 0xd0),
    R(0x22),
    W(0x1e, 0x00),
    R(0x05),
    R(0x22),
    W(0x23, 0xd0),
    W(0x1e, 0x00),
    W(0x1e, 0xe0),
    R(0x23),
    R(0x23),
    W(0x1e, 0x00),
    W(0x24, 0xd0),
    W(0x1e, 0x00),
    W(0x1e, 0xf0),
    R(0x24),
    W(0x1e, 0x00),
    W(0x14, 0x7f),
    W(0x15, 0x7f),
    WV(0x05, QT1010_V_BAND_HI),
    W(0x06, 0x00),
    W(0x15, 0x1f),
    W(0x16, 0xff),
    W(0x18, 0xff),
    WV(0x1f, QT1010_V_CAL_1F),
    WV(0x20, QT1010_V_CAL_20),
    W(0x21, 0x53),
    WV(0x25, QT1010_V_CAL_25),
    W(0x26, 0x15),
    W(0x00, 0x92),
    W(0x02, 0x00),
    W(0x01, 0x00),
};

/* Init, before the nine LO-range measurements and the first tune. */
static const struct qt1010_step qt1010_init_steps[] = {
    W(0x01, 0x80), W(0x0d, 0x84), W(0x0e, 0xb7),
    W(0x2a, 0x23), W(0x2c, 0xdc), M(0x25, 0x40, 0x81),
    W(0x2b, 0x70), W(0x2a, 0x23), M(0x26, 0x08, 0x82),
    W(0x05, 0x14), W(0x06, 0x44), W(0x07, 0x28),
    W(0x08, 0x0b), W(0x11, 0xfd), M(0x22, 0x0d, 0xd0),
    W(0x06, 0x40), W(0x16, 0xf0), W(0x02, 0x38),
    W(0x03, 0x18), W(0x20, 0xe0), M(0x1f, 0x20, 0x84),
    R(0x20),       W(0x03, 0x19), W(0x02, 0x3f),
    W(0x21, 0x53), R(0x21),       W(0x11, 0xfd),
    W(0x05, 0x34), W(0x06, 0x44), W(0x08, 0x08),
};

#undef W
#undef WV
#undef R
#undef M

/* The LO range measurements: register 0x07 from 0x31 to 0x39. */
#define QT1010_RANGE_FIRST 0x31
#define QT1010_RANGE_LAST  0x39

static int qt1010_transfer(struct qt1010_priv *priv,
			   struct tunerd_i2c_msg *msgs, unsigned int n)
{
	const struct tunerd_host *host = priv->host;

	return host->i2c_transfer(host->ctx, msgs, n);
}

static int qt1010_readregs(struct qt1010_priv *priv, uint8_t reg, uint8_t *vals,
			   uint16_t n)
{
	struct tunerd_i2c_msg msgs[2] = {
	    {.addr = priv->addr, .flags = 0, .len = 1, .buf = &reg},
	    {.addr = priv->addr, .flags = TUNERD_I2C_RD, .len = n, .buf = vals},
	};

	return qt1010_transfer(priv, msgs, 2);
}

static int qt1010_writereg(struct qt1010_priv *priv, uint8_t reg, uint8_t val)
{
	uint8_t buf[2] = {reg, val};
	struct tunerd_i2c_msg msg = {
	    .addr = priv->addr, .flags = 0, .len = 2, .buf = buf};

	return qt1010_transfer(priv, &msg, 1);
}

static int qt1010_readreg(struct qt1010_priv *priv, uint8_t reg, uint8_t *val)
{
	return qt1010_readregs(priv, reg, val, 1);
}

/* Start a counter, run its operation, re-read it until two reads agree
 * (Linux waits for that without a bound; here it is bounded). */
static int qt1010_measure(struct qt1010_priv *priv,
			  const struct qt1010_step *st, uint8_t *out)
{
	uint8_t prev = 0, cur = 0;
	int ret, i;

	ret = qt1010_writereg(priv, st->reg, st->start);
	if (!ret)
		ret = qt1010_writereg(priv, QT1010_REG_OPER, QT1010_OPER_IDLE);
	if (!ret)
		ret = qt1010_writereg(priv, QT1010_REG_OPER, st->val);
	if (!ret)
		ret = qt1010_readreg(priv, st->reg, &cur);
	for (i = 0; !ret && i < QT1010_MEAS_READS; i++) {
		prev = cur;
		ret = qt1010_readreg(priv, st->reg, &cur);
		if (!ret && cur == prev) {
			*out = cur;
			return qt1010_writereg(priv, QT1010_REG_OPER,
					       QT1010_OPER_IDLE);
		}
	}
	if (!ret) {
		qt1010_log(priv, TUNERD_LOG_ERR,
			   "measurement of 0x%02x never settled", st->reg);
		ret = -ETIMEDOUT;
	}
	return ret;
}

/* The band and LO registers for an LO (Hz, on the 125 kHz grid). */
static uint8_t qt1010_lo_value(uint8_t from, uint32_t lo)
{
	uint32_t mod1 = lo % 32000000u, mod2 = lo % 4000000u;

	switch (from) {
	case QT1010_V_LO_32M:
		return (uint8_t)(lo / 32000000u);
	case QT1010_V_LO_32M_HI:
		return mod1 < 8000000u ? 0x1d : 0x1c;
	case QT1010_V_LO_4M:
		return (uint8_t)(0x08 | ((1u - mod1 / 4000000u) & 7u));
	case QT1010_V_LO_4M_HI:
		return mod2 < 2000000u ? 0x45 : 0x44;
	case QT1010_V_LO_125K:
		return (uint8_t)(0x78u - mod2 / QT1010_STEP * 8u);
	}
	return 0;
}

static uint8_t qt1010_band(uint32_t rf)
{
	if (rf < 290000000u)
		return 0x14;
	if (rf < 610000000u)
		return 0x34;
	if (rf < 802000000u)
		return 0x54;
	return 0x74;
}

/* The loop start value of register 0x22, by RF. */
static uint8_t qt1010_loop_22(uint32_t rf)
{
	static const struct {
		uint32_t below;
		uint8_t val;
	} bands[] = {{450000000u, 0xd0},
		     {482000000u, 0xd1},
		     {514000000u, 0xd4},
		     {546000000u, 0xd7},
		     {610000000u, 0xda}};

	for (size_t i = 0; i < sizeof(bands) / sizeof(bands[0]); i++)
		if (rf < bands[i].below)
			return bands[i].val;
	return 0xd0;
}

/* The 1f/20 offsets: a step per LO range within the 32 MHz cycle. */
static uint8_t qt1010_cal_step(uint32_t mod1, int reg20)
{
	const uint32_t mhz = mod1 / 1000000u;

	if (mhz < 8)
		return 0;
	if (mhz < 12)
		return 1;
	if (mhz < (reg20 ? 20u : 16u))
		return 2;
	if (mhz < 24)
		return 3;
	if (mhz < 28)
		return 4;
	return 5;
}

/* A tune step's value.  Registers 0x1f and 0x25 get what Linux's driver
 * writes: it keeps neither measurement (its lookup compares the start
 * value with the register number), so 0x1f starts from 0 and 0x25 is 0;
 * 0x20 starts from the value read back at init. */
static uint8_t qt1010_tune_value(const struct qt1010_priv *priv,
				 const struct qt1010_step *st, uint32_t rf,
				 uint32_t lo)
{
	uint32_t mod1 = lo % 32000000u;

	switch (st->from) {
	case QT1010_V_FIXED:
		return st->val;
	case QT1010_V_BAND:
		return qt1010_band(rf);
	case QT1010_V_BAND_HI:
		return qt1010_band(rf) & 0xf0;
	case QT1010_V_LOOP_22:
		return qt1010_loop_22(rf);
	case QT1010_V_CAL_1F:
		return (uint8_t)(0x0e + qt1010_cal_step(mod1, 0));
	case QT1010_V_CAL_20:
		return (uint8_t)(priv->cal_20 + 0x0d +
				 qt1010_cal_step(mod1, 1));
	case QT1010_V_CAL_25:
		return 0;
	}
	return qt1010_lo_value(st->from, lo);
}

static int qt1010_tune(struct qt1010_priv *priv, uint32_t asked, uint32_t bw)
{
	uint32_t div =
	    (uint32_t)(((uint64_t)asked + QT1010_LO_OFFSET) / QT1010_STEP);
	uint32_t lo = div * QT1010_STEP, rf = lo - QT1010_LO_OFFSET;
	uint8_t ignored = 0;
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(qt1010_tune_steps) /
					   sizeof(qt1010_tune_steps[0]);
	     i++) {
		const struct qt1010_step *st = &qt1010_tune_steps[i];

		if (st->op == QT1010_RD)
			ret = qt1010_readreg(priv, st->reg, &ignored);
		else
			ret = qt1010_writereg(
			    priv, st->reg, qt1010_tune_value(priv, st, rf, lo));
	}
	if (ret) {
		/* Half a sequence leaves the LO undefined. */
		priv->tuned = 0;
		qt1010_dbg(priv, "tune %u Hz failed: %d", asked, ret);
		return ret;
	}
	priv->tuned = 1;
	priv->frequency = rf;
	priv->bandwidth = bw;
	return 0;
}

/* The init steps; the value read back from 0x20 is kept. */
static int qt1010_init_regs(struct qt1010_priv *priv)
{
	uint8_t val = 0;
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(qt1010_init_steps) /
					   sizeof(qt1010_init_steps[0]);
	     i++) {
		const struct qt1010_step *st = &qt1010_init_steps[i];

		if (st->op == QT1010_WR)
			ret = qt1010_writereg(priv, st->reg, st->val);
		else if (st->op == QT1010_MEASURE)
			ret = qt1010_measure(priv, st, &val);
		else
			ret = qt1010_readreg(priv, st->reg, &val);
		if (!ret && st->op == QT1010_RD && st->reg == QT1010_REG_CAL_20)
			priv->cal_20 = val;
	}
	return ret;
}

/* One LO range measurement: 0x07 = range, loop 0x22 run once. */
static int qt1010_measure_range(struct qt1010_priv *priv, uint8_t range)
{
	const uint8_t writes[][2] = {{QT1010_REG_LO_32M, range},
				     {QT1010_REG_LOOP, 0xd0},
				     {QT1010_REG_OPER, QT1010_OPER_IDLE},
				     {QT1010_REG_OPER, QT1010_OPER_D0}};
	uint8_t val = 0;
	int ret = 0;

	for (size_t i = 0; !ret && i < sizeof(writes) / sizeof(writes[0]); i++)
		ret = qt1010_writereg(priv, writes[i][0], writes[i][1]);
	if (!ret)
		ret = qt1010_readreg(priv, QT1010_REG_LOOP, &val);
	if (!ret)
		ret = qt1010_writereg(priv, QT1010_REG_OPER, QT1010_OPER_IDLE);
	if (!ret)
		ret = qt1010_writereg(priv, QT1010_REG_LOOP, 0xff);
	return ret;
}

static int qt1010_host_ok(const struct tunerd_host *host)
{
	return host &&
	       host->size >= offsetof(struct tunerd_host, firmware_get) &&
	       host->i2c_transfer && host->sleep_ms && host->log;
}

static int qt1010_probe(const struct tunerd_host *host,
			const struct tunerd_tuner_config *cfg, void **out)
{
	struct qt1010_priv *priv;
	uint8_t id = 0;
	int ret;

	if (!qt1010_host_ok(host) || !cfg ||
	    cfg->size < offsetof(struct tunerd_tuner_config, padding))
		return -EINVAL;
	priv = calloc(1, sizeof(*priv));
	if (!priv)
		return -ENOMEM;
	priv->host = host;
	priv->addr = cfg->i2c_addr ? cfg->i2c_addr : QT1010_DEFAULT_I2C_ADDR;
	ret = qt1010_readregs(priv, QT1010_REG_ID, &id, 1);
	if (ret)
		goto err;
	if (id != QT1010_ID) {
		qt1010_log(priv, TUNERD_LOG_INFO,
			   "no QT1010 at 0x%02x: id 0x%02x", priv->addr, id);
		ret = -ENODEV;
		goto err;
	}
	qt1010_log(priv, TUNERD_LOG_INFO, "QT1010 at 0x%02x", priv->addr);
	*out = priv;
	return 0;
err:
	qt1010_dbg(priv, "probe failed: %d", ret);
	free(priv);
	return ret;
}

static void qt1010_release(void *p)
{
	free(p);
}

static int qt1010_check_params(const struct tstub_params *p, uint32_t *bw)
{
	if (p->delsys >= 32 || !(QT1010_DELSYS & (1u << p->delsys)))
		return -EINVAL;
	if (p->frequency < QT1010_FREQ_MIN || p->frequency > QT1010_FREQ_MAX)
		return -EINVAL;
	switch (p->bandwidth) {
	case 0:
		*bw = 8000000;
		return 0;
	case 6000000:
	case 7000000:
	case 8000000:
		*bw = p->bandwidth;
		return 0;
	}
	return -EINVAL;
}

static int qt1010_init(void *p)
{
	struct qt1010_priv *priv = p;
	uint32_t bw = 0;
	int ret;

	ret = qt1010_init_regs(priv);
	for (uint8_t r = QT1010_RANGE_FIRST; !ret && r <= QT1010_RANGE_LAST;
	     r++)
		ret = qt1010_measure_range(priv, r);
	if (ret)
		goto err;
	qt1010_dbg(priv, "init: 0x20 read 0x%02x", priv->cal_20);
	/* A powered-up chip is tuned somewhere: where it was asked to be,
	 * or where Linux's driver puts it, 545 MHz. */
	if (priv->asked && !qt1010_check_params(&priv->params, &bw))
		ret = qt1010_tune(priv, priv->params.frequency, bw);
	else
		ret = qt1010_tune(priv, QT1010_INIT_FREQ, 8000000);
	if (ret)
		goto err;
	return 0;
err:
	priv->tuned = 0;
	qt1010_dbg(priv, "init failed: %d", ret);
	return ret;
}

/* No power-down register is known for the QT1010: the chip stays as is. */
static int qt1010_sleep(void *p)
{
	(void)p;
	return 0;
}

static int qt1010_set_params(void *p, const struct tstub_params *params)
{
	struct qt1010_priv *priv = p;
	uint32_t bw = 0;
	int ret;

	ret = qt1010_check_params(params, &bw);
	if (ret) {
		qt1010_dbg(priv, "params refused: delsys %u, %u Hz, bw %u",
			   params->delsys, params->frequency,
			   params->bandwidth);
		return ret;
	}
	priv->asked = 1;
	priv->params = *params;
	return qt1010_tune(priv, params->frequency, bw);
}

static int qt1010_get_status(void *p, struct tstub_status *st)
{
	struct qt1010_priv *priv = p;

	memset(st, 0, sizeof(*st));
	st->frequency = priv->tuned ? priv->frequency : 0;
	st->bandwidth = priv->tuned ? priv->bandwidth : 0;
	return 0;
}

static int qt1010_get_frequency(void *p, struct tstub_freq *freq)
{
	struct qt1010_priv *priv = p;

	memset(freq, 0, sizeof(*freq));
	freq->frequency = priv->tuned ? priv->frequency : 0;
	freq->bandwidth = priv->tuned ? priv->bandwidth : 0;
	freq->if_frequency = QT1010_IF;
	return 0;
}

static const struct tunerd_plugin_ops qt1010_ops = {
    .size = sizeof(struct tunerd_plugin_ops),
    .probe = qt1010_probe,
    .release = qt1010_release,
    .init = qt1010_init,
    .sleep = qt1010_sleep,
    .set_params = qt1010_set_params,
    .get_status = qt1010_get_status,
    .get_frequency = qt1010_get_frequency,
};

static const struct tunerd_plugin qt1010_plugin = {
    .size = sizeof(struct tunerd_plugin),
    .abi = TUNERD_PLUGIN_ABI,
    .info =
	{
	    .name = "QT1010",
	    .vendor = "Quantek",
	    .plugin = "qt1010",
	    .chip_id = TSTUB_CHIP_QT1010,
	    .plugin_version = 1,
	    .delsys_mask = QT1010_DELSYS,
	    .bandwidth_mask = QT1010_BANDWIDTHS,
	    .freq_min = QT1010_FREQ_MIN,
	    .freq_max = QT1010_FREQ_MAX,
	    .freq_step = QT1010_STEP,
	    .caps = 0,
	    .if_frequency = QT1010_IF,
	},
    .ops = &qt1010_ops,
};

QT1010_EXPORT int tunerd_plugin_version(int count, const int *versions)
{
	return tunerd_plugin_pick_version(count, versions);
}

QT1010_EXPORT const struct tunerd_plugin *tunerd_plugin_describe(int version)
{
	return version == TUNERD_PLUGIN_ABI ? &qt1010_plugin : NULL;
}

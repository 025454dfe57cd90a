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

struct qt1010_regval {
	uint8_t reg;
	uint8_t val;
};

/* Calibration counters measured at init: register, start value, the
 * operation that measures it. */
static const struct qt1010_cal {
	uint8_t reg;
	uint8_t start;
	uint8_t oper;
} qt1010_cals[] = {
    {QT1010_REG_CAL_25, 0x40, QT1010_OPER_F0},
    {QT1010_REG_CAL_1F, 0x10, QT1010_OPER_D0},
    {QT1010_REG_CAL_20, 0x20, QT1010_OPER_E0},
};

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

static int qt1010_write_list(struct qt1010_priv *priv,
			     const struct qt1010_regval *list, size_t n)
{
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++)
		ret = qt1010_writereg(priv, list[i].reg, list[i].val);
	return ret;
}

static int qt1010_oper(struct qt1010_priv *priv, uint8_t oper)
{
	const struct tunerd_host *host = priv->host;
	int ret = qt1010_writereg(priv, QT1010_REG_OPER, oper);

	if (!ret)
		host->sleep_ms(host->ctx, QT1010_OPER_WAIT_MS);
	return ret;
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

/* The tune writes for an LO (Hz, on the 125 kHz grid), start included. */
static size_t qt1010_tune_list(const struct qt1010_priv *priv, uint32_t rf,
			       uint32_t lo, struct qt1010_regval *list)
{
	uint32_t mod1 = lo % 32000000u, mod2 = lo % 4000000u;
	uint32_t n = mod1 / 4000000u;
	const struct qt1010_regval tune[] = {
	    {QT1010_REG_TUNE_CTRL, QT1010_TUNE_START},
	    {QT1010_REG_SETUP, QT1010_SETUP_VAL},
	    {QT1010_REG_BAND, qt1010_band(rf)},
	    {QT1010_REG_LO_32M, (uint8_t)(lo / 32000000u)},
	    {QT1010_REG_LO_32M_HI, mod1 < 8000000u ? 0x1D : 0x1C},
	    {QT1010_REG_LO_4M, (uint8_t)(0x08 | ((1u - n) & 7u))},
	    {QT1010_REG_LO_4M_HI, mod2 < 2000000u ? 0x45 : 0x44},
	    {QT1010_REG_FIXED_11, QT1010_FIXED_11_VAL},
	    {QT1010_REG_FIXED_12, QT1010_FIXED_12_VAL},
	    {QT1010_REG_LO_125K, (uint8_t)(0x78u - mod2 / QT1010_STEP * 8u)},
	    /* The loops start from the counters this part measured. */
	    {QT1010_REG_CAL_1F, priv->cal_1f},
	    {QT1010_REG_CAL_20, priv->cal_20},
	    {QT1010_REG_CAL_25, priv->cal_25},
	};

	memcpy(list, tune, sizeof(tune));
	return sizeof(tune) / sizeof(tune[0]);
}

/* Run the loop measurements; their results stay in the chip, the plugin
 * only reads them back so they show in the debug log. */
static int qt1010_run_loops(struct qt1010_priv *priv)
{
	uint8_t loop[QT1010_LOOP_LEN], band = 0;
	int ret;

	ret = qt1010_oper(priv, QT1010_OPER_D0);
	if (!ret)
		ret =
		    qt1010_readregs(priv, QT1010_REG_LOOP, loop, sizeof(loop));
	if (!ret)
		ret = qt1010_oper(priv, QT1010_OPER_E0);
	if (!ret)
		ret = qt1010_readregs(priv, QT1010_REG_BAND, &band, 1);
	if (!ret)
		ret = qt1010_oper(priv, QT1010_OPER_F0);
	if (!ret)
		ret =
		    qt1010_readregs(priv, QT1010_REG_LOOP, loop, sizeof(loop));
	if (!ret)
		qt1010_dbg(priv, "loops %02x %02x %02x, band 0x%02x", loop[0],
			   loop[1], loop[2], band);
	return ret;
}

static int qt1010_tune(struct qt1010_priv *priv, uint32_t rf, uint32_t bw)
{
	struct qt1010_regval list[16];
	uint32_t div =
	    (uint32_t)(((uint64_t)rf + QT1010_LO_OFFSET) / QT1010_STEP);
	uint32_t lo = div * QT1010_STEP;
	size_t n = qt1010_tune_list(priv, rf, lo, list);
	int ret;

	ret = qt1010_write_list(priv, list, n);
	if (ret)
		goto err;
	ret = qt1010_run_loops(priv);
	if (ret)
		goto err;
	ret = qt1010_writereg(priv, QT1010_REG_TUNE_CTRL, QT1010_TUNE_STOP);
	if (ret)
		goto err;
	priv->tuned = 1;
	priv->frequency = lo - QT1010_LO_OFFSET;
	priv->bandwidth = bw;
	return 0;
err:
	/* Half a sequence leaves the LO undefined. */
	priv->tuned = 0;
	qt1010_dbg(priv, "tune %u Hz failed: %d", rf, ret);
	return ret;
}

/* Start a counter, run its operation, re-read until two reads agree. */
static int qt1010_measure(struct qt1010_priv *priv,
			  const struct qt1010_cal *cal, uint8_t *out)
{
	const struct tunerd_host *host = priv->host;
	uint8_t prev = 0, cur = 0;
	int ret, i;

	ret = qt1010_writereg(priv, cal->reg, cal->start);
	if (!ret)
		ret = qt1010_writereg(priv, QT1010_REG_OPER, QT1010_OPER_IDLE);
	if (!ret)
		ret = qt1010_writereg(priv, QT1010_REG_OPER, cal->oper);
	if (!ret)
		ret = qt1010_readregs(priv, cal->reg, &prev, 1);
	for (i = 1; !ret && i < QT1010_MEAS_READS; i++) {
		host->sleep_ms(host->ctx, QT1010_MEAS_WAIT_MS);
		ret = qt1010_readregs(priv, cal->reg, &cur, 1);
		if (!ret && cur == prev) {
			*out = cur;
			return 0;
		}
		prev = cur;
	}
	if (!ret) {
		qt1010_log(priv, TUNERD_LOG_ERR,
			   "calibration 0x%02x never settled", cal->reg);
		ret = -ETIMEDOUT;
	}
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
	uint8_t *dest[] = {&priv->cal_25, &priv->cal_1f, &priv->cal_20};
	uint32_t bw = 0;
	int ret = 0;

	for (size_t i = 0; i < sizeof(qt1010_cals) / sizeof(qt1010_cals[0]);
	     i++) {
		ret = qt1010_measure(priv, &qt1010_cals[i], dest[i]);
		if (ret)
			goto err;
	}
	qt1010_dbg(priv, "calibration 1f=%02x 20=%02x 25=%02x", priv->cal_1f,
		   priv->cal_20, priv->cal_25);
	/* A powered-up chip is tuned somewhere: where it was asked to be,
	 * or mid-band. */
	if (priv->asked && !qt1010_check_params(&priv->params, &bw))
		ret = qt1010_tune(priv, priv->params.frequency, bw);
	else
		ret = qt1010_tune(priv, QT1010_INIT_FREQ, 8000000);
	if (ret)
		goto err;
	return 0;
err:
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

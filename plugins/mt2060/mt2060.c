// SPDX-License-Identifier: MIT
/*
 * mt2060.c - Microtune MT2060 dual-conversion tuner, 48-860 MHz, as a
 * tunerd plugin.
 *
 * RF is converted up to IF1 (about 1220 MHz, board-specific) by LO1 and
 * down to IF2 (36.15 MHz) by LO2.  LO1 moves in 250 kHz steps, LO2 in
 * 50 kHz steps, so every 50 kHz channel raster is reachable.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mt2060.h"
#include "mt2060_priv.h"

#define MT2060_EXPORT __attribute__((visibility("default")))

#define mt2060_log(priv, level, ...)                                           \
	(priv)->host->log((priv)->host->ctx, (level), __VA_ARGS__)
#define mt2060_dbg(priv, ...) mt2060_log(priv, TUNERD_LOG_DEBUG, __VA_ARGS__)

#define MT2060_DELSYS                                                          \
	((1u << TSTUB_DELSYS_DVBT) | (1u << TSTUB_DELSYS_DVBT2) |              \
	 (1u << TSTUB_DELSYS_DVBC_A))
#define MT2060_BANDWIDTHS (TSTUB_BW_6MHZ | TSTUB_BW_7MHZ | TSTUB_BW_8MHZ)

/* Calibration settings: LO registers 1..5, then registers 9..0x11. */
static const uint8_t mt2060_cal_lo[5] = {0x3F, 0x74, 0x00, 0x08, 0x93};
static const uint8_t mt2060_cal_misc[9] = {0x20, 0x1E, 0x30, 0xFF, 0x80,
					   0xFF, 0x00, 0x2C, 0x42};

static int mt2060_transfer(struct mt2060_priv *priv,
			   struct tunerd_i2c_msg *msgs, unsigned int n)
{
	const struct tunerd_host *host = priv->host;

	return host->i2c_transfer(host->ctx, msgs, n);
}

static int mt2060_readreg(struct mt2060_priv *priv, uint8_t reg, uint8_t *val)
{
	struct tunerd_i2c_msg msgs[2] = {
	    {.addr = priv->addr, .flags = 0, .len = 1, .buf = &reg},
	    {.addr = priv->addr, .flags = TUNERD_I2C_RD, .len = 1, .buf = val},
	};

	return mt2060_transfer(priv, msgs, 2);
}

/* Auto-increment writes, split where the board caps a write's length. */
static int mt2060_writeregs(struct mt2060_priv *priv, uint8_t reg,
			    const uint8_t *vals, size_t n)
{
	uint8_t buf[MT2060_BURST_MAX + 1];
	size_t cap = priv->max_write ? priv->max_write : MT2060_BURST_MAX;
	struct tunerd_i2c_msg msg = {.addr = priv->addr, .buf = buf};
	int ret;

	if (n > MT2060_BURST_MAX)
		return -EINVAL;
	while (n) {
		size_t chunk = n < cap ? n : cap;

		buf[0] = reg;
		memcpy(buf + 1, vals, chunk);
		msg.len = (uint16_t)(chunk + 1);
		ret = mt2060_transfer(priv, &msg, 1);
		if (ret)
			return ret;
		reg = (uint8_t)(reg + chunk);
		vals += chunk;
		n -= chunk;
	}
	return 0;
}

static int mt2060_writereg(struct mt2060_priv *priv, uint8_t reg, uint8_t val)
{
	return mt2060_writeregs(priv, reg, &val, 1);
}

/* LNA band by RF: upper limits in MHz, band codes from 0xB0 down. */
static uint8_t mt2060_lnaband(uint32_t rf_khz)
{
	static const uint16_t limit_mhz[] = {95,  180, 260, 335, 425,
					     480, 570, 645, 730, 810};
	size_t i;

	for (i = 0; i < sizeof(limit_mhz) / sizeof(limit_mhz[0]); i++)
		if (rf_khz <= limit_mhz[i] * 1000u)
			break;
	return (uint8_t)((0xB - i) << 4);
}

/* Registers 1..5 for RF (kHz): LO1 on its 250 kHz grid above RF + IF1,
 * LO2 the 50 kHz step that brings the result to IF2. */
static void mt2060_compute(const struct mt2060_priv *priv, uint32_t rf_khz,
			   uint8_t regs[5])
{
	uint32_t f_lo1 = (rf_khz + priv->if1_khz) / MT2060_LO1_STEP_KHZ *
			 MT2060_LO1_STEP_KHZ;
	uint32_t f_lo2 = f_lo1 - rf_khz - MT2060_IF2_KHZ;
	uint32_t num1_total = f_lo1 / MT2060_LO1_STEP_KHZ;
	uint32_t div1 = num1_total / 64, num1 = num1_total & 0x3F;
	uint32_t n, div2, num2;

	f_lo2 = (f_lo2 + MT2060_LO2_STEP_KHZ / 2) / MT2060_LO2_STEP_KHZ *
		MT2060_LO2_STEP_KHZ;
	n = (uint32_t)((uint64_t)f_lo2 * 64 / 125);
	div2 = n / 8192;
	num2 = n & 0x1FFF;

	regs[0] = (uint8_t)(mt2060_lnaband(rf_khz) | ((num1 >> 2) & 0x0F));
	regs[1] = (uint8_t)div1;
	regs[2] = (uint8_t)((num2 & 0x0F) | ((num1 & 3) << 4));
	regs[3] = (uint8_t)((num2 >> 4) & 0xFF);
	regs[4] = (uint8_t)(((num2 >> 12) & 1) | (div2 << 1));
}

/* The RF (Hz) registers 1..5 tune to, on the 50 kHz raster.  LO2's
 * resolution is 16 MHz / 8192 = 15625/8 Hz, so work in 1/8 Hz. */
static uint32_t mt2060_decode(const uint8_t regs[5])
{
	uint64_t num1 = ((regs[0] & 0x0Fu) << 2) | ((regs[2] >> 4) & 3u);
	uint64_t div1 = regs[1];
	uint64_t num2 = (regs[2] & 0x0Fu) | ((uint64_t)regs[3] << 4) |
			((uint64_t)(regs[4] & 1u) << 12);
	uint64_t div2 = regs[4] >> 1;
	uint64_t lo1 = (div1 * 64 + num1) * MT2060_LO1_STEP_KHZ * 1000 * 8;
	uint64_t lo2 = (div2 * 8192 + num2) * 15625;
	uint64_t if2 = (uint64_t)MT2060_IF2_KHZ * 1000 * 8;
	uint64_t step = (uint64_t)MT2060_STEP_HZ * 8;

	if (lo1 < lo2 + if2)
		return 0;
	return (uint32_t)((lo1 - lo2 - if2 + step / 2) / step * MT2060_STEP_HZ);
}

static int mt2060_calibrate(struct mt2060_priv *priv)
{
	const struct tunerd_host *host = priv->host;
	uint8_t lo2c1 = mt2060_cal_lo[MT2060_REG_LO2C1 - MT2060_REG_LO1C1];
	uint8_t stat = 0;
	int ret, i;

	ret = mt2060_writeregs(priv, MT2060_REG_LO1C1, mt2060_cal_lo,
			       sizeof(mt2060_cal_lo));
	if (ret)
		goto out;
	ret = mt2060_writeregs(priv, MT2060_REG_MISC_CTRL, mt2060_cal_misc,
			       sizeof(mt2060_cal_misc));
	if (ret)
		goto out;
	ret =
	    mt2060_writereg(priv, MT2060_REG_VGAG,
			    (uint8_t)(priv->clock_out << 6 | MT2060_VGAG_CAL));
	if (ret)
		goto out;
	/* The FM filter is measured while FM1SS toggles.  FM1CA starts the
	 * measurement once, in the first round, while FM1SS is already set:
	 * the order Linux's driver uses, the one proven on boards. */
	for (i = 0; i < MT2060_CAL_ROUNDS; i++) {
		ret = mt2060_writereg(priv, MT2060_REG_LO2C1,
				      lo2c1 | MT2060_FM1SS);
		if (ret)
			goto out;
		host->sleep_ms(host->ctx, MT2060_CAL_WAIT_MS);
		if (i == 0) {
			ret = mt2060_writereg(priv, MT2060_REG_LO2C1,
					      lo2c1 | MT2060_FM1SS |
						  MT2060_FM1CA);
			if (ret)
				goto out;
			host->sleep_ms(host->ctx, MT2060_CAL_WAIT_MS);
		}
		ret = mt2060_writereg(priv, MT2060_REG_LO2C1, lo2c1);
		if (ret)
			goto out;
		host->sleep_ms(host->ctx, MT2060_CAL_WAIT_MS);
	}
	for (i = 0; i < MT2060_CAL_POLLS; i++) {
		ret = mt2060_readreg(priv, MT2060_REG_MISC_STAT, &stat);
		if (ret || stat & MT2060_FM_CAL_DONE)
			break;
		host->sleep_ms(host->ctx, MT2060_CAL_WAIT_MS);
	}
	if (ret)
		goto out;
	/* An uncalibrated FM filter costs image rejection, not the tune. */
	if (!(stat & MT2060_FM_CAL_DONE)) {
		mt2060_log(priv, TUNERD_LOG_WARN, "FM calibration timed out");
		return 0;
	}
	ret = mt2060_readreg(priv, MT2060_REG_FM_FREQ, &priv->fm_freq);
out:
	if (ret)
		mt2060_dbg(priv, "calibration failed: %d", ret);
	return ret;
}

static int mt2060_host_ok(const struct tunerd_host *host)
{
	return host &&
	       host->size >= offsetof(struct tunerd_host, firmware_get) &&
	       host->i2c_transfer && host->sleep_ms && host->log;
}

static int mt2060_probe(const struct tunerd_host *host,
			const struct tunerd_tuner_config *cfg, void **out)
{
	struct mt2060_priv *priv;
	uint8_t id = 0;
	int ret;

	if (!mt2060_host_ok(host) || !cfg ||
	    cfg->size < offsetof(struct tunerd_tuner_config, padding))
		return -EINVAL;
	priv = calloc(1, sizeof(*priv));
	if (!priv)
		return -ENOMEM;
	priv->host = host;
	priv->addr = cfg->i2c_addr ? cfg->i2c_addr : MT2060_DEFAULT_I2C_ADDR;
	priv->clock_out = (uint8_t)MT2060_CFG_CLOCK_OUT(cfg->config);
	priv->max_write = (uint8_t)MT2060_CFG_MAX_WRITE(cfg->config);
	priv->if1_khz = MT2060_CFG_IF1_MHZ(cfg->config) * 1000u;
	if (!priv->if1_khz)
		priv->if1_khz = MT2060_DEFAULT_IF1_MHZ * 1000u;
	/* DIV1 and DIV2 are 8 and 7 bits wide: IF1 stays near 1220 MHz. */
	if (priv->if1_khz < 1000000 || priv->if1_khz > 1500000) {
		mt2060_log(priv, TUNERD_LOG_ERR, "IF1 %u MHz out of range",
			   priv->if1_khz / 1000);
		ret = -EINVAL;
		goto err;
	}
	ret = mt2060_readreg(priv, MT2060_REG_PART_REV, &id);
	if (ret)
		goto err;
	if (id != MT2060_PART_REV) {
		mt2060_log(priv, TUNERD_LOG_INFO,
			   "no MT2060 at 0x%02x: part id 0x%02x", priv->addr,
			   id);
		ret = -ENODEV;
		goto err;
	}
	/* Powered up for the calibration, then asleep until init. */
	ret = mt2060_writereg(priv, MT2060_REG_MISC_CTRL, MT2060_MISC_CTRL_ON);
	if (ret)
		goto err;
	ret = mt2060_calibrate(priv);
	if (ret)
		goto err;
	ret = mt2060_writereg(priv, MT2060_REG_MISC_CTRL, MT2060_MISC_CTRL_OFF);
	if (ret)
		goto err;
	mt2060_log(priv, TUNERD_LOG_INFO,
		   "MT2060 at 0x%02x, IF1 %u MHz, FM filter 0x%02x", priv->addr,
		   priv->if1_khz / 1000, priv->fm_freq);
	*out = priv;
	return 0;
err:
	mt2060_dbg(priv, "probe failed: %d", ret);
	free(priv);
	return ret;
}

static void mt2060_release(void *p)
{
	free(p);
}

static int mt2060_init(void *p)
{
	struct mt2060_priv *priv = p;
	int ret;

	ret = mt2060_writereg(priv, MT2060_REG_MISC_CTRL, MT2060_MISC_CTRL_ON);
	if (ret)
		goto err;
	ret = mt2060_writereg(priv, MT2060_REG_VGAG,
			      (uint8_t)(priv->clock_out << 6 | MT2060_VGAG_ON));
	if (ret)
		goto err;
	return 0;
err:
	mt2060_dbg(priv, "init failed: %d", ret);
	return ret;
}

static int mt2060_sleep(void *p)
{
	struct mt2060_priv *priv = p;
	int ret;

	ret =
	    mt2060_writereg(priv, MT2060_REG_VGAG,
			    (uint8_t)(priv->clock_out << 6 | MT2060_VGAG_OFF));
	if (ret)
		goto err;
	ret = mt2060_writereg(priv, MT2060_REG_MISC_CTRL, MT2060_MISC_CTRL_OFF);
	if (ret)
		goto err;
	return 0;
err:
	mt2060_dbg(priv, "sleep failed: %d", ret);
	return ret;
}

static int mt2060_check_params(const struct tstub_params *p, uint32_t *bw)
{
	if (p->delsys >= 32 || !(MT2060_DELSYS & (1u << p->delsys)))
		return -EINVAL;
	if (p->frequency < MT2060_FREQ_MIN_HZ ||
	    p->frequency > MT2060_FREQ_MAX_HZ)
		return -EINVAL;
	switch (p->bandwidth) {
	case 0:
		*bw = 8000000; /* the IF filter is an 8 MHz SAW */
		return 0;
	case 6000000:
	case 7000000:
	case 8000000:
		*bw = p->bandwidth;
		return 0;
	}
	return -EINVAL;
}

static int mt2060_wait_lock(struct mt2060_priv *priv, int *locked)
{
	const struct tunerd_host *host = priv->host;
	uint8_t status = 0;
	int ret, i;

	*locked = 0;
	for (i = 0; i < MT2060_LOCK_TRIES; i++) {
		if (i)
			host->sleep_ms(host->ctx, MT2060_LOCK_WAIT_MS);
		ret = mt2060_readreg(priv, MT2060_REG_LO_STATUS, &status);
		if (ret)
			return ret;
		if ((status & MT2060_LOCKED) == MT2060_LOCKED) {
			*locked = 1;
			return 0;
		}
	}
	return 0;
}

static int mt2060_set_params(void *p, const struct tstub_params *params)
{
	struct mt2060_priv *priv = p;
	uint8_t regs[5];
	uint32_t bw = 0;
	int locked, ret;

	ret = mt2060_check_params(params, &bw);
	if (ret)
		goto err;
	/* Truncated to the kHz, as the kernel's driver does: both then
	 * write the same registers for every frequency. */
	mt2060_compute(priv, params->frequency / 1000, regs);
	ret = mt2060_writereg(priv, MT2060_REG_LO1B1, MT2060_LO1B1_TUNE);
	if (ret)
		goto err;
	ret = mt2060_writeregs(priv, MT2060_REG_LO1C1, regs, sizeof(regs));
	if (ret)
		goto err;
	priv->tuned = 1;
	priv->frequency = mt2060_decode(regs);
	priv->bandwidth = bw;
	ret = mt2060_wait_lock(priv, &locked);
	if (ret)
		goto err;
	/* Not an error: get_status reports the lock as it comes. */
	if (!locked)
		mt2060_dbg(priv, "%u Hz: PLL not locked yet", priv->frequency);
	return 0;
err:
	mt2060_dbg(priv, "set_params %u Hz failed: %d", params->frequency, ret);
	return ret;
}

static int mt2060_get_status(void *p, struct tstub_status *st)
{
	struct mt2060_priv *priv = p;
	uint8_t status = 0;
	int ret;

	memset(st, 0, sizeof(*st));
	ret = mt2060_readreg(priv, MT2060_REG_LO_STATUS, &status);
	if (ret) {
		mt2060_dbg(priv, "get_status failed: %d", ret);
		return ret;
	}
	st->pll_locked =
	    priv->tuned && (status & MT2060_LOCKED) == MT2060_LOCKED;
	st->valid = TSTUB_ST_PLL_LOCK;
	st->frequency = priv->tuned ? priv->frequency : 0;
	st->bandwidth = priv->tuned ? priv->bandwidth : 0;
	return 0;
}

static int mt2060_get_frequency(void *p, struct tstub_freq *freq)
{
	struct mt2060_priv *priv = p;

	memset(freq, 0, sizeof(*freq));
	freq->frequency = priv->tuned ? priv->frequency : 0;
	freq->bandwidth = priv->tuned ? priv->bandwidth : 0;
	freq->if_frequency = MT2060_IF_HZ;
	return 0;
}

static const struct tunerd_plugin_ops mt2060_ops = {
    .size = sizeof(struct tunerd_plugin_ops),
    .probe = mt2060_probe,
    .release = mt2060_release,
    .init = mt2060_init,
    .sleep = mt2060_sleep,
    .set_params = mt2060_set_params,
    .get_status = mt2060_get_status,
    .get_frequency = mt2060_get_frequency,
};

static const struct tunerd_plugin mt2060_plugin = {
    .size = sizeof(struct tunerd_plugin),
    .abi = TUNERD_PLUGIN_ABI,
    .info =
	{
	    .name = "MT2060",
	    .vendor = "Microtune",
	    .plugin = "mt2060",
	    .chip_id = TSTUB_CHIP_MT2060,
	    .plugin_version = 1,
	    .delsys_mask = MT2060_DELSYS,
	    .bandwidth_mask = MT2060_BANDWIDTHS,
	    .freq_min = MT2060_FREQ_MIN_HZ,
	    .freq_max = MT2060_FREQ_MAX_HZ,
	    .freq_step = MT2060_STEP_HZ,
	    .caps = TSTUB_CHIPCAP_PLL_LOCK,
	    .if_frequency = MT2060_IF_HZ,
	},
    .ops = &mt2060_ops,
};

MT2060_EXPORT int tunerd_plugin_version(int count, const int *versions)
{
	return tunerd_plugin_pick_version(count, versions);
}

MT2060_EXPORT const struct tunerd_plugin *tunerd_plugin_describe(int version)
{
	return version == TUNERD_PLUGIN_ABI ? &mt2060_plugin : NULL;
}

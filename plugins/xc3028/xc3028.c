// SPDX-License-Identifier: MIT
/*
 * xc3028.c - Xceive XC3028 tuner, 42-864 MHz, as a tunerd plugin.
 *
 * The chip runs firmware: a BASE image (F8MHZ for 7/8 MHz channels), an
 * optional INIT1, one standard image (DTV, ATSC, analog TV by v4l2
 * standard, FM) and an SCODE entry for the demodulator's IF.  The set is
 * uploaded after a reset whenever a tune needs a different one, then the
 * tune itself is a divider in 15.625 kHz steps.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "xc3028.h"
#include "xc3028_priv.h"

#define XC3028_EXPORT __attribute__((visibility("default")))

#define XC3028_DELSYS                                                          \
	((1u << TSTUB_DELSYS_DVBT) | (1u << TSTUB_DELSYS_DVBC_A) |             \
	 (1u << TSTUB_DELSYS_ATSC) | (1u << TSTUB_DELSYS_ANALOG_TV) |          \
	 (1u << TSTUB_DELSYS_RADIO))
#define XC3028_BANDWIDTHS (TSTUB_BW_6MHZ | TSTUB_BW_7MHZ | TSTUB_BW_8MHZ)

/* Writes only: the host never changes a write segment's bytes. */
int xc3028_write(struct xc3028_priv *priv, const uint8_t *buf, uint16_t len)
{
	const struct tunerd_host *host = priv->host;
	struct tunerd_i2c_msg msg = {.addr = priv->addr,
				     .flags = 0,
				     .len = len,
				     .buf = (uint8_t *)(uintptr_t)buf};

	return host->i2c_transfer(host->ctx, &msg, 1);
}

static int xc3028_write_reg(struct xc3028_priv *priv, uint16_t reg,
			    uint16_t val)
{
	uint8_t buf[4] = {(uint8_t)(priv->cmd_flag | reg >> 8), (uint8_t)reg,
			  (uint8_t)(val >> 8), (uint8_t)val};

	return xc3028_write(priv, buf, sizeof(buf));
}

static int xc3028_read_reg(struct xc3028_priv *priv, uint16_t reg,
			   uint16_t *val)
{
	const struct tunerd_host *host = priv->host;
	uint8_t addr[2] = {(uint8_t)(reg >> 8), (uint8_t)reg}, data[2] = {0};
	struct tunerd_i2c_msg msgs[2] = {
	    {.addr = priv->addr, .flags = 0, .len = 2, .buf = addr},
	    {.addr = priv->addr, .flags = TUNERD_I2C_RD, .len = 2, .buf = data},
	};
	int ret = host->i2c_transfer(host->ctx, msgs, 2);

	*val = (uint16_t)(data[0] << 8 | data[1]);
	return ret;
}

static void xc3028_mode_dtv6(struct xc3028_mode *mode, uint32_t std_type)
{
	mode->base_type = XC3028_FW_BASE;
	mode->std_type = std_type;
	mode->offset = XC3028_OFFSET_DTV6;
	mode->bandwidth = 6000000;
}

/*
 * 7 and 8 MHz channels.  DTV78 serves the band plan with 7 MHz in VHF and
 * 8 MHz in UHF; it is used once both kinds were tuned, and only for
 * channels of that plan.
 */
static void xc3028_mode_dtv78(struct xc3028_mode *mode, uint32_t freq,
			      uint32_t bw)
{
	int vhf = freq < XC3028_UHF_MIN;
	int in_plan = (bw == 7000000) == vhf;

	if (bw == 7000000 && vhf)
		mode->vhf7 = 1;
	if (bw == 8000000 && !vhf)
		mode->uhf8 = 1;
	mode->base_type = XC3028_FW_BASE | XC3028_FW_F8MHZ;
	if (in_plan && mode->vhf7 && mode->uhf8)
		mode->std_type = XC3028_FW_DTV78;
	else
		mode->std_type =
		    bw == 7000000 ? XC3028_FW_DTV7 : XC3028_FW_DTV8;
	mode->offset = XC3028_OFFSET_DTV78;
	mode->bandwidth = bw;
}

static int xc3028_mode_digital(const struct tstub_params *p,
			       struct xc3028_mode *mode)
{
	uint32_t bw = p->bandwidth ? p->bandwidth : 8000000;

	switch (bw) {
	case 6000000:
		/* 6 MHz DVB needs the QAM variant of DTV6. */
		xc3028_mode_dtv6(mode, XC3028_FW_DTV6 | XC3028_FW_QAM);
		return 0;
	case 7000000:
	case 8000000:
		xc3028_mode_dtv78(mode, p->frequency, bw);
		return 0;
	}
	return -EINVAL;
}

static void xc3028_mode_analog(const struct tstub_params *p,
			       struct xc3028_mode *mode)
{
	mode->analog = 1;
	mode->std = p->std;
	mode->base_type = XC3028_FW_BASE;
	if (!(p->std & ~XC3028_STD_MN)) {
		mode->bandwidth = 6000000;
		return;
	}
	mode->base_type |= XC3028_FW_F8MHZ;
	mode->bandwidth =
	    !(p->std & ~XC3028_STD_BG) && p->frequency < XC3028_UHF_MIN
		? 7000000
		: 8000000;
}

static int xc3028_mode_from_params(const struct xc3028_priv *priv,
				   const struct tstub_params *p,
				   struct xc3028_mode *mode)
{
	memset(mode, 0, sizeof(*mode));
	mode->delsys = p->delsys;
	mode->vhf7 = priv->vhf7;
	mode->uhf8 = priv->uhf8;
	if (p->frequency < XC3028_FREQ_MIN || p->frequency > XC3028_FREQ_MAX)
		return -EINVAL;
	switch (p->delsys) {
	case TSTUB_DELSYS_DVBT:
	case TSTUB_DELSYS_DVBC_A:
		return xc3028_mode_digital(p, mode);
	case TSTUB_DELSYS_ATSC:
		if (p->bandwidth && p->bandwidth != 6000000)
			return -EINVAL;
		xc3028_mode_dtv6(mode, XC3028_FW_ATSC | XC3028_FW_D2633);
		return 0;
	case TSTUB_DELSYS_ANALOG_TV:
		if (!p->std)
			return -EINVAL;
		xc3028_mode_analog(p, mode);
		return 0;
	case TSTUB_DELSYS_RADIO:
		mode->radio = 1;
		mode->base_type = XC3028_FW_BASE;
		mode->std_type = XC3028_FW_FM;
		mode->bandwidth = XC3028_RADIO_BW;
		return 0;
	}
	return -EINVAL;
}

/* What probe loads: DVB-T 8 MHz in UHF. */
static void xc3028_mode_default(const struct xc3028_priv *priv,
				struct xc3028_mode *mode)
{
	const struct tstub_params dvbt8 = {.delsys = TSTUB_DELSYS_DVBT,
					   .frequency = XC3028_UHF_MIN,
					   .bandwidth = 8000000};

	xc3028_mode_from_params(priv, &dvbt8, mode);
}

static int xc3028_same_set(const struct xc3028_fwset *a,
			   const struct xc3028_fwset *b)
{
	return a->base == b->base && a->init1 == b->init1 && a->std == b->std &&
	       a->scode == b->scode;
}

static int xc3028_upload_set(struct xc3028_priv *priv,
			     const struct xc3028_fwset *set)
{
	const struct tunerd_host *host = priv->host;
	int ret;

	/* New firmware only loads into a freshly reset chip. */
	ret = host->bridge_ctrl(host->ctx, TSTUB_CTRL_TUNER_RESET, 0);
	if (!ret)
		ret = xc3028_fw_upload(priv, set->base);
	if (!ret && set->init1 >= 0)
		ret = xc3028_fw_upload(priv, set->init1);
	if (!ret && set->std >= 0)
		ret = xc3028_fw_upload(priv, set->std);
	if (!ret && set->scode >= 0)
		ret = xc3028_fw_send_scode(priv, set->scode);
	return ret;
}

/* Make the chip run the firmware the mode needs.  At probe the standard
 * image may be missing (need_std 0): BASE alone answers the ID. */
static int xc3028_load(struct xc3028_priv *priv, const struct xc3028_mode *mode,
		       int need_std)
{
	struct xc3028_fwset set;
	int ret;

	xc3028_fw_pick(priv, mode, &set);
	if (set.base < 0 || (need_std && set.std < 0)) {
		xc3028_log(priv, TUNERD_LOG_ERR,
			   "firmware has no %s image for delsys %u, type "
			   "0x%x, std 0x%llx",
			   set.base < 0 ? "BASE" : "standard", mode->delsys,
			   set.base < 0 ? mode->base_type : mode->std_type,
			   (unsigned long long)mode->std);
		return -ENOENT;
	}
	if (priv->loaded_valid && xc3028_same_set(&set, &priv->loaded))
		return 0;
	priv->loaded_valid = 0;
	ret = xc3028_upload_set(priv, &set);
	if (ret) {
		xc3028_dbg(priv, "firmware upload failed: %d", ret);
		return ret;
	}
	priv->loaded = set;
	priv->loaded_valid = 1;
	xc3028_dbg(priv, "firmware images base %d init1 %d std %d scode %d",
		   set.base, set.init1, set.std, set.scode);
	return 0;
}

static int xc3028_tune(struct xc3028_priv *priv, const struct xc3028_mode *mode,
		       uint32_t freq)
{
	const struct tunerd_host *host = priv->host;
	uint32_t div = (freq - mode->offset + XC3028_STEP / 2) / XC3028_STEP;
	uint8_t divider[4] = {(uint8_t)(div >> 24), (uint8_t)(div >> 16),
			      (uint8_t)(div >> 8), (uint8_t)div};
	static const uint8_t soft_reset[2] = {0x00, 0x00};
	int ret = 0;

	priv->tuned = 0;
	if (mode->analog)
		ret = xc3028_write(priv, soft_reset, sizeof(soft_reset));
	if (!ret)
		ret = xc3028_write_reg(priv, XC3028_CMD_RF_FREQ, 0);
	if (ret)
		return ret;
	host->sleep_ms(host->ctx, XC3028_FREQ_CMD_WAIT);
	ret = xc3028_write(priv, divider, sizeof(divider));
	if (ret)
		return ret;
	host->sleep_ms(host->ctx, XC3028_TUNE_WAIT);
	priv->tuned = 1;
	priv->mode = *mode;
	priv->frequency = div * XC3028_STEP + mode->offset;
	return 0;
}

static int xc3028_set_params(void *p, const struct tstub_params *params)
{
	struct xc3028_priv *priv = p;
	struct xc3028_mode mode;
	int ret;

	ret = xc3028_mode_from_params(priv, params, &mode);
	if (ret) {
		xc3028_dbg(priv, "params refused: delsys %u, %u Hz, bw %u",
			   params->delsys, params->frequency,
			   params->bandwidth);
		return ret;
	}
	ret = xc3028_load(priv, &mode, 1);
	if (ret)
		goto err;
	priv->vhf7 = mode.vhf7;
	priv->uhf8 = mode.uhf8;
	ret = xc3028_tune(priv, &mode, params->frequency);
	if (ret)
		goto err;
	return 0;
err:
	xc3028_dbg(priv, "set_params %u Hz failed: %d", params->frequency, ret);
	return ret;
}

static int xc3028_identify(struct xc3028_priv *priv)
{
	uint16_t id = 0, version = 0;
	int ret;

	ret = xc3028_read_reg(priv, XC3028_REG_PRODUCT_ID, &id);
	if (ret)
		return ret;
	if (id != XC3028_PRODUCT_ID) {
		xc3028_log(priv, TUNERD_LOG_INFO,
			   "no XC3028 at 0x%02x: product id %u", priv->addr,
			   id);
		return -ENODEV;
	}
	ret = xc3028_read_reg(priv, XC3028_REG_VERSION, &version);
	if (ret)
		return ret;
	xc3028_log(priv, TUNERD_LOG_INFO,
		   "XC3028 at 0x%02x: hardware %u.%u, firmware %u.%u",
		   priv->addr, version >> 12, (version >> 8) & 0xF,
		   (version >> 4) & 0xF, version & 0xF);
	return 0;
}

static int xc3028_host_ok(const struct tunerd_host *host)
{
	return host && host->size >= offsetof(struct tunerd_host, reserved) &&
	       host->i2c_transfer && host->sleep_ms && host->log &&
	       host->firmware_get && host->firmware_put && host->bridge_ctrl;
}

static int xc3028_config(struct xc3028_priv *priv,
			 const struct tunerd_tuner_config *cfg)
{
	priv->addr = cfg->i2c_addr ? cfg->i2c_addr : XC3028_DEFAULT_I2C_ADDR;
	priv->max_len = XC3028_CFG_MAX_LEN(cfg->config);
	if (!priv->max_len)
		priv->max_len = XC3028_DEFAULT_MAX_LEN;
	priv->demod_if_khz = XC3028_CFG_DEMOD_IF_KHZ(cfg->config);
	if (!priv->demod_if_khz)
		priv->demod_if_khz = XC3028_DEFAULT_DEMOD_IF_KHZ;
	/* The 12-byte SCODE entry goes in one write. */
	if (priv->max_len < XC3028_MIN_MAX_LEN) {
		xc3028_log(priv, TUNERD_LOG_ERR,
			   "I2C write length %u too short, at least %u",
			   priv->max_len, XC3028_MIN_MAX_LEN);
		return -EINVAL;
	}
	return 0;
}

static int xc3028_probe(const struct tunerd_host *host,
			const struct tunerd_tuner_config *cfg, void **out)
{
	struct xc3028_priv *priv;
	struct xc3028_mode mode;
	int ret;

	if (!xc3028_host_ok(host) || !cfg ||
	    cfg->size < offsetof(struct tunerd_tuner_config, padding))
		return -EINVAL;
	priv = calloc(1, sizeof(*priv));
	if (!priv)
		return -ENOMEM;
	priv->host = host;
	ret = xc3028_config(priv, cfg);
	if (ret)
		goto err_free;
	ret = host->firmware_get(host->ctx, XC3028_FIRMWARE_FILE,
				 &priv->fw_data, &priv->fw_size);
	if (ret) {
		xc3028_log(priv, TUNERD_LOG_ERR, "firmware %s: error %d",
			   XC3028_FIRMWARE_FILE, ret);
		goto err_free;
	}
	ret = xc3028_fw_parse(priv, priv->fw_data, priv->fw_size);
	if (ret)
		goto err_put;
	priv->cmd_flag =
	    priv->fw.version >= XC3028_CMD_FLAG_MIN_FW ? XC3028_CMD_FLAG : 0;
	xc3028_mode_default(priv, &mode);
	ret = xc3028_load(priv, &mode, 0);
	if (ret)
		goto err_fw;
	ret = xc3028_identify(priv);
	if (ret)
		goto err_fw;
	*out = priv;
	return 0;
err_fw:
	xc3028_fw_free(&priv->fw);
err_put:
	host->firmware_put(host->ctx, priv->fw_data, priv->fw_size);
err_free:
	xc3028_dbg(priv, "probe failed: %d", ret);
	free(priv);
	return ret;
}

static void xc3028_release(void *p)
{
	struct xc3028_priv *priv = p;
	const struct tunerd_host *host = priv->host;

	xc3028_fw_free(&priv->fw);
	host->firmware_put(host->ctx, priv->fw_data, priv->fw_size);
	free(priv);
}

/* A chip that lost its firmware (a failed upload) gets it back here. */
static int xc3028_init(void *p)
{
	struct xc3028_priv *priv = p;
	struct xc3028_mode mode;

	if (priv->loaded_valid)
		return 0;
	if (priv->tuned)
		mode = priv->mode;
	else
		xc3028_mode_default(priv, &mode);
	return xc3028_load(priv, &mode, 0);
}

static int xc3028_sleep(void *p)
{
	struct xc3028_priv *priv = p;
	int ret = xc3028_write_reg(priv, XC3028_CMD_POWER_DOWN, 0);

	if (ret)
		xc3028_dbg(priv, "sleep failed: %d", ret);
	return ret;
}

/* LOCK reads 0 while the chip is still deciding. */
static int xc3028_read_lock(struct xc3028_priv *priv, uint16_t *lock)
{
	const struct tunerd_host *host = priv->host;
	int ret = 0;

	for (int i = 0; i < XC3028_LOCK_TRIES; i++) {
		if (i)
			host->sleep_ms(host->ctx, XC3028_LOCK_WAIT);
		ret = xc3028_read_reg(priv, XC3028_REG_LOCK, lock);
		if (ret || *lock != XC3028_LOCK_WAITING)
			break;
	}
	return ret;
}

static int xc3028_get_status(void *p, struct tstub_status *st)
{
	struct xc3028_priv *priv = p;
	uint16_t lock = 0, ferr = 0, snr = 0;
	int ret;

	memset(st, 0, sizeof(*st));
	st->valid = TSTUB_ST_FE_STATUS | TSTUB_ST_PLL_LOCK;
	if (!priv->tuned)
		return 0;
	st->frequency = priv->frequency;
	st->bandwidth = priv->mode.bandwidth;
	ret = xc3028_read_lock(priv, &lock);
	if (ret || lock != XC3028_LOCK_LOCKED)
		goto out;
	ret = xc3028_read_reg(priv, XC3028_REG_FREQ_ERROR, &ferr);
	if (!ret)
		ret = xc3028_read_reg(priv, XC3028_REG_SNR, &snr);
	if (ret)
		goto out;
	st->pll_locked = 1;
	st->fe_status = TSTUB_FE_HAS_SIGNAL | TSTUB_FE_HAS_CARRIER;
	st->afc_hz = (int32_t)(int16_t)ferr * (int32_t)XC3028_STEP;
	st->cnr_rel = (snr & XC3028_SNR_MAX) * 65535u / XC3028_SNR_MAX;
	st->valid |= TSTUB_ST_AFC | TSTUB_ST_CNR_REL;
out:
	if (ret)
		xc3028_dbg(priv, "get_status failed: %d", ret);
	return ret;
}

static int xc3028_get_frequency(void *p, struct tstub_freq *freq)
{
	struct xc3028_priv *priv = p;

	memset(freq, 0, sizeof(*freq));
	freq->frequency = priv->tuned ? priv->frequency : 0;
	freq->bandwidth = priv->tuned ? priv->mode.bandwidth : 0;
	freq->if_frequency = priv->demod_if_khz * 1000u;
	return 0;
}

static const struct tunerd_plugin_ops xc3028_ops = {
    .size = sizeof(struct tunerd_plugin_ops),
    .probe = xc3028_probe,
    .release = xc3028_release,
    .init = xc3028_init,
    .sleep = xc3028_sleep,
    .set_params = xc3028_set_params,
    .get_status = xc3028_get_status,
    .get_frequency = xc3028_get_frequency,
};

static const struct tunerd_plugin xc3028_plugin = {
    .size = sizeof(struct tunerd_plugin),
    .abi = TUNERD_PLUGIN_ABI,
    .info =
	{
	    .name = "XC3028",
	    .vendor = "Xceive",
	    .plugin = "xc3028",
	    .chip_id = TSTUB_CHIP_XC3028,
	    .plugin_version = 1,
	    .delsys_mask = XC3028_DELSYS,
	    .bandwidth_mask = XC3028_BANDWIDTHS,
	    .freq_min = XC3028_FREQ_MIN,
	    .freq_max = XC3028_FREQ_MAX,
	    .freq_step = XC3028_STEP,
	    .caps = TSTUB_CHIPCAP_PLL_LOCK | TSTUB_CHIPCAP_AFC |
		    TSTUB_CHIPCAP_SNR | TSTUB_CHIPCAP_FIRMWARE,
	    .if_frequency = XC3028_DEFAULT_DEMOD_IF_KHZ * 1000u,
	},
    .ops = &xc3028_ops,
};

XC3028_EXPORT int tunerd_plugin_version(int count, const int *versions)
{
	return tunerd_plugin_pick_version(count, versions);
}

XC3028_EXPORT const struct tunerd_plugin *tunerd_plugin_describe(int version)
{
	return version == TUNERD_PLUGIN_ABI ? &xc3028_plugin : NULL;
}

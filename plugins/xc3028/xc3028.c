// SPDX-License-Identifier: MIT
/*
 * xc3028.c - Xceive XC3028 tuner, 42-864 MHz, as a tunerd plugin.
 *
 * The chip runs firmware: a BASE image (F8MHZ for 7/8 MHz channels, FM
 * for radio), an optional INIT1, one standard image (DTV, ATSC, analog TV
 * by v4l2 standard, FM) and an SCODE entry for the demodulator's IF.  The
 * bus traffic is that of Linux's tuner-xc2028 (plugins/README.md): no I2C
 * at attach; each tune loads what changed, reads the chip's version back,
 * then sends a divider in 15.625 kHz steps.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "xc3028.h"
#include "xc3028_priv.h"

#define XC3028_EXPORT __attribute__((visibility("default")))

/* No DVB-C: the kernel driver refuses it (xc2028_set_params()). */
#define XC3028_DELSYS                                                          \
	((1u << TSTUB_DELSYS_DVBT) | (1u << TSTUB_DELSYS_DVBT2) |              \
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

/*
 * DVB-T (and T2) and ATSC, by the kernel's xc2028_set_params(): the image
 * variant from the board word, the bandwidth class with its VHF-7/UHF-8
 * history, and the demod's IF for the SCODE.  The history: a 7 MHz VHF
 * tune sets VHF-7, an 8 MHz UHF tune UHF-8; 7 MHz in UHF clears UHF-8,
 * 8 MHz in VHF clears VHF-7, 6 MHz clears both; DTV78 while both are set.
 */
static int xc3028_req_digital(struct xc3028_priv *priv,
			      const struct tstub_params *p,
			      struct xc3028_req *req)
{
	uint32_t bw = p->bandwidth;
	int vhf = p->frequency < XC3028_UHF_MIN;
	uint32_t type = 0;

	if (p->delsys == TSTUB_DELSYS_ATSC) {
		type = XC3028_FW_ATSC | XC3028_FW_D2633;
	} else if (p->delsys == TSTUB_DELSYS_DVBT ||
		   p->delsys == TSTUB_DELSYS_DVBT2) {
		/* 6 MHz OFDM (Taiwan, Uruguay) needs the QAM image. */
		if (bw <= 6000000)
			type |= XC3028_FW_QAM;
		if (priv->fw_variant == XC3028_VARIANT_D2633 ||
		    (priv->fw_variant == XC3028_VARIANT_AUTO &&
		     priv->demod_if_khz == XC3028_FE_ZARLINK456))
			type |= XC3028_FW_D2633;
		else
			type |= XC3028_FW_D2620;
	} else {
		return -EINVAL; /* DVB-C included: the kernel refuses it */
	}
	if (bw <= 6000000) {
		type |= XC3028_FW_DTV6;
		priv->vhf7 = priv->uhf8 = 0;
	} else if (bw <= 7000000) {
		if (vhf)
			priv->vhf7 = 1;
		else
			priv->uhf8 = 0;
		type |= XC3028_FW_F8MHZ |
			(priv->vhf7 && priv->uhf8 ? XC3028_FW_DTV78
						  : XC3028_FW_DTV7);
	} else {
		if (vhf)
			priv->vhf7 = 0;
		else
			priv->uhf8 = 1;
		type |= XC3028_FW_F8MHZ |
			(priv->vhf7 && priv->uhf8 ? XC3028_FW_DTV78
						  : XC3028_FW_DTV8);
	}
	req->kind = XC3028_DIGITAL;
	req->type = type;
	req->bw = bw;
	/* The kernel means "+200 kHz for ATSC only" on newer firmware but
	 * compares the whole type with ATSC, which never holds: kept. */
	if (priv->demod_if_khz)
		req->if_khz = (uint16_t)(priv->demod_if_khz +
					 (type == XC3028_FW_ATSC ||
						  priv->fw.version <
						      XC3028_SCODE_SHIFT_BELOW
					      ? XC3028_SCODE_SHIFT_KHZ
					      : 0));
	return 0;
}

/* Analog TV (xc2028_set_analog_freq()): no standard means M/N; 6 MHz
 * standards use the plain BASE image, all others F8MHZ. */
static void xc3028_req_analog(const struct tstub_params *p,
			      struct xc3028_req *req)
{
	req->kind = XC3028_ANALOG;
	req->std = p->std ? p->std : XC3028_STD_MN;
	if (!(req->std & XC3028_STD_MN))
		req->type = XC3028_FW_F8MHZ;
	if (!(req->std & ~XC3028_STD_MN))
		req->bw = 6000000;
	else if (!(req->std & ~XC3028_STD_BG) && p->frequency < XC3028_UHF_MIN)
		req->bw = 7000000;
	else
		req->bw = 8000000;
}

static int xc3028_req_from_params(struct xc3028_priv *priv,
				  const struct tstub_params *p,
				  struct xc3028_req *req)
{
	memset(req, 0, sizeof(*req));
	req->freq = p->frequency;
	if (p->frequency < XC3028_FREQ_MIN || p->frequency > XC3028_FREQ_MAX)
		return -EINVAL;
	switch (p->delsys) {
	case TSTUB_DELSYS_ANALOG_TV:
		xc3028_req_analog(p, req);
		return 0;
	case TSTUB_DELSYS_RADIO:
		req->kind = XC3028_RADIO;
		req->type = XC3028_FW_FM;
		req->bw = XC3028_RADIO_BW;
		return 0;
	}
	return xc3028_req_digital(priv, p, req);
}

/* Both images a set needs must be in the file before the bus is touched;
 * the kernel would reset and fail half-way (README, defects). */
static int xc3028_req_loadable(struct xc3028_priv *priv,
			       const struct xc3028_req *req)
{
	uint64_t std0 = 0, std = req->std;

	if (xc3028_fw_seek(&priv->fw, XC3028_FW_BASE | req->type, &std0) >= 0 &&
	    xc3028_fw_seek(&priv->fw, req->type, &std) >= 0)
		return 0;
	xc3028_log(priv, TUNERD_LOG_ERR,
		   "firmware has no image for type 0x%x, std 0x%llx", req->type,
		   (unsigned long long)req->std);
	return -EINVAL;
}

/* BASE, then INIT1 if the file has one (with F8MHZ, else without). */
static int xc3028_load_base(struct xc3028_priv *priv, uint32_t type)
{
	const struct tunerd_host *host = priv->host;
	uint32_t init1 = XC3028_FW_BASE | XC3028_FW_INIT1 | type;
	uint64_t std0 = 0;
	int ret;

	memset(&priv->cur, 0, sizeof(priv->cur));
	ret = host->bridge_ctrl(host->ctx, TSTUB_CTRL_TUNER_RESET, 0);
	if (ret < 0)
		return ret;
	ret = xc3028_fw_load(priv, XC3028_FW_BASE | type, &std0);
	if (ret < 0)
		return ret;
	ret = xc3028_fw_load(priv, init1, &std0);
	if (ret == -ENOENT)
		ret = xc3028_fw_load(priv, init1 & ~XC3028_FW_F8MHZ, &std0);
	return ret == -ENOENT ? 0 : ret;
}

/* VERSION then PRODUCT_ID, after every firmware check: the firmware
 * must report the file's version, the model 2028 or 3028 and never
 * change. */
static int xc3028_check_device(struct xc3028_priv *priv)
{
	uint16_t version = 0, model = 0, fwv;
	int ret = xc3028_read_reg(priv, XC3028_REG_VERSION, &version);

	if (!ret)
		ret = xc3028_read_reg(priv, XC3028_REG_PRODUCT_ID, &model);
	if (ret)
		return ret;
	fwv = (uint16_t)((version & 0xF0) << 4 | (version & 0x0F));
	if (fwv != priv->fw.version) {
		xc3028_log(priv, TUNERD_LOG_ERR,
			   "chip at 0x%02x runs firmware %u.%u, the file "
			   "holds %u.%u",
			   priv->addr, fwv >> 8, fwv & 0xFF,
			   priv->fw.version >> 8, priv->fw.version & 0xFF);
		return -ENODEV;
	}
	if (!priv->hwmodel &&
	    (model == XC2028_PRODUCT_ID || model == XC3028_PRODUCT_ID)) {
		priv->hwmodel = model;
		priv->hwvers = version & 0xFF00;
	} else if (!priv->hwmodel || priv->hwmodel != model ||
		   priv->hwvers != (version & 0xFF00)) {
		xc3028_log(priv, TUNERD_LOG_ERR,
			   "chip at 0x%02x: model %u, version 0x%04x",
			   priv->addr, model, version);
		return -ENODEV;
	}
	return 0;
}

/*
 * The kernel's check_firmware(): BASE again after a sleep or when the
 * BASE kind (F8MHZ, FM...) changes; the standard image when BASE came
 * again or the type or standard changed; the SCODE after a standard
 * image (none for FM); the readback every time.
 */
static int xc3028_check_firmware(struct xc3028_priv *priv,
				 const struct xc3028_req *req)
{
	uint32_t base = XC3028_FW_BASE | req->type;
	uint64_t id = req->std;
	int ret = 0;

	if (priv->asleep || (base & XC3028_FW_BASE_TYPES) !=
				(priv->cur.type & XC3028_FW_BASE_TYPES))
		ret = xc3028_load_base(priv, req->type);
	if (ret)
		goto fail;
	if (priv->cur.type != base || priv->cur.std_req != req->std) {
		priv->cur.scode_done = 0;
		ret = xc3028_fw_load(priv, req->type, &id);
		if (ret == -ENOENT)
			ret = xc3028_fw_load(priv, req->type & ~XC3028_FW_F8MHZ,
					     &id);
		if (ret)
			goto fail;
	}
	/* The SCODE's result does not count, as in the kernel. */
	if (!priv->cur.scode_done && !(req->type & XC3028_FW_FM))
		xc3028_fw_load_scode(priv, req->type | XC3028_FW_SCODE, &id,
				     req->if_khz);
	ret = xc3028_check_device(priv);
	if (ret)
		goto fail;
	priv->cur.type = base;
	priv->cur.std_req = req->std;
	priv->cur.scode_done = 1;
	priv->asleep = 0;
	return 0;
fail:
	/* Whatever the chip runs now is unknown: reload it all next time. */
	memset(&priv->cur, 0, sizeof(priv->cur));
	xc3028_dbg(priv, "firmware check failed: %d", ret);
	return ret;
}

/* generic_set_freq() after the firmware check.  The analog soft reset and
 * the clock reset are sent for their effect; their errors do not count. */
static int xc3028_tune(struct xc3028_priv *priv, const struct xc3028_req *req)
{
	const struct tunerd_host *host = priv->host;
	static const uint8_t soft_reset[2] = {0x00, 0x00};
	uint32_t offset = 0, div;
	uint8_t divider[4];
	int ret;

	if (req->kind == XC3028_ANALOG)
		xc3028_write(priv, soft_reset, sizeof(soft_reset));
	if (req->kind == XC3028_DIGITAL)
		offset = priv->cur.type & XC3028_FW_DTV6 ? XC3028_OFFSET_DTV6
							 : XC3028_OFFSET_DTV78;
	div = (req->freq - offset + XC3028_STEP / 2) / XC3028_STEP;
	ret = xc3028_write_reg(priv, XC3028_CMD_RF_FREQ, 0);
	if (ret)
		return ret;
	host->bridge_ctrl(host->ctx, TSTUB_CTRL_CLK_RESET, 1);
	host->sleep_ms(host->ctx, XC3028_FREQ_CMD_WAIT);
	divider[0] = (uint8_t)(div >> 24);
	divider[1] = (uint8_t)(div >> 16);
	divider[2] = (uint8_t)(div >> 8);
	divider[3] = (uint8_t)div;
	ret = xc3028_write(priv, divider, sizeof(divider));
	if (ret)
		return ret;
	host->sleep_ms(host->ctx, XC3028_TUNE_WAIT);
	priv->tuned = 1;
	priv->kind = req->kind;
	priv->frequency = div * XC3028_STEP + offset;
	priv->bandwidth = req->bw;
	if (req->kind == XC3028_DIGITAL)
		priv->bandwidth = priv->cur.type & XC3028_FW_DTV6   ? 6000000
				  : priv->cur.type & XC3028_FW_DTV7 ? 7000000
				  : priv->cur.type & XC3028_FW_DTV8 ? 8000000
								    : req->bw;
	return 0;
}

static int xc3028_set_params(void *p, const struct tstub_params *params)
{
	struct xc3028_priv *priv = p;
	struct xc3028_req req;
	int ret;

	ret = xc3028_req_from_params(priv, params, &req);
	if (!ret)
		ret = xc3028_req_loadable(priv, &req);
	if (ret) {
		xc3028_dbg(priv, "params refused: delsys %u, %u Hz, bw %u",
			   params->delsys, params->frequency,
			   params->bandwidth);
		return ret;
	}
	priv->tuned = 0;
	ret = xc3028_check_firmware(priv, &req);
	if (!ret)
		ret = xc3028_tune(priv, &req);
	if (ret)
		xc3028_dbg(priv, "set_params %u Hz failed: %d",
			   params->frequency, ret);
	return ret;
}

static int xc3028_host_ok(const struct tunerd_host *host)
{
	return host && host->size >= offsetof(struct tunerd_host, reserved) &&
	       host->i2c_transfer && host->sleep_ms && host->log &&
	       host->firmware_get && host->firmware_put && host->bridge_ctrl;
}

/* The board word, clamped the way the kernel clamps struct xc2028_ctrl
 * (xc2028_set_config(), load_firmware()). */
static void xc3028_config(struct xc3028_priv *priv,
			  const struct tunerd_tuner_config *cfg)
{
	unsigned int demod = XC3028_CFG_DEMOD_IF_KHZ(cfg->config);

	priv->addr = cfg->i2c_addr ? cfg->i2c_addr : XC3028_DEFAULT_I2C_ADDR;
	priv->max_len = XC3028_CFG_MAX_LEN(cfg->config);
	if (!priv->max_len)
		priv->max_len = XC3028_DEFAULT_MAX_LEN;
	else if (priv->max_len < XC3028_KERNEL_MIN_MAX_LEN)
		priv->max_len = XC3028_KERNEL_SHORT_MAX_LEN;
	else if (priv->max_len > XC3028_KERNEL_MAX_XFER)
		priv->max_len = XC3028_KERNEL_MAX_XFER;
	priv->demod_if_khz = demod == XC3028_DEMOD_IF_NONE ? 0
			     : demod                       ? demod
				     : XC3028_DEFAULT_DEMOD_IF_KHZ;
	priv->fw_variant = XC3028_CFG_VARIANT(cfg->config);
}

/* Like the kernel's attach: the firmware file is read and checked, the
 * chip is not touched; the first tune uploads and identifies it. */
static int xc3028_probe(const struct tunerd_host *host,
			const struct tunerd_tuner_config *cfg, void **out)
{
	struct xc3028_priv *priv;
	int ret;

	if (!xc3028_host_ok(host) || !cfg ||
	    cfg->size < offsetof(struct tunerd_tuner_config, padding))
		return -EINVAL;
	priv = calloc(1, sizeof(*priv));
	if (!priv)
		return -ENOMEM;
	priv->host = host;
	xc3028_config(priv, cfg);
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
	*out = priv;
	return 0;
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

/* The kernel driver has no init: the next tune loads what it needs. */
static int xc3028_init(void *p)
{
	(void)p;
	return 0;
}

/* POWER_DOWN once; asleep, the chip needs BASE again.  The kernel sends
 * it also before the first tune, to a chip without firmware. */
static int xc3028_sleep(void *p)
{
	struct xc3028_priv *priv = p;
	int ret;

	if (priv->asleep)
		return 0;
	ret = xc3028_write_reg(priv, XC3028_CMD_POWER_DOWN, 0);
	if (ret) {
		xc3028_dbg(priv, "sleep failed: %d", ret);
		return ret;
	}
	priv->asleep = 1;
	return 0;
}

/* LOCK until it is not 0, at most three reads, 6 ms after each 0 (the
 * last one too, as the kernel does). */
static int xc3028_read_lock(struct xc3028_priv *priv, uint16_t *lock)
{
	const struct tunerd_host *host = priv->host;
	int ret = 0;

	for (int i = 0; i < XC3028_LOCK_TRIES; i++) {
		ret = xc3028_read_reg(priv, XC3028_REG_LOCK, lock);
		if (ret || *lock != XC3028_LOCK_WAITING)
			break;
		host->sleep_ms(host->ctx, XC3028_LOCK_WAIT);
	}
	return ret;
}

/* The kernel's get_rf_strength then get_afc: each polls LOCK and, unless
 * it says "no lock", reads SNR or FREQ_ERROR.  Nothing while asleep; the
 * chip is read before the first tune too, as the kernel does. */
static int xc3028_get_status(void *p, struct tstub_status *st)
{
	struct xc3028_priv *priv = p;
	uint16_t lock = 0, ferr = 0, snr = 0;
	int ret;

	memset(st, 0, sizeof(*st));
	st->valid = TSTUB_ST_FE_STATUS | TSTUB_ST_PLL_LOCK;
	if (priv->asleep)
		return 0;
	if (priv->tuned) {
		st->frequency = priv->frequency;
		st->bandwidth = priv->bandwidth;
	}
	ret = xc3028_read_lock(priv, &lock);
	if (!ret && lock != XC3028_LOCK_NONE)
		ret = xc3028_read_reg(priv, XC3028_REG_SNR, &snr);
	if (!ret)
		ret = xc3028_read_lock(priv, &lock);
	if (!ret && lock != XC3028_LOCK_NONE)
		ret = xc3028_read_reg(priv, XC3028_REG_FREQ_ERROR, &ferr);
	if (ret) {
		xc3028_dbg(priv, "get_status failed: %d", ret);
		return ret;
	}
	if (lock != XC3028_LOCK_LOCKED || !priv->tuned)
		return 0;
	st->pll_locked = 1;
	st->fe_status = TSTUB_FE_HAS_SIGNAL | TSTUB_FE_HAS_CARRIER;
	st->afc_hz = (int32_t)(int16_t)ferr * (int32_t)XC3028_STEP;
	st->cnr_rel = (snr & XC3028_SNR_MAX) * 65535u / XC3028_SNR_MAX;
	st->valid |= TSTUB_ST_AFC | TSTUB_ST_CNR_REL;
	return 0;
}

static int xc3028_get_frequency(void *p, struct tstub_freq *freq)
{
	struct xc3028_priv *priv = p;

	memset(freq, 0, sizeof(*freq));
	freq->frequency = priv->tuned ? priv->frequency : 0;
	freq->bandwidth = priv->tuned ? priv->bandwidth : 0;
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

// SPDX-License-Identifier: MIT
/*
 * chip_xc3028.c - model of the Xceive XC3028, a tuner that runs firmware
 * uploaded by the host.
 *
 * After a reset the chip is loading firmware (chip_xc3028_load.c follows
 * the upload).  This file is the chip around it: the bridge callbacks,
 * faults, and the running firmware.  With a BASE image and a standard
 * image loaded it runs: 4-byte writes {0x80|hi, lo, val_hi, val_lo} are
 * commands, 2-byte writes set the register to read, the SCODE sequence is
 * accepted, and the RF_FREQ divider decodes to a frequency through the
 * offset of the loaded standard.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chip_xc3028_i.h"
#include "sim_chip_i.h"

static struct xc3028_chip *to_xc3028(struct sim_chip *chip)
{
	return (struct xc3028_chip *)(void *)chip;
}

static struct sim_chip *xc3028_create(const struct sim_chip_setup *setup,
				      char *err, size_t errlen)
{
	struct xc3028_chip *xc = calloc(1, sizeof(*xc));

	if (!xc) {
		sim_set_err(err, errlen, "out of memory");
		return NULL;
	}
	if (!setup->firmware_path || !setup->firmware_path[0]) {
		sim_set_err(err, errlen, "no firmware file given");
		goto fail;
	}
	if (xc3028_fw_load(setup->firmware_path, &xc->fw, err, errlen))
		goto fail;
	if (sim_xc3028_check_fw(&xc->fw, err, errlen))
		goto fail_fw;
	xc->up_match = calloc(xc->fw.count, 1);
	xc->up_next = calloc(xc->fw.count, 1);
	if (!xc->up_match || !xc->up_next) {
		sim_set_err(err, errlen, "out of memory");
		goto fail_match;
	}
	xc->rf = setup->rf;
	xc->rng = setup->seed ? setup->seed : 0x3028u;
	xc->settle_ns = sim_settle_ns(XC3028_SETTLE_MS, setup->settle_scale);
	sim_xc3028_reset(xc);
	return (struct sim_chip *)(void *)xc;
fail_match:
	free(xc->up_match);
	free(xc->up_next);
fail_fw:
	xc3028_fw_release(&xc->fw);
fail:
	free(xc);
	return NULL;
}

static void xc3028_destroy(struct sim_chip *chip)
{
	struct xc3028_chip *xc = to_xc3028(chip);

	xc3028_fw_release(&xc->fw);
	free(xc->up_match);
	free(xc->up_next);
	free(xc);
}

static uint32_t xc3028_std_offset(const struct xc3028_image *img)
{
	if (img->type & (XC3028_FW_DTV6 | XC3028_FW_ATSC))
		return 1750000;
	if (img->type & (XC3028_FW_DTV7 | XC3028_FW_DTV78 | XC3028_FW_DTV8))
		return 2750000;
	return 0; /* analog TV and FM tune the carrier itself */
}

static uint32_t xc3028_std_bandwidth(const struct xc3028_image *img,
				     uint32_t freq)
{
	if (img->type & (XC3028_FW_DTV6 | XC3028_FW_ATSC))
		return 6000000;
	if (img->type & XC3028_FW_DTV7)
		return 7000000;
	if (img->type & XC3028_FW_DTV8)
		return 8000000;
	if (img->type & XC3028_FW_FM)
		return 200000;
	if (img->std && !(img->std & ~XC3028_STD_525_LINES))
		return 6000000;
	/* DTV78 and PAL B/G: 7 MHz channels in VHF, 8 MHz in UHF. */
	if (img->type & XC3028_FW_DTV78 || img->std & XC3028_STD_PAL_BG)
		return freq < XC3028_UHF_MIN_HZ ? 7000000 : 8000000;
	return 8000000;
}

static void xc3028_set_divider(struct xc3028_chip *xc, const uint8_t *buf,
			       uint64_t now_ns)
{
	const struct xc3028_image *img = &xc->fw.images[xc->std];
	uint64_t div = (uint64_t)buf[0] << 24 | (uint64_t)buf[1] << 16 |
		       (uint64_t)buf[2] << 8 | buf[3];
	uint64_t freq = div * XC3028_STEP_HZ + xc3028_std_offset(img);

	xc->freq_pending = 0;
	xc->tuned = freq <= UINT32_MAX;
	xc->frequency = xc->tuned ? (uint32_t)freq : 0;
	xc->bandwidth =
	    xc->tuned ? xc3028_std_bandwidth(img, xc->frequency) : 0;
	xc->tuned_at_ns = now_ns;
}

static int xc3028_write_command(struct xc3028_chip *xc, const uint8_t *buf)
{
	unsigned int reg = (buf[0] & 0x7Fu) << 8 | buf[1];

	switch (reg) {
	case XC3028_CMD_RF_FREQ:
		xc->freq_pending = 1;
		xc->powered_down = 0;
		break;
	case XC3028_CMD_POWER_DOWN:
		xc->powered_down = 1;
		xc->freq_pending = 0;
		break;
	default:
		/* INIT and the firmware's other settings: accepted. */
		break;
	}
	return 0;
}

/* SCODE: {A0 00 00 00}, one 12-byte table entry, {00 8C}. */
static int xc3028_write_scode(struct xc3028_chip *xc, const uint8_t *buf,
			      size_t len)
{
	static const uint8_t header[4] = {0xA0, 0x00, 0x00, 0x00};
	static const uint8_t trailer[2] = {0x00, 0x8C};

	if (len == 4 && !memcmp(buf, header, 4)) {
		xc->scode_phase = XC3028_SCODE_HEADER;
		return 1;
	}
	if (xc->scode_phase == XC3028_SCODE_HEADER &&
	    len == XC3028_SCODE_ENTRY_LEN) {
		xc->scode = -1;
		for (size_t i = 0; i < xc->fw.count && xc->scode < 0; i++) {
			const struct xc3028_image *img = &xc->fw.images[i];

			if (!(img->type & XC3028_FW_SCODE))
				continue;
			for (size_t off = 0; off + len <= img->stream_len;
			     off += len)
				if (!memcmp(img->stream + off, buf, len))
					xc->scode = (int)i;
		}
		xc->scode_phase = XC3028_SCODE_ENTRY;
		return 1;
	}
	if (xc->scode_phase == XC3028_SCODE_ENTRY && len == 2 &&
	    !memcmp(buf, trailer, 2)) {
		xc->scode_phase = XC3028_SCODE_IDLE;
		return 1;
	}
	return 0;
}

static int xc3028_write_running(struct xc3028_chip *xc, const uint8_t *buf,
				size_t len, uint64_t now_ns)
{
	/* A standard image being replaced without a reset. */
	if (xc->up_pos > 0 && sim_xc3028_upload(xc, buf + 1, len - 1))
		return 0;
	if (xc3028_write_scode(xc, buf, len))
		return 0;
	if (len == 2) {
		/* {00 00} is also the soft reset before an analog tune; it
		 * leaves the firmware running. */
		xc->ptr = buf[0] << 8 | buf[1];
		return 0;
	}
	if (len == 4 && xc->freq_pending && !(buf[0] & XC3028_CMD_FLAG)) {
		xc3028_set_divider(xc, buf, now_ns);
		return 0;
	}
	if (len == 4 && buf[0] & XC3028_CMD_FLAG)
		return xc3028_write_command(xc, buf);
	if (sim_xc3028_upload(xc, buf + 1, len - 1))
		return 0;
	return -EREMOTEIO;
}

static int xc3028_write(struct sim_chip *chip, const uint8_t *buf, size_t len,
			uint64_t now_ns)
{
	struct xc3028_chip *xc = to_xc3028(chip);

	if (len == 0)
		return 0;
	if (xc->faults & SIM_CHIP_FAULT_NO_FIRMWARE)
		return 0; /* swallowed: the firmware never starts */
	if (xc3028_ready(xc))
		return xc3028_write_running(xc, buf, len, now_ns);
	return sim_xc3028_write_loading(xc, buf, len);
}

static uint32_t xc3028_std_delsys(const struct xc3028_image *img)
{
	if (img->type & XC3028_FW_ATSC)
		return TSTUB_DELSYS_ATSC;
	if (img->type & XC3028_FW_FM)
		return TSTUB_DELSYS_RADIO;
	if (img->type & XC3028_FW_DTV_MASK)
		return TSTUB_DELSYS_NONE; /* any digital system */
	return TSTUB_DELSYS_ANALOG_TV;
}

/* What the RF environment shows at the tuned frequency, and whether the
 * loaded standard locks to it. */
static int xc3028_measure(struct xc3028_chip *xc, struct sim_rf_reading *r)
{
	const struct xc3028_image *img = &xc->fw.images[xc->std];
	uint32_t delsys = xc3028_std_delsys(img);

	sim_rf_measure(xc->rf, xc->frequency, xc->bandwidth, delsys, &xc->rng,
		       r);
	if (!(r->fe_status & TSTUB_FE_HAS_LOCK))
		return 0;
	if (delsys == TSTUB_DELSYS_NONE) {
		uint32_t found = xc->rf->carriers[r->carrier].delsys;

		return found != TSTUB_DELSYS_ANALOG_TV &&
		       found != TSTUB_DELSYS_RADIO;
	}
	return 1;
}

static int xc3028_lock(struct xc3028_chip *xc, uint64_t now_ns,
		       struct sim_rf_reading *r)
{
	if (!xc->tuned || xc->powered_down ||
	    xc->faults & SIM_CHIP_FAULT_NEVER_LOCK)
		return XC3028_LOCK_NONE;
	if (!sim_settled(now_ns, xc->tuned_at_ns, xc->settle_ns))
		return XC3028_LOCK_SETTLING;
	return xc3028_measure(xc, r) ? XC3028_LOCK_LOCKED : XC3028_LOCK_NONE;
}

static uint16_t xc3028_analog_reg(struct xc3028_chip *xc, int reg,
				  uint64_t now_ns)
{
	const struct xc3028_image *img = &xc->fw.images[xc->std];
	struct sim_rf_reading r;
	int lines525 = img->std && !(img->std & ~XC3028_STD_525_LINES);

	if (xc3028_std_delsys(img) != TSTUB_DELSYS_ANALOG_TV ||
	    xc3028_lock(xc, now_ns, &r) != XC3028_LOCK_LOCKED)
		return 0;
	if (reg == XC3028_REG_HSYNC)
		return lines525 ? 15734 : 15625;
	return lines525 ? 525 : 625;
}

static uint16_t xc3028_running_reg(struct xc3028_chip *xc, int reg,
				   uint64_t now_ns)
{
	struct sim_rf_reading r;
	double snr;

	switch (reg) {
	case XC3028_REG_FREQ_ERROR:
		if (!xc->tuned || xc->powered_down)
			return 0;
		xc3028_measure(xc, &r);
		if (r.carrier < 0)
			return 0;
		return (uint16_t)(int16_t)lround((double)r.offset_hz /
						 XC3028_STEP_HZ);
	case XC3028_REG_LOCK:
		return (uint16_t)xc3028_lock(xc, now_ns, &r);
	case XC3028_REG_SNR:
		if (xc3028_lock(xc, now_ns, &r) != XC3028_LOCK_LOCKED)
			return 0;
		snr = r.cnr_db / 4.0;
		return (uint16_t)(snr < 0 ? 0 : snr > 7 ? 7 : snr);
	case XC3028_REG_HSYNC:
	case XC3028_REG_FRAME_LINES:
		return xc3028_analog_reg(xc, reg, now_ns);
	}
	return 0;
}

static uint16_t xc3028_reg_value(struct xc3028_chip *xc, int reg,
				 uint64_t now_ns)
{
	uint16_t fw_ver = xc->fw.version;

	if (xc->base < 0)
		return 0; /* no firmware running */
	if (reg == XC3028_REG_VERSION)
		return (uint16_t)(XC3028_HW_VERSION << 8 |
				  (fw_ver >> 8 & 0xF) << 4 | (fw_ver & 0xF));
	if (reg == XC3028_REG_PRODUCT_ID)
		return XC3028_PRODUCT_ID;
	if (!xc3028_ready(xc))
		return 0;
	return xc3028_running_reg(xc, reg, now_ns);
}

static int xc3028_read(struct sim_chip *chip, uint8_t *buf, size_t len,
		       uint64_t now_ns)
{
	struct xc3028_chip *xc = to_xc3028(chip);
	uint16_t val = 0;

	if (len == 0)
		return 0;
	memset(buf, 0, len);
	if (xc->faults & SIM_CHIP_FAULT_NO_FIRMWARE)
		return 0;
	if (xc->ptr < 0)
		return -EREMOTEIO;
	val = xc3028_reg_value(xc, xc->ptr, now_ns);
	buf[0] = (uint8_t)(val >> 8);
	if (len > 1)
		buf[1] = (uint8_t)val;
	return 0;
}

static int xc3028_bridge_ctrl(struct sim_chip *chip, uint32_t cmd, uint32_t arg,
			      uint64_t now_ns)
{
	(void)arg;
	(void)now_ns;
	switch (cmd) {
	case TSTUB_CTRL_TUNER_RESET:
		if (sim_xc3028_reset_within_upload(to_xc3028(chip)))
			sim_xc3028_reset_state(to_xc3028(chip));
		else
			sim_xc3028_reset(to_xc3028(chip));
		return 0;
	case TSTUB_CTRL_CLK_RESET:
	case TSTUB_CTRL_I2C_FLUSH:
		return 0;
	}
	return -EINVAL;
}

static void xc3028_append_name(const struct xc3028_chip *xc, int idx, char *buf,
			       size_t len)
{
	size_t used = strlen(buf);
	char name[48];

	if (idx < 0 || used + 1 >= len)
		return;
	xc3028_fw_image_name(&xc->fw.images[idx], name, sizeof(name));
	snprintf(buf + used, len - used, "%s%s", used ? "," : "", name);
}

static void xc3028_tuned(struct sim_chip *chip, uint64_t now_ns,
			 struct sim_tuned *out)
{
	struct xc3028_chip *xc = to_xc3028(chip);
	int running = xc3028_ready(xc) && xc->tuned;

	memset(out, 0, sizeof(*out));
	out->valid = running;
	out->frequency = running ? xc->frequency : 0;
	out->bandwidth = running ? xc->bandwidth : 0;
	out->pll_locked = running && !xc->powered_down &&
			  !(xc->faults & SIM_CHIP_FAULT_NEVER_LOCK) &&
			  sim_settled(now_ns, xc->tuned_at_ns, xc->settle_ns);
	out->tuned_at_ns = xc->tuned_at_ns;
	xc3028_append_name(xc, xc->base, out->firmware, sizeof(out->firmware));
	xc3028_append_name(xc, xc->init1, out->firmware, sizeof(out->firmware));
	xc3028_append_name(xc, xc->std, out->firmware, sizeof(out->firmware));
	xc3028_append_name(xc, xc->scode, out->firmware, sizeof(out->firmware));
}

static void xc3028_set_faults(struct sim_chip *chip, uint32_t faults)
{
	struct xc3028_chip *xc = to_xc3028(chip);

	/* Losing the firmware: whatever ran before is gone too. */
	if (faults & SIM_CHIP_FAULT_NO_FIRMWARE &&
	    !(xc->faults & SIM_CHIP_FAULT_NO_FIRMWARE))
		sim_xc3028_reset(xc);
	xc->faults = faults;
}

const struct sim_chip_ops sim_xc3028_ops = {
    .name = "xc3028",
    .chip_id = TSTUB_CHIP_XC3028,
    .default_addr = 0x61,
    .create = xc3028_create,
    .destroy = xc3028_destroy,
    .write = xc3028_write,
    .read = xc3028_read,
    .bridge_ctrl = xc3028_bridge_ctrl,
    .tuned = xc3028_tuned,
    .set_faults = xc3028_set_faults,
};

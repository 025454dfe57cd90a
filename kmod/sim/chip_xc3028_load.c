// SPDX-License-Identifier: MIT
/*
 * chip_xc3028_load.c - the XC3028 model's firmware loader.
 *
 * After a reset (the bridge's tuner callback, or power-on) the chip is
 * loading: every write segment is a firmware chunk, a register byte then
 * payload.  The loader follows the payload bytes against every image of
 * the firmware file and records an image as loaded when its whole
 * payload has arrived; chip_xc3028.c runs what was loaded.
 */
#include <errno.h>
#include <string.h>

#include "chip_xc3028_i.h"
#include "sim_chip_i.h"

static int xc3028_uploadable(const struct xc3028_image *img)
{
	return !(img->type & XC3028_FW_SCODE) && img->stream_len > 0;
}

static void xc3028_upload_restart(struct xc3028_chip *xc)
{
	xc->up_pos = 0;
	for (size_t i = 0; i < xc->fw.count; i++)
		xc->up_match[i] = (uint8_t)xc3028_uploadable(&xc->fw.images[i]);
}

/* What the reset line clears: the running firmware and its state. */
void sim_xc3028_reset_state(struct xc3028_chip *xc)
{
	xc->base = xc->init1 = xc->std = xc->scode = -1;
	xc->scode_phase = XC3028_SCODE_IDLE;
	xc->ptr = -1;
	xc->freq_pending = 0;
	xc->powered_down = 0;
	xc->tuned = 0;
}

/* The reset line: firmware gone, the chip waits for a new upload. */
void sim_xc3028_reset(struct xc3028_chip *xc)
{
	sim_xc3028_reset_state(xc);
	xc3028_upload_restart(xc);
}

/*
 * A reset in the middle of an upload is one of the image's own reset
 * records when an image still matching has one right here: the upload
 * goes on with those images only.  0 when none has.
 */
int sim_xc3028_reset_within_upload(struct xc3028_chip *xc)
{
	int any = 0;

	if (xc->up_pos == 0)
		return 0;
	for (size_t i = 0; i < xc->fw.count; i++) {
		xc->up_next[i] =
		    xc->up_match[i] &&
		    xc3028_fw_reset_at(&xc->fw.images[i], xc->up_pos);
		any |= xc->up_next[i];
	}
	if (any)
		memcpy(xc->up_match, xc->up_next, xc->fw.count);
	return any;
}

int sim_xc3028_check_fw(const struct xc3028_fw *fw, char *err, size_t errlen)
{
	for (size_t i = 0; i < fw->count; i++)
		if (fw->images[i].type & XC3028_FW_BASE &&
		    xc3028_uploadable(&fw->images[i]))
			return 0;
	sim_set_err(err, errlen, "firmware: no BASE image");
	return -EINVAL;
}

static void xc3028_image_loaded(struct xc3028_chip *xc, int idx)
{
	uint32_t type = xc->fw.images[idx].type;

	if (type & XC3028_FW_BASE) {
		xc->base = idx;
		xc->init1 = xc->std = xc->scode = -1;
	} else if (type & XC3028_FW_INIT1) {
		xc->init1 = idx;
	} else {
		xc->std = idx;
		xc->scode = -1;
	}
	/* New firmware runs from scratch: the next tune starts over. */
	xc->tuned = 0;
	xc->freq_pending = 0;
	xc->scode_phase = XC3028_SCODE_IDLE;
}

/*
 * Payload of one chunk.  Accepted (1) when it continues at least one
 * image; an image whose payload is then complete is loaded (the first in
 * file order if several end here).  0, with nothing changed, otherwise.
 */
int sim_xc3028_upload(struct xc3028_chip *xc, const uint8_t *p, size_t n)
{
	int any = 0;

	if (n == 0)
		return 1;
	for (size_t i = 0; i < xc->fw.count; i++) {
		const struct xc3028_image *img = &xc->fw.images[i];

		xc->up_next[i] = xc->up_match[i] &&
				 n <= img->stream_len - xc->up_pos &&
				 !memcmp(img->stream + xc->up_pos, p, n);
		any |= xc->up_next[i];
	}
	if (!any)
		return 0;
	memcpy(xc->up_match, xc->up_next, xc->fw.count);
	xc->up_pos += n;
	for (size_t i = 0; i < xc->fw.count; i++) {
		if (xc->up_match[i] &&
		    xc->fw.images[i].stream_len == xc->up_pos) {
			xc3028_image_loaded(xc, (int)i);
			xc3028_upload_restart(xc);
			break;
		}
	}
	return 1;
}

static int xc3028_is_read_address(const uint8_t *buf)
{
	switch (buf[0] << 8 | buf[1]) {
	case 0:
	case XC3028_REG_FREQ_ERROR:
	case XC3028_REG_LOCK:
	case XC3028_REG_VERSION:
	case XC3028_REG_PRODUCT_ID:
	case XC3028_REG_HSYNC:
	case XC3028_REG_FRAME_LINES:
	case XC3028_REG_SNR:
	case XC3028_REG_ADC_ENV:
		return 1;
	}
	return 0;
}

/*
 * Loading: firmware chunks.  A 2-byte write naming a read register
 * between two images, or one that continues no image, sets the register
 * pointer instead (a host may check VERSION after BASE).  Commands have
 * no firmware to run them and are refused, except a power-down.
 */
int sim_xc3028_write_loading(struct xc3028_chip *xc, const uint8_t *buf,
			     size_t len)
{
	static const uint8_t power_down[4] = {XC3028_CMD_FLAG,
					      XC3028_CMD_POWER_DOWN, 0, 0};
	int pointer_first =
	    len == 2 && xc->up_pos == 0 && xc3028_is_read_address(buf);

	if (!pointer_first && sim_xc3028_upload(xc, buf + 1, len - 1))
		return 0;
	if (len == 2) {
		xc->ptr = buf[0] << 8 | buf[1];
		return 0;
	}
	/* A chip without firmware is as good as asleep already. */
	if (len == 4 && xc->up_pos == 0 && !memcmp(buf, power_down, 4))
		return 0;
	return -EREMOTEIO;
}

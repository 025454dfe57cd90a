// SPDX-License-Identifier: MIT
/*
 * xc3028_fw.c - the XC3028 firmware file: parsing (every length checked
 * against the file), choosing the images a mode needs, and uploading them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xc3028.h"
#include "xc3028_priv.h"

static uint16_t xc3028_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t xc3028_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t xc3028_le64(const uint8_t *p)
{
	return (uint64_t)xc3028_le32(p) | (uint64_t)xc3028_le32(p + 4) << 32;
}

#define xc3028_fw_bad(priv, fmt, ...)                                          \
	(xc3028_log(priv, TUNERD_LOG_ERR,                                      \
		    "firmware " XC3028_FIRMWARE_FILE ": " fmt, ##__VA_ARGS__), \
	 -EINVAL)

/* Records of one image: every data record must lie inside the image. */
static int xc3028_fw_check_records(struct xc3028_priv *priv, unsigned int idx,
				   const struct xc3028_image *img)
{
	uint32_t pos = 0;

	while (pos < img->size) {
		uint16_t len;

		if (img->size - pos < 2)
			return xc3028_fw_bad(
			    priv, "image %u: truncated record at %u", idx, pos);
		len = xc3028_le16(img->data + pos);
		pos += 2;
		if (len == XC3028_REC_END)
			return 0;
		if (len == XC3028_REC_RESET || len == XC3028_REC_CLK_RESET ||
		    len & XC3028_REC_SLEEP)
			continue;
		if (len > img->size - pos)
			return xc3028_fw_bad(
			    priv,
			    "image %u: record of %u bytes at %u "
			    "runs past the image",
			    idx, len, pos - 2);
		pos += len;
	}
	return 0;
}

static int xc3028_fw_parse_image(struct xc3028_priv *priv, unsigned int idx,
				 const uint8_t *data, size_t size, size_t *pos)
{
	struct xc3028_image *img = &priv->fw.images[idx];
	const uint8_t *p = data + *pos;
	size_t left = size - *pos;
	size_t hdr = XC3028_FW_IMAGE_HEADER_LEN;

	if (left < 4)
		return xc3028_fw_bad(priv, "image %u: truncated header", idx);
	img->type = xc3028_le32(p);
	if (img->type & XC3028_FW_HAS_IF)
		hdr += 2;
	if (left < hdr)
		return xc3028_fw_bad(priv, "image %u: truncated header", idx);
	img->std = xc3028_le64(p + 4);
	if (img->type & XC3028_FW_HAS_IF)
		img->if_khz = xc3028_le16(p + 12);
	img->size = xc3028_le32(p + hdr - 4);
	if (img->size > left - hdr)
		return xc3028_fw_bad(priv,
				     "image %u: %u bytes of data, %zu left in "
				     "the file",
				     idx, img->size, left - hdr);
	img->data = p + hdr;
	*pos += hdr + img->size;
	/* An SCODE image is a table of entries, not records. */
	if (img->type & XC3028_FW_SCODE)
		return 0;
	return xc3028_fw_check_records(priv, idx, img);
}

int xc3028_fw_parse(struct xc3028_priv *priv, const uint8_t *data, size_t size)
{
	struct xc3028_fw *fw = &priv->fw;
	size_t pos = XC3028_FW_HEADER_LEN;
	int ret;

	memset(fw, 0, sizeof(*fw));
	if (!data || size < XC3028_FW_HEADER_LEN)
		return xc3028_fw_bad(priv, "%zu bytes, shorter than a header",
				     size);
	memcpy(fw->name, data, XC3028_FW_NAME_LEN);
	fw->version = xc3028_le16(data + XC3028_FW_NAME_LEN);
	fw->count = xc3028_le16(data + XC3028_FW_NAME_LEN + 2);
	if (!fw->count)
		return xc3028_fw_bad(priv, "no images");
	fw->images = calloc(fw->count, sizeof(*fw->images));
	if (!fw->images)
		return -ENOMEM;
	for (unsigned int i = 0; i < fw->count; i++) {
		ret = xc3028_fw_parse_image(priv, i, data, size, &pos);
		if (ret)
			goto err;
	}
	if (pos != size)
		xc3028_log(
		    priv, TUNERD_LOG_WARN,
		    "firmware %s: %zu bytes after the last image ignored",
		    XC3028_FIRMWARE_FILE, size - pos);
	xc3028_log(priv, TUNERD_LOG_INFO, "firmware \"%s\" v%u.%u, %u images",
		   fw->name, fw->version >> 8, fw->version & 0xFF, fw->count);
	return 0;
err:
	xc3028_fw_free(fw);
	return ret;
}

void xc3028_fw_free(struct xc3028_fw *fw)
{
	free(fw->images);
	memset(fw, 0, sizeof(*fw));
}

/*
 * The best image carrying every bit of want, none of exclude and, when
 * std is non-zero, a standard in common with it.  Better: the same
 * standard exactly, then more standards in common, then fewer type bits
 * beyond want.  Ties go to the first in the file.  -1 if none.
 */
static int xc3028_fw_find(const struct xc3028_fw *fw, uint32_t want,
			  uint32_t exclude, uint64_t std)
{
	unsigned long best_score = ~0ul;
	int best = -1;

	for (unsigned int i = 0; i < fw->count; i++) {
		const struct xc3028_image *img = &fw->images[i];
		uint32_t extra = img->type & ~want & ~XC3028_FW_HAS_IF;
		unsigned long score;

		if ((img->type & want) != want || img->type & exclude)
			continue;
		if (std && !(img->std & std))
			continue;
		score = (unsigned long)__builtin_popcount(extra);
		if (std)
			score += (unsigned long)(img->std != std) << 16 |
				 (unsigned long)(64 - __builtin_popcountll(
							  img->std & std))
				     << 8;
		if (score < best_score) {
			best_score = score;
			best = (int)i;
		}
	}
	return best;
}

static int xc3028_fw_find_scode(const struct xc3028_fw *fw, unsigned int if_khz)
{
	for (unsigned int i = 0; i < fw->count; i++) {
		const struct xc3028_image *img = &fw->images[i];

		if (img->type & XC3028_FW_SCODE &&
		    img->type & XC3028_FW_HAS_IF && img->if_khz == if_khz &&
		    img->size >= XC3028_SCODE_ENTRY_LEN)
			return (int)i;
	}
	return -1;
}

/* The images a mode needs; std is -1 when the file has none for it. */
void xc3028_fw_pick(const struct xc3028_priv *priv,
		    const struct xc3028_mode *mode, struct xc3028_fwset *set)
{
	const struct xc3028_fw *fw = &priv->fw;
	uint32_t f8 = mode->base_type & XC3028_FW_F8MHZ;
	uint32_t not_f8 = f8 ? 0 : XC3028_FW_F8MHZ;
	uint32_t std_exclude =
	    XC3028_FW_BASE | XC3028_FW_INIT1 | XC3028_FW_SCODE;

	set->base = xc3028_fw_find(
	    fw, mode->base_type, not_f8 | XC3028_FW_INIT1 | XC3028_FW_SCODE, 0);
	set->init1 =
	    xc3028_fw_find(fw, XC3028_FW_INIT1 | f8, XC3028_FW_SCODE, 0);
	if (set->init1 < 0 && f8)
		set->init1 = xc3028_fw_find(
		    fw, XC3028_FW_INIT1, XC3028_FW_SCODE | XC3028_FW_F8MHZ, 0);
	if (mode->analog)
		std_exclude |= XC3028_FW_DTV | XC3028_FW_FM;
	set->std = xc3028_fw_find(fw, mode->std_type, std_exclude,
				  mode->analog ? mode->std : 0);
	/* FM radio leaves the chip as audio: no demodulator IF to set. */
	set->scode = mode->radio || set->std < 0
			 ? -1
			 : xc3028_fw_find_scode(fw, priv->demod_if_khz);
}

/* One data record: the register byte heads every chunk. */
static int xc3028_fw_send_record(struct xc3028_priv *priv, const uint8_t *rec,
				 uint16_t len)
{
	uint8_t buf[256];
	size_t payload = (size_t)len - 1, chunk_max = priv->max_len - 1;
	const uint8_t *p = rec + 1;
	int ret;

	buf[0] = rec[0];
	while (payload) {
		size_t n = payload < chunk_max ? payload : chunk_max;

		memcpy(buf + 1, p, n);
		ret = xc3028_write(priv, buf, (uint16_t)(n + 1));
		if (ret)
			return ret;
		p += n;
		payload -= n;
	}
	return 0;
}

/* Records were checked at parse time; the bounds checks stay anyway. */
int xc3028_fw_upload(struct xc3028_priv *priv, int idx)
{
	const struct tunerd_host *host = priv->host;
	const struct xc3028_image *img = &priv->fw.images[idx];
	uint32_t pos = 0;
	int ret = 0;

	while (!ret && img->size - pos >= 2) {
		uint16_t len = xc3028_le16(img->data + pos);

		pos += 2;
		if (len == XC3028_REC_END)
			break;
		if (len == XC3028_REC_RESET) {
			ret = host->bridge_ctrl(host->ctx,
						TSTUB_CTRL_TUNER_RESET, 0);
		} else if (len == XC3028_REC_CLK_RESET) {
			ret = host->bridge_ctrl(host->ctx, TSTUB_CTRL_CLK_RESET,
						0);
		} else if (len & XC3028_REC_SLEEP) {
			host->sleep_ms(host->ctx, len & ~XC3028_REC_SLEEP);
		} else if (len > img->size - pos) {
			ret = -EINVAL;
		} else {
			if (len > 1)
				ret = xc3028_fw_send_record(
				    priv, img->data + pos, len);
			pos += len;
		}
	}
	if (ret)
		xc3028_dbg(priv, "upload of image %d failed: %d", idx, ret);
	return ret;
}

/* SCODE: header, the table's first entry, trailer. */
int xc3028_fw_send_scode(struct xc3028_priv *priv, int idx)
{
	const struct xc3028_image *img = &priv->fw.images[idx];
	uint8_t header[4] = {XC3028_SCODE_HEADER | priv->cmd_flag, 0, 0, 0};
	uint8_t trailer[2] = {0x00, XC3028_SCODE_TRAILER};
	int ret;

	ret = xc3028_write(priv, header, sizeof(header));
	if (!ret)
		ret = xc3028_write(priv, img->data, XC3028_SCODE_ENTRY_LEN);
	if (!ret)
		ret = xc3028_write(priv, trailer, sizeof(trailer));
	if (ret)
		xc3028_dbg(priv, "SCODE upload failed: %d", ret);
	return ret;
}

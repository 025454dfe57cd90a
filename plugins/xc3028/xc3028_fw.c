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
		if (len > XC3028_REC_CLK_RESET)
			return xc3028_fw_bad(priv,
					     "image %u: invalid reset code "
					     "0x%04x at %u",
					     idx, len, pos - 2);
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
	/* The kernel refuses empty images as corrupt. */
	if (!img->size)
		return xc3028_fw_bad(priv, "image %u: no data", idx);
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
	/* The kernel reads bytes past the last image as one image too many
	 * and refuses the file. */
	if (pos != size) {
		ret = xc3028_fw_bad(priv, "%zu bytes after the last image",
				    size - pos);
		goto err;
	}
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
 * The image for type and *id, by the kernel's rules (seek_firmware()):
 * within the type's group the type must be equal; then the same standard
 * exactly, else the first image holding every requested standard, else
 * the one with most standards in common.  *id becomes the image's.
 */
int xc3028_fw_seek(const struct xc3028_fw *fw, uint32_t type, uint64_t *id)
{
	uint32_t mask = 0;
	int best = -1, best_n = 0;

	if (!(type & ~XC3028_FW_SCODE) && !*id)
		*id = XC3028_STD_PAL;
	if (type & XC3028_FW_BASE) {
		mask = XC3028_FW_BASE_TYPES;
	} else if (type & XC3028_FW_SCODE) {
		type &= XC3028_FW_SCODE_TYPES;
		mask = XC3028_FW_SCODE_TYPES;
	} else if (type & XC3028_FW_DTV_TYPES) {
		mask = XC3028_FW_DTV_TYPES;
	} else if (type & XC3028_FW_STD_TYPES) {
		mask = XC3028_FW_STD_TYPES;
	}
	type &= mask;
	if (!(type & XC3028_FW_SCODE))
		mask = ~0u;
	for (unsigned int i = 0; i < fw->count; i++)
		if (type == (fw->images[i].type & mask) &&
		    *id == fw->images[i].std) {
			best = (int)i;
			goto found;
		}
	for (unsigned int i = 0; i < fw->count; i++) {
		uint64_t common = *id & fw->images[i].std;
		int n;

		if (type != (fw->images[i].type & mask) || !common)
			continue;
		if (common == *id) {
			best = (int)i;
			goto found;
		}
		n = __builtin_popcountll(common);
		if (n > best_n) {
			best_n = n;
			best = (int)i;
		}
	}
	if (best < 0)
		return -ENOENT;
found:
	*id = fw->images[best].std;
	return best;
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

/* A bridge without the callback answers -EINVAL (the kernel's
 * do_tuner_callback() without fe->callback) or -EOPNOTSUPP (the stub
 * without a bridge callback): the flush is then skipped silently. */
static int xc3028_fw_flush(struct xc3028_priv *priv)
{
	const struct tunerd_host *host = priv->host;
	int ret = host->bridge_ctrl(host->ctx, TSTUB_CTRL_I2C_FLUSH, 0);

	return ret == -EINVAL || ret == -EOPNOTSUPP ? 0 : ret;
}

/* One record of an image; *pos moves past it.  1 at the end marker. */
static int xc3028_fw_record(struct xc3028_priv *priv,
			    const struct xc3028_image *img, uint32_t *pos)
{
	const struct tunerd_host *host = priv->host;
	uint16_t len = xc3028_le16(img->data + *pos);
	int ret;

	*pos += 2;
	if (len == XC3028_REC_END)
		return 1;
	if (len == XC3028_REC_RESET || len == XC3028_REC_CLK_RESET) {
		ret = host->bridge_ctrl(
		    host->ctx,
		    len ? TSTUB_CTRL_CLK_RESET : TSTUB_CTRL_TUNER_RESET, 0);
		return ret < 0 ? ret : 0;
	}
	if (len > XC3028_REC_CLK_RESET)
		return -EINVAL;
	if (len & XC3028_REC_SLEEP) {
		host->sleep_ms(host->ctx, len & ~XC3028_REC_SLEEP);
		return 0;
	}
	if (len > img->size - *pos)
		return -EINVAL;
	ret = xc3028_fw_send_record(priv, img->data + *pos, len);
	*pos += len;
	return ret ? ret : xc3028_fw_flush(priv);
}

/* Upload the image seek finds for type and *id (load_firmware()).
 * Records were checked at parse time; the bounds checks stay anyway. */
int xc3028_fw_load(struct xc3028_priv *priv, uint32_t type, uint64_t *id)
{
	int idx = xc3028_fw_seek(&priv->fw, type, id);
	const struct xc3028_image *img;
	uint32_t pos = 0;
	int ret = 0;

	if (idx < 0)
		return idx;
	img = &priv->fw.images[idx];
	while (!ret && img->size - pos >= 2)
		ret = xc3028_fw_record(priv, img, &pos);
	if (ret < 0)
		xc3028_dbg(priv, "upload of image %d failed: %d", idx, ret);
	return ret < 0 ? ret : 0;
}

/* The SCODE image: the first with this IF, else by type and standard. */
static int xc3028_fw_find_scode(struct xc3028_priv *priv, uint32_t type,
				uint64_t *id, uint16_t if_khz)
{
	if (!if_khz)
		return xc3028_fw_seek(&priv->fw, type, id);
	for (unsigned int i = 0; i < priv->fw.count; i++)
		if (priv->fw.images[i].if_khz == if_khz &&
		    priv->fw.images[i].type & XC3028_FW_HAS_IF)
			return (int)i;
	return -ENOENT;
}

/* SCODE (load_scode()): header, the table's first entry, trailer. */
int xc3028_fw_load_scode(struct xc3028_priv *priv, uint32_t type, uint64_t *id,
			 uint16_t if_khz)
{
	int idx = xc3028_fw_find_scode(priv, type, id, if_khz);
	uint8_t header[4] = {XC3028_SCODE_HEADER | priv->cmd_flag, 0, 0, 0};
	static const uint8_t trailer[2] = {0x00, XC3028_SCODE_TRAILER};
	const struct xc3028_image *img;
	const uint8_t *entry;
	int ret;

	if (idx < 0)
		return idx;
	img = &priv->fw.images[idx];
	entry = img->data;
	if (img->type & XC3028_FW_HAS_IF) {
		if (img->size != XC3028_SCODE_ENTRY_LEN * XC3028_SCODE_ENTRIES)
			return -EINVAL;
	} else {
		if (img->size !=
			(XC3028_SCODE_ENTRY_LEN + 2) * XC3028_SCODE_ENTRIES ||
		    xc3028_le16(img->data) != XC3028_SCODE_ENTRY_LEN)
			return -EINVAL;
		entry += 2;
	}
	ret = xc3028_write(priv, header, sizeof(header));
	if (!ret)
		ret = xc3028_write(priv, entry, XC3028_SCODE_ENTRY_LEN);
	if (!ret)
		ret = xc3028_write(priv, trailer, sizeof(trailer));
	if (ret)
		xc3028_dbg(priv, "SCODE upload failed: %d", ret);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * fwfile_xc3028.c - parsing the XC3028 firmware file into images and the
 * payload streams the chip model recognises uploads by.
 */
#include "fwfile_xc3028.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The real v2.7 file is about 70 KiB with 80 images. */
#define XC3028_FW_FILE_MAX   (16u << 20)
#define XC3028_FW_IMAGES_MAX 1024u

static uint16_t fw_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t fw_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t fw_le64(const uint8_t *p)
{
	return (uint64_t)fw_le32(p) | (uint64_t)fw_le32(p + 4) << 32;
}

static int fw_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fw_fail(char *err, size_t errlen, const char *fmt, ...)
{
	char reason[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (err && errlen)
		snprintf(err, errlen, "firmware: %s", reason);
	return -EINVAL;
}

/*
 * Walk an image's records and collect the bytes the chip receives as
 * payload: each data record minus its register byte.
 */
static int fw_build_stream(struct xc3028_image *img, size_t idx, char *err,
			   size_t errlen)
{
	const uint8_t *p = img->data;
	const uint8_t *end = img->data + img->size;

	img->stream = malloc(img->size ? img->size : 1);
	img->resets = calloc(img->size / 2 + 1, sizeof(*img->resets));
	if (!img->stream || !img->resets)
		return fw_fail(err, errlen, "out of memory (image %zu)", idx);
	img->stream_len = 0;
	while (p < end) {
		uint16_t len;

		if (end - p < 2)
			return fw_fail(err, errlen,
				       "image %zu: truncated record at %zu",
				       idx, (size_t)(p - img->data));
		len = fw_le16(p);
		p += 2;
		if (len == XC3028_REC_END)
			return 0;
		if (len > XC3028_REC_CLK_RESET)
			return fw_fail(err, errlen,
				       "image %zu: invalid reset code 0x%04x",
				       idx, len);
		if (len == XC3028_REC_RESET)
			img->resets[img->nresets++] = img->stream_len;
		if (len == XC3028_REC_RESET || len == XC3028_REC_CLK_RESET ||
		    (len & XC3028_REC_SLEEP))
			continue;
		if ((size_t)(end - p) < len)
			return fw_fail(err, errlen,
				       "image %zu: record of %u bytes runs "
				       "past the image",
				       idx, len);
		memcpy(img->stream + img->stream_len, p + 1, len - 1u);
		img->stream_len += len - 1u;
		p += len;
	}
	return 0;
}

static int fw_build_scode(struct xc3028_image *img)
{
	img->stream = malloc(img->size ? img->size : 1);
	if (!img->stream)
		return -ENOMEM;
	memcpy(img->stream, img->data, img->size);
	img->stream_len = img->size;
	return 0;
}

/* One image header and its data at *pos; advances *pos. */
static int fw_parse_image(struct xc3028_fw *fw, size_t idx, size_t *pos,
			  char *err, size_t errlen)
{
	struct xc3028_image *img = &fw->images[idx];
	const uint8_t *p = fw->file + *pos;
	size_t left = fw->file_len - *pos;
	size_t hdr = 16;
	uint32_t size;

	if (left < 12)
		return fw_fail(err, errlen, "image %zu: truncated header", idx);
	img->type = fw_le32(p);
	img->std = fw_le64(p + 4);
	if (img->type & XC3028_FW_HAS_IF)
		hdr += 2;
	if (left < hdr)
		return fw_fail(err, errlen, "image %zu: truncated header", idx);
	if (img->type & XC3028_FW_HAS_IF)
		img->if_khz = fw_le16(p + 12);
	size = fw_le32(p + hdr - 4);
	if (!size)
		return fw_fail(err, errlen, "image %zu: no data", idx);
	if (size > left - hdr)
		return fw_fail(err, errlen,
			       "image %zu: size %u runs past the file", idx,
			       size);
	img->data = p + hdr;
	img->size = size;
	*pos += hdr + size;
	if (img->type & XC3028_FW_SCODE)
		return fw_build_scode(img)
			   ? fw_fail(err, errlen, "out of memory")
			   : 0;
	return fw_build_stream(img, idx, err, errlen);
}

static int fw_parse_header(struct xc3028_fw *fw, char *err, size_t errlen)
{
	const uint8_t *p = fw->file;

	if (fw->file_len < XC3028_FW_HEADER_LEN)
		return fw_fail(err, errlen,
			       "file of %zu bytes is shorter than the %d-byte "
			       "header",
			       fw->file_len, XC3028_FW_HEADER_LEN);
	memcpy(fw->name, p, XC3028_FW_NAME_LEN);
	fw->name[XC3028_FW_NAME_LEN] = '\0';
	fw->version = fw_le16(p + XC3028_FW_NAME_LEN);
	fw->count = fw_le16(p + XC3028_FW_NAME_LEN + 2);
	if (fw->count == 0 || fw->count > XC3028_FW_IMAGES_MAX)
		return fw_fail(err, errlen, "bad image count %zu", fw->count);
	fw->images = calloc(fw->count, sizeof(*fw->images));
	if (!fw->images)
		return fw_fail(err, errlen, "out of memory");
	return 0;
}

int xc3028_fw_parse(const uint8_t *buf, size_t len, struct xc3028_fw *fw,
		    char *err, size_t errlen)
{
	size_t pos = XC3028_FW_HEADER_LEN;
	int ret;

	memset(fw, 0, sizeof(*fw));
	fw->file = malloc(len ? len : 1);
	if (!fw->file)
		return fw_fail(err, errlen, "out of memory");
	memcpy(fw->file, buf, len);
	fw->file_len = len;
	ret = fw_parse_header(fw, err, errlen);
	for (size_t i = 0; !ret && i < fw->count; i++)
		ret = fw_parse_image(fw, i, &pos, err, errlen);
	if (!ret && pos != len)
		ret = fw_fail(err, errlen, "%zu trailing bytes after image %zu",
			      len - pos, fw->count - 1);
	if (ret)
		xc3028_fw_release(fw);
	return ret;
}

int xc3028_fw_load(const char *path, struct xc3028_fw *fw, char *err,
		   size_t errlen)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n;
	int ret;

	memset(fw, 0, sizeof(*fw));
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "firmware %s: %s", path, strerror(errno));
		return ret;
	}
	buf = malloc(XC3028_FW_FILE_MAX + 1);
	if (!buf) {
		ret = -ENOMEM;
		snprintf(err, errlen, "firmware %s: out of memory", path);
		goto out;
	}
	n = fread(buf, 1, XC3028_FW_FILE_MAX + 1, f);
	if (ferror(f) || n > XC3028_FW_FILE_MAX) {
		ret = ferror(f) ? -EIO : -EFBIG;
		snprintf(err, errlen, "firmware %s: %s", path,
			 ferror(f) ? "read error" : "file too large");
		goto out;
	}
	ret = xc3028_fw_parse(buf, n, fw, err, errlen);
out:
	free(buf);
	fclose(f);
	return ret;
}

void xc3028_fw_release(struct xc3028_fw *fw)
{
	for (size_t i = 0; fw->images && i < fw->count; i++) {
		free(fw->images[i].stream);
		free(fw->images[i].resets);
	}
	free(fw->images);
	free(fw->file);
	memset(fw, 0, sizeof(*fw));
}

int xc3028_fw_reset_at(const struct xc3028_image *img, size_t stream_pos)
{
	for (size_t i = 0; i < img->nresets; i++)
		if (img->resets[i] == stream_pos)
			return 1;
	return 0;
}

static const char *const fw_type_names[31] = {
    "BASE",     "F8MHZ",      "MTS",     "D2620",  "D2633",     "DTV6",
    "QAM",      "DTV7",       "DTV78",   "DTV8",   "FM",        "INPUT1",
    "LCD",      "NOGD",       "INIT1",   "MONO",   "ATSC",      "IF",
    "LG60",     "ATI638",     "OREN538", "OREN36", "TOYOTA388", "TOYOTA794",
    "DIBCOM52", "ZARLINK456", "CHINA",   "F6MHZ",  "INPUT2",    "SCODE",
    "HAS_IF",
};

static const char *fw_std_name(uint64_t std)
{
	if (std == XC3028_STD_PAL_BG)
		return "PAL_BG";
	if (std == XC3028_STD_PAL_I)
		return "PAL_I";
	if (std == XC3028_STD_PAL_DK)
		return "PAL_DK";
	if (std && !(std & ~XC3028_STD_525_LINES))
		return "NTSC_M";
	return NULL;
}

void xc3028_fw_image_name(const struct xc3028_image *img, char *buf, size_t len)
{
	size_t used = 0;
	const char *std = fw_std_name(img->std);

	if (!len)
		return;
	buf[0] = '\0';
	for (unsigned int bit = 0; bit < 31; bit++) {
		if (!(img->type & (1u << bit)) || bit == 30 || used >= len)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 used ? " " : "", fw_type_names[bit]);
	}
	if (img->type & XC3028_FW_HAS_IF && used < len)
		used += (size_t)snprintf(buf + used, len - used, "%s%u",
					 used ? " " : "", img->if_khz);
	if (!(img->type & XC3028_FW_DTV_MASK) && img->std && used < len) {
		if (std)
			snprintf(buf + used, len - used, "%s%s",
				 used ? " " : "", std);
		else
			snprintf(buf + used, len - used, "%sstd=%llx",
				 used ? " " : "", (unsigned long long)img->std);
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * fwfile_xc3028.h - the simulated chip's reader of the XC3028 firmware
 * file (layout and type bits: protocol/xc3028_fw_format.h): a parser that
 * keeps, for every image, the byte stream the chip receives when the
 * image is uploaded.
 */
#ifndef TUNERD_FWFILE_XC3028_H
#define TUNERD_FWFILE_XC3028_H

#include <stddef.h>
#include <stdint.h>

#include "xc3028_fw_format.h"

#define XC3028_FW_DTV_MASK                                                     \
	(XC3028_FW_DTV6 | XC3028_FW_DTV7 | XC3028_FW_DTV78 | XC3028_FW_DTV8 |  \
	 XC3028_FW_ATSC | XC3028_FW_QAM)

/* v4l2_std_id bits the firmware images carry. */
#define XC3028_STD_PAL_BG    0x0000000000000007ull
#define XC3028_STD_PAL_I     0x0000000000000010ull
#define XC3028_STD_PAL_DK    0x00000000000000E0ull
#define XC3028_STD_525_LINES 0x000000000000F900ull /* M, N, Nc, NTSC */
#define XC3028_STD_SECAM_L   0x0000000000400000ull

struct xc3028_image {
	uint32_t type;
	uint64_t std;
	uint16_t if_khz;     /* valid with XC3028_FW_HAS_IF */
	const uint8_t *data; /* the image as stored in the file */
	size_t size;
	uint8_t *stream;   /* record payloads without register bytes */
	size_t stream_len; /* SCODE: a copy of the raw table */
	/* Where tuner reset records sit, as offsets into stream (several
	 * may share one).  Real v2.7 BASE images hold one after their first
	 * data record: the upload goes on after it. */
	size_t *resets;
	size_t nresets;
};

struct xc3028_fw {
	char name[XC3028_FW_NAME_LEN + 1];
	uint16_t version; /* 0x0207 for v2.7 */
	size_t count;
	struct xc3028_image *images;
	uint8_t *file; /* the whole file; images point into it */
	size_t file_len;
};

/* Parse a file in memory (the buffer is copied).  0 or -EINVAL with a
 * reason in err.  It takes what the kernel's driver takes: no empty
 * image, no bytes after the last one, valid records. */
int xc3028_fw_parse(const uint8_t *buf, size_t len, struct xc3028_fw *fw,
		    char *err, size_t errlen);
/* Read and parse a file.  0, -errno (open/read) or -EINVAL. */
int xc3028_fw_load(const char *path, struct xc3028_fw *fw, char *err,
		   size_t errlen);
void xc3028_fw_release(struct xc3028_fw *fw);
/* Whether the image has a tuner reset record at this stream offset. */
int xc3028_fw_reset_at(const struct xc3028_image *img, size_t stream_pos);

/* "BASE F8MHZ", "DTV8", "SCODE HAS_IF 4560", "PAL_I"... into buf. */
void xc3028_fw_image_name(const struct xc3028_image *img, char *buf,
			  size_t len);

#endif /* TUNERD_FWFILE_XC3028_H */

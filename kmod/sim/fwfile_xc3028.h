/* SPDX-License-Identifier: MIT */
/*
 * fwfile_xc3028.h - the XC3028 firmware file (xc3028-v27.fw layout): type
 * bits, and a parser that keeps, for every image, the byte stream the
 * chip receives when the image is uploaded.
 *
 * File: 32-byte NUL-padded name, le16 version, le16 image count; each
 * image: le32 type, le64 v4l2_std_id, le16 IF (only with HAS_IF), le32
 * size, data.  Image data is a stream of le16-length records: 0xFFFF
 * end, 0x0000 tuner reset, 0xFF00 clock reset, bit 15 set: sleep
 * (len & 0x7FFF) ms (0xFF01-0xFFFE invalid), otherwise len bytes whose first byte is a register
 * byte sent at the head of every I2C chunk.  SCODE images are raw
 * tables of 12-byte entries.
 */
#ifndef XC3028_FW_H
#define XC3028_FW_H

#include <stddef.h>
#include <stdint.h>

#define XC3028_FW_BASE          (1u << 0)
#define XC3028_FW_F8MHZ         (1u << 1)
#define XC3028_FW_MTS           (1u << 2)
#define XC3028_FW_D2620         (1u << 3)
#define XC3028_FW_D2633         (1u << 4)
#define XC3028_FW_DTV6          (1u << 5)
#define XC3028_FW_QAM           (1u << 6)
#define XC3028_FW_DTV7          (1u << 7)
#define XC3028_FW_DTV78         (1u << 8)
#define XC3028_FW_DTV8          (1u << 9)
#define XC3028_FW_FM            (1u << 10)
#define XC3028_FW_INPUT1        (1u << 11)
#define XC3028_FW_LCD           (1u << 12)
#define XC3028_FW_NOGD          (1u << 13)
#define XC3028_FW_INIT1         (1u << 14)
#define XC3028_FW_MONO          (1u << 15)
#define XC3028_FW_ATSC          (1u << 16)
#define XC3028_FW_DEMOD_IF_MASK (0x3FFu << 17)
#define XC3028_FW_F6MHZ         (1u << 27)
#define XC3028_FW_INPUT2        (1u << 28)
#define XC3028_FW_SCODE         (1u << 29)
#define XC3028_FW_HAS_IF        (1u << 30)

#define XC3028_FW_DTV_MASK                                                     \
	(XC3028_FW_DTV6 | XC3028_FW_DTV7 | XC3028_FW_DTV78 | XC3028_FW_DTV8 |  \
	 XC3028_FW_ATSC | XC3028_FW_QAM)

/* Record lengths with a meaning of their own. */
#define XC3028_REC_END       0xFFFF
#define XC3028_REC_RESET     0x0000
#define XC3028_REC_CLK_RESET 0xFF00
#define XC3028_REC_SLEEP     0x8000

#define XC3028_FW_NAME_LEN     32
#define XC3028_FW_HEADER_LEN   (XC3028_FW_NAME_LEN + 4)
#define XC3028_SCODE_ENTRY_LEN 12

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

#endif /* XC3028_FW_H */

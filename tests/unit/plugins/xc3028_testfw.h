/* SPDX-License-Identifier: MIT */
/*
 * xc3028_testfw.h - a synthetic XC3028 firmware file for the plugin test,
 * laid out like the real xc3028-v27.fw (image types, standards, SCODE
 * tables by IF), and the bus traffic uploading its images must cause by
 * the kernel driver's rules.
 */
#ifndef TUNERD_TEST_XC3028_TESTFW_H
#define TUNERD_TEST_XC3028_TESTFW_H

#include <stddef.h>
#include <stdint.h>

#include "mock_host.h"

/* Type bits of the file format. */
#define T_BASE   (1u << 0)
#define T_F8MHZ  (1u << 1)
#define T_MTS    (1u << 2)
#define T_D2620  (1u << 3)
#define T_D2633  (1u << 4)
#define T_DTV6   (1u << 5)
#define T_QAM    (1u << 6)
#define T_DTV7   (1u << 7)
#define T_DTV78  (1u << 8)
#define T_DTV8   (1u << 9)
#define T_FM     (1u << 10)
#define T_INPUT1 (1u << 11)
#define T_LCD    (1u << 12)
#define T_INIT1  (1u << 14)
#define T_ATSC   (1u << 16)
#define T_SCODE  (1u << 29)
#define T_HAS_IF (1u << 30)

#define STD_PAL_BG      0x0000000000000007ull
#define STD_PAL_BG_A2_A 0x0000000100000007ull
#define STD_PAL_BG_ALL  0x0000000F00000007ull
#define STD_PAL_I       0x0000000000000010ull
#define STD_SECAM_L     0x0000000000400000ull
#define STD_NTSC_M      0x0000000000001000ull
#define STD_NTSC_M_KR   0x0000000000008000ull
#define STD_MN          0x000000000000B700ull

/* The images of the test file, in file order. */
enum {
	IMG_BASE_F8,
	IMG_BASE_F8_MTS,
	IMG_BASE_FM,
	IMG_BASE_FM_INPUT1,
	IMG_BASE,
	IMG_PAL_BG_A2_A,
	IMG_PAL_I,
	IMG_NTSC_LCD, /* not for a plain NTSC request: LCD is a type bit */
	IMG_NTSC,
	IMG_ATSC,
	IMG_QAM6_D2620,
	IMG_QAM6_D2633,
	IMG_DTV7_D2620,
	IMG_DTV7_D2633,
	IMG_DTV78_D2620,
	IMG_DTV78_D2633,
	IMG_DTV8_D2620,
	IMG_DTV8_D2633,
	IMG_FM,
	IMG_SCODE_3280, /* the first SCODE of standard 0 */
	IMG_SCODE_4320, /* NTSC-M-KR: one standard in common with M/N */
	IMG_SCODE_4500, /* M/N, but an MTS table */
	IMG_SCODE_4560,
	IMG_SCODE_4760, /* ZARLINK456 + 200 kHz */
	IMG_SCODE_5320, /* every PAL B/G audio variant */
	IMG_SCODE_5580, /* OREN538 + 200 kHz */
	IMG_SCODE_6200, /* LG60 + 200 kHz, a table of the wrong size */
	IMG_SCODE_6240, /* PAL-I */
	IMG_INIT1,      /* only with TESTFW_INIT1 */
	IMG_COUNT
};

#define TESTFW_INIT1     0x1u /* add a BASE INIT1 image */
#define TESTFW_OLD_SCODE 0x2u /* SCODE 3280 in the old layout, no IF */

enum rec_kind { REC_DATA, REC_RESET, REC_CLK_RESET, REC_SLEEP };

struct rec {
	int kind;
	uint16_t len;         /* REC_DATA: register byte + payload */
	uint16_t ms;          /* REC_SLEEP */
	const uint8_t *bytes; /* REC_DATA: into the image data */
};

#define REC_MAX 256

struct image {
	uint32_t type;
	uint64_t std;
	uint16_t if_khz;
	uint8_t *data;
	size_t size;
	struct rec recs[REC_MAX];
	size_t nrecs;
};

struct testfw {
	struct image img[IMG_COUNT];
	unsigned int count; /* images in the file */
	uint16_t version;
	uint8_t *file;
	size_t file_len;
	size_t image_offset[IMG_COUNT]; /* where each image header starts */
};

int testfw_build(struct testfw *fw, uint16_t version, unsigned int flags);
void testfw_free(struct testfw *fw);
/* Write buf to a fresh temporary file; its path into path (>= 64). */
int testfw_write(const uint8_t *buf, size_t len, char *path);

/* Expected traffic, each appended to want.  An image: its records, data
 * chunked at max_len with an I2C flush callback after every data record.
 * BASE: the reset callback, the image.  SCODE: header, the first entry,
 * trailer.  Readback: VERSION then PRODUCT_ID.  Tune: the analog soft
 * reset, RF_FREQ, clock reset callback (argument 1), 10 ms, divider,
 * 100 ms. */
void expect_image(struct mock_events *want, const struct testfw *fw, int idx,
		  unsigned int max_len);
void expect_base(struct mock_events *want, const struct testfw *fw, int idx,
		 unsigned int max_len);
void expect_scode(struct mock_events *want, const struct testfw *fw, int idx,
		  uint8_t flag);
void expect_readback(struct mock_events *want, uint16_t version,
		     uint16_t model);
void expect_tune(struct mock_events *want, uint32_t div, int analog,
		 uint8_t flag);

#endif /* TUNERD_TEST_XC3028_TESTFW_H */

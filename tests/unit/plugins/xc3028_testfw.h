/* SPDX-License-Identifier: MIT */
/*
 * xc3028_testfw.h - a synthetic XC3028 firmware file for the plugin test,
 * built from the file format of the chip facts, and the bus traffic that
 * uploading its images must produce.
 */
#ifndef TUNERD_TEST_XC3028_TESTFW_H
#define TUNERD_TEST_XC3028_TESTFW_H

#include <stddef.h>
#include <stdint.h>

#include "mock_host.h"

/* Type bits of the file format. */
#define T_BASE   (1u << 0)
#define T_F8MHZ  (1u << 1)
#define T_D2633  (1u << 4)
#define T_DTV6   (1u << 5)
#define T_QAM    (1u << 6)
#define T_DTV7   (1u << 7)
#define T_DTV78  (1u << 8)
#define T_DTV8   (1u << 9)
#define T_FM     (1u << 10)
#define T_INIT1  (1u << 14)
#define T_ATSC   (1u << 16)
#define T_SCODE  (1u << 29)
#define T_HAS_IF (1u << 30)

#define STD_PAL_BG  0x0000000000000007ull
#define STD_PAL_I   0x0000000000000010ull
#define STD_PAL     0x00000000000000FFull
#define STD_SECAM_L 0x0000000000400000ull
#define STD_NTSC    0x000000000000B000ull

/* The images of the test file, in file order. */
enum {
	IMG_BASE,
	IMG_BASE_F8,
	IMG_INIT1,
	IMG_DTV6,
	IMG_QAM_DTV6,
	IMG_DTV7,
	IMG_DTV78,
	IMG_DTV8,
	IMG_ATSC,
	IMG_FM,
	IMG_PAL_ALL, /* every PAL: the fallback when no image is exact */
	IMG_PAL_BG,
	IMG_NTSC,
	IMG_SCODE_4560,
	IMG_SCODE_5380,
	IMG_COUNT
};

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
	uint16_t version;
	uint8_t *file;
	size_t file_len;
	size_t image_offset[IMG_COUNT]; /* where each image header starts */
};

int testfw_build(struct testfw *fw, uint16_t version);
void testfw_free(struct testfw *fw);
/* Write buf to a fresh temporary file; its path into path (>= 64). */
int testfw_write(const uint8_t *buf, size_t len, char *path);

/* Expected traffic: one image's records (chunked at max_len), the SCODE
 * sequence, a whole set after a reset, and a tune. */
void expect_image(struct mock_events *want, const struct testfw *fw, int idx,
		  unsigned int max_len);
void expect_scode(struct mock_events *want, const struct testfw *fw, int idx,
		  uint8_t flag);
void expect_load(struct mock_events *want, const struct testfw *fw, int base,
		 int std, int scode, unsigned int max_len, uint8_t flag);
void expect_tune(struct mock_events *want, uint32_t div, int analog,
		 uint8_t flag);

#endif /* TUNERD_TEST_XC3028_TESTFW_H */

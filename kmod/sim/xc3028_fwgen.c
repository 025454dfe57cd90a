// SPDX-License-Identifier: MIT
/*
 * xc3028_fwgen.c - building the synthetic XC3028 firmware file.
 *
 * Every image's data is a record stream shaped like the real one: records
 * of varying length (so chunking at 13 or 64 bytes splits them
 * differently), a tuner reset record at the head of the BASE images and,
 * as in the real v2.7 file, another after their first data record, a
 * sleep record inside them, and the end marker.
 *
 * The images the kernel's driver asks for by their exact type (BASE FM,
 * D2620/D2633 DTV, ATSC DTV6, NTSC M/N, the SCODE for a demodulator's IF
 * + 200 kHz) follow the plain ones that older tests look up.  Payloads of a few
 * hundred bytes keep an upload at 400 kHz in the tens of milliseconds.
 */
#include "xc3028_fwgen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwfile_xc3028.h"

#define GEN_SCODE_ENTRIES 16
#define GEN_RECORD_MAX    60
#define GEN_SLEEP_MS      2

struct gen_image {
	uint32_t type;
	uint64_t std;
	uint16_t if_khz;
	uint16_t payload; /* data bytes in records, register bytes apart */
};

static const struct gen_image gen_images[] = {
    {XC3028_FW_BASE, 0, 0, 640},
    {XC3028_FW_BASE | XC3028_FW_F8MHZ, 0, 0, 640},
    {XC3028_FW_DTV6 | XC3028_FW_QAM, 0, 0, 300},
    {XC3028_FW_DTV6, 0, 0, 300},
    {XC3028_FW_DTV7, 0, 0, 320},
    {XC3028_FW_DTV78, 0, 0, 320},
    {XC3028_FW_DTV8, 0, 0, 340},
    {XC3028_FW_ATSC | XC3028_FW_D2633, 0, 0, 280},
    {XC3028_FW_FM, 0, 0, 200},
    {XC3028_FW_INIT1, 0, 0, 160},
    {0, XC3028_STD_PAL_BG, 0, 360},
    {0, XC3028_STD_PAL_I, 0, 360},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0, 3600, 0},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0, 3880, 0},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0, 4000, 0},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0, 4560, 0},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0, 5200, 0},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0, 5380, 0},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0, 6000, 0},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0, 6380, 0},
    /* Named as in the real xc3028-v27.fw. */
    {XC3028_FW_BASE | XC3028_FW_FM, 0, 0, 600},
    {XC3028_FW_BASE | XC3028_FW_FM | XC3028_FW_INPUT1, 0, 0, 600},
    {XC3028_FW_ATSC | XC3028_FW_D2633 | XC3028_FW_DTV6, 0, 0, 280},
    {XC3028_FW_D2620 | XC3028_FW_QAM | XC3028_FW_DTV6, 0, 0, 300},
    {XC3028_FW_D2633 | XC3028_FW_QAM | XC3028_FW_DTV6, 0, 0, 300},
    {XC3028_FW_D2620 | XC3028_FW_DTV7, 0, 0, 320},
    {XC3028_FW_D2633 | XC3028_FW_DTV7, 0, 0, 320},
    {XC3028_FW_D2620 | XC3028_FW_DTV78, 0, 0, 320},
    {XC3028_FW_D2633 | XC3028_FW_DTV78, 0, 0, 320},
    {XC3028_FW_D2620 | XC3028_FW_DTV8, 0, 0, 340},
    {XC3028_FW_D2633 | XC3028_FW_DTV8, 0, 0, 340},
    {0, XC3028_STD_525_LINES, 0, 340},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0, 4760, 0},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0, 5400, 0},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0, 6200, 0},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0, 6580, 0},
    /* Analog SCODEs found by standard: NTSC-M-KR, PAL-B/G (every audio
     * variant), PAL-I. */
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0x8000, 4320, 0},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, 0xF00000007ull, 5320, 0},
    {XC3028_FW_SCODE | XC3028_FW_HAS_IF, XC3028_STD_PAL_I, 6240, 0},
    /* The kernel test's sweep: DTV6 without QAM in both demodulator
     * variants, and the analog standards PAL-D/K and SECAM-L. */
    {XC3028_FW_D2620 | XC3028_FW_DTV6, 0, 0, 300},
    {XC3028_FW_D2633 | XC3028_FW_DTV6, 0, 0, 300},
    {0, XC3028_STD_PAL_DK, 0, 360},
    {0, XC3028_STD_SECAM_L, 0, 360},
};

#define GEN_IMAGE_COUNT (sizeof(gen_images) / sizeof(gen_images[0]))

struct gen_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int oom;
};

static void gen_put(struct gen_buf *b, const void *src, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, src, n);
	b->len += n;
}

static void gen_le(struct gen_buf *b, uint64_t v, unsigned int bytes)
{
	uint8_t tmp[8];

	for (unsigned int i = 0; i < bytes; i++)
		tmp[i] = (uint8_t)(v >> (8 * i));
	gen_put(b, tmp, bytes);
}

static uint8_t gen_byte(uint32_t *state)
{
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return (uint8_t)(x >> 24);
}

/* One data record: le16 length, register byte, payload. */
static void gen_record(struct gen_buf *b, uint32_t *rng, unsigned int n)
{
	gen_le(b, n + 1u, 2);
	gen_put(b, (uint8_t[]){(uint8_t)(gen_byte(rng) & 0x7F)}, 1);
	for (unsigned int i = 0; i < n; i++)
		gen_put(b, (uint8_t[]){gen_byte(rng)}, 1);
}

static void gen_record_image(struct gen_buf *b, const struct gen_image *img,
			     uint32_t *rng, unsigned int flags)
{
	unsigned int left = img->payload;
	int is_base = !!(img->type & XC3028_FW_BASE);
	int slept = 0, mid_reset = is_base && flags & XC3028_FWGEN_MID_RESET;

	if (is_base)
		gen_le(b, XC3028_REC_RESET, 2);
	if (img->type & XC3028_FW_F8MHZ)
		gen_le(b, XC3028_REC_CLK_RESET, 2);
	while (left) {
		unsigned int n = 2u + gen_byte(rng) % (GEN_RECORD_MAX - 1u);

		/* At least two payload bytes a record, so a record's first
		 * chunk is never a 2-byte write (a register pointer). */
		if (n > left || left - n < 2)
			n = left;
		gen_record(b, rng, n);
		left -= n;
		if (mid_reset) {
			gen_le(b, XC3028_REC_RESET, 2);
			mid_reset = 0;
		}
		if (is_base && !slept && left < img->payload / 2) {
			gen_le(b, XC3028_REC_SLEEP | GEN_SLEEP_MS, 2);
			slept = 1;
		}
	}
	gen_le(b, XC3028_REC_END, 2);
}

static void gen_image(struct gen_buf *b, const struct gen_image *img,
		      unsigned int idx, unsigned int flags)
{
	uint32_t rng = 0x9E3779B9u * (idx + 1u) ^ 0x5A17C0DEu;
	struct gen_buf data = {0};

	if (img->type & XC3028_FW_SCODE) {
		for (unsigned int i = 0;
		     i < GEN_SCODE_ENTRIES * XC3028_SCODE_ENTRY_LEN; i++)
			gen_put(&data, (uint8_t[]){gen_byte(&rng)}, 1);
	} else {
		gen_record_image(&data, img, &rng, flags);
	}
	gen_le(b, img->type, 4);
	gen_le(b, img->std, 8);
	if (img->type & XC3028_FW_HAS_IF)
		gen_le(b, img->if_khz, 2);
	gen_le(b, data.len, 4);
	gen_put(b, data.data, data.len);
	b->oom |= data.oom;
	free(data.data);
}

int xc3028_fwgen_build(uint8_t **out, size_t *len)
{
	return xc3028_fwgen_build_flags(out, len, XC3028_FWGEN_MID_RESET);
}

int xc3028_fwgen_build_flags(uint8_t **out, size_t *len, unsigned int flags)
{
	struct gen_buf b = {0};
	char name[XC3028_FW_NAME_LEN] = {0};

	strncpy(name, XC3028_FWGEN_NAME, sizeof(name) - 1);
	gen_put(&b, name, sizeof(name));
	gen_le(&b, XC3028_FWGEN_VERSION, 2);
	gen_le(&b, GEN_IMAGE_COUNT, 2);
	for (unsigned int i = 0; i < GEN_IMAGE_COUNT; i++)
		gen_image(&b, &gen_images[i], i, flags);
	if (b.oom) {
		free(b.data);
		return -ENOMEM;
	}
	*out = b.data;
	*len = b.len;
	return 0;
}

int xc3028_fwgen_write(const char *path, char *err, size_t errlen)
{
	uint8_t *data;
	size_t len;
	FILE *f;
	int ret = xc3028_fwgen_build(&data, &len);

	if (ret) {
		snprintf(err, errlen, "%s: out of memory", path);
		return ret;
	}
	f = fopen(path, "wb");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (fwrite(data, 1, len, f) != len)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (ret)
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
out:
	free(data);
	return ret;
}

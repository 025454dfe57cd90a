// SPDX-License-Identifier: MIT
#include "xc3028_testfw.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHIP_ADDR 0x61

static const struct {
	uint32_t type;
	uint64_t std;
	uint16_t if_khz;
	unsigned int payload; /* data bytes, register bytes apart */
} testfw_specs[IMG_COUNT] = {
    [IMG_BASE_F8] = {T_BASE | T_F8MHZ, 0, 0, 700},
    [IMG_BASE_F8_MTS] = {T_BASE | T_F8MHZ | T_MTS, 0, 0, 300},
    [IMG_BASE_FM] = {T_BASE | T_FM, 0, 0, 400},
    [IMG_BASE_FM_INPUT1] = {T_BASE | T_FM | T_INPUT1, 0, 0, 300},
    [IMG_BASE] = {T_BASE, 0, 0, 650},
    [IMG_PAL_BG_A2_A] = {0, STD_PAL_BG_A2_A, 0, 160},
    [IMG_PAL_I] = {0, STD_PAL_I, 0, 160},
    [IMG_NTSC_LCD] = {T_LCD, STD_MN, 0, 160},
    [IMG_NTSC] = {0, STD_MN, 0, 170},
    [IMG_ATSC] = {T_ATSC | T_D2633 | T_DTV6, 0, 0, 150},
    [IMG_QAM6_D2620] = {T_D2620 | T_QAM | T_DTV6, 0, 0, 148},
    [IMG_QAM6_D2633] = {T_D2633 | T_QAM | T_DTV6, 0, 0, 149},
    [IMG_DTV7_D2620] = {T_D2620 | T_DTV7, 0, 0, 147},
    [IMG_DTV7_D2633] = {T_D2633 | T_DTV7, 0, 0, 146},
    [IMG_DTV78_D2620] = {T_D2620 | T_DTV78, 0, 0, 145},
    [IMG_DTV78_D2633] = {T_D2633 | T_DTV78, 0, 0, 144},
    [IMG_DTV8_D2620] = {T_D2620 | T_DTV8, 0, 0, 143},
    [IMG_DTV8_D2633] = {T_D2633 | T_DTV8, 0, 0, 142},
    [IMG_FM] = {T_FM, 0, 0, 134},
    [IMG_SCODE_3280] = {T_SCODE | T_HAS_IF, 0, 3280, 16 * 12},
    [IMG_SCODE_4320] = {T_SCODE | T_HAS_IF, STD_NTSC_M_KR, 4320, 16 * 12},
    [IMG_SCODE_4500] = {T_SCODE | T_HAS_IF | T_MTS, STD_MN, 4500, 16 * 12},
    [IMG_SCODE_4560] = {T_SCODE | T_HAS_IF, 0, 4560, 16 * 12},
    [IMG_SCODE_4760] = {T_SCODE | T_HAS_IF, 0, 4760, 16 * 12},
    [IMG_SCODE_5320] = {T_SCODE | T_HAS_IF, STD_PAL_BG_ALL, 5320, 16 * 12},
    [IMG_SCODE_5580] = {T_SCODE | T_HAS_IF, 0, 5580, 16 * 12},
    [IMG_SCODE_6200] = {T_SCODE | T_HAS_IF, 0, 6200, 15 * 12},
    [IMG_SCODE_6240] = {T_SCODE | T_HAS_IF, STD_PAL_I, 6240, 16 * 12},
    [IMG_INIT1] = {T_BASE | T_INIT1, 0, 0, 90},
};

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *src, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void put_le(struct buf *b, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++) {
		uint8_t c = (uint8_t)(v >> (8 * i));

		put(b, &c, 1);
	}
}

static uint8_t next_byte(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (uint8_t)(*s >> 11);
}

static void add_marker(struct buf *b, struct image *img, int kind,
		       uint16_t code)
{
	if (img->nrecs + 1 > REC_MAX)
		abort();
	put_le(b, code, 2);
	img->recs[img->nrecs].kind = kind;
	img->recs[img->nrecs++].ms = code & 0x7FFF;
}

/* A data record of n payload bytes (0: the register byte alone). */
static void add_data(struct buf *b, struct image *img, unsigned int n,
		     uint32_t *seed, size_t *offs)
{
	struct rec *r;

	if (img->nrecs + 1 > REC_MAX)
		abort();
	put_le(b, n + 1, 2);
	r = &img->recs[img->nrecs];
	r->kind = REC_DATA;
	r->len = (uint16_t)(n + 1);
	offs[img->nrecs++] = b->len;
	for (unsigned int i = 0; i <= n; i++) {
		uint8_t c = next_byte(seed);

		put(b, &c, 1);
	}
}

/*
 * Records of varying length (1 to 140 payload bytes, so 13-, 64- and
 * 80-byte chunking split them differently).  BASE images as in the real
 * file: a reset at the head, a clock reset in the F8MHZ one, another
 * reset after the first data record and a sleep in the middle.  Standard
 * images carry a register-only record after their first one.
 */
static void build_records(struct image *img, unsigned int payload,
			  uint32_t seed)
{
	struct buf b = {0};
	size_t offs[REC_MAX];
	unsigned int left = payload;
	int is_base = !!(img->type & T_BASE), first = 1, slept = 0;

	img->nrecs = 0;
	if (is_base)
		add_marker(&b, img, REC_RESET, 0x0000);
	if (img->type & T_F8MHZ)
		add_marker(&b, img, REC_CLK_RESET, 0xFF00);
	while (left) {
		unsigned int n = 1 + next_byte(&seed) % 140;

		add_data(&b, img, n > left ? left : n, &seed, offs);
		left -= n > left ? left : n;
		if (first && is_base)
			add_marker(&b, img, REC_RESET, 0x0000);
		else if (first)
			add_data(&b, img, 0, &seed, offs);
		first = 0;
		if (is_base && !slept && left && left < payload / 2) {
			add_marker(&b, img, REC_SLEEP, 0x8000 | 3);
			slept = 1;
		}
	}
	put_le(&b, 0xFFFF, 2);
	img->data = b.p;
	img->size = b.len;
	for (size_t i = 0; i < img->nrecs; i++)
		if (img->recs[i].kind == REC_DATA)
			img->recs[i].bytes = img->data + offs[i];
}

int testfw_build(struct testfw *fw, uint16_t version, unsigned int flags)
{
	struct buf f = {0};
	char name[32] = "tunerd plugin test firmware";

	memset(fw, 0, sizeof(*fw));
	fw->version = version;
	put(&f, name, sizeof(name));
	put_le(&f, version, 2);
	fw->count = flags & TESTFW_INIT1 ? IMG_COUNT : IMG_COUNT - 1;
	put_le(&f, fw->count, 2);
	for (unsigned int i = 0; i < fw->count; i++) {
		struct image *img = &fw->img[i];
		uint32_t seed = 0x3028u + 977u * i;

		img->type = testfw_specs[i].type;
		img->std = testfw_specs[i].std;
		img->if_khz = testfw_specs[i].if_khz;
		if (i == IMG_SCODE_3280 && flags & TESTFW_OLD_SCODE) {
			/* The old layout: no IF, le16 12 before each entry. */
			img->type = T_SCODE;
			img->size = 16 * 14;
			img->data = malloc(img->size);
			for (size_t k = 0; k < img->size; k++)
				img->data[k] = k % 14 == 0   ? 12
					       : k % 14 == 1 ? 0
							     : next_byte(&seed);
		} else if (img->type & T_SCODE) {
			img->size = testfw_specs[i].payload;
			img->data = malloc(img->size);
			for (size_t k = 0; k < img->size; k++)
				img->data[k] = next_byte(&seed);
		} else {
			build_records(img, testfw_specs[i].payload, seed);
		}
		fw->image_offset[i] = f.len;
		put_le(&f, img->type, 4);
		put_le(&f, img->std, 8);
		if (img->type & T_HAS_IF)
			put_le(&f, img->if_khz, 2);
		put_le(&f, img->size, 4);
		put(&f, img->data, img->size);
	}
	fw->file = f.p;
	fw->file_len = f.len;
	return 0;
}

void testfw_free(struct testfw *fw)
{
	for (unsigned int i = 0; i < IMG_COUNT; i++)
		free(fw->img[i].data);
	free(fw->file);
	memset(fw, 0, sizeof(*fw));
}

int testfw_write(const uint8_t *buf, size_t len, char *path)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, 64, "%.40s/xc3028fw.XXXXXX", dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

void expect_image(struct mock_events *want, const struct testfw *fw, int idx,
		  unsigned int max_len)
{
	const struct image *img = &fw->img[idx];
	uint8_t chunk[256];

	for (size_t i = 0; i < img->nrecs; i++) {
		const struct rec *r = &img->recs[i];

		switch (r->kind) {
		case REC_RESET:
			mock_ev_ctrl(want, TSTUB_CTRL_TUNER_RESET);
			break;
		case REC_CLK_RESET:
			mock_ev_ctrl(want, TSTUB_CTRL_CLK_RESET);
			break;
		case REC_SLEEP:
			mock_ev_sleep(want, r->ms);
			break;
		default:
			for (size_t off = 1; off < r->len; off += max_len - 1) {
				size_t n = r->len - off;

				if (n > max_len - 1)
					n = max_len - 1;
				chunk[0] = r->bytes[0];
				memcpy(chunk + 1, r->bytes + off, n);
				mock_ev_write(want, CHIP_ADDR, chunk, n + 1);
			}
			mock_ev_ctrl(want, TSTUB_CTRL_I2C_FLUSH);
		}
	}
}

void expect_base(struct mock_events *want, const struct testfw *fw, int idx,
		 unsigned int max_len)
{
	mock_ev_ctrl(want, TSTUB_CTRL_TUNER_RESET);
	expect_image(want, fw, idx, max_len);
}

void expect_scode(struct mock_events *want, const struct testfw *fw, int idx,
		  uint8_t flag)
{
	uint8_t header[4] = {(uint8_t)(0x20 | flag), 0, 0, 0};

	const struct image *img = &fw->img[idx];

	mock_ev_write(want, CHIP_ADDR, header, 4);
	mock_ev_write(want, CHIP_ADDR,
		      img->data + (img->type & T_HAS_IF ? 0 : 2), 12);
	mock_ev_write(want, CHIP_ADDR, (uint8_t[]){0x00, 0x8C}, 2);
}

void expect_readback(struct mock_events *want, uint16_t version, uint16_t model)
{
	mock_ev_write(want, CHIP_ADDR, (uint8_t[]){0x00, 0x04}, 2);
	mock_ev_read(want, CHIP_ADDR,
		     (uint8_t[]){(uint8_t)(version >> 8), (uint8_t)version}, 2);
	mock_ev_write(want, CHIP_ADDR, (uint8_t[]){0x00, 0x08}, 2);
	mock_ev_read(want, CHIP_ADDR,
		     (uint8_t[]){(uint8_t)(model >> 8), (uint8_t)model}, 2);
}

void expect_tune(struct mock_events *want, uint32_t div, int analog,
		 uint8_t flag)
{
	uint8_t be[4] = {(uint8_t)(div >> 24), (uint8_t)(div >> 16),
			 (uint8_t)(div >> 8), (uint8_t)div};

	if (analog)
		mock_ev_write(want, CHIP_ADDR, (uint8_t[]){0x00, 0x00}, 2);
	mock_ev_write(want, CHIP_ADDR, (uint8_t[]){flag, 0x02, 0x00, 0x00}, 4);
	mock_ev_ctrl_arg(want, TSTUB_CTRL_CLK_RESET, 1);
	mock_ev_sleep(want, 10);
	mock_ev_write(want, CHIP_ADDR, be, 4);
	mock_ev_sleep(want, 100);
}

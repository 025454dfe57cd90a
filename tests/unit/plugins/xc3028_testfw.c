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
    [IMG_BASE] = {T_BASE, 0, 0, 700},
    [IMG_BASE_F8] = {T_BASE | T_F8MHZ, 0, 0, 650},
    [IMG_INIT1] = {T_INIT1, 0, 0, 90},
    [IMG_DTV6] = {T_DTV6, 0, 0, 300},
    [IMG_QAM_DTV6] = {T_QAM | T_DTV6, 0, 0, 310},
    [IMG_DTV7] = {T_DTV7, 0, 0, 320},
    [IMG_DTV78] = {T_DTV78, 0, 0, 330},
    [IMG_DTV8] = {T_DTV8, 0, 0, 340},
    [IMG_ATSC] = {T_ATSC | T_D2633, 0, 0, 280},
    [IMG_FM] = {T_FM, 0, 0, 200},
    [IMG_PAL_ALL] = {0, STD_PAL, 0, 370},
    [IMG_PAL_BG] = {0, STD_PAL_BG, 0, 360},
    [IMG_NTSC] = {0, STD_NTSC, 0, 350},
    [IMG_SCODE_4560] = {T_SCODE | T_HAS_IF, 0, 4560, 16 * 12},
    [IMG_SCODE_5380] = {T_SCODE | T_HAS_IF, 0, 5380, 16 * 12},
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

/*
 * Records of varying length (1 to 140 payload bytes, so 64- and 13-byte
 * chunking split them differently), a reset at the head of BASE images,
 * a clock reset in the F8MHZ one, a sleep in the middle, the end marker.
 */
static void build_records(struct image *img, unsigned int payload,
			  uint32_t seed)
{
	struct buf b = {0};
	size_t offs[REC_MAX];
	unsigned int left = payload;
	int is_base = !!(img->type & T_BASE), slept = 0;

	img->nrecs = 0;
	if (is_base) {
		put_le(&b, 0x0000, 2);
		img->recs[img->nrecs++].kind = REC_RESET;
	}
	if (img->type & T_F8MHZ) {
		put_le(&b, 0xFF00, 2);
		img->recs[img->nrecs++].kind = REC_CLK_RESET;
	}
	while (left) {
		unsigned int n = 1 + next_byte(&seed) % 140;
		struct rec *r;

		if (n > left)
			n = left;
		if (img->nrecs + 2 > REC_MAX)
			abort();
		put_le(&b, n + 1, 2);
		r = &img->recs[img->nrecs];
		r->kind = REC_DATA;
		r->len = (uint16_t)(n + 1);
		offs[img->nrecs++] = b.len;
		for (unsigned int i = 0; i <= n; i++) {
			uint8_t c = next_byte(&seed);

			put(&b, &c, 1);
		}
		left -= n;
		if (is_base && !slept && left && left < payload / 2) {
			put_le(&b, 0x8000 | 3, 2);
			img->recs[img->nrecs].kind = REC_SLEEP;
			img->recs[img->nrecs++].ms = 3;
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

int testfw_build(struct testfw *fw, uint16_t version)
{
	struct buf f = {0};
	char name[32] = "tunerd plugin test firmware";

	memset(fw, 0, sizeof(*fw));
	fw->version = version;
	put(&f, name, sizeof(name));
	put_le(&f, version, 2);
	put_le(&f, IMG_COUNT, 2);
	for (int i = 0; i < IMG_COUNT; i++) {
		struct image *img = &fw->img[i];
		uint32_t seed = 0x3028u + 977u * (uint32_t)i;

		img->type = testfw_specs[i].type;
		img->std = testfw_specs[i].std;
		img->if_khz = testfw_specs[i].if_khz;
		if (img->type & T_SCODE) {
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
	for (int i = 0; i < IMG_COUNT; i++)
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
		}
	}
}

void expect_scode(struct mock_events *want, const struct testfw *fw, int idx,
		  uint8_t flag)
{
	uint8_t header[4] = {(uint8_t)(0x20 | flag), 0, 0, 0};

	mock_ev_write(want, CHIP_ADDR, header, 4);
	mock_ev_write(want, CHIP_ADDR, fw->img[idx].data, 12);
	mock_ev_write(want, CHIP_ADDR, (uint8_t[]){0x00, 0x8C}, 2);
}

void expect_load(struct mock_events *want, const struct testfw *fw, int base,
		 int std, int scode, unsigned int max_len, uint8_t flag)
{
	mock_ev_ctrl(want, TSTUB_CTRL_TUNER_RESET);
	expect_image(want, fw, base, max_len);
	expect_image(want, fw, IMG_INIT1, max_len);
	if (std >= 0)
		expect_image(want, fw, std, max_len);
	if (scode >= 0)
		expect_scode(want, fw, scode, flag);
}

void expect_tune(struct mock_events *want, uint32_t div, int analog,
		 uint8_t flag)
{
	uint8_t be[4] = {(uint8_t)(div >> 24), (uint8_t)(div >> 16),
			 (uint8_t)(div >> 8), (uint8_t)div};

	if (analog)
		mock_ev_write(want, CHIP_ADDR, (uint8_t[]){0x00, 0x00}, 2);
	mock_ev_write(want, CHIP_ADDR, (uint8_t[]){flag, 0x02, 0x00, 0x00}, 4);
	mock_ev_sleep(want, 10);
	mock_ev_write(want, CHIP_ADDR, be, 4);
	mock_ev_sleep(want, 100);
}

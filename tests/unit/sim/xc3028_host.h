/* SPDX-License-Identifier: MIT */
/*
 * xc3028_host.h - what the XC3028 test does in the role of the driver:
 * walking the firmware file by its documented layout (independently of
 * the model's parser), uploading images in chunks, tuning, reading.
 */
#ifndef XC3028_HOST_H
#define XC3028_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "sim_chip.h"

#define MS 1000000ull

/* Type bits of the firmware file (datasheet numbering). */
#define T_BASE     (1u << 0)
#define T_F8MHZ    (1u << 1)
#define T_D2633    (1u << 4)
#define T_DTV6     (1u << 5)
#define T_QAM      (1u << 6)
#define T_DTV7     (1u << 7)
#define T_DTV78    (1u << 8)
#define T_DTV8     (1u << 9)
#define T_FM       (1u << 10)
#define T_INPUT1   (1u << 11)
#define T_INIT1    (1u << 14)
#define T_ATSC     (1u << 16)
#define T_SCODE    (1u << 29)
#define T_HAS_IF   (1u << 30)
#define STD_PAL_BG 0x7ull
#define STD_PAL_I  0x10ull

struct img {
	uint32_t type;
	uint64_t std;
	uint16_t if_khz;
	const uint8_t *data;
	uint32_t size;
};

/* The file being walked, and the test's clock. */
extern uint8_t *fw_data;
extern size_t fw_len;
extern uint64_t xc_now;

uint32_t host_le(const uint8_t *p, int n);
/* Index fw_data; 0 if it has the documented layout. */
int host_walk_file(void);
const struct img *host_find(uint32_t type, uint64_t std);
const struct img *host_find_scode(uint16_t if_khz);

int host_write(struct sim_chip *chip, const void *buf, size_t len);
/* The register's value, or -1 on a NAK. */
int host_read_reg(struct sim_chip *chip, uint16_t reg);
/* One image as records, in chunks of at most max_len bytes; the chunk
 * numbered corrupt_at (if >= 0) gets a flipped byte.  The first write
 * error, or 0. */
int host_upload(struct sim_chip *chip, const struct img *m, size_t max_len,
		int corrupt_at);
/* Reset, base, INIT1 if asked, a standard image. */
int host_load(struct sim_chip *chip, uint32_t base, uint32_t std_type,
	      uint64_t std, int init1, size_t max_len);
/* {A0 00 00 00}, entry of the SCODE table for if_khz, {00 8C}. */
int host_scode(struct sim_chip *chip, uint16_t if_khz, int entry);
/* RF_FREQ, 10 ms, the divider for freq less the standard's offset. */
int host_tune(struct sim_chip *chip, uint32_t freq, uint32_t offset);

#endif /* XC3028_HOST_H */

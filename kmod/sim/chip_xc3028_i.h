/* SPDX-License-Identifier: MIT */
/*
 * chip_xc3028_i.h - the XC3028 model's state, shared by its firmware
 * loader (chip_xc3028_load.c) and its running-firmware model
 * (chip_xc3028.c) (internal).
 */
#ifndef CHIP_XC3028_I_H
#define CHIP_XC3028_I_H

#include <stddef.h>
#include <stdint.h>

#include "fwfile_xc3028.h"
#include "xc3028_regs.h"

#define XC3028_HW_VERSION 0x12 /* 1.2 */
#define XC3028_STEP_HZ    15625
#define XC3028_SETTLE_MS  100.0
#define XC3028_UHF_MIN_HZ 470000000u

enum xc3028_lock {
	XC3028_LOCK_SETTLING = 0,
	XC3028_LOCK_LOCKED = 1,
	XC3028_LOCK_NONE = 2,
};

enum xc3028_scode_phase {
	XC3028_SCODE_IDLE,
	XC3028_SCODE_HEADER, /* {A0 00 00 00} seen, entry next */
	XC3028_SCODE_ENTRY,  /* entry seen, {00 8C} next */
};

struct xc3028_chip {
	struct xc3028_fw fw;
	const struct sim_rf_env *rf;
	uint32_t rng;
	uint64_t settle_ns;
	uint32_t faults;

	/* firmware upload: the images whose payload still matches */
	size_t up_pos;
	uint8_t *up_match;
	uint8_t *up_next;

	int base; /* loaded image indices, -1 for none */
	int init1;
	int std;
	int scode;
	enum xc3028_scode_phase scode_phase;

	int ptr; /* register to read, -1 until set */
	int freq_pending;
	int powered_down;
	int tuned;
	uint32_t frequency;
	uint32_t bandwidth;
	uint64_t tuned_at_ns;
};

/* A BASE and a standard image are loaded: the firmware runs. */
static inline int xc3028_ready(const struct xc3028_chip *xc)
{
	return xc->base >= 0 && xc->std >= 0;
}

/* chip_xc3028_load.c */
/* What the reset line clears: the running firmware and its state. */
void sim_xc3028_reset_state(struct xc3028_chip *xc);
/* The reset line: firmware gone, the chip waits for a new upload. */
void sim_xc3028_reset(struct xc3028_chip *xc);
/* A reset the image being uploaded holds right here: 1, and the upload
 * goes on with those images only; 0 when none has. */
int sim_xc3028_reset_within_upload(struct xc3028_chip *xc);
/* 0 when the file has an uploadable BASE image, else -EINVAL. */
int sim_xc3028_check_fw(const struct xc3028_fw *fw, char *err, size_t errlen);
/* Payload of one chunk: 1 when it continues an image, 0 otherwise. */
int sim_xc3028_upload(struct xc3028_chip *xc, const uint8_t *p, size_t n);
/* A write while no firmware runs: 0 or -EREMOTEIO. */
int sim_xc3028_write_loading(struct xc3028_chip *xc, const uint8_t *buf,
			     size_t len);

#endif /* CHIP_XC3028_I_H */

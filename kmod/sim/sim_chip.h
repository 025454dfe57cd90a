/* SPDX-License-Identifier: MIT */
/*
 * sim_chip.h - register-level chip models of the simulated box.
 *
 * A model sees exactly what a real chip sees on the bus: one call per I2C
 * segment addressed to it (a combined transfer is a write segment then a
 * read segment), and the bridge's tuner callback (reset lines).  From the
 * registers it decodes what it is tuned to.  Time is passed in as
 * monotonic nanoseconds so the models never read a clock themselves.
 */
#ifndef SIM_CHIP_H
#define SIM_CHIP_H

#include <stddef.h>
#include <stdint.h>

#include "rf_env.h"
#include "tuner_stub.h"

struct sim_chip;

/* What the box gives a chip when it is created. */
struct sim_chip_setup {
	uint16_t i2c_addr;
	uint32_t config;             /* board word, as in TSTUB_ATTACH */
	double settle_scale;         /* 1.0 = hardware settle times, 0 = none */
	const struct sim_rf_env *rf; /* may be NULL: empty spectrum */
	const char *firmware_path;   /* XC3028: the firmware file it parses */
	uint32_t seed;               /* noise seed */
};

/* What the registers say the chip is tuned to. */
struct sim_tuned {
	int valid;            /* 0: no complete tune programmed yet */
	uint32_t frequency;   /* Hz, decoded back from the registers */
	uint32_t bandwidth;   /* Hz, if the chip knows (XC3028), else 0 */
	int pll_locked;       /* synthesizer settled (now >= tune + settle) */
	uint64_t tuned_at_ns; /* when the tune was programmed */
	char firmware[64]; /* XC3028: loaded images, e.g. "BASE F8MHZ,DTV8" */
};

struct sim_chip_ops {
	const char *name;      /* "mt2060" */
	uint32_t chip_id;      /* TSTUB_CHIP_* */
	uint16_t default_addr; /* 7-bit */

	/* Returns NULL and fills err (a short reason) on failure, e.g. an
	 * XC3028 whose firmware file is missing or malformed. */
	struct sim_chip *(*create)(const struct sim_chip_setup *setup,
				   char *err, size_t errlen);
	void (*destroy)(struct sim_chip *chip);

	/* One write segment.  0, or -EREMOTEIO where the real chip NAKs. */
	int (*write)(struct sim_chip *chip, const uint8_t *buf, size_t len,
		     uint64_t now_ns);
	/* One read segment (register pointer set by the preceding write). */
	int (*read)(struct sim_chip *chip, uint8_t *buf, size_t len,
		    uint64_t now_ns);
	/* TSTUB_CTRL_* from the plugin through the bridge. */
	int (*bridge_ctrl)(struct sim_chip *chip, uint32_t cmd, uint32_t arg,
			   uint64_t now_ns);
	void (*tuned)(struct sim_chip *chip, uint64_t now_ns,
		      struct sim_tuned *out);
	/* Fault knobs, SIM_CHIP_FAULT_* (0 clears them). */
	void (*set_faults)(struct sim_chip *chip, uint32_t faults);
};

/* The synthesizer never reports lock (and an XC3028 reports "no lock"). */
#define SIM_CHIP_FAULT_NEVER_LOCK 0x1
/* XC3028: the chip ignores uploaded firmware, as if the file were wrong
 * or lost; it then answers every register read with 0. */
#define SIM_CHIP_FAULT_NO_FIRMWARE 0x2

extern const struct sim_chip_ops sim_mt2060_ops;
extern const struct sim_chip_ops sim_qt1010_ops;
extern const struct sim_chip_ops sim_xc3028_ops;

/* By name ("mt2060") or NULL. */
const struct sim_chip_ops *sim_chip_find(const char *name);

#endif /* SIM_CHIP_H */

/* SPDX-License-Identifier: MIT */
/*
 * sim_chip_i.h - helpers the chip models share (internal).
 */
#ifndef SIM_CHIP_I_H
#define SIM_CHIP_I_H

#include <stdint.h>
#include <stdio.h>

#include "sim_chip.h"

/* A hardware wait of ms milliseconds under the box's settle scale. */
static inline uint64_t sim_settle_ns(double ms, double scale)
{
	if (!(scale > 0.0))
		return 0;
	return (uint64_t)(ms * scale * 1e6);
}

/* Whether settle_ns have passed since `since` (a clock going backwards
 * counts as no time passed). */
static inline int sim_settled(uint64_t now, uint64_t since, uint64_t settle)
{
	return now >= since && now - since >= settle;
}

/* bridge_ctrl of a chip whose boards wire no reset line: the known
 * callbacks change nothing, unknown ones are refused. */
int sim_chip_no_reset_line(struct sim_chip *chip, uint32_t cmd, uint32_t arg,
			   uint64_t now_ns);

static inline void sim_set_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
}

#endif /* SIM_CHIP_I_H */

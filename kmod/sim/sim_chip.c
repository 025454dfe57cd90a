// SPDX-License-Identifier: MIT
/*
 * sim_chip.c - the chip models of the simulated box, by name.
 */
#include "sim_chip.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "sim_chip_i.h"

static const struct sim_chip_ops *const sim_chip_models[] = {
    &sim_mt2060_ops,
    &sim_qt1010_ops,
    &sim_xc3028_ops,
};

const struct sim_chip_ops *sim_chip_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0;
	     i < sizeof(sim_chip_models) / sizeof(sim_chip_models[0]); i++)
		if (strcasecmp(name, sim_chip_models[i]->name) == 0)
			return sim_chip_models[i];
	return NULL;
}

int sim_chip_no_reset_line(struct sim_chip *chip, uint32_t cmd, uint32_t arg,
			   uint64_t now_ns)
{
	(void)chip;
	(void)arg;
	(void)now_ns;
	switch (cmd) {
	case TSTUB_CTRL_TUNER_RESET:
	case TSTUB_CTRL_CLK_RESET:
	case TSTUB_CTRL_I2C_FLUSH:
		return 0;
	}
	return -EINVAL;
}

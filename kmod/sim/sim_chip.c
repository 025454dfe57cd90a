// SPDX-License-Identifier: MIT
/*
 * sim_chip.c - the chip models of the simulated box, by name.
 */
#include "sim_chip.h"

#include <string.h>
#include <strings.h>

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

// SPDX-License-Identifier: MIT
/*
 * wrongabi.c - a test plugin that picks an ABI version no host offers
 * (999), whatever it is offered.  The host must refuse it with a log line
 * and keep running.
 */
#include "tunerd_plugin.h"

#define WRONGABI_EXPORT  __attribute__((visibility("default")))
#define WRONGABI_VERSION 999

static const struct tunerd_plugin wrongabi_plugin = {
    .size = sizeof(struct tunerd_plugin),
    .abi = WRONGABI_VERSION,
    .info =
	{
	    .name = "WRONGABI",
	    .vendor = "tunerd tests",
	    .plugin = "wrongabi",
	    .chip_id = TSTUB_CHIP_TEST_FIRST + 2,
	    .plugin_version = 1,
	    .delsys_mask = 1u << TSTUB_DELSYS_DVBT,
	    .bandwidth_mask = TSTUB_BW_8MHZ,
	    .freq_min = 48000000,
	    .freq_max = 860000000,
	    .freq_step = 1000,
	},
    .ops = NULL, /* never reached: the version is refused first */
};

WRONGABI_EXPORT int tunerd_plugin_version(int count, const int *versions)
{
	(void)count;
	(void)versions;
	return WRONGABI_VERSION;
}

WRONGABI_EXPORT const struct tunerd_plugin *tunerd_plugin_describe(int version)
{
	return version == WRONGABI_VERSION ? &wrongabi_plugin : NULL;
}

// SPDX-License-Identifier: MIT
/*
 * nosym.c - a test plugin that exports tunerd_plugin_version but not
 * tunerd_plugin_describe.  The host must refuse it for the missing symbol.
 */
#include "tunerd_plugin.h"

#define NOSYM_EXPORT __attribute__((visibility("default")))

NOSYM_EXPORT int tunerd_plugin_version(int count, const int *versions)
{
	for (int i = 0; versions && i < count; i++)
		if (versions[i] == TUNERD_PLUGIN_ABI)
			return TUNERD_PLUGIN_ABI;
	return -1;
}

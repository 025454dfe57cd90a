// SPDX-License-Identifier: MIT
/*
 * nosym.c - a test plugin that exports tunerd_plugin_version but not
 * tunerd_plugin_describe.  The host must refuse it for the missing symbol.
 */
#include "tunerd_plugin.h"

#define NOSYM_EXPORT __attribute__((visibility("default")))

NOSYM_EXPORT int tunerd_plugin_version(int count, const int *versions)
{
	return tunerd_plugin_pick_version(count, versions);
}

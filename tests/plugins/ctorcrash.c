// SPDX-License-Identifier: MIT
/*
 * ctorcrash.c - a test plugin that crashes while it is being loaded (in
 * its constructor, before the host can call anything).  The host must
 * refuse it and live on.
 */
#include <signal.h>

#include "tunerd_plugin.h"

#define CTORCRASH_EXPORT __attribute__((visibility("default")))

static void __attribute__((constructor)) ctorcrash_load(void)
{
	/* The default action, so a sanitizer's handler does not turn the
	 * crash into an orderly exit. */
	signal(SIGSEGV, SIG_DFL);
	raise(SIGSEGV);
}

CTORCRASH_EXPORT int tunerd_plugin_version(int count, const int *versions)
{
	return tunerd_plugin_pick_version(count, versions);
}

CTORCRASH_EXPORT const struct tunerd_plugin *tunerd_plugin_describe(int v)
{
	(void)v;
	return NULL;
}

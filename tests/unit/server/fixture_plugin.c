// SPDX-License-Identifier: MIT
/*
 * Plugins for the plugin host's tests, one source built four ways:
 * FIXTURE_GOOD (chip 0xF0F0), FIXTURE_BAD_ABI (picks version 999),
 * FIXTURE_NO_DESCRIBE (lacks a symbol), FIXTURE_BAD_DESC (chip 0xF0F1,
 * describes itself for the wrong ABI version).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "tunerd_plugin.h"

static int fixture_probe(const struct tunerd_host *host,
			 const struct tunerd_tuner_config *cfg, void **priv)
{
	(void)host;
	(void)cfg;
	*priv = NULL;
	return 0;
}

static void fixture_release(void *priv)
{
	(void)priv;
}

static int fixture_nop(void *priv)
{
	(void)priv;
	return 0;
}

/* Test hooks: these frequencies make the chip's driver crash or hang,
 * for the daemon's supervision tests, or its lock come late (the first
 * FIXTURE_LATE_READS status reads after the tune show none) or never,
 * for the lock wait's. */
#define FIXTURE_CRASH_HZ     666000000
#define FIXTURE_HANG_HZ      777000000
#define FIXTURE_LATE_LOCK_HZ 555000000
#define FIXTURE_NO_LOCK_HZ   444000000
#define FIXTURE_LATE_READS   3

/* One chip per worker process: the plugin's state may be global. */
static int unlocked_reads; /* < 0: never locks */

static int fixture_set_params(void *priv, const struct tstub_params *p)
{
	(void)priv;
	unlocked_reads = p->frequency == FIXTURE_LATE_LOCK_HZ
			     ? FIXTURE_LATE_READS
			 : p->frequency == FIXTURE_NO_LOCK_HZ ? -1
							      : 0;
	if (p->frequency == FIXTURE_CRASH_HZ)
		abort();
	while (p->frequency == FIXTURE_HANG_HZ)
		pause();
	return p->frequency ? 0 : -EINVAL;
}

static int fixture_get_status(void *priv, struct tstub_status *st)
{
	(void)priv;
	st->valid = TSTUB_ST_PLL_LOCK;
	st->pll_locked = unlocked_reads == 0;
	if (unlocked_reads > 0)
		unlocked_reads--;
	return 0;
}

static int fixture_get_frequency(void *priv, struct tstub_freq *f)
{
	(void)priv;
	f->frequency = 1;
	return 0;
}

/* The size stops before get_frequency: the host must not see it. */
static const struct tunerd_plugin_ops fixture_ops = {
    .size = offsetof(struct tunerd_plugin_ops, get_frequency),
    .probe = fixture_probe,
    .release = fixture_release,
    .init = fixture_nop,
    .sleep = fixture_nop,
    .set_params = fixture_set_params,
    .get_status = fixture_get_status,
    .get_frequency = fixture_get_frequency,
};

#ifdef FIXTURE_BAD_DESC
#define FIXTURE_CHIP     0xF0F1
#define FIXTURE_DESC_ABI 7
#else
#define FIXTURE_CHIP     0xF0F0
#define FIXTURE_DESC_ABI TUNERD_PLUGIN_ABI
#endif

static const struct tunerd_plugin fixture_plugin = {
    .size = sizeof(struct tunerd_plugin),
    .abi = FIXTURE_DESC_ABI,
    .info = {.name = "GOODCHIP",
	     .vendor = "Fixture",
	     .plugin = "goodchip",
	     .chip_id = FIXTURE_CHIP,
	     .plugin_version = 3,
	     .delsys_mask = 1u << TSTUB_DELSYS_DVBT,
	     .freq_min = 48000000,
	     .freq_max = 860000000},
    .ops = &fixture_ops,
};

int tunerd_plugin_version(int count, const int *versions)
{
#ifdef FIXTURE_BAD_ABI
	(void)count;
	(void)versions;
	return 999;
#else
	for (int i = 0; i < count; i++)
		if (versions[i] == TUNERD_PLUGIN_ABI)
			return TUNERD_PLUGIN_ABI;
	return -1;
#endif
}

#ifdef FIXTURE_NO_DESCRIBE
/* Exported under another name: the host looks for the right one. */
const struct tunerd_plugin *tunerd_plugin_describe_v2(int version);
const struct tunerd_plugin *tunerd_plugin_describe_v2(int version)
#else
const struct tunerd_plugin *tunerd_plugin_describe(int version)
#endif
{
	(void)version;
	return &fixture_plugin;
}

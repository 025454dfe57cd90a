// SPDX-License-Identifier: MIT
/*
 * faulty.c - a test plugin that misbehaves on command, so the tests can
 * check that one broken chip driver stays local to its tuner.
 *
 * Probe succeeds without touching I2C.  set_params at 666 MHz kills the
 * process with SIGSEGV, at 667 MHz it never returns; any other frequency
 * in 48-860 MHz "tunes" and get_status reports the PLL locked.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tunerd_plugin.h"

#define FAULTY_EXPORT __attribute__((visibility("default")))

#define FAULTY_CHIP_ID  (TSTUB_CHIP_TEST_FIRST + 1)
#define FAULTY_CRASH_HZ 666000000u
#define FAULTY_HANG_HZ  667000000u
#define FAULTY_FREQ_MIN 48000000u
#define FAULTY_FREQ_MAX 860000000u
#define FAULTY_DELSYS                                                          \
	((1u << TSTUB_DELSYS_DVBT) | (1u << TSTUB_DELSYS_DVBT2) |              \
	 (1u << TSTUB_DELSYS_DVBC_A))

struct faulty_priv {
	int tuned;
	uint32_t frequency;
	uint32_t bandwidth;
};

/* A real SIGSEGV death even where a sanitizer installed its handler. */
static void faulty_crash(void)
{
	sigset_t set;

	signal(SIGSEGV, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGSEGV);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGSEGV);
	abort();
}

/* Real time, not host->sleep_ms: the host scales its sleeps down. */
static void faulty_hang(void)
{
	for (;;)
		pause();
}

static int faulty_probe(const struct tunerd_host *host,
			const struct tunerd_tuner_config *cfg, void **out)
{
	struct faulty_priv *priv;

	(void)host;
	(void)cfg;
	priv = calloc(1, sizeof(*priv));
	if (!priv)
		return -ENOMEM;
	*out = priv;
	return 0;
}

static void faulty_release(void *p)
{
	free(p);
}

static int faulty_nop(void *p)
{
	(void)p;
	return 0;
}

static int faulty_set_params(void *p, const struct tstub_params *params)
{
	struct faulty_priv *priv = p;

	if (params->delsys >= 32 || !(FAULTY_DELSYS & (1u << params->delsys)))
		return -EINVAL;
	if (params->frequency < FAULTY_FREQ_MIN ||
	    params->frequency > FAULTY_FREQ_MAX)
		return -EINVAL;
	if (params->frequency == FAULTY_CRASH_HZ)
		faulty_crash();
	if (params->frequency == FAULTY_HANG_HZ)
		faulty_hang();
	priv->tuned = 1;
	priv->frequency = params->frequency;
	priv->bandwidth = params->bandwidth ? params->bandwidth : 8000000;
	return 0;
}

static int faulty_get_status(void *p, struct tstub_status *st)
{
	struct faulty_priv *priv = p;

	memset(st, 0, sizeof(*st));
	st->valid = TSTUB_ST_PLL_LOCK;
	st->pll_locked = priv->tuned;
	st->frequency = priv->tuned ? priv->frequency : 0;
	st->bandwidth = priv->tuned ? priv->bandwidth : 0;
	return 0;
}

static int faulty_get_frequency(void *p, struct tstub_freq *freq)
{
	struct faulty_priv *priv = p;

	memset(freq, 0, sizeof(*freq));
	freq->frequency = priv->tuned ? priv->frequency : 0;
	freq->bandwidth = priv->tuned ? priv->bandwidth : 0;
	freq->if_frequency = 36000000;
	return 0;
}

static const struct tunerd_plugin_ops faulty_ops = {
    .size = sizeof(struct tunerd_plugin_ops),
    .probe = faulty_probe,
    .release = faulty_release,
    .init = faulty_nop,
    .sleep = faulty_nop,
    .set_params = faulty_set_params,
    .get_status = faulty_get_status,
    .get_frequency = faulty_get_frequency,
};

static const struct tunerd_plugin faulty_plugin = {
    .size = sizeof(struct tunerd_plugin),
    .abi = TUNERD_PLUGIN_ABI,
    .info =
	{
	    .name = "FAULTY",
	    .vendor = "tunerd tests",
	    .plugin = "faulty",
	    .chip_id = FAULTY_CHIP_ID,
	    .plugin_version = 1,
	    .delsys_mask = FAULTY_DELSYS,
	    .bandwidth_mask = TSTUB_BW_6MHZ | TSTUB_BW_7MHZ | TSTUB_BW_8MHZ,
	    .freq_min = FAULTY_FREQ_MIN,
	    .freq_max = FAULTY_FREQ_MAX,
	    .freq_step = 1000,
	    .caps = TSTUB_CHIPCAP_PLL_LOCK,
	    .if_frequency = 36000000,
	},
    .ops = &faulty_ops,
};

FAULTY_EXPORT int tunerd_plugin_version(int count, const int *versions)
{
	return tunerd_plugin_pick_version(count, versions);
}

FAULTY_EXPORT const struct tunerd_plugin *tunerd_plugin_describe(int version)
{
	return version == TUNERD_PLUGIN_ABI ? &faulty_plugin : NULL;
}

// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the XC3028 plugin's firmware parser
 * (plugins/xc3028/xc3028_fw.c), driven through the plugin's own ops as a
 * worker drives them: probe (firmware_get, parse, pick and upload the
 * default images, identify), then tunes in every mode the chip knows, so
 * that the images picked from a hostile file are uploaded record by
 * record.  The input is two bytes of board configuration word (longest
 * I2C write, demodulator IF) and the file.  The host checks every
 * transfer against the ABI's limits and answers the identification
 * registers as a real XC3028 would.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tunerd_plugin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fake_host {
	const uint8_t *fw;
	size_t fw_size;
	int fw_out; /* firmware_get without its firmware_put */
	unsigned int sleeps_ms;
};

static int fake_i2c(void *ctx, struct tunerd_i2c_msg *msgs, unsigned int n)
{
	size_t total = 0;
	uint16_t reg = 0;

	(void)ctx;
	if (!n || n > TSTUB_I2C_SEGS_MAX)
		abort();
	for (unsigned int i = 0; i < n; i++) {
		if (!msgs[i].len || !msgs[i].buf || msgs[i].addr > 0x7f)
			abort();
		total += msgs[i].len;
		if (!(msgs[i].flags & TUNERD_I2C_RD)) {
			if (msgs[i].len >= 2)
				reg = (uint16_t)((msgs[i].buf[0] & 0x7f) << 8 |
						 msgs[i].buf[1]);
			continue;
		}
		memset(msgs[i].buf, 0, msgs[i].len);
		if (reg == 0x0008 && msgs[i].len >= 2) { /* PRODUCT_ID 3028 */
			msgs[i].buf[0] = 0x0b;
			msgs[i].buf[1] = 0xd4;
		} else if (msgs[i].len >= 2) {
			msgs[i].buf[1] = 1; /* locked, version 0.1 */
		}
	}
	if (total > TSTUB_I2C_DATA_MAX)
		abort();
	return 0;
}

static void fake_sleep(void *ctx, unsigned int ms)
{
	((struct fake_host *)ctx)->sleeps_ms += ms;
}

static void fake_log(void *ctx, int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	(void)ctx;
	(void)level;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
}

static int fake_fw_get(void *ctx, const char *name, const uint8_t **data,
		       size_t *size)
{
	struct fake_host *h = ctx;

	if (strchr(name, '/'))
		abort();
	*data = h->fw;
	*size = h->fw_size;
	h->fw_out++;
	return 0;
}

static void fake_fw_put(void *ctx, const uint8_t *data, size_t size)
{
	struct fake_host *h = ctx;

	if (data != h->fw || size != h->fw_size)
		abort();
	h->fw_out--;
}

static int fake_bridge(void *ctx, uint32_t cmd, uint32_t arg)
{
	(void)ctx;
	(void)cmd;
	(void)arg;
	return 0;
}

static void tune_every_mode(const struct tunerd_plugin_ops *ops, void *priv)
{
	static const struct tstub_params modes[] = {
	    {.delsys = TSTUB_DELSYS_DVBT,
	     .frequency = 474000000,
	     .bandwidth = 8000000},
	    {.delsys = TSTUB_DELSYS_DVBT,
	     .frequency = 177500000,
	     .bandwidth = 7000000},
	    {.delsys = TSTUB_DELSYS_DVBT,
	     .frequency = 602000000,
	     .bandwidth = 6000000},
	    {.delsys = TSTUB_DELSYS_ATSC,
	     .frequency = 533000000,
	     .bandwidth = 6000000},
	    {.delsys = TSTUB_DELSYS_DVBC_A,
	     .frequency = 346000000,
	     .bandwidth = 8000000,
	     .symbol_rate = 6900000},
	    {.delsys = TSTUB_DELSYS_ANALOG_TV,
	     .frequency = 175250000,
	     .std = 0x7},
	    {.delsys = TSTUB_DELSYS_ANALOG_TV,
	     .frequency = 471250000,
	     .std = 0x10},
	    {.delsys = TSTUB_DELSYS_ANALOG_TV,
	     .frequency = 61250000,
	     .std = 0x1000},
	    {.delsys = TSTUB_DELSYS_ANALOG_TV,
	     .frequency = 215250000,
	     .std = 0x400000},
	    {.delsys = TSTUB_DELSYS_RADIO, .frequency = 98500000},
	};
	struct tstub_status st;
	struct tstub_freq f;

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct tstub_params p = modes[i];

		p.flags = TSTUB_PARAMS_VALID;
		if (ops->set_params(priv, &p))
			continue;
		ops->get_status(priv, &st);
		if (ops->get_frequency)
			ops->get_frequency(priv, &f);
	}
	ops->sleep(priv);
	ops->init(priv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct tunerd_plugin *plugin;
	struct fake_host h = {0};
	struct tunerd_host host = {
	    .size = sizeof(host),
	    .abi = TUNERD_PLUGIN_ABI,
	    .ctx = &h,
	    .i2c_transfer = fake_i2c,
	    .sleep_ms = fake_sleep,
	    .log = fake_log,
	    .firmware_get = fake_fw_get,
	    .firmware_put = fake_fw_put,
	    .bridge_ctrl = fake_bridge,
	};
	struct tunerd_tuner_config cfg = {.size = sizeof(cfg)};
	uint8_t *fw;
	void *priv = NULL;

	if (size < 2)
		return 0;
	/* bits 7:0 the longest write, bits 23:8 the demodulator IF: a few
	 * IFs the file's SCODE images carry, and the default. */
	cfg.config =
	    data[0] | (uint32_t)(data[1] & 3 ? 3280 + 1280 * (data[1] & 3) : 0)
			  << 8;
	/* The file in a buffer of its own size, so that ASan sees every
	 * read past it. */
	fw = malloc(size - 2 ? size - 2 : 1);
	if (!fw)
		return 0;
	memcpy(fw, data + 2, size - 2);
	h.fw = fw;
	h.fw_size = size - 2;
	plugin = tunerd_plugin_describe(TUNERD_PLUGIN_ABI);
	if (!plugin || !plugin->ops)
		abort();
	if (plugin->ops->probe(&host, &cfg, &priv) == 0) {
		tune_every_mode(plugin->ops, priv);
		plugin->ops->release(priv);
	}
	if (h.fw_out)
		abort(); /* the mapping must go back in every case */
	free(fw);
	return 0;
}

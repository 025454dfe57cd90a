/* SPDX-License-Identifier: MIT */
/*
 * tunerd_plugin.h - the ABI between the tunerd daemon and a chip plugin.
 *
 * One chip = one shared object.  At load the host calls
 * tunerd_plugin_version() with every ABI version it speaks; the plugin
 * answers the one it picked (or -1).  The host then calls
 * tunerd_plugin_describe(version) for the plugin's identity and ops.
 * A plugin missing either symbol, or picking a version the host did not
 * offer, is refused.
 *
 * Growth: every struct starts with its own size, the host and the plugin
 * each read only the fields the other one's size covers, and reserved
 * pointers stay NULL.  A new optional op goes at the end of the ops table;
 * an incompatible change bumps TUNERD_PLUGIN_ABI.
 *
 * Errors are negative errnos: -EREMOTEIO (I2C), -ENODEV (wrong chip id),
 * -ETIMEDOUT (chip never answers), -EINVAL (params the chip cannot do),
 * -ENOENT (firmware missing).
 */
#ifndef TUNERD_PLUGIN_H
#define TUNERD_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "tuner_stub.h"

#define TUNERD_PLUGIN_ABI 1

/* One segment of an I2C transfer (host service i2c_transfer). */
#define TUNERD_I2C_RD 0x0001

struct tunerd_i2c_msg {
	uint16_t addr;  /* 7-bit */
	uint16_t flags; /* TUNERD_I2C_RD */
	uint16_t len;
	uint8_t *buf;
};

enum tunerd_log_level {
	TUNERD_LOG_ERR = 3,
	TUNERD_LOG_WARN = 4,
	TUNERD_LOG_INFO = 6,
	TUNERD_LOG_DEBUG = 7,
};

/* What the host offers a plugin instance.  All calls block; none may be
 * made after release(). */
struct tunerd_host {
	uint32_t size; /* sizeof(struct tunerd_host) in the host's build */
	uint32_t abi;  /* the negotiated version */
	void *ctx;     /* first argument of every call below */

	/* A combined transfer of up to TSTUB_I2C_SEGS_MAX segments and
	 * TSTUB_I2C_DATA_MAX bytes.  Returns 0 or a negative errno. */
	int (*i2c_transfer)(void *ctx, struct tunerd_i2c_msg *msgs,
			    unsigned int n);
	/* Chip settle wait.  The host scales it to the stub's time model. */
	void (*sleep_ms)(void *ctx, unsigned int ms);
	void (*log)(void *ctx, int level, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
	/* Map a firmware file from the host's firmware directory.  The name
	 * is a plain file name (no '/').  Returns 0 or -ENOENT/-EFBIG. */
	int (*firmware_get)(void *ctx, const char *name, const uint8_t **data,
			    size_t *size);
	void (*firmware_put)(void *ctx, const uint8_t *data, size_t size);
	/* The bridge's tuner callback: TSTUB_CTRL_* */
	int (*bridge_ctrl)(void *ctx, uint32_t cmd, uint32_t arg);

	void *reserved[8];
};

/* How the bridge wired this chip (from TSTUB_ATTACH). */
struct tunerd_tuner_config {
	uint32_t size;
	uint32_t chip_id;
	uint32_t vendor_id;
	uint32_t product_id;
	uint32_t config; /* board word; plugin-specific meaning */
	uint16_t i2c_addr;
	uint16_t padding;
	uint32_t reserved[4];
};

struct tunerd_plugin_ops {
	uint32_t size; /* sizeof(struct tunerd_plugin_ops) in the plugin */

	/* Create an instance and check the chip's identity over I2C.
	 * -ENODEV if the chip is not there or not this chip. */
	int (*probe)(const struct tunerd_host *host,
		     const struct tunerd_tuner_config *cfg, void **priv);
	void (*release)(void *priv);

	int (*init)(void *priv);
	int (*sleep)(void *priv);
	int (*set_params)(void *priv, const struct tstub_params *p);
	/* Fill what the chip itself can tell: pll_locked, afc_hz, cnr_rel,
	 * fe_status bits it knows; set status->valid accordingly. */
	int (*get_status)(void *priv, struct tstub_status *status);
	/* Optional (NULL): the frequency actually tuned after rounding. */
	int (*get_frequency)(void *priv, struct tstub_freq *freq);
	/* Not called since stub ABI 1.2 retired TSTUB_I2C_GATE (the bridge's
	 * demodulator gate is the stub's business); kept so the ops table
	 * keeps its layout.  Leave NULL. */
	int (*i2c_gate)(void *priv, int open);

	void *reserved[8];
};

struct tunerd_plugin {
	uint32_t size; /* sizeof(struct tunerd_plugin) in the plugin */
	uint32_t abi;  /* the version this description is for */
	struct tstub_chip_info info;
	const struct tunerd_plugin_ops *ops;
	void *reserved[4];
};

/* Symbols every plugin exports. */
#define TUNERD_PLUGIN_VERSION_SYM  "tunerd_plugin_version"
#define TUNERD_PLUGIN_DESCRIBE_SYM "tunerd_plugin_describe"

typedef int (*tunerd_plugin_version_fn)(int count, const int *versions);
typedef const struct tunerd_plugin *(*tunerd_plugin_describe_fn)(int version);

int tunerd_plugin_version(int count, const int *versions);
const struct tunerd_plugin *tunerd_plugin_describe(int version);

/* The negotiation every plugin of this ABI makes: pick TUNERD_PLUGIN_ABI
 * if the host offers it.  A plugin speaking several versions picks its
 * newest offered one instead. */
static inline int tunerd_plugin_pick_version(int count, const int *versions)
{
	for (int i = 0; versions && i < count; i++)
		if (versions[i] == TUNERD_PLUGIN_ABI)
			return TUNERD_PLUGIN_ABI;
	return -1;
}

#endif /* TUNERD_PLUGIN_H */

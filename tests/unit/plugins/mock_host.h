/* SPDX-License-Identifier: MIT */
/*
 * mock_host.h - a struct tunerd_host for plugin unit tests.  It records
 * every I2C segment, bridge callback and sleep as an event, hands I2C to
 * a register-file mock of the chip, injects NAKs on request, checks the
 * transfer limits of the ABI and serves one firmware file from disk.
 *
 * Also: loading a plugin .so through the ABI the way the daemon does.
 */
#ifndef TUNERD_TEST_MOCK_HOST_H
#define TUNERD_TEST_MOCK_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "tunerd_plugin.h"

enum mock_ev_kind {
	MOCK_EV_WRITE = 1, /* an I2C write segment */
	MOCK_EV_READ,      /* an I2C read segment (data: what was returned) */
	MOCK_EV_CTRL,      /* bridge_ctrl(arg, ctrl_arg) */
	MOCK_EV_SLEEP,     /* sleep_ms(arg) */
};

#define MOCK_EV_DATA_MAX 256

struct mock_event {
	int kind;
	uint16_t addr;
	uint16_t len;
	uint32_t arg;
	uint32_t ctrl_arg; /* MOCK_EV_CTRL: the callback's argument */
	unsigned int xfer; /* transfer number, for I2C segments */
	uint8_t data[MOCK_EV_DATA_MAX];
};

struct mock_events {
	struct mock_event *ev;
	size_t n, cap;
};

void mock_events_clear(struct mock_events *l);
void mock_events_free(struct mock_events *l);
void mock_ev_write(struct mock_events *l, uint16_t addr, const uint8_t *data,
		   size_t len);
void mock_ev_read(struct mock_events *l, uint16_t addr, const uint8_t *data,
		  size_t len);
void mock_ev_ctrl(struct mock_events *l, uint32_t cmd); /* argument 0 */
void mock_ev_ctrl_arg(struct mock_events *l, uint32_t cmd, uint32_t arg);
void mock_ev_sleep(struct mock_events *l, uint32_t ms);
/* Compare got[from..] with want (want->n events).  -1 if equal, else the
 * index into want of the first difference, described in why. */
long mock_events_diff(const struct mock_events *got, size_t from,
		      const struct mock_events *want, char *why, size_t len);

/* The chip behind the bus: 0 or a negative errno per segment. */
struct mock_chip {
	void *ctx;
	int (*write)(void *ctx, uint16_t addr, const uint8_t *buf,
		     uint16_t len);
	int (*read)(void *ctx, uint16_t addr, uint8_t *buf, uint16_t len);
	int (*ctrl)(void *ctx, uint32_t cmd, uint32_t arg);
};

struct mock_host {
	struct tunerd_host host; /* what the plugin gets */
	struct mock_chip chip;
	struct mock_events events;
	unsigned int xfers;      /* transfers so far, NAKed ones included */
	unsigned int nak_at;     /* NAK transfer number nak_at (0 never) */
	int nak_all;             /* NAK every transfer */
	unsigned int violations; /* transfers breaking the ABI limits */
	unsigned long sleep_total_ms;
	unsigned int log_errors; /* lines at TUNERD_LOG_ERR */
	unsigned int log_lines;
	const char *fw_name; /* the file served by firmware_get */
	const char *fw_path; /* NULL: -ENOENT */
	unsigned int fw_gets, fw_puts;
	int verbose; /* print the plugin's log lines */
};

void mock_host_init(struct mock_host *m, const struct mock_chip *chip);
void mock_host_free(struct mock_host *m);

/* A plugin opened and negotiated like the daemon does. */
struct mock_plugin {
	void *dl;
	int abi;
	const struct tunerd_plugin *desc;
	const struct tunerd_plugin_ops *ops;
};

/* 0, or -1 with the reason printed. */
int mock_plugin_open(const char *path, struct mock_plugin *p);
void mock_plugin_close(struct mock_plugin *p);
/* dlsym() in the plugin: what it exports. */
void *mock_plugin_sym(const struct mock_plugin *p, const char *name);

/* A tstub_params for a digital tune. */
struct tstub_params mock_params(uint32_t delsys, uint32_t freq, uint32_t bw);

#endif /* TUNERD_TEST_MOCK_HOST_H */

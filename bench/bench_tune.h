/* SPDX-License-Identifier: MIT */
/*
 * bench_tune.h - bench_tune's baseline: a chip's driver alone, its plugin
 * run in this process straight on the simulated box's chip model, with
 * the box's bus time and settle, and no daemon, worker or socket between.
 */
#ifndef BENCH_TUNE_H
#define BENCH_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "tstub_codec.h"
#include "tunerd_plugin.h"

struct bench_drv;

/* A tuner channel of a box, bound to one client (bench_tune_stub.c). */
struct bench_stub_chan {
	int fd; /* -1: none, the driver runs on the chip model */
	uint32_t client;
	uint64_t unique;
	int bracket; /* the stub takes CMD_BEGIN/CMD_END */
};

/* Be the daemon of the box at sock with nclients tuners: INIT answered
 * (its capabilities accepted, in *caps), every LOAD_PLUGIN and ATTACH.
 * The control channel's fd, or -errno. */
int bench_stub_session(const char *sock, unsigned int nclients, uint64_t *caps);
/* A new channel of the box at sock, bound to client; 0 or -errno.
 * c->bracket is the caller's to set. */
int bench_stub_bind(struct bench_stub_chan *c, const char *sock,
		    uint32_t client);
/* One request and its reply (PARAMS_CHANGED: none); the reply's error. */
int bench_stub_call(struct bench_stub_chan *c, uint16_t opcode,
		    const void *body, size_t len, union tstub_buf *reply);
/* One I2C transfer as a worker makes it: a TSTUB_I2C_XFER round trip. */
int bench_stub_i2c(struct bench_stub_chan *c, struct tunerd_i2c_msg *msgs,
		   unsigned int n);

/* The plugin at plugin_path on a model of chip (sim_chip_find() name),
 * bus at i2c_khz, settle times scaled by settle_scale; probed and
 * initialised.  With stub (fd >= 0) the plugin drives the box's chip on
 * that channel instead: transfers, bridge requests and the lock are the
 * box's, each command bracketed as a worker brackets its own; the
 * channel is the driver's then, closed with it.  NULL with a reason in
 * err on failure. */
struct bench_drv *bench_drv_new(const char *chip, const char *plugin_path,
				const char *firmware_path,
				const char *firmware_dir, unsigned int i2c_khz,
				double settle_scale,
				const struct bench_stub_chan *stub, char *err,
				size_t errlen);
void bench_drv_free(struct bench_drv *d);

/* One DVB-T 8 MHz tune to freq, then status reads back to back until
 * the chip's lock shows, as a worker would report it: the driver's own
 * time (bus, its waits, the settle; over a stub, its round trips too),
 * in ns; 0 when it failed or never locked within 2 s. */
uint64_t bench_drv_tune(struct bench_drv *d, uint32_t freq);
/* One status read as a worker's lock watch makes it (over a stub: the
 * chip's and the demodulator's, in one bracket), in ns; 0 on failure. */
uint64_t bench_drv_status(struct bench_drv *d);

#endif /* BENCH_TUNE_H */

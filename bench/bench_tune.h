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

struct bench_drv;

/* The plugin at plugin_path on a model of chip (sim_chip_find() name),
 * bus at i2c_khz, settle times scaled by settle_scale; probed and
 * initialised.  NULL with a reason in err on failure. */
struct bench_drv *bench_drv_new(const char *chip, const char *plugin_path,
				const char *firmware_path,
				const char *firmware_dir, unsigned int i2c_khz,
				double settle_scale, char *err, size_t errlen);
void bench_drv_free(struct bench_drv *d);

/* One DVB-T 8 MHz tune to freq, then status reads back to back until
 * the chip's lock shows, as a worker would report it: the driver's own
 * time (bus, its waits, the settle), in ns; 0 when it failed or never
 * locked within 2 s. */
uint64_t bench_drv_tune(struct bench_drv *d, uint32_t freq);

#endif /* BENCH_TUNE_H */

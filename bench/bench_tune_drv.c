// SPDX-License-Identifier: MIT
/*
 * bench_tune_drv.c - bench_tune's baselines: a chip's plugin driven in
 * this process straight on the box's chip model.  Every I2C transfer
 * takes the box's bus time (the same bit count as box_i2c.c, waited for
 * on the clock), sleeps take the box's settle scale, and the lock is the
 * model's own: what is left is the driver's own time, the floor of any
 * server in front of it.  Or the same plugin over a box's stub channel
 * (bench_tune_stub.c), as a worker drives it.
 */
#define _GNU_SOURCE
#include "bench_proc.h"
#include "bench_tune.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"
#include "plugin_open.h"
#include "sim_chip.h"

#define DRV_LOCK_GIVE_UP_NS (2000ull * 1000000ull)

struct bench_drv {
	const struct sim_chip_ops *cops;
	struct sim_chip *chip;
	uint16_t addr;
	unsigned int i2c_khz;
	unsigned int settle_permille;
	const char *firmware_dir;
	struct tunerd_plugin_ops ops;
	void *handle, *priv;
	struct tunerd_host host;
	struct bench_stub_chan stub;
	int bracket_open; /* stub: CMD_BEGIN sent, CMD_END owed */
};

static void sleep_until_ns(uint64_t t)
{
	struct timespec ts = loop_timespec(t);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/* Over a stub: a command's first bridge request opens its bracket. */
static int drv_stub_begin(struct bench_drv *d)
{
	union tstub_buf reply;
	int err;

	if (d->bracket_open || !d->stub.bracket)
		return 0;
	err = bench_stub_call(&d->stub, TSTUB_CMD_BEGIN, NULL, 0, &reply);
	d->bracket_open = !err;
	return err;
}

static int drv_stub_call(struct bench_drv *d, uint16_t opcode, const void *body,
			 size_t len, union tstub_buf *reply)
{
	int err = drv_stub_begin(d);

	return err ? err : bench_stub_call(&d->stub, opcode, body, len, reply);
}

static int drv_stub_end(struct bench_drv *d)
{
	union tstub_buf reply;

	if (!d->bracket_open)
		return 0;
	d->bracket_open = 0;
	return bench_stub_call(&d->stub, TSTUB_CMD_END, NULL, 0, &reply);
}

/* On the model: applied at once, answered after the bus time, as the
 * box does. */
static int drv_i2c(void *ctx, struct tunerd_i2c_msg *msgs, unsigned int n)
{
	struct bench_drv *d = ctx;
	uint64_t now = bench_now_ns(), bits = 1;
	int err = 0;

	if (d->stub.fd >= 0) {
		err = drv_stub_begin(d);
		return err ? err : bench_stub_i2c(&d->stub, msgs, n);
	}

	for (unsigned int i = 0; i < n && !err; i++) {
		bits += (1u + msgs[i].len) * 9u + 1u;
		if (msgs[i].addr != d->addr)
			err = -EREMOTEIO;
		else if (msgs[i].flags & TUNERD_I2C_RD)
			err = d->cops->read(d->chip, msgs[i].buf, msgs[i].len,
					    now);
		else
			err = d->cops->write(d->chip, msgs[i].buf, msgs[i].len,
					     now);
	}
	if (d->i2c_khz)
		sleep_until_ns(now + bits * 1000000ull / d->i2c_khz);
	return err;
}

static void drv_sleep_ms(void *ctx, unsigned int ms)
{
	struct bench_drv *d = ctx;

	sleep_until_ns(bench_now_ns() +
		       (uint64_t)ms * d->settle_permille * 1000ull);
}

static void drv_log(void *ctx, int level, const char *fmt, ...)
{
	(void)ctx;
	(void)level;
	(void)fmt;
}

static int drv_firmware_get(void *ctx, const char *name, const uint8_t **data,
			    size_t *size)
{
	struct bench_drv *d = ctx;
	char path[4096];
	uint8_t *buf = NULL;
	long len;
	FILE *f;

	*data = NULL;
	*size = 0;
	snprintf(path, sizeof(path), "%s/%s", d->firmware_dir, name);
	f = fopen(path, "rb");
	if (!f)
		return -ENOENT;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)len)) &&
	    fread(buf, 1, (size_t)len, f) == (size_t)len) {
		*data = buf;
		*size = (size_t)len;
	} else {
		free(buf);
	}
	fclose(f);
	return *data ? 0 : -EIO;
}

static void drv_firmware_put(void *ctx, const uint8_t *data, size_t size)
{
	(void)ctx;
	(void)size;
	free((void *)data);
}

static int drv_bridge_ctrl(void *ctx, uint32_t cmd, uint32_t arg)
{
	struct bench_drv *d = ctx;
	struct tstub_ctrl ctl = {.cmd = cmd, .arg = arg};
	union tstub_buf reply;

	if (d->stub.fd >= 0)
		return drv_stub_call(d, TSTUB_BRIDGE_CTRL, &ctl, sizeof(ctl),
				     &reply);
	return d->cops->bridge_ctrl
		   ? d->cops->bridge_ctrl(d->chip, cmd, arg, bench_now_ns())
		   : -EOPNOTSUPP;
}

static int drv_open(struct bench_drv *d, const char *plugin_path, char *err,
		    size_t errlen)
{
	struct tunerd_tuner_config cfg = {.size = sizeof(cfg),
					  .chip_id = d->cops->chip_id,
					  .i2c_addr = d->addr};
	struct plugin_desc desc;
	int ret = plugin_open(plugin_path, &desc, &d->ops, &d->handle);

	if (ret) {
		snprintf(err, errlen, "%s", desc.reason);
		return ret;
	}
	d->host = (struct tunerd_host){
	    .size = sizeof(struct tunerd_host),
	    .abi = (uint32_t)desc.abi,
	    .ctx = d,
	    .i2c_transfer = drv_i2c,
	    .sleep_ms = drv_sleep_ms,
	    .log = drv_log,
	    .firmware_get = drv_firmware_get,
	    .firmware_put = drv_firmware_put,
	    .bridge_ctrl = drv_bridge_ctrl,
	};
	ret = d->ops.probe(&d->host, &cfg, &d->priv);
	if (!ret)
		ret = d->ops.init(d->priv);
	if (d->stub.fd >= 0 && drv_stub_end(d) && !ret)
		ret = -EIO;
	if (ret)
		snprintf(err, errlen, "%s: probe or init: %s", plugin_path,
			 strerror(-ret));
	return ret;
}

struct bench_drv *bench_drv_new(const char *chip, const char *plugin_path,
				const char *firmware_path,
				const char *firmware_dir, unsigned int i2c_khz,
				double settle_scale,
				const struct bench_stub_chan *stub, char *err,
				size_t errlen)
{
	struct bench_drv *d = calloc(1, sizeof(*d));
	struct sim_chip_setup setup = {.settle_scale = settle_scale,
				       .firmware_path = firmware_path,
				       .seed = 1};

	if (!d) {
		snprintf(err, errlen, "out of memory");
		if (stub && stub->fd >= 0)
			close(stub->fd);
		return NULL;
	}
	d->stub = stub ? *stub : (struct bench_stub_chan){.fd = -1};
	d->cops = sim_chip_find(chip);
	if (!d->cops) {
		snprintf(err, errlen, "no chip model %s", chip);
		bench_drv_free(d);
		return NULL;
	}
	d->addr = setup.i2c_addr = d->cops->default_addr;
	d->i2c_khz = i2c_khz;
	d->settle_permille = (unsigned int)(settle_scale * 1000.0 + 0.5);
	d->firmware_dir = firmware_dir;
	d->chip = d->cops->create(&setup, err, errlen);
	if (!d->chip || drv_open(d, plugin_path, err, errlen)) {
		bench_drv_free(d);
		return NULL;
	}
	return d;
}

void bench_drv_free(struct bench_drv *d)
{
	if (!d)
		return;
	if (d->priv)
		d->ops.release(d->priv);
	if (d->handle)
		dlclose(d->handle);
	if (d->chip)
		d->cops->destroy(d->chip);
	if (d->stub.fd >= 0)
		close(d->stub.fd);
	free(d);
}

/* Over a stub, the lock as a worker's lock watch sees it: the chip's
 * status and the demodulator's, in one bracket.  1, 0, or -errno. */
static int drv_stub_locked(struct bench_drv *d)
{
	struct tstub_status st = {0}, dm = {0};
	union tstub_buf reply;
	int err = d->ops.get_status(d->priv, &st);

	if (!err)
		err = drv_stub_call(d, TSTUB_DEMOD_STATUS, NULL, 0, &reply);
	if (!err)
		memcpy(&dm, tstub_body(&reply.hdr), sizeof(dm));
	else if (err == -EOPNOTSUPP)
		err = 0;
	if (drv_stub_end(d) && !err)
		err = -EIO;
	if (err)
		return err;
	if ((st.valid | dm.valid) & TSTUB_ST_FE_STATUS)
		return !!((st.fe_status | dm.fe_status) & TSTUB_FE_HAS_LOCK);
	return (st.valid & TSTUB_ST_PLL_LOCK) && st.pll_locked;
}

static uint64_t drv_stub_tune(struct bench_drv *d, const struct tstub_params *p,
			      uint64_t t0)
{
	union tstub_buf reply;
	uint64_t now;
	int err = d->ops.set_params(d->priv, p), locked;

	if (drv_stub_end(d) || err)
		return 0;
	bench_stub_call(&d->stub, TSTUB_PARAMS_CHANGED, p, sizeof(*p), &reply);
	do {
		locked = drv_stub_locked(d);
		now = bench_now_ns();
	} while (!locked && now - t0 < DRV_LOCK_GIVE_UP_NS);
	return locked > 0 ? now - t0 : 0;
}

uint64_t bench_drv_tune(struct bench_drv *d, uint32_t freq)
{
	struct tstub_params p = {.delsys = TSTUB_DELSYS_DVBT,
				 .frequency = freq,
				 .bandwidth = 8000000,
				 .flags = TSTUB_PARAMS_VALID};
	uint64_t t0 = bench_now_ns(), now;
	struct tstub_status st;
	struct sim_tuned tuned;

	if (d->stub.fd >= 0)
		return drv_stub_tune(d, &p, t0);
	if (d->ops.set_params(d->priv, &p))
		return 0;
	do {
		memset(&st, 0, sizeof(st));
		if (d->ops.get_status(d->priv, &st))
			return 0;
		now = bench_now_ns();
		d->cops->tuned(d->chip, now, &tuned);
	} while (!tuned.pll_locked && now - t0 < DRV_LOCK_GIVE_UP_NS);
	return tuned.pll_locked ? now - t0 : 0;
}

uint64_t bench_drv_status(struct bench_drv *d)
{
	struct tstub_status st = {0};
	uint64_t t0 = bench_now_ns();

	if (d->stub.fd >= 0)
		return drv_stub_locked(d) < 0 ? 0 : bench_now_ns() - t0;
	return d->ops.get_status(d->priv, &st) ? 0 : bench_now_ns() - t0;
}

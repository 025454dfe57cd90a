// SPDX-License-Identifier: MIT
/*
 * test_plugin_xc3028_sim.c - the XC3028 plugin (argv[1]) driving the
 * simulated XC3028 with the synthetic firmware file, both layouts (with
 * and without a reset record inside BASE).  Every transfer the plugin
 * makes by the kernel driver's rules must be ACKed, and the model must
 * run the images the tune needs and decode the frequency asked for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "mock_host.h"
#include "sim_chip.h"
#include "xc3028_fwgen.h"

#define MHZ 1000000u

static const struct mock_plugin *plugin;

struct sim_rig {
	struct sim_chip *chip;
	struct mock_host mh;
	struct tunerd_tuner_config cfg;
	void *priv;
};

static int sim_write(void *ctx, uint16_t addr, const uint8_t *buf, uint16_t len)
{
	return addr == 0x61 ? sim_xc3028_ops.write(ctx, buf, len, 0)
			    : -EREMOTEIO;
}

static int sim_read(void *ctx, uint16_t addr, uint8_t *buf, uint16_t len)
{
	return addr == 0x61 ? sim_xc3028_ops.read(ctx, buf, len, 0)
			    : -EREMOTEIO;
}

static int sim_ctrl(void *ctx, uint32_t cmd, uint32_t arg)
{
	return sim_xc3028_ops.bridge_ctrl(ctx, cmd, arg, 0);
}

/* One tune, what the model then runs and where it is tuned. */
struct sim_step {
	uint32_t delsys, freq, bw;
	uint64_t std;
	const char *firmware;
};

static const struct sim_step sim_steps[] = {
    {TSTUB_DELSYS_DVBT, 474 * MHZ, 8 * MHZ, 0,
     "BASE F8MHZ,D2633 DTV8,SCODE 4760"},
    {TSTUB_DELSYS_DVBT, 474249700, 8 * MHZ, 0,
     "BASE F8MHZ,D2633 DTV8,SCODE 4760"},
    {TSTUB_DELSYS_DVBT, 177500000, 7 * MHZ, 0,
     "BASE F8MHZ,D2633 DTV78,SCODE 4760"},
    {TSTUB_DELSYS_DVBT, 506 * MHZ, 7 * MHZ, 0,
     "BASE F8MHZ,D2633 DTV7,SCODE 4760"},
    {TSTUB_DELSYS_ANALOG_TV, 175250000, 0, 0x7,
     "BASE F8MHZ,PAL_BG,SCODE 5320 std=f00000007"},
    {TSTUB_DELSYS_ANALOG_TV, 503250000, 0, 0x10,
     "BASE F8MHZ,PAL_I,SCODE 6240 PAL_I"},
    {TSTUB_DELSYS_DVBT, 473 * MHZ, 6 * MHZ, 0,
     "BASE,D2633 DTV6 QAM,SCODE 4760"},
    {TSTUB_DELSYS_ATSC, 575 * MHZ, 6 * MHZ, 0,
     "BASE,D2633 DTV6 ATSC,SCODE 4760"},
    {TSTUB_DELSYS_ANALOG_TV, 61250000, 0, 0x1000,
     "BASE,NTSC_M,SCODE 4320 NTSC_M"},
    {TSTUB_DELSYS_RADIO, 98100000, 0, 0, "BASE FM,FM"},
    {TSTUB_DELSYS_DVBT, 858 * MHZ, 8 * MHZ, 0,
     "BASE F8MHZ,D2633 DTV8,SCODE 4760"},
};

static void check_step(struct sim_rig *r, const struct sim_step *s,
		       const char *what)
{
	struct tstub_params p = mock_params(s->delsys, s->freq, s->bw);
	struct sim_tuned t;

	p.std = s->std;
	CHECK_EQ_INT(plugin->ops->set_params(r->priv, &p), 0);
	sim_xc3028_ops.tuned(r->chip, 0, &t);
	CHECK(t.valid && abs((int)t.frequency - (int)s->freq) <= 7813);
	if (strcmp(t.firmware, s->firmware)) {
		CHECK(!"the model runs the wanted images");
		fprintf(stderr, "%s: model runs '%s', want '%s'\n", what,
			t.firmware, s->firmware);
	}
}

/* The whole walk on a fresh chip and plugin: every transfer ACKed. */
static void walk_on_model(const char *path, uint32_t config)
{
	struct sim_chip_setup setup = {
	    .i2c_addr = 0x61, .settle_scale = 0, .firmware_path = path};
	struct mock_chip mc = {
	    .write = sim_write, .read = sim_read, .ctrl = sim_ctrl};
	struct tstub_status st;
	struct sim_tuned t;
	struct sim_rig r;
	char err[256] = "", what[64];

	memset(&r, 0, sizeof(r));
	r.chip = sim_xc3028_ops.create(&setup, err, sizeof(err));
	CHECK(r.chip != NULL);
	if (!r.chip) {
		fprintf(stderr, "model: %s\n", err);
		return;
	}
	mc.ctx = r.chip;
	mock_host_init(&r.mh, &mc);
	r.mh.fw_name = "xc3028-v27.fw";
	r.mh.fw_path = path;
	r.cfg.size = sizeof(r.cfg);
	r.cfg.chip_id = TSTUB_CHIP_XC3028;
	r.cfg.config = config;
	CHECK_EQ_INT(plugin->ops->probe(&r.mh.host, &r.cfg, &r.priv), 0);
	for (size_t i = 0;
	     r.priv && i < sizeof(sim_steps) / sizeof(sim_steps[0]); i++) {
		snprintf(what, sizeof(what), "config 0x%x step %zu", config, i);
		check_step(&r, &sim_steps[i], what);
	}
	if (r.priv) {
		CHECK_EQ_INT(plugin->ops->get_status(r.priv, &st), 0);
		CHECK_EQ_INT(st.pll_locked, 0); /* an empty spectrum */
		CHECK_EQ_INT(plugin->ops->sleep(r.priv), 0);
		sim_xc3028_ops.tuned(r.chip, 0, &t);
		CHECK_EQ_INT(t.pll_locked, 0);
		check_step(&r, &sim_steps[0], "after sleep");
		plugin->ops->release(r.priv);
	}
	CHECK_EQ_INT(r.mh.violations, 0);
	mock_host_free(&r.mh);
	sim_xc3028_ops.destroy(r.chip);
}

static int write_file(unsigned int flags, char *path)
{
	uint8_t *data;
	size_t len;
	FILE *f;
	int fd, ok;

	snprintf(path, 64, "/tmp/test_plugin_xc3028_sim_XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || xc3028_fwgen_build_flags(&data, &len, flags))
		return -1;
	close(fd);
	f = fopen(path, "wb");
	ok = f && fwrite(data, 1, len, f) == len;
	if (f)
		fclose(f);
	free(data);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const unsigned int layouts[] = {XC3028_FWGEN_MID_RESET, 0};
	static const uint32_t configs[] = {0, 13, 80};
	struct mock_plugin p;
	char path[64];

	if (argc != 2) {
		fprintf(stderr, "usage: %s xc3028.so\n", argv[0]);
		return 2;
	}
	if (mock_plugin_open(argv[1], &p))
		return 1;
	plugin = &p;
	for (size_t l = 0; l < 2; l++) {
		CHECK_EQ_INT(write_file(layouts[l], path), 0);
		for (size_t c = 0; c < 3; c++)
			walk_on_model(path, configs[c]);
		unlink(path);
	}
	mock_plugin_close(&p);
	return check_done("test_plugin_xc3028_sim");
}

// SPDX-License-Identifier: MIT
/*
 * test_trace_models.c - the box's chip models take what Linux's drivers
 * send, without a VM.
 *
 *   test_trace_models CHIP KERNEL.trace [FIRMWARE]
 *
 * The trace is the in-kernel driver's bus traffic during the kernel
 * test's sweep (tests/traces/).  Every segment and bridge callback goes
 * to a fresh model of the chip: every write and read is acknowledged,
 * every callback taken, and after each digital tune the kernel completed
 * the model decodes the frequency that was asked, to the chip's step.
 * A model that was never tuned reports no lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sim_chip.h"
#include "trace_file.h"

#define MS 1000000ull

struct replay {
	const struct sim_chip_ops *ops;
	struct sim_chip *chip;
	uint64_t now;
	unsigned int naks, refused, tunes, decoded, shown;
};

/* How far the decoded frequency may sit from the asked one: the chip's
 * raster (MT2060 50 kHz, rounded; QT1010 125 kHz, down; XC3028 the
 * divider's 15.625 kHz) and the kHz the drivers drop. */
static uint32_t chip_tolerance_hz(const char *chip)
{
	if (!strcmp(chip, "mt2060"))
		return 25000 + 1000;
	if (!strcmp(chip, "qt1010"))
		return 125000;
	return 15625;
}

static uint32_t board_config(const char *chip)
{
	/* The vbridge's board (tests/kernel/vbridge/vbridge_fe.c). */
	if (!strcmp(chip, "mt2060"))
		return 1220u << 16;
	if (!strcmp(chip, "xc3028"))
		return 64u | 4560u << 8;
	return 0;
}

static void feed(struct replay *r, const struct trace_item *it)
{
	uint8_t buf[TRACE_DATA_MAX];
	int ret = 0;

	r->now += MS;
	if (it->kind == TRACE_WRITE)
		ret = r->ops->write(r->chip, it->data, it->len, r->now);
	else if (it->kind == TRACE_READ)
		ret = r->ops->read(r->chip, buf, it->len, r->now);
	else if (it->kind == TRACE_CTRL)
		ret = r->ops->bridge_ctrl(r->chip, it->ctrl, it->arg, r->now);
	if (!ret)
		return;
	if (it->kind == TRACE_CTRL)
		r->refused++;
	else
		r->naks++;
	if (r->shown++ < 8)
		fprintf(
		    stderr, "  %s refuses a %s of %u bytes: %d\n", r->ops->name,
		    it->kind == TRACE_WRITE ? "write" : "read", it->len, ret);
}

/* After a digital tune the kernel completed: the model's frequency. */
static void check_tune(struct replay *r, const char *chip,
		       const struct trace_item *req, int ret)
{
	struct tstub_params p;
	struct sim_tuned t;
	long long off;

	if (ret || trace_request_params(req->req, &p) != TRACE_REQ_TUNE ||
	    (p.delsys != TSTUB_DELSYS_DVBT && p.delsys != TSTUB_DELSYS_DVBC_A))
		return;
	r->tunes++;
	r->ops->tuned(r->chip, r->now + 1000 * MS, &t);
	off = (long long)t.frequency - p.frequency;
	if (t.valid && llabs(off) <= chip_tolerance_hz(chip)) {
		r->decoded++;
		return;
	}
	if (r->shown++ < 8)
		fprintf(stderr,
			"  %s: asked %s, model decodes %u Hz (valid %d)\n",
			chip, req->req, t.frequency, t.valid);
}

int main(int argc, char **argv)
{
	struct sim_chip_setup setup = {.settle_scale = 0, .seed = 1};
	struct replay r = {0};
	struct trace_file t;
	struct sim_tuned fresh;
	const struct trace_item *req = NULL;
	char err[256] = "";

	if (argc < 3) {
		fprintf(stderr, "usage: %s CHIP TRACE [FIRMWARE]\n", argv[0]);
		return 2;
	}
	r.ops = sim_chip_find(argv[1]);
	CHECK(r.ops != NULL);
	if (!r.ops || trace_load(argv[2], &t, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	setup.i2c_addr = trace_chip_addr(&t);
	setup.config = board_config(argv[1]);
	setup.firmware_path = argc > 3 ? argv[3] : NULL;
	r.chip = r.ops->create(&setup, err, sizeof(err));
	CHECK(r.chip != NULL);
	if (!r.chip) {
		fprintf(stderr, "%s\n", err);
		trace_free(&t);
		return check_done("test_trace_models");
	}
	r.ops->tuned(r.chip, 1000 * MS, &fresh);
	CHECK(!fresh.valid && !fresh.pll_locked);
	for (size_t i = 0; i < t.n; i++) {
		const struct trace_item *it = &t.items[i];

		if (it->kind == TRACE_REQUEST)
			req = it;
		else if (it->kind == TRACE_RETURN && req)
			check_tune(&r, argv[1], req, it->ret);
		else
			feed(&r, it);
	}
	printf("%s: %zu trace lines, %u NAKs, %u callbacks refused, "
	       "%u digital tunes, %u decoded to the asked frequency\n",
	       argv[1], t.n, r.naks, r.refused, r.tunes, r.decoded);
	CHECK_EQ_INT(r.naks, 0);
	CHECK_EQ_INT(r.refused, 0);
	CHECK(r.tunes >= 100);
	CHECK_EQ_INT(r.decoded, r.tunes);
	r.ops->destroy(r.chip);
	trace_free(&t);
	return check_done("test_trace_models");
}

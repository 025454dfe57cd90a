// SPDX-License-Identifier: MIT
/*
 * test_trace_plugin.c - a plugin against the in-kernel driver's trace,
 * without a VM.
 *
 *   test_trace_plugin CHIP PLUGIN.so KERNEL.trace README.md [FIRMWARE]
 *
 * The trace is what Linux's driver put on the bus during the kernel
 * test's sweep (tests/traces/).  The plugin is driven through the same
 * requests on a mock host whose chip replays that trace: every segment
 * and bridge callback of the plugin must be the trace's next one, byte
 * for byte, and a read returns what the kernel's read returned.  Each
 * request's return value must be the kernel's too, except for the
 * documented in-kernel defects of README.md that this test knows (the
 * same ids as tests/traces/trace_compare.py).  Traffic the trace
 * does not have (a difference) is answered by the box's model of the
 * chip, which sees every segment, so the sweep goes on to the end and
 * every difference is counted.  A chip whose row of
 * the parity table in README.md says "pending" has its differences
 * printed, not failed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "mock_host.h"
#include "sim_chip.h"
#include "trace_file.h"

#define SHOWN_DIFFS 12

struct replay {
	const struct sim_chip_ops *model_ops;
	struct sim_chip *model; /* answers what the trace does not have */
	uint64_t now;
	const struct trace_file *t;
	size_t pos, end;    /* the current request's items */
	unsigned int diffs; /* in the current request */
	char why[160];      /* its first difference */
};

static const struct trace_item *replay_next(struct replay *r)
{
	while (r->pos < r->end) {
		const struct trace_item *it = &r->t->items[r->pos++];

		if (it->kind == TRACE_WRITE || it->kind == TRACE_READ ||
		    it->kind == TRACE_CTRL)
			return it;
	}
	return NULL;
}

static void replay_diff(struct replay *r, const char *fmt, unsigned int a,
			unsigned int b)
{
	if (!r->diffs++)
		snprintf(r->why, sizeof(r->why), fmt, a, b);
}

static int replay_write(void *ctx, uint16_t addr, const uint8_t *buf,
			uint16_t len)
{
	struct replay *r = ctx;
	const struct trace_item *it = replay_next(r);

	r->now += 1000000;
	r->model_ops->write(r->model, buf, len, r->now);
	if (!it || it->kind != TRACE_WRITE)
		replay_diff(r, "plugin writes %u bytes to 0x%02x, kernel no",
			    len, addr);
	else if (it->addr != addr || it->len != len ||
		 memcmp(it->data, buf, len))
		replay_diff(r, "segment %u: the plugin writes other bytes (%u)",
			    (unsigned int)r->pos, len);
	return 0;
}

static int replay_read(void *ctx, uint16_t addr, uint8_t *buf, uint16_t len)
{
	struct replay *r = ctx;
	const struct trace_item *it = replay_next(r);

	r->now += 1000000;
	memset(buf, 0, len);
	r->model_ops->read(r->model, buf, len, r->now);
	if (!it || it->kind != TRACE_READ || it->addr != addr ||
	    it->len != len) {
		replay_diff(r, "plugin reads %u bytes of 0x%02x, kernel no",
			    len, addr);
		return 0;
	}
	memcpy(buf, it->data, len);
	return 0;
}

static int replay_ctrl(void *ctx, uint32_t cmd, uint32_t arg)
{
	struct replay *r = ctx;
	const struct trace_item *it = replay_next(r);

	r->model_ops->bridge_ctrl(r->model, cmd, arg, r->now);
	if (!it || it->kind != TRACE_CTRL || it->ctrl != cmd || it->arg != arg)
		replay_diff(r, "plugin callback %u (%u), kernel another", cmd,
			    arg);
	return 0;
}

struct run {
	const char *chip;
	int sleep_returns_bytes; /* xc3028-sleep-returns-bytes is listed */
	struct mock_plugin p;
	struct mock_host mh;
	struct replay r;
	void *priv;
	unsigned int requests, same, documented, shown;
};

static uint32_t board_config(const char *chip)
{
	/* The vbridge's board (tests/kernel/vbridge/vbridge_fe.c). */
	if (!strcmp(chip, "mt2060"))
		return 1220u << 16;
	if (!strcmp(chip, "xc3028"))
		return 64u | 4560u << 8;
	return 0;
}

static int make_model(struct replay *r, const char *chip, uint16_t addr,
		      const char *firmware)
{
	struct sim_chip_setup setup = {.i2c_addr = addr,
				       .config = board_config(chip),
				       .firmware_path = firmware,
				       .seed = 1};
	char err[160] = "";

	r->model_ops = sim_chip_find(chip);
	r->model = r->model_ops ? r->model_ops->create(&setup, err, sizeof(err))
				: NULL;
	if (!r->model)
		fprintf(stderr, "no model of %s: %s\n", chip, err);
	CHECK(r->model != NULL);
	return r->model ? 0 : -1;
}

/* xc2028_sleep() returns its write's byte count, the plugin 0. */
static int documented(const struct run *run, const char *what, int got,
		      int want)
{
	return run->sleep_returns_bytes && !strcmp(run->chip, "xc3028") &&
	       !strcmp(what, "sleep") && got == 0 && want == 4;
}

/* The request's end: what the plugin left out, its return value. */
static void judge(struct run *run, const char *what, int got, int want)
{
	struct replay *r = &run->r;

	if (replay_next(r))
		replay_diff(r, "the kernel has more, from segment %u of %u",
			    (unsigned int)r->pos, (unsigned int)r->end);
	if (!r->diffs && got != want && documented(run, what, got, want)) {
		run->requests++;
		run->documented++;
		return;
	}
	if (!r->diffs && got != want)
		replay_diff(r, "returns %d, kernel %d", (unsigned int)got,
			    (unsigned int)want);
	run->requests++;
	if (!r->diffs) {
		run->same++;
		return;
	}
	if (run->shown++ < SHOWN_DIFFS)
		printf("  %s %s: %s\n", run->chip, what, r->why);
}

static void run_attach(struct run *run, uint16_t addr)
{
	struct tunerd_tuner_config cfg = {.size = sizeof(cfg)};
	int ret;

	cfg.i2c_addr = addr;
	cfg.config = board_config(run->chip);
	run->r.pos = 0;
	run->r.end = run->r.t->first_request;
	run->r.diffs = 0;
	ret = run->p.ops->probe(&run->mh.host, &cfg, &run->priv);
	/* The daemon powers a probed tuner up (server/tuners/worker.c). */
	if (!ret && run->p.ops->init)
		ret = run->p.ops->init(run->priv);
	judge(run, "attach", ret, 0);
}

static int run_request(struct run *run, const struct tstub_params *p, int kind)
{
	if (kind == TRACE_REQ_INIT)
		return run->p.ops->init ? run->p.ops->init(run->priv) : 0;
	if (kind == TRACE_REQ_SLEEP)
		return run->p.ops->sleep ? run->p.ops->sleep(run->priv) : 0;
	return run->p.ops->set_params(run->priv, p);
}

static void run_requests(struct run *run)
{
	const struct trace_file *t = run->r.t;
	size_t i = t->first_request;

	while (i < t->n && run->priv) {
		const struct trace_item *req = &t->items[i];
		struct tstub_params p;
		size_t end = i + 1;
		int kind, ret;

		while (end < t->n && t->items[end].kind != TRACE_RETURN)
			end++;
		if (req->kind != TRACE_REQUEST || end == t->n) {
			CHECK(!"a request and its return value");
			return;
		}
		kind = trace_request_params(req->req, &p);
		CHECK(kind >= 0);
		run->r.pos = i + 1;
		run->r.end = end;
		run->r.diffs = 0;
		ret = run_request(run, &p, kind);
		judge(run, req->req, ret, t->items[end].ret);
		i = end + 1;
	}
}

int main(int argc, char **argv)
{
	struct trace_file t;
	struct run run = {0};
	struct mock_chip chip = {&run.r, replay_write, replay_read,
				 replay_ctrl};
	char err[256];
	int pending;

	if (argc < 5) {
		fprintf(stderr, "usage: %s CHIP PLUGIN TRACE README [FW]\n",
			argv[0]);
		return 2;
	}
	run.chip = argv[1];
	if (trace_load(argv[3], &t, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	pending = trace_parity_pending(argv[4], run.chip);
	CHECK(pending >= 0);
	run.sleep_returns_bytes =
	    trace_defect_listed(argv[4], "xc3028-sleep-returns-bytes") == 1;
	CHECK(t.n > 0 && trace_chip_addr(&t) != 0);
	run.r.t = &t;
	if (t.n == 0 ||
	    make_model(&run.r, run.chip, trace_chip_addr(&t),
		       argc > 5 ? argv[5] : NULL) ||
	    mock_plugin_open(argv[2], &run.p)) {
		if (run.r.model)
			run.r.model_ops->destroy(run.r.model);
		trace_free(&t);
		return check_done("test_trace_plugin");
	}
	mock_host_init(&run.mh, &chip);
	run.mh.fw_name = "xc3028-v27.fw";
	run.mh.fw_path = argc > 5 ? argv[5] : NULL;
	run_attach(&run, trace_chip_addr(&t));
	run_requests(&run);
	if (run.priv)
		run.p.ops->release(run.priv);
	printf("%s: %u requests, %u identical to the kernel's, %u documented "
	       "defects, %u different%s\n",
	       run.chip, run.requests, run.same, run.documented,
	       run.requests - run.same - run.documented,
	       pending == 1 ? " (pending in plugins/README.md)" : "");
	CHECK(run.requests >= 200);
	if (pending != 1)
		CHECK_EQ_INT(run.requests - run.same - run.documented, 0);
	CHECK_EQ_INT(run.mh.violations, 0);
	mock_host_free(&run.mh);
	mock_plugin_close(&run.p);
	run.r.model_ops->destroy(run.r.model);
	trace_free(&t);
	return check_done("test_trace_plugin");
}

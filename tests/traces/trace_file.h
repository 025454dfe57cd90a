/* SPDX-License-Identifier: MIT */
/*
 * trace_file.h - the parity traces of tests/traces/ read back for unit
 * tests: the I2C segments, bridge callbacks and request marks one tuner
 * (the in-kernel driver or the plugin) caused during the kernel test's
 * sweep, as tests/traces/README.md describes them.
 */
#ifndef TUNERD_TRACE_FILE_H
#define TUNERD_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "tuner_stub.h"

enum trace_kind {
	TRACE_WRITE = 1, /* an I2C write segment */
	TRACE_READ,      /* an I2C read segment and the bytes it returned */
	TRACE_CTRL,      /* a bridge callback, TSTUB_CTRL_* in ctrl */
	TRACE_REQUEST,   /* a request starts (text in req) */
	TRACE_RETURN,    /* the request's return value (ret) */
};

#define TRACE_DATA_MAX 256
#define TRACE_REQ_MAX  80

struct trace_item {
	int kind;
	uint16_t addr;
	uint16_t len;
	uint8_t data[TRACE_DATA_MAX];
	uint32_t ctrl, arg;
	int ret;
	char req[TRACE_REQ_MAX];
};

struct trace_file {
	struct trace_item *items;
	size_t n;
	size_t first_request; /* items before it: the attach section */
};

/* 0, or -1 with the reason in err.  Marks ("mark ...", "attach") are
 * dropped, so the attach section is everything before the first real
 * request. */
int trace_load(const char *path, struct trace_file *t, char *err,
	       size_t errlen);
void trace_free(struct trace_file *t);

/* The address of the trace's first segment or callback, 0 if none. */
uint16_t trace_chip_addr(const struct trace_file *t);

/* A request as tuner params: 0, 1 for init, 2 for sleep, -1 unknown. */
enum { TRACE_REQ_TUNE = 0, TRACE_REQ_INIT = 1, TRACE_REQ_SLEEP = 2 };
int trace_request_params(const char *req, struct tstub_params *p);

/* The chip's row of the parity table in plugins/README.md says
 * "pending": its differences are reported, not failed.  1, 0, or -1 when
 * the file cannot be read. */
int trace_parity_pending(const char *readme, const char *chip);

/* The defects table of plugins/README.md lists this id (`id` in its
 * first column): 1, 0, or -1 when the file cannot be read. */
int trace_defect_listed(const char *readme, const char *id);

#endif /* TUNERD_TRACE_FILE_H */

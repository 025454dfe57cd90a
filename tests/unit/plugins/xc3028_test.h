/* SPDX-License-Identifier: MIT */
/*
 * xc3028_test.h - what the two halves of the XC3028 plugin test share:
 * the mock chip, the rig around the plugin, and the expected traffic of
 * one tune.
 */
#ifndef TUNERD_TEST_XC3028_TEST_H
#define TUNERD_TEST_XC3028_TEST_H

#include <stdint.h>

#include "check.h"
#include "mock_host.h"
#include "xc3028_testfw.h"

#define CHIP_ADDR 0x61
#define FW_NAME   "xc3028-v27.fw"
#define MHZ       1000000u
#define D78       2750000u /* divider offsets, Hz */
#define D6        1750000u

struct chip {
	uint16_t ptr;
	uint16_t product_id, version, lock, ferr, snr;
	const uint16_t *locks; /* if set, LOCK reads cycle through these */
	unsigned int nlocks, lock_reads;
	int ctrl_ret[4]; /* bridge callback results by TSTUB_CTRL_* */
};

struct rig {
	struct chip chip;
	struct mock_host mh;
	struct tunerd_tuner_config cfg;
	unsigned int max_len; /* the chunk size expected, 0: 64 */
	void *priv;
};

/* One tune: what goes in, which images must go out (-1: none), the
 * divider's offset and the bandwidth reported after. */
struct step {
	uint32_t delsys, freq, bw;
	uint64_t std;
	int base, std_img, scode;
	uint32_t offset;
	uint32_t status_bw;
};

extern const struct mock_plugin *plugin;
extern struct testfw fw;
extern char fw_path[64];

void rig_init(struct rig *r, uint32_t config, const char *path);
/* rig_init and a probe that must succeed without I2C. */
void rig_probe(struct rig *r, uint32_t config, const char *path);
void rig_done(struct rig *r);
/* The events since the last clear are exactly want (then both cleared). */
void check_events(struct rig *r, struct mock_events *want, const char *what);
uint32_t divider(uint32_t freq, uint32_t offset);
/* A tune with the default 0x1227 chip and a 2.7 file. */
void run_step(struct rig *r, const struct step *s, const char *what);
/* One register read: address write, 2-byte read. */
void expect_reg_read(struct mock_events *want, uint16_t reg, uint16_t val);

/* xc3028_testcases.c */
void test_board_words(void);
void test_firmware_versions(void);
void test_init1(void);
void test_old_scode(void);
void test_failures(void);
void test_probe_failures(void);
void test_malformed(void);

#endif /* TUNERD_TEST_XC3028_TEST_H */

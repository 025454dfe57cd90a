/* SPDX-License-Identifier: MIT */
/*
 * qt1010_priv.h - QT1010 registers and the plugin's private state.
 *
 * reg        name       meaning
 * 0x00       SETUP      fixed 0x92 during a tune
 * 0x01       TUNE_CTRL  0x80 starts a tune sequence, 0x00 ends it
 * 0x05       BAND       RF band: <290 MHz 0x14, <610 0x34, <802 0x54, 0x74
 * 0x07       LO_32M     LO / 32 MHz
 * 0x09       LO_32M_HI  0x1D if LO mod 32 MHz < 8 MHz, else 0x1C
 * 0x0A       LO_4M      0x08 | ((1 - n) & 7), n = (LO mod 32 MHz) / 4 MHz
 * 0x0B       LO_4M_HI   0x45 if LO mod 4 MHz < 2 MHz, else 0x44
 * 0x11       FIXED_11   0xFD during a tune
 * 0x12       FIXED_12   0x91 during a tune
 * 0x1A       LO_125K    0x78 - 8 * ((LO mod 4 MHz) / 125 kHz), mod 256
 * 0x1E       OPER       operation register: 00 idle; 81/82/84/D0 measure
 *                       0x25/0x26/0x1F/0x22 at init; D0/E0/F0 run the
 *                       0x22/0x23/0x24 loops of a tune
 * 0x1F       CAL_1F     0x0E + a step by LO range during a tune
 * 0x20       CAL_20     its init read-back + 0x0D + a step by LO range
 * 0x22-0x24  LOOP       loop start values, read back after an operation
 * 0x25       CAL_25     0 during a tune (see qt1010.c)
 * 0x29       ID         0x39
 *
 * LO = RF + 1246 MHz on a 125 kHz grid; the IF output is 36.125 MHz.
 */
#ifndef TUNERD_QT1010_PRIV_H
#define TUNERD_QT1010_PRIV_H

#include <stdint.h>

#include "tunerd_plugin.h"

#define QT1010_REG_SETUP     0x00
#define QT1010_REG_TUNE_CTRL 0x01
#define QT1010_REG_BAND      0x05
#define QT1010_REG_LO_32M    0x07
#define QT1010_REG_LO_32M_HI 0x09
#define QT1010_REG_LO_4M     0x0A
#define QT1010_REG_LO_4M_HI  0x0B
#define QT1010_REG_FIXED_11  0x11
#define QT1010_REG_FIXED_12  0x12
#define QT1010_REG_LO_125K   0x1A
#define QT1010_REG_OPER      0x1E
#define QT1010_REG_CAL_1F    0x1F
#define QT1010_REG_CAL_20    0x20
#define QT1010_REG_LOOP      0x22
#define QT1010_REG_CAL_25    0x25
#define QT1010_REG_ID        0x29

#define QT1010_ID           0x39
#define QT1010_TUNE_START   0x80
#define QT1010_TUNE_STOP    0x00
#define QT1010_SETUP_VAL    0x92
#define QT1010_FIXED_11_VAL 0xFD
#define QT1010_FIXED_12_VAL 0x91
#define QT1010_OPER_IDLE    0x00
#define QT1010_OPER_D0      0xD0
#define QT1010_OPER_E0      0xE0
#define QT1010_OPER_F0      0xF0
#define QT1010_LOOP_LEN     3

/* Hz */
#define QT1010_LO_OFFSET 1246000000u
#define QT1010_STEP      125000u
#define QT1010_FREQ_MIN  48000000u
#define QT1010_FREQ_MAX  860000000u
#define QT1010_IF        36125000u
#define QT1010_INIT_FREQ 545000000u

/* A measurement re-reads its register until two reads agree, at most
 * this many times after the first read. */
#define QT1010_MEAS_READS 10

struct qt1010_priv {
	const struct tunerd_host *host;
	uint16_t addr;
	uint8_t cal_20;             /* register 0x20 as read back at init */
	int asked;                  /* set_params was called */
	struct tstub_params params; /* the last params asked */
	int tuned;
	uint32_t frequency; /* Hz, as programmed */
	uint32_t bandwidth; /* Hz */
};

#endif /* TUNERD_QT1010_PRIV_H */

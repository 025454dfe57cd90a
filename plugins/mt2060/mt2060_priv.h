/* SPDX-License-Identifier: MIT */
/*
 * mt2060_priv.h - MT2060 registers and the plugin's private state.
 *
 * reg   name       bits
 * 0x00  PART_REV   part and revision, 0x63
 * 0x01  LO1C1      7:4 LNABAND, 3:0 NUM1 bits 5:2
 * 0x02  LO1C2      DIV1
 * 0x03  LO2C1      7 FM1CA, 6 FM1SS, 5:4 NUM1 bits 1:0, 3:0 NUM2 bits 3:0
 * 0x04  LO2C2      NUM2 bits 11:4
 * 0x05  LO2C3      7:1 DIV2, 0 NUM2 bit 12
 * 0x06  LO_STATUS  7 L1LK (LO1 locked), 3 L2LK (LO2 locked)
 * 0x07  FM_FREQ    FM filter calibration result
 * 0x08  MISC_STAT  6 FM calibration done
 * 0x09  MISC_CTRL  power and mode control
 * 0x0B  VGAG       7:6 clock_out, 5:0 VGA gain
 * 0x0C  LO1B1      LO1 band
 * 0x0D  LO1B2
 * 0x11  LOTO       LO tuning options
 *
 * LO1 = 16 MHz * (DIV1 + NUM1 / 64), LO2 = 16 MHz * (DIV2 + NUM2 / 8192),
 * RF = LO1 - LO2 - IF2 with IF2 = 36.15 MHz.
 */
#ifndef TUNERD_MT2060_PRIV_H
#define TUNERD_MT2060_PRIV_H

#include <stdint.h>

#include "tunerd_plugin.h"

#define MT2060_REG_PART_REV  0x00
#define MT2060_REG_LO1C1     0x01
#define MT2060_REG_LO1C2     0x02
#define MT2060_REG_LO2C1     0x03
#define MT2060_REG_LO2C2     0x04
#define MT2060_REG_LO2C3     0x05
#define MT2060_REG_LO_STATUS 0x06
#define MT2060_REG_FM_FREQ   0x07
#define MT2060_REG_MISC_STAT 0x08
#define MT2060_REG_MISC_CTRL 0x09
#define MT2060_REG_VGAG      0x0B
#define MT2060_REG_LO1B1     0x0C
#define MT2060_REG_LO1B2     0x0D
#define MT2060_REG_LOTO      0x11

#define MT2060_PART_REV 0x63

#define MT2060_FM1CA       0x80
#define MT2060_FM1SS       0x40
#define MT2060_L1LK        0x80
#define MT2060_L2LK        0x08
#define MT2060_LOCKED      (MT2060_L1LK | MT2060_L2LK)
#define MT2060_FM_CAL_DONE 0x40

#define MT2060_VGAG_CAL      0x30
#define MT2060_VGAG_ON       0x33
#define MT2060_VGAG_OFF      0x30
#define MT2060_MISC_CTRL_ON  0x20
#define MT2060_MISC_CTRL_OFF 0xE8
#define MT2060_LO1B1_TUNE    0xFF

/* Frequencies in kHz unless named _HZ. */
#define MT2060_REF_KHZ      16000
#define MT2060_IF2_KHZ      36150
#define MT2060_LO1_STEP_KHZ 250
#define MT2060_LO2_STEP_KHZ 50
#define MT2060_FREQ_MIN_HZ  48000000u
#define MT2060_FREQ_MAX_HZ  860000000u
#define MT2060_STEP_HZ      50000u
#define MT2060_IF_HZ        36150000u

/* Lock poll: up to 10 reads 4 ms apart.  Calibration: nine FM1SS rounds
 * 20 ms apart, then up to 10 polls of the done bit. */
#define MT2060_LOCK_TRIES   10
#define MT2060_LOCK_WAIT_MS 4
#define MT2060_CAL_ROUNDS   9
#define MT2060_CAL_WAIT_MS  20
#define MT2060_CAL_POLLS    10

/* Largest register burst the plugin writes (calibration, regs 9..0x11). */
#define MT2060_BURST_MAX 16

struct mt2060_priv {
	const struct tunerd_host *host;
	uint16_t addr;
	uint8_t clock_out;
	uint8_t max_write; /* registers per write, 0 = no cap */
	uint32_t if1_khz;
	uint8_t fm_freq; /* FM filter calibration result */
	int tuned;
	uint32_t frequency; /* Hz, as programmed */
	uint32_t bandwidth; /* Hz */
};

#endif /* TUNERD_MT2060_PRIV_H */

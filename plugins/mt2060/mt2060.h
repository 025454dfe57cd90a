/* SPDX-License-Identifier: MIT */
/*
 * mt2060.h - Microtune MT2060 plugin: the board configuration word
 * (struct tunerd_tuner_config.config, from TSTUB_ATTACH).
 *
 *   bits  1:0   clock_out: the chip's reference output divider, written to
 *               VGAG bits 7:6 (0 = off).
 *   bits 15:8   largest number of registers one I2C write may carry, for
 *               bridges that cap a write's length (0 = no cap).
 *   bits 31:16  IF1 in MHz (0 = 1220).  Boards correct the first IF by a
 *               few MHz to keep their spurs out of the band.
 *
 * The I2C address is the config's i2c_addr, 0x60 when it is 0.
 */
#ifndef TUNERD_MT2060_H
#define TUNERD_MT2060_H

#define MT2060_CFG_CLOCK_OUT(cfg) ((cfg)&0x3u)
#define MT2060_CFG_MAX_WRITE(cfg) (((cfg) >> 8) & 0xFFu)
#define MT2060_CFG_IF1_MHZ(cfg)   (((cfg) >> 16) & 0xFFFFu)

#define MT2060_CFG(clock_out, max_write, if1_mhz)                              \
	(((clock_out)&0x3u) | (((max_write)&0xFFu) << 8) |                     \
	 (((if1_mhz)&0xFFFFu) << 16))

#define MT2060_DEFAULT_I2C_ADDR 0x60
#define MT2060_DEFAULT_IF1_MHZ  1220

#endif /* TUNERD_MT2060_H */

/* SPDX-License-Identifier: MIT */
/*
 * xc3028.h - Xceive XC3028 plugin: the board configuration word
 * (struct tunerd_tuner_config.config, from TSTUB_ATTACH).
 *
 *   bits  7:0   longest I2C write the bridge takes, in bytes, register
 *               byte included (0 = 64; otherwise 13..255).  Firmware
 *               records are cut into chunks of at most this length.
 *   bits 23:8   IF of the board's demodulator in kHz (0 = 4560).  The
 *               SCODE image for this IF is loaded after the standard
 *               image; a file without one for it loads none.
 *
 * The I2C address is the config's i2c_addr, 0x61 when it is 0.  The
 * firmware file is "xc3028-v27.fw" in the daemon's firmware directory.
 *
 * The plugin's chip info gives 4560000 Hz as if_frequency, the default
 * demodulator IF; TSTUB_GET_FREQUENCY reports the IF the board's word
 * sets.
 */
#ifndef TUNERD_XC3028_H
#define TUNERD_XC3028_H

#define XC3028_CFG_MAX_LEN(cfg)      ((cfg)&0xFFu)
#define XC3028_CFG_DEMOD_IF_KHZ(cfg) (((cfg) >> 8) & 0xFFFFu)

#define XC3028_CFG(max_len, demod_if_khz)                                      \
	(((max_len)&0xFFu) | (((demod_if_khz)&0xFFFFu) << 8))

#define XC3028_DEFAULT_I2C_ADDR     0x61
#define XC3028_DEFAULT_MAX_LEN      64
#define XC3028_MIN_MAX_LEN          13
#define XC3028_DEFAULT_DEMOD_IF_KHZ 4560
#define XC3028_FIRMWARE_FILE        "xc3028-v27.fw"

#endif /* TUNERD_XC3028_H */

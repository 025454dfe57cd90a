/* SPDX-License-Identifier: MIT */
/*
 * xc3028.h - Xceive XC3028 plugin: the board configuration word
 * (struct tunerd_tuner_config.config, from TSTUB_ATTACH).  Its fields are
 * those of Linux's struct xc2028_ctrl that change the bus traffic.
 *
 *   bits  7:0   longest I2C write the bridge takes, register byte
 *               included (ctrl.max_len): 0 = 64; 1-8 = 13 and above 80
 *               = 80, as the kernel driver clamps it.  Firmware records
 *               are cut into chunks of at most this length.
 *   bits 23:8   IF of the board's demodulator in kHz (ctrl.demod, e.g.
 *               4560 = XC3028_FE_ZARLINK456): 0 = 4560; 0xFFFF = none
 *               (XC3028_FE_DEFAULT): the SCODE is then picked by type
 *               and standard instead of by IF.
 *   bits 25:24  DVB-T image variant (ctrl.type): 0 = auto (D2633 for a
 *               4560 kHz demodulator, D2620 otherwise), 1 = D2633,
 *               2 = D2620.
 *
 * The I2C address is the config's i2c_addr, 0x61 when it is 0.  The
 * firmware file is "xc3028-v27.fw" in the daemon's firmware directory.
 *
 * The plugin's chip info gives 4560000 Hz as if_frequency, the default
 * demodulator IF; TSTUB_GET_FREQUENCY reports the IF the board's word
 * sets (0 for none).
 */
#ifndef TUNERD_XC3028_H
#define TUNERD_XC3028_H

#define XC3028_CFG_MAX_LEN(cfg)      ((cfg)&0xFFu)
#define XC3028_CFG_DEMOD_IF_KHZ(cfg) (((cfg) >> 8) & 0xFFFFu)
#define XC3028_CFG_VARIANT(cfg)      (((cfg) >> 24) & 0x3u)

#define XC3028_CFG(max_len, demod_if_khz, variant)                             \
	(((max_len)&0xFFu) | (((demod_if_khz)&0xFFFFu) << 8) |                 \
	 (((variant)&0x3u) << 24))

#define XC3028_VARIANT_AUTO  0
#define XC3028_VARIANT_D2633 1
#define XC3028_VARIANT_D2620 2

#define XC3028_DEFAULT_I2C_ADDR     0x61
#define XC3028_DEFAULT_MAX_LEN      64
#define XC3028_KERNEL_MIN_MAX_LEN   9 /* below: the kernel's 13 */
#define XC3028_KERNEL_SHORT_MAX_LEN 13
#define XC3028_KERNEL_MAX_XFER      80 /* the kernel's MAX_XFER_SIZE */
#define XC3028_DEFAULT_DEMOD_IF_KHZ 4560
#define XC3028_DEMOD_IF_NONE        0xFFFFu
#define XC3028_FE_ZARLINK456        4560
#define XC3028_FIRMWARE_FILE        "xc3028-v27.fw"

#endif /* TUNERD_XC3028_H */

/* SPDX-License-Identifier: MIT */
/*
 * xc3028_regs.h - the command and register interface of the XC3028's
 * running firmware, as the plugin drives it and the simulated chip
 * answers it.
 *
 * Commands are 4-byte writes {flag | reg_hi, reg_lo, val_hi, val_lo},
 * flag 0x80 from firmware 2.2 on; a read is a 2-byte big-endian register
 * address, then 2 bytes big-endian.
 *
 * write reg  name        meaning
 * 0x0000     INIT        soft reset ({00 00} before an analog tune)
 * 0x0002     RF_FREQ     the next 4-byte write is the divider
 * 0x0008     POWER_DOWN  sleep
 *
 * read reg   name         meaning
 * 0x0001     FREQ_ERROR   signed, units of 15625 Hz (AFC)
 * 0x0002     LOCK         0 not yet, 1 locked, 2 no lock
 * 0x0004     VERSION      nibbles: hw major, hw minor, fw major, fw minor
 * 0x0008     PRODUCT_ID   3028 (decimal)
 * 0x0010     HSYNC        analog: line frequency, Hz
 * 0x0020     FRAME_LINES  analog: lines per frame
 * 0x0040     SNR          quality, 3 bits
 * 0x0100     ADC_ENV      ADC envelope
 */
#ifndef TUNERD_XC3028_REGS_H
#define TUNERD_XC3028_REGS_H

#define XC3028_CMD_FLAG       0x80
#define XC3028_CMD_INIT       0x0000
#define XC3028_CMD_RF_FREQ    0x0002
#define XC3028_CMD_POWER_DOWN 0x0008

#define XC3028_REG_FREQ_ERROR  0x0001
#define XC3028_REG_LOCK        0x0002
#define XC3028_REG_VERSION     0x0004
#define XC3028_REG_PRODUCT_ID  0x0008
#define XC3028_REG_HSYNC       0x0010
#define XC3028_REG_FRAME_LINES 0x0020
#define XC3028_REG_SNR         0x0040
#define XC3028_REG_ADC_ENV     0x0100

#define XC3028_PRODUCT_ID 3028

#endif /* TUNERD_XC3028_REGS_H */

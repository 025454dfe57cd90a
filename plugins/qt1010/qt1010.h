/* SPDX-License-Identifier: MIT */
/*
 * qt1010.h - Quantek QT1010 plugin: the board configuration word
 * (struct tunerd_tuner_config.config, from TSTUB_ATTACH).
 *
 * The QT1010 needs no board configuration: the word is ignored and should
 * be 0.  The I2C address is the config's i2c_addr, 0x62 when it is 0.
 */
#ifndef TUNERD_QT1010_H
#define TUNERD_QT1010_H

#define QT1010_DEFAULT_I2C_ADDR 0x62

#endif /* TUNERD_QT1010_H */

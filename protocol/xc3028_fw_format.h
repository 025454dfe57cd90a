/* SPDX-License-Identifier: MIT */
/*
 * xc3028_fw_format.h - the XC3028 firmware file format (the xc3028-v27.fw
 * layout of Linux's tuner-xc2028): the facts its writer
 * (tunerd-mkfw-xc3028), its reader in the plugin and its reader in the
 * simulated chip must agree on, so they are stated once.
 *
 * File: 32-byte NUL-padded name, le16 version, le16 image count; each
 * image: le32 type, le64 v4l2_std_id, le16 IF (only with HAS_IF), le32
 * size, data.  Image data is a stream of le16-length records: 0xFFFF
 * end, 0x0000 tuner reset, 0xFF00 clock reset (0xFF01-0xFFFE invalid),
 * bit 15 set: sleep (len & 0x7FFF) ms, otherwise len bytes whose first
 * byte is a register byte sent at the head of every I2C chunk.  SCODE
 * images are raw tables of 12-byte entries.
 */
#ifndef TUNERD_XC3028_FW_FORMAT_H
#define TUNERD_XC3028_FW_FORMAT_H

#define XC3028_FW_NAME_LEN         32
#define XC3028_FW_HEADER_LEN       (XC3028_FW_NAME_LEN + 4)
#define XC3028_FW_IMAGE_HEADER_LEN 16 /* without the IF */

/* Image type bits. */
#define XC3028_FW_BASE          (1u << 0)
#define XC3028_FW_F8MHZ         (1u << 1)
#define XC3028_FW_MTS           (1u << 2)
#define XC3028_FW_D2620         (1u << 3)
#define XC3028_FW_D2633         (1u << 4)
#define XC3028_FW_DTV6          (1u << 5)
#define XC3028_FW_QAM           (1u << 6)
#define XC3028_FW_DTV7          (1u << 7)
#define XC3028_FW_DTV78         (1u << 8)
#define XC3028_FW_DTV8          (1u << 9)
#define XC3028_FW_FM            (1u << 10)
#define XC3028_FW_INPUT1        (1u << 11)
#define XC3028_FW_LCD           (1u << 12)
#define XC3028_FW_NOGD          (1u << 13)
#define XC3028_FW_INIT1         (1u << 14)
#define XC3028_FW_MONO          (1u << 15)
#define XC3028_FW_ATSC          (1u << 16)
#define XC3028_FW_DEMOD_IF_MASK (0x3FFu << 17)
#define XC3028_FW_F6MHZ         (1u << 27)
#define XC3028_FW_INPUT2        (1u << 28)
#define XC3028_FW_SCODE         (1u << 29)
#define XC3028_FW_HAS_IF        (1u << 30)

/* Record lengths with a meaning of their own. */
#define XC3028_REC_END       0xFFFF
#define XC3028_REC_RESET     0x0000
#define XC3028_REC_CLK_RESET 0xFF00 /* 0xFF01-0xFFFE are invalid */
#define XC3028_REC_SLEEP     0x8000

/* SCODE tables: 16 entries of 12 bytes; without HAS_IF each entry has a
 * le16 12 before it. */
#define XC3028_SCODE_ENTRY_LEN 12
#define XC3028_SCODE_ENTRIES   16

#endif /* TUNERD_XC3028_FW_FORMAT_H */

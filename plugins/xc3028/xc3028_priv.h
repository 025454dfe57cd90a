/* SPDX-License-Identifier: MIT */
/*
 * xc3028_priv.h - what the XC3028 plugin adds to the chip's interface: the
 * firmware image groups it searches by, its timings, and its private state.
 *
 * The chip runs firmware uploaded by the host; its commands and registers
 * are in protocol/xc3028_regs.h, the firmware file format in
 * protocol/xc3028_fw_format.h.
 *
 * Divider = (RF - offset + 7812) / 15625 (Hz), offset 0 for analog TV and
 * radio, 1.75 MHz with a DTV6 standard image, 2.75 MHz with the others.
 *
 * The behaviour follows Linux's tuner-xc2028 (drivers/media/tuners/
 * xc2028.c); plugins/README.md lists its rules and the bus traffic.
 */
#ifndef TUNERD_XC3028_PRIV_H
#define TUNERD_XC3028_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "tunerd_plugin.h"
#include "xc3028_fw_format.h"
#include "xc3028_regs.h"

#define XC3028_CMD_FLAG_MIN_FW 0x0202

#define XC2028_PRODUCT_ID   2028 /* same firmware interface */
#define XC3028_LOCK_WAITING 0
#define XC3028_LOCK_LOCKED  1
#define XC3028_LOCK_NONE    2
#define XC3028_SNR_MAX      7

/* Hz */
#define XC3028_STEP         15625u
#define XC3028_FREQ_MIN     42000000u
#define XC3028_FREQ_MAX     864000000u
#define XC3028_OFFSET_DTV6  1750000u
#define XC3028_OFFSET_DTV78 2750000u
#define XC3028_UHF_MIN      470000000u
#define XC3028_RADIO_BW     200000u

/* ms */
#define XC3028_FREQ_CMD_WAIT 10
#define XC3028_TUNE_WAIT     100
#define XC3028_LOCK_WAIT     6
#define XC3028_LOCK_TRIES    3

/* Firmware before 3.2 wants the SCODE for the demod's IF + 200 kHz. */
#define XC3028_SCODE_SHIFT_KHZ   200
#define XC3028_SCODE_SHIFT_BELOW 0x0302

/* The firmware file layout and image type bits: xc3028_fw_format.h. */

/* The groups an image search compares within (seek_firmware()): a BASE
 * search the BASE bits, a standard search the DTV or the
 * standard-specific bits, an SCODE search SCODE and MTS. */
#define XC3028_FW_BASE_TYPES                                                   \
	(XC3028_FW_BASE | XC3028_FW_F8MHZ | XC3028_FW_MTS | XC3028_FW_FM |     \
	 XC3028_FW_INPUT1 | XC3028_FW_INPUT2 | XC3028_FW_INIT1)
#define XC3028_FW_DTV_TYPES                                                    \
	(XC3028_FW_D2620 | XC3028_FW_D2633 | XC3028_FW_DTV6 | XC3028_FW_QAM |  \
	 XC3028_FW_DTV7 | XC3028_FW_DTV78 | XC3028_FW_DTV8 | XC3028_FW_ATSC)
#define XC3028_FW_STD_TYPES                                                    \
	(XC3028_FW_MTS | XC3028_FW_FM | XC3028_FW_LCD | XC3028_FW_NOGD)
#define XC3028_FW_SCODE_TYPES (XC3028_FW_SCODE | XC3028_FW_MTS)

/* SCODE table framing the plugin sends around an entry. */
#define XC3028_SCODE_HEADER  0x20 /* | command flag */
#define XC3028_SCODE_TRAILER 0x8C

/* v4l2_std_id */
#define XC3028_STD_PAL 0x000000FFull
#define XC3028_STD_MN  0x0000B700ull /* PAL-M/N/Nc, NTSC: 6 MHz channels */
#define XC3028_STD_BG  0x00050007ull /* PAL/SECAM B and G */

struct xc3028_image {
	uint32_t type;
	uint64_t std;
	uint16_t if_khz; /* with XC3028_FW_HAS_IF */
	const uint8_t *data;
	uint32_t size;
};

struct xc3028_fw {
	char name[XC3028_FW_NAME_LEN + 1];
	uint16_t version;
	unsigned int count;
	struct xc3028_image *images;
};

/* What a tune asks of the firmware (the driver's type, std and
 * int_freq) and of the divider. */
enum xc3028_kind { XC3028_DIGITAL, XC3028_ANALOG, XC3028_RADIO };

struct xc3028_req {
	enum xc3028_kind kind;
	uint32_t type;
	uint64_t std;    /* analog: the standard asked for */
	uint16_t if_khz; /* SCODE by this IF; 0: by type and standard */
	uint32_t freq;   /* Hz */
	uint32_t bw;     /* Hz, the channel bandwidth asked for */
};

/* The firmware the chip runs (the driver's cur_fw).  type has BASE set
 * once a whole set went in and the chip answered; 0: nothing known. */
struct xc3028_cur {
	uint32_t type;
	uint64_t std_req;
	int scode_done; /* 0 after a standard image: the SCODE follows */
};

struct xc3028_priv {
	const struct tunerd_host *host;
	uint16_t addr;
	unsigned int max_len;
	unsigned int demod_if_khz; /* 0: none (XC3028_FE_DEFAULT) */
	unsigned int fw_variant;   /* XC3028_VARIANT_* of the board word */
	const uint8_t *fw_data;
	size_t fw_size;
	struct xc3028_fw fw;
	uint8_t cmd_flag;
	int asleep; /* POWER_DOWN went out: the next tune reloads BASE */
	struct xc3028_cur cur;
	uint16_t hwmodel, hwvers; /* 0 until the first good readback */
	int vhf7;                 /* a 7 MHz channel in VHF came last */
	int uhf8;                 /* an 8 MHz channel in UHF came last */
	int tuned;
	enum xc3028_kind kind; /* of the last tune */
	uint32_t bandwidth;    /* Hz, of the last tune */
	uint32_t frequency;    /* Hz, as programmed */
};

#define xc3028_log(priv, level, ...)                                           \
	(priv)->host->log((priv)->host->ctx, (level), __VA_ARGS__)
#define xc3028_dbg(priv, ...) xc3028_log(priv, TUNERD_LOG_DEBUG, __VA_ARGS__)

/* xc3028.c */
int xc3028_write(struct xc3028_priv *priv, const uint8_t *buf, uint16_t len);

/* xc3028_fw.c */
int xc3028_fw_parse(struct xc3028_priv *priv, const uint8_t *data, size_t size);
void xc3028_fw_free(struct xc3028_fw *fw);
int xc3028_fw_seek(const struct xc3028_fw *fw, uint32_t type, uint64_t *id);
int xc3028_fw_load(struct xc3028_priv *priv, uint32_t type, uint64_t *id);
int xc3028_fw_load_scode(struct xc3028_priv *priv, uint32_t type, uint64_t *id,
			 uint16_t if_khz);

#endif /* TUNERD_XC3028_PRIV_H */

/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * tuner_stub.h - the ABI between the tuner stub (/dev/tuner, or the
 * simulated box) and the tunerd daemon.
 *
 * Usable from the kernel module and from userspace alike: fixed-width
 * types, every struct padded to a multiple of 8 bytes, no pointers.
 *
 * Transport: a message channel.  Every read() returns exactly one
 * message, every write() carries exactly one message (a character device
 * or an AF_UNIX SOCK_SEQPACKET socket).  A freshly opened channel is
 * unbound.  The first channel of a daemon receives TSTUB_INIT and becomes
 * the control channel; further channels send TSTUB_BIND to become the
 * channel of one tuner client.
 *
 * Requests go both ways.  Each carries a unique id (non-zero, unique per
 * sender and channel) which its reply repeats; a reply has TSTUB_F_REPLY
 * set and a result in hdr.error (0 or a negative errno).  Notifications
 * carry unique 0 and are never answered.
 *
 * See protocol/ABI.md for every message.
 *
 * Kernel style (it is a uapi header): clang-format leaves it alone.
 */
/* clang-format off */
#ifndef _UAPI_LINUX_TUNER_STUB_H
#define _UAPI_LINUX_TUNER_STUB_H

#include <linux/types.h>

#define TSTUB_MAJOR 1
#define TSTUB_MINOR 2

/* Largest message either side sends or accepts, header included. */
#define TSTUB_MSG_MAX 2048

/* Chip identifiers (stable; the seed numbering). */
#define TSTUB_CHIP_XC3028 1
#define TSTUB_CHIP_QT1010 2
#define TSTUB_CHIP_MT2060 3
/* Reserved for test plugins. */
#define TSTUB_CHIP_TEST_FIRST 0xF000

/* Kind of stub, in TSTUB_INIT. */
#define TSTUB_KIND_KERNEL 1
#define TSTUB_KIND_SIM 2

/* Opcodes start away from 0 so that zeroed memory is never valid. */
enum tstub_opcode {
	/* stub -> daemon, control channel */
	TSTUB_INIT = 0x12,
	TSTUB_LOAD_PLUGIN = 0x13,
	TSTUB_ATTACH = 0x14,
	TSTUB_DETACH = 0x15,

	/* stub -> daemon, tuner channel */
	TSTUB_TUNER_INIT = 0x20,
	TSTUB_TUNER_SLEEP = 0x21,
	TSTUB_SET_PARAMS = 0x22,
	TSTUB_GET_STATUS = 0x23,
	TSTUB_GET_FREQUENCY = 0x24,
	/* 0x25: TSTUB_I2C_GATE until 1.1, retired in 1.2, never reused */
	TSTUB_INTERRUPT = 0x26,	/* notification */

	/* daemon -> stub, tuner channel */
	TSTUB_BIND = 0x40,
	TSTUB_I2C_XFER = 0x41,
	TSTUB_BRIDGE_CTRL = 0x42,
	TSTUB_PARAMS_CHANGED = 0x43,	/* notification */
	TSTUB_DEMOD_STATUS = 0x44,
	TSTUB_CMD_BEGIN = 0x45,	/* 1.2, TSTUB_CAP_CMD_BRACKET */
	TSTUB_CMD_END = 0x46,
};

/* hdr.flags */
#define TSTUB_F_REPLY 0x0001

struct tstub_hdr {
	__u32 len;	/* whole message, header included */
	__u16 opcode;	/* enum tstub_opcode */
	__u16 flags;	/* TSTUB_F_* */
	__u64 unique;	/* request id; 0 for notifications */
	__s32 error;	/* replies: 0 or a negative errno; requests: 0 */
	__u32 client;	/* tuner client id; 0 on the control channel */
};

/* TSTUB_INIT: request from the stub, reply from the daemon (same body). */
#define TSTUB_CAP_RESEND 0x0001		/* stub re-sends attached clients */
#define TSTUB_CAP_INTERRUPT 0x0002	/* stub sends TSTUB_INTERRUPT */
#define TSTUB_CAP_DEMOD_STATUS 0x0004	/* stub answers TSTUB_DEMOD_STATUS */
#define TSTUB_CAP_DVB_ADAPTER 0x0008	/* 1.1: tstub_attach.dvb_adapter valid */
#define TSTUB_CAP_CMD_BRACKET 0x0010	/* 1.2: stub takes CMD_BEGIN/CMD_END */
#define TSTUB_CAP_EXT (1ULL << 63)	/* reserved: flags continue elsewhere */

struct tstub_init {
	__u32 major;
	__u32 minor;
	__u64 flags;		/* TSTUB_CAP_*: offered, then accepted */
	__u32 max_msg;		/* largest message the sender accepts */
	__u32 kind;		/* TSTUB_KIND_* (stub), 0 (daemon) */
	__u32 settle_permille;	/* chip waits vs real time: 1000 = hardware */
	__u32 max_clients;	/* stub: highest client id it will use */
	__u64 reserved[4];
};

/* TSTUB_LOAD_PLUGIN request; the reply carries struct tstub_chip_info. */
struct tstub_load {
	__u32 chip_id;		/* TSTUB_CHIP_* */
	__u32 vendor_id;	/* bridge vendor (USB/PCI id), informative */
	__u32 product_id;
	__u32 config;		/* board-specific configuration word */
	__u64 reserved[2];
};

/* Delivery systems (bit numbers in delsys_mask). */
enum tstub_delsys {
	TSTUB_DELSYS_NONE = 0,
	TSTUB_DELSYS_DVBT = 1,
	TSTUB_DELSYS_DVBT2 = 2,
	TSTUB_DELSYS_DVBC_A = 3,
	TSTUB_DELSYS_DVBS = 4,
	TSTUB_DELSYS_DVBS2 = 5,
	TSTUB_DELSYS_ATSC = 6,
	TSTUB_DELSYS_ANALOG_TV = 7,
	TSTUB_DELSYS_RADIO = 8,
	TSTUB_DELSYS_COUNT = 9,
};

/* Bandwidths (bits in bandwidth_mask). */
#define TSTUB_BW_1_712MHZ 0x01
#define TSTUB_BW_5MHZ 0x02
#define TSTUB_BW_6MHZ 0x04
#define TSTUB_BW_7MHZ 0x08
#define TSTUB_BW_8MHZ 0x10
#define TSTUB_BW_10MHZ 0x20

/* What the chip can report (chip_info.caps). */
#define TSTUB_CHIPCAP_PLL_LOCK 0x01	/* reads a synthesizer lock bit */
#define TSTUB_CHIPCAP_AFC 0x02		/* reads a frequency error */
#define TSTUB_CHIPCAP_SNR 0x04		/* reads a quality figure */
#define TSTUB_CHIPCAP_FIRMWARE 0x08	/* needs a firmware file */

#define TSTUB_NAME_LEN 32

struct tstub_chip_info {
	char name[TSTUB_NAME_LEN];	/* NUL-terminated, e.g. "MT2060" */
	char vendor[TSTUB_NAME_LEN];	/* e.g. "Microtune" */
	char plugin[TSTUB_NAME_LEN];	/* plugin file stem, e.g. "mt2060" */
	__u32 chip_id;
	__u32 plugin_version;		/* plugin's own version, informative */
	__u32 delsys_mask;		/* 1 << enum tstub_delsys */
	__u32 bandwidth_mask;		/* TSTUB_BW_* */
	__u32 freq_min;			/* Hz */
	__u32 freq_max;			/* Hz */
	__u32 freq_step;		/* Hz */
	__u32 caps;			/* TSTUB_CHIPCAP_* */
	__u32 if_frequency;		/* Hz, output IF (0 = zero-IF) */
	__u32 reserved32;
	__u64 reserved[2];
};

/* TSTUB_ATTACH request; the reply carries struct tstub_chip_info. */
struct tstub_attach {
	__u32 client;		/* client id, 1..max_clients */
	__u32 chip_id;
	__u32 vendor_id;
	__u32 product_id;
	__u32 config;
	__u32 adapter;		/* the bridge's I2C adapter number */
	__u16 i2c_addr;		/* 7-bit address of the chip */
	__u16 padding;
	__u32 padding2;
	char bridge[TSTUB_NAME_LEN];	/* bridge name, informative */
	/*
	 * 1.1, with TSTUB_CAP_DVB_ADAPTER: the number N of the bridge's DVB
	 * adapter (/dev/dvb/adapterN: demux0, dvr0), the source of the
	 * tuner's transport stream; TSTUB_DVB_ADAPTER_NONE when the bridge
	 * has none (yet, or analog only).  Without the capability: 0, and
	 * meaningless.
	 */
	__u32 dvb_adapter;
	__u32 padding3;
	__u64 reserved[1];
};

#define TSTUB_DVB_ADAPTER_NONE 0xFFFFFFFFu

/* TSTUB_DETACH request: body struct tstub_client; empty reply. */
struct tstub_client {
	__u32 client;
	__u32 padding;
};

/* TSTUB_SET_PARAMS request, TSTUB_PARAMS_CHANGED, TSTUB_BIND reply. */
#define TSTUB_PARAMS_VALID 0x0001	/* the struct holds real params */

struct tstub_params {
	__u32 delsys;		/* enum tstub_delsys */
	__u32 frequency;	/* Hz (satellite: L-band IF in Hz) */
	__u32 bandwidth;	/* Hz, 0 = implied by the system */
	__u32 symbol_rate;	/* symbols/s, DVB-C and DVB-S only */
	__u64 std;		/* v4l2_std_id, analog TV only */
	__u32 flags;		/* TSTUB_PARAMS_* */
	__u32 padding;
	__u64 reserved[2];
};

/* Status (TSTUB_GET_STATUS and TSTUB_DEMOD_STATUS replies). */
#define TSTUB_FE_HAS_SIGNAL 0x01
#define TSTUB_FE_HAS_CARRIER 0x02
#define TSTUB_FE_HAS_VITERBI 0x04
#define TSTUB_FE_HAS_SYNC 0x08
#define TSTUB_FE_HAS_LOCK 0x10
#define TSTUB_FE_TIMEDOUT 0x20
#define TSTUB_FE_REINIT 0x40

/* status.valid: which fields hold a value */
#define TSTUB_ST_FE_STATUS 0x01
#define TSTUB_ST_STRENGTH_DBM 0x02	/* strength_mdbm */
#define TSTUB_ST_STRENGTH_REL 0x04	/* strength_rel */
#define TSTUB_ST_CNR_DB 0x08		/* cnr_mdb */
#define TSTUB_ST_CNR_REL 0x10		/* cnr_rel */
#define TSTUB_ST_AFC 0x20		/* afc_hz */
#define TSTUB_ST_PLL_LOCK 0x40		/* pll_locked */

struct tstub_status {
	__u32 valid;		/* TSTUB_ST_* */
	__u32 fe_status;	/* TSTUB_FE_* */
	__s32 strength_mdbm;	/* 1/1000 dBm */
	__u32 strength_rel;	/* 0..65535 */
	__s32 cnr_mdb;		/* 1/1000 dB */
	__u32 cnr_rel;		/* 0..65535 */
	__s32 afc_hz;
	__u32 pll_locked;	/* 0 or 1 */
	__u32 frequency;	/* Hz actually tuned */
	__u32 bandwidth;	/* Hz */
	__u64 reserved[2];
};

/* TSTUB_GET_FREQUENCY reply. */
struct tstub_freq {
	__u32 frequency;	/* Hz */
	__u32 bandwidth;	/* Hz */
	__u32 if_frequency;	/* Hz */
	__u32 padding;
};

/* TSTUB_INTERRUPT notification: the stub gave up on a request. */
struct tstub_interrupt {
	__u64 unique;		/* the request given up */
};

/* TSTUB_BIND request: body struct tstub_client; reply struct tstub_params
 * (the last params the stub knows of, TSTUB_PARAMS_VALID if any). */

/*
 * TSTUB_I2C_XFER: a combined transfer on the client's adapter, like
 * I2C_RDWR.  The request is struct tstub_i2c_xfer followed by the bytes of
 * every write segment in order; the reply is the bytes of every read
 * segment in order.  hdr.error is -EREMOTEIO on a NAK.
 */
#define TSTUB_I2C_SEGS_MAX 4
#define TSTUB_I2C_DATA_MAX 1024	/* sum of segment lengths */
#define TSTUB_I2C_RD 0x0001

struct tstub_i2c_seg {
	__u16 addr;		/* 7-bit */
	__u16 flags;		/* TSTUB_I2C_RD */
	__u16 len;
	__u16 padding;
};

struct tstub_i2c_xfer {
	__u32 nsegs;
	__u32 padding;
	struct tstub_i2c_seg segs[TSTUB_I2C_SEGS_MAX];
};

/* TSTUB_BRIDGE_CTRL request: the bridge's tuner callback (reset, GPIO). */
#define TSTUB_CTRL_TUNER_RESET 1	/* pulse the tuner reset line */
#define TSTUB_CTRL_CLK_RESET 2		/* reset the tuner clock */
#define TSTUB_CTRL_I2C_FLUSH 3

struct tstub_ctrl {
	__u32 cmd;		/* TSTUB_CTRL_* */
	__u32 arg;
};

/* ------------------------------------------------------------------ */

/*
 * tstub_body_size() - the exact body size of a fixed-size message.
 * Returns the size, -1 for an unknown opcode/direction pair, -2 for a
 * variable-size message (TSTUB_I2C_XFER), checked by its own rules.
 */
static inline int tstub_body_size(__u16 opcode, int reply)
{
	switch (opcode) {
	case TSTUB_INIT:
		return sizeof(struct tstub_init);
	case TSTUB_LOAD_PLUGIN:
		return reply ? sizeof(struct tstub_chip_info) :
			       sizeof(struct tstub_load);
	case TSTUB_ATTACH:
		return reply ? sizeof(struct tstub_chip_info) :
			       sizeof(struct tstub_attach);
	case TSTUB_DETACH:
		return reply ? 0 : (int)sizeof(struct tstub_client);
	case TSTUB_TUNER_INIT:
	case TSTUB_TUNER_SLEEP:
	case TSTUB_CMD_BEGIN:
	case TSTUB_CMD_END:
		return 0;
	case TSTUB_SET_PARAMS:
		return reply ? 0 : (int)sizeof(struct tstub_params);
	case TSTUB_GET_STATUS:
	case TSTUB_DEMOD_STATUS:
		return reply ? (int)sizeof(struct tstub_status) : 0;
	case TSTUB_GET_FREQUENCY:
		return reply ? (int)sizeof(struct tstub_freq) : 0;
	case TSTUB_INTERRUPT:
		return reply ? -1 : (int)sizeof(struct tstub_interrupt);
	case TSTUB_BIND:
		return reply ? sizeof(struct tstub_params) :
			       sizeof(struct tstub_client);
	case TSTUB_I2C_XFER:
		return -2;
	case TSTUB_BRIDGE_CTRL:
		return reply ? 0 : (int)sizeof(struct tstub_ctrl);
	case TSTUB_PARAMS_CHANGED:
		return reply ? -1 : (int)sizeof(struct tstub_params);
	}
	return -1;
}

/* clang-format on */
#endif /* _UAPI_LINUX_TUNER_STUB_H */

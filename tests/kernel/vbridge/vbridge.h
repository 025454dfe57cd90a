/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The virtual bridge, a test-only module: an I2C adapter whose devices are
 * register-file emulations of tuner chips, and a DVB adapter whose
 * frontends have a virtual DVB-T demodulator and, as tuner, the tuner stub
 * (or an in-kernel tuner driver) on that adapter.
 */
#ifndef _VBRIDGE_H
#define _VBRIDGE_H

#include <linux/i2c.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>

#include <media/dmxdev.h>
#include <media/dvb_demux.h>
#include <media/dvb_frontend.h>
#include <media/dvbdev.h>

struct v4l2_subdev;

#define VB_MAX_FE 4
#define VB_MAX_CHIPS (VB_MAX_FE + 1)	/* the frontends' and the analog one */
#define VB_REGS 64
#define VB_TS_PID 0x0100	/* the counter packets' PID */
#define VB_TS_PKTS 20		/* packets per tick: a PAT, then counters */

struct vb_chip;

/* One kind of emulated chip. */
struct vb_chip_type {
	const char *name;
	u32 chip_id;		/* TSTUB_CHIP_* */
	u8 addr;		/* usual 7-bit address */
	void (*reset)(struct vb_chip *c);
	int (*write)(struct vb_chip *c, const u8 *buf, u16 len);
	int (*read)(struct vb_chip *c, u8 *buf, u16 len);
	bool (*locked)(const struct vb_chip *c);
	u32 (*frequency)(const struct vb_chip *c);	/* Hz, 0 unknown */
};

/* One emulated chip on the virtual bus; guarded by vbridge.chip_lock. */
struct vb_chip {
	const struct vb_chip_type *type;
	u8 addr;
	u8 regs[VB_REGS];
	u8 ptr;			/* register pointer (8-bit chips) */
	u16 reg16;		/* register to read (XC3028) */
	bool freq_pending;	/* XC3028: RF_FREQ command seen */
	bool tuned;
	u32 divider;		/* XC3028: last RF divider */
	u32 fw_bytes;		/* XC3028: firmware bytes received */
	u32 resets;		/* bridge callback resets */
	bool fault_nak;		/* test fault: never acknowledge */
	bool fault_nolock;	/* test fault: the PLL never locks */
	u32 writes;
	u32 reads;
};

struct vbridge;

/*
 * The in-kernel drivers' configuration structs.  Their headers are not in
 * the kernel headers package, so the layouts of Linux 6.1's
 * drivers/media/tuners/qt1010.h and xc2028.h are repeated here.
 */
struct vb_qt1010_config {
	u8 i2c_address;
};

struct vb_xc2028_ctrl {
	char *fname;
	int max_len;
	int msleep;
	unsigned int scode_table;
	unsigned int mts:1;
	unsigned int input1:1;
	unsigned int vhfbw7:1;
	unsigned int uhfbw8:1;
	unsigned int disable_power_mgmt:1;
	unsigned int read_not_reliable:1;
	unsigned int demod;		/* demodulator IF in kHz */
	unsigned int type:2;		/* enum firmware_type: 0 auto */
};

struct vb_xc2028_config {
	struct i2c_adapter *i2c_adap;
	u8 i2c_addr;
	struct vb_xc2028_ctrl *ctrl;
};

/* The board every tuner of a frontend gets, stub or in-kernel driver. */
#define VB_XC3028_MAX_LEN 64
#define VB_XC3028_DEMOD_KHZ 4560	/* XC3028_FE_ZARLINK456 */
#define VB_XC3028_FIRMWARE "xc3028-v27.fw"
#define VB_MT2060_IF1_MHZ 1220

struct vb_fe {
	struct dvb_frontend fe;
	struct vbridge *vb;
	struct vb_chip *chip;
	bool kernel_tuner;		/* an in-kernel driver, not the stub */
	struct i2c_client *kclient;	/* that driver's client (mt2060) */
	const char *kattach;		/* or its attach function's name */
	struct vb_qt1010_config qt_cfg;	/* what those drivers keep a */
	struct vb_xc2028_ctrl xc_ctrl;	/* pointer to */
	bool registered;
	bool tuned;			/* the frontend thread tuned once */

	/*
	 * The demodulator's I2C gate in front of the chip, and its lock,
	 * which read_status holds and the stub takes for the daemon's own
	 * commands (tuner_stub_config.lock).  vbridge_rules.c checks that
	 * every transfer to the chip finds the gate open and no
	 * read_status in the demodulator.
	 */
	struct mutex demod_lock;
	atomic_t gate_open;
	atomic_t in_status;		/* read_status in the demodulator */
	atomic_t tuner_xfers;		/* transfers to the chip under way */
};

/* The frontend rules' counters (vbridge_rules.c). */
struct vb_rules {
	atomic64_t checked;		/* transfers to a frontend's chip */
	atomic64_t gate_closed;		/* ... with the gate closed */
	atomic64_t during_status;	/* ... while read_status ran */
	atomic64_t status_in_cmd;	/* read_status inside a tuner command */
	atomic64_t status_reads;	/* read_status calls */
};

struct vb_trace_line {
	struct list_head link;
	size_t len;
	char text[];
};

struct vbridge {
	struct device *dev;
	struct i2c_adapter adap;
	bool adap_added;
	struct mutex chip_lock;		/* every chip's state */
	struct vb_chip chips[VB_MAX_CHIPS];
	unsigned int nchips;

	struct dvb_adapter dvb;
	bool dvb_registered;
	struct vb_fe fes[VB_MAX_FE];
	unsigned int nfe;

	/* The transport stream (vbridge_ts.c). */
	struct dvb_demux demux;
	struct dmxdev dmxdev;
	struct dmx_frontend dmx_fe;
	unsigned int ts_state;		/* setup steps done, for the undo */
	atomic_t ts_feeds;		/* feeds started */
	struct delayed_work ts_work;	/* feeds a tick's packets */
	u8 ts_pat_cc;			/* continuity counters, the work's */
	u8 ts_data_cc;
	u32 ts_counter;
	u8 ts_buf[VB_TS_PKTS * 188];

	struct vb_chip *analog_chip;
	struct v4l2_subdev *analog_sd;
	struct mutex analog_lock;	/* the analog calls and their result */
	int analog_err;
	char analog_last[32];

	struct vb_rules rules;

	struct mutex oracle_lock;	/* one oracle request at a time */
	unsigned int oracle_seq;

	struct dentry *dbg;
	struct mutex trace_lock;	/* the trace list */
	struct list_head trace;
	size_t trace_bytes;
	u64 trace_dropped;
};

extern const struct vb_chip_type vb_mt2060_type;
extern const struct vb_chip_type vb_qt1010_type;
extern const struct vb_chip_type vb_xc3028_type;

/* vbridge_i2c.c */
int vb_i2c_add(struct vbridge *vb);
void vb_i2c_del(struct vbridge *vb);
void vb_trace_clear(struct vbridge *vb);
__printf(2, 3) void vb_trace_note(struct vbridge *vb, const char *fmt, ...);
void vb_debugfs_init(struct vbridge *vb);

/* vbridge_analog.c */
int vb_analog_create(struct vbridge *vb, struct vb_chip *chip);
void vb_analog_destroy(struct vbridge *vb);

/* vbridge_oracle.c */
void vb_oracle_init(struct vbridge *vb);
const char *vb_callback_name(u32 cmd);

/* vbridge_rules.c */
int vb_fe_gate_ctrl(struct dvb_frontend *fe, int enable);
void vb_fe_demod_regs(struct vb_fe *vfe);
struct vb_fe *vb_rules_xfer_begin(struct vbridge *vb, u16 addr);
void vb_rules_xfer_end(struct vb_fe *vfe);
void vb_rules_init(struct vbridge *vb);
void vb_rules_report(struct vbridge *vb);

/* vbridge_fe.c */
int vb_fe_create(struct vbridge *vb, struct vb_fe *vfe, bool kernel_tuner);
void vb_fe_destroy(struct vb_fe *vfe);

/* vbridge_ts.c */
int vb_ts_create(struct vbridge *vb);
void vb_ts_destroy(struct vbridge *vb);

#endif /* _VBRIDGE_H */

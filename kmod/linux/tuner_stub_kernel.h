/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What bridge drivers use of the tuner stub.
 *
 * A bridge that has a tuner chip driven by the tunerd daemon attaches the
 * stub in place of an in-kernel tuner driver: tuner_stub_attach() for a
 * DVB frontend, tuner_stub_v4l2_attach() for an analog (V4L2) bridge.  The
 * stub forwards every tuner operation to the daemon over /dev/tuner and
 * performs the I2C transfers the daemon asks for on the bridge's adapter.
 */
#ifndef _TUNER_STUB_KERNEL_H
#define _TUNER_STUB_KERNEL_H

#include <linux/types.h>

#include "tuner_stub.h"

struct dvb_frontend;
struct i2c_adapter;
struct mutex;
struct v4l2_subdev;

#define TUNER_STUB_BRIDGE_NAME_LEN TSTUB_NAME_LEN

/**
 * struct tuner_stub_config - how a bridge wires its tuner
 * @chip_id: TSTUB_CHIP_* identifier of the tuner chip.
 * @i2c_addr: 7-bit I2C address of the chip on the bridge's adapter.
 * @vendor_id: USB/PCI vendor id of the bridge, passed to the plugin.
 * @product_id: USB/PCI product id of the bridge, passed to the plugin.
 * @config: board-specific configuration word, passed to the plugin.
 * @bridge_name: bridge name shown by the daemon (copied; may be NULL).
 * @bridge_priv: first argument of @tuner_callback and @demod_status.
 * @tuner_callback: board action the plugin asks for (TSTUB_CTRL_* in
 *	@cmd: reset line, clock reset, I2C flush).  May be NULL: a DVB
 *	frontend's own callback is then used with the xc2028 numbering
 *	(TSTUB_CTRL_TUNER_RESET becomes 0); otherwise the request fails with
 *	-EOPNOTSUPP.
 * @demod_status: what the bridge's demodulator sees (lock, strength,
 *	CNR), for the plugin's status report.  May be NULL: the daemon then
 *	gets -EOPNOTSUPP.  Must not call back into the tuner, nor take
 *	@lock: the stub calls it inside a tuner command, already serialised.
 * @lock: the bridge's lock of its demodulator, which its frontend
 *	operations (read_status, set_frontend's own register access, ...)
 *	hold while they access it.  The stub holds it, with the
 *	demodulator's I2C gate open, for each tuner command the daemon
 *	starts itself (a tune or status read of its network API, the
 *	probe), so that none runs while the DVB core is in the
 *	demodulator.  The bridge never holds it while calling a tuner
 *	operation, nor takes it in i2c_gate_ctrl.  May be NULL (an analog
 *	bridge, a tuner not behind a demodulator): no serialisation.
 *
 * The stub copies the structure; it need not outlive the attach call.
 */
struct tuner_stub_config {
	u32 chip_id;
	u8 i2c_addr;
	u32 vendor_id;
	u32 product_id;
	u32 config;
	const char *bridge_name;
	void *bridge_priv;
	int (*tuner_callback)(void *bridge_priv, u32 cmd, u32 arg);
	int (*demod_status)(void *bridge_priv, struct tstub_status *status);
	struct mutex *lock;	/* the bridge's; see above */
};

struct dvb_frontend *tuner_stub_attach(struct dvb_frontend *fe,
				       struct i2c_adapter *i2c,
				       const struct tuner_stub_config *cfg);
void tuner_stub_detach(struct dvb_frontend *fe);

struct v4l2_subdev *tuner_stub_v4l2_attach(struct i2c_adapter *i2c,
					   const struct tuner_stub_config *cfg);
void tuner_stub_v4l2_detach(struct v4l2_subdev *sd);

#endif /* _TUNER_STUB_KERNEL_H */

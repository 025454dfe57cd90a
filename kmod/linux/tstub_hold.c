// SPDX-License-Identifier: GPL-2.0
/*
 * A tuner command under the frontend's rules: the demodulator's I2C gate
 * and the bridge's lock, once per command rather than per transfer.
 *
 * A tuner behind a demodulator answers only while the demodulator's I2C
 * gate is open, and the demodulator's own operations (read_status and the
 * like, which the DVB core serialises on its frontend semaphore) must not
 * run while the tuner is being programmed.  Two kinds of command reach the
 * chip:
 *
 *  - a tuner operation the kernel calls runs in the caller's context,
 *    which the DVB core already serialises against the demodulator: the
 *    stub opens the gate before forwarding it and closes it after the
 *    daemon's answer, as in-kernel tuner drivers do (tstub_kcmd_begin());
 *  - a command the daemon starts itself (its network API's tunes and
 *    status reads, the probe, a restore) is bracketed by TSTUB_CMD_BEGIN
 *    and TSTUB_CMD_END: in between, the stub holds the bridge's lock
 *    (tuner_stub_config.lock) and keeps the gate open.
 *
 * A bracket spans several write() calls, and a mutex may neither stay
 * held on the way back to user space nor be released by another task (a
 * channel's release, a detach).  So a work item owns it: it takes the
 * lock, opens the gate, waits for the bracket's end, closes the gate and
 * unlocks.  A daemon quiet for timeout_ms inside a bracket loses it; its
 * further requests in that bracket fail with -ETIMEDOUT.
 *
 * The gate is counted: the kernel's command and the daemon's bracket may
 * overlap in time (a kernel request waits in the worker's queue while it
 * finishes its own command), and the last one out closes it.
 *
 * A bridge request outside both (a daemon without TSTUB_CAP_CMD_BRACKET,
 * or one still working after the kernel caller gave up) takes lock and
 * gate around itself alone, within its write().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/sched.h>

#include <media/dvb_frontend.h>

#include "tstub_priv.h"

static void tstub_gate_get(struct tstub_tuner *c)
{
	struct dvb_frontend *fe = c->fe;

	mutex_lock(&c->gate_lock);
	if (!c->gate_users++ && fe && fe->ops.i2c_gate_ctrl)
		fe->ops.i2c_gate_ctrl(fe, 1);
	mutex_unlock(&c->gate_lock);
}

static void tstub_gate_put(struct tstub_tuner *c)
{
	struct dvb_frontend *fe = c->fe;

	mutex_lock(&c->gate_lock);
	if (!--c->gate_users && fe && fe->ops.i2c_gate_ctrl)
		fe->ops.i2c_gate_ctrl(fe, 0);
	mutex_unlock(&c->gate_lock);
}

/**
 * tstub_kcmd_begin() - a tuner operation of the kernel starts
 * @c: the client
 *
 * Opens the gate for the daemon's transfers of this command.  The caller
 * (the DVB core or a demodulator) already excludes the demodulator's
 * other operations, so the bridge's lock is not taken: the bridge never
 * holds it while calling a tuner operation, since a command the daemon
 * started may need it to finish before the daemon serves this one.
 */
void tstub_kcmd_begin(struct tstub_tuner *c)
{
	atomic_inc(&c->kernel_cmds);
	tstub_gate_get(c);
}

/**
 * tstub_kcmd_end() - the tuner operation tstub_kcmd_begin() began ended
 * @c: the client
 */
void tstub_kcmd_end(struct tstub_tuner *c)
{
	tstub_gate_put(c);
	atomic_dec(&c->kernel_cmds);
}

static void tstub_lock_bridge(struct tstub_tuner *c)
{
	if (c->cfg.lock)
		mutex_lock(c->cfg.lock);
	tstub_gate_get(c);
}

static void tstub_unlock_bridge(struct tstub_tuner *c)
{
	tstub_gate_put(c);
	if (c->cfg.lock)
		mutex_unlock(c->cfg.lock);
}

static void tstub_hold_work(struct work_struct *work)
{
	struct tstub_tuner *c = container_of(work, struct tstub_tuner,
					     hold_work);
	unsigned long quiet = msecs_to_jiffies(tstub_timeout_ms);

	tstub_lock_bridge(c);
	WRITE_ONCE(c->hold_on, true);
	complete(&c->hold_taken);
	while (!wait_for_completion_timeout(&c->hold_release, quiet)) {
		if (time_after(jiffies, READ_ONCE(c->hold_touched) + quiet)) {
			atomic64_inc(&c->stats.hold_lapses);
			break;
		}
	}
	WRITE_ONCE(c->hold_on, false);
	tstub_unlock_bridge(c);
}

/* Under hold_lock: end the open bracket and wait until it let go. */
static int tstub_hold_finish(struct tstub_tuner *c)
{
	bool lapsed = !READ_ONCE(c->hold_on);

	complete(&c->hold_release);
	flush_work(&c->hold_work);
	WRITE_ONCE(c->holding, false);
	return lapsed ? -ETIMEDOUT : 0;
}

/**
 * tstub_hold_begin() - TSTUB_CMD_BEGIN: the daemon starts a command
 * @c: the client, not detached (bridge_sem held for reading)
 *
 * Waits, at most timeout_ms, until the bridge's lock is held for the
 * daemon and the gate is open.  A bracket still open (a worker that died
 * inside one) is ended first.
 *
 * Return: 0, -ETIMEDOUT, or -EINTR on a fatal signal.
 */
int tstub_hold_begin(struct tstub_tuner *c)
{
	unsigned long wait = msecs_to_jiffies(tstub_timeout_ms);
	long left;
	int ret = 0;

	mutex_lock(&c->hold_lock);
	if (c->holding)
		tstub_hold_finish(c);
	reinit_completion(&c->hold_taken);
	reinit_completion(&c->hold_release);
	WRITE_ONCE(c->hold_touched, jiffies);
	queue_work(system_unbound_wq, &c->hold_work);
	left = wait_for_completion_killable_timeout(&c->hold_taken, wait);
	if (left > 0) {
		WRITE_ONCE(c->holding, true);
		atomic64_inc(&c->stats.holds);
	} else {
		/* Given up: the work lets go as soon as it holds. */
		complete(&c->hold_release);
		flush_work(&c->hold_work);
		ret = left ? -EINTR : -ETIMEDOUT;
	}
	mutex_unlock(&c->hold_lock);
	return ret;
}

/**
 * tstub_hold_end() - TSTUB_CMD_END: the daemon's command is over
 * @c: the client
 *
 * Return: 0; -ETIMEDOUT when the bracket lapsed; -EINVAL when none was
 * open.
 */
int tstub_hold_end(struct tstub_tuner *c)
{
	int ret = -EINVAL;

	mutex_lock(&c->hold_lock);
	if (c->holding)
		ret = tstub_hold_finish(c);
	mutex_unlock(&c->hold_lock);
	return ret;
}

/**
 * tstub_hold_drop() - end a bracket left open, waiting for it
 * @c: the client being detached
 *
 * After this the work no longer touches the bridge.
 */
void tstub_hold_drop(struct tstub_tuner *c)
{
	mutex_lock(&c->hold_lock);
	if (c->holding)
		tstub_hold_finish(c);
	mutex_unlock(&c->hold_lock);
}

/**
 * tstub_hold_abandon() - the channel of an open bracket closed
 * @c: the client
 *
 * Called with tstub.lock held, so it does not wait: the work lets go at
 * once, and the next CMD_BEGIN or the detach collects it.
 */
void tstub_hold_abandon(struct tstub_tuner *c)
{
	lockdep_assert_held(&tstub.lock);
	complete(&c->hold_release);
}

/**
 * tstub_bridge_enter() - before a daemon request uses the bridge
 * @c: the client
 *
 * Return: 1 when the request took lock and gate for itself (undo with
 * tstub_bridge_leave()), 0 when a bracket or a kernel command covers it,
 * -ETIMEDOUT when its bracket lapsed.
 */
int tstub_bridge_enter(struct tstub_tuner *c)
{
	if (READ_ONCE(c->holding)) {
		WRITE_ONCE(c->hold_touched, jiffies);
		return READ_ONCE(c->hold_on) ? 0 : -ETIMEDOUT;
	}
	if (atomic_read(&c->kernel_cmds))
		return 0;
	tstub_lock_bridge(c);
	return 1;
}

/**
 * tstub_bridge_leave() - after a request tstub_bridge_enter() let in
 * @c: the client
 * @own: what tstub_bridge_enter() returned
 */
void tstub_bridge_leave(struct tstub_tuner *c, int own)
{
	if (own == 1)
		tstub_unlock_bridge(c);
	else if (READ_ONCE(c->holding))
		WRITE_ONCE(c->hold_touched, jiffies);
}

/* The client's hold and gate state, at creation. */
void tstub_hold_init(struct tstub_tuner *c)
{
	mutex_init(&c->hold_lock);
	mutex_init(&c->gate_lock);
	INIT_WORK(&c->hold_work, tstub_hold_work);
	init_completion(&c->hold_taken);
	init_completion(&c->hold_release);
	atomic_set(&c->kernel_cmds, 0);
}

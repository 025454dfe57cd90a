// SPDX-License-Identifier: GPL-2.0
/*
 * The tuner stub: tuner chips driven by the tunerd daemon.
 *
 * Bridge drivers attach the stub as a DVB frontend's tuner or an analog
 * tuner subdevice; the stub forwards every tuner operation over /dev/tuner
 * to the daemon, which runs the chip's driver as a plugin in userspace and
 * asks the stub for the I2C transfers it needs.  The messages are those of
 * tuner_stub.h (protocol/ABI.md).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "tstub_priv.h"

unsigned int tstub_timeout_ms = 3000;
module_param_named(timeout_ms, tstub_timeout_ms, uint, 0644);
MODULE_PARM_DESC(timeout_ms,
		 "deadline of every request to the daemon, in ms (default 3000)");

struct tstub_state tstub;

static struct miscdevice tstub_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "tuner",
	.fops = &tstub_fops,
	.mode = 0660,
};

static void tstub_state_init(void)
{
	mutex_init(&tstub.lock);
	init_waitqueue_head(&tstub.read_wq);
	atomic_set(&tstub.wake_seq, 0);
	INIT_LIST_HEAD(&tstub.ctrl_queue);
	INIT_LIST_HEAD(&tstub.inflight);
	INIT_LIST_HEAD(&tstub.clients);
	ida_init(&tstub.ida);
	INIT_WORK(&tstub.resend_work, tstub_resend_work);
	tstub.next_unique = 1;
	tstub.session = 1;
}

static int __init tstub_init(void)
{
	int ret;

	tstub_state_init();
	ret = misc_register(&tstub_misc);
	if (ret) {
		pr_err("cannot register /dev/%s: %d\n", tstub_misc.name, ret);
		return ret;
	}
	tstub_debugfs_init();
	pr_info("ABI %u.%u on /dev/%s, timeout %u ms\n", TSTUB_MAJOR,
		TSTUB_MINOR, tstub_misc.name, tstub_timeout_ms);
	return 0;
}

static void __exit tstub_exit(void)
{
	/*
	 * No file is open (each holds the module) and no bridge is
	 * attached (each links to it); only a resend may still run.
	 */
	tstub_debugfs_exit();
	misc_deregister(&tstub_misc);
	cancel_work_sync(&tstub.resend_work);
	ida_destroy(&tstub.ida);
}

module_init(tstub_init);
module_exit(tstub_exit);

MODULE_DESCRIPTION("Tuner stub: tuner chips driven by the tunerd daemon");
MODULE_LICENSE("GPL");

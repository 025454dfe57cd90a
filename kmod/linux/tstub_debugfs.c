// SPDX-License-Identifier: GPL-2.0
/*
 * <debugfs>/tuner_stub/: "state" (the daemon, requests
 * waiting, counters) and "clients" (one line per attached tuner).  Lines
 * are "key value" or "key=value" pairs, easy to read from a shell.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/i2c.h>
#include <linux/seq_file.h>

#include "tstub_priv.h"

static struct dentry *tstub_dir;

static const char *tstub_daemon_state(void)
{
	if (!tstub.control)
		return "none";
	return tstub.ready ? "connected" : "handshaking";
}

static int tstub_state_show(struct seq_file *m, void *unused)
{
	struct tstub_req *req;
	unsigned int inflight = 0, clients = 0;
	struct tstub_tuner *c;

	mutex_lock(&tstub.lock);
	list_for_each_entry(req, &tstub.inflight, link)
		inflight++;
	list_for_each_entry(c, &tstub.clients, link)
		clients++;
	seq_printf(m, "daemon %s\n", tstub_daemon_state());
	seq_printf(m, "daemon_pid %d\n",
		   tstub.control ? tstub.control->pid : 0);
	seq_printf(m, "abi %u.%u\n", TSTUB_MAJOR,
		   tstub.ready ? tstub.minor : TSTUB_MINOR);
	seq_printf(m, "caps 0x%llx\n", tstub.ready ? tstub.caps : 0);
	seq_printf(m, "session %llu\n", tstub.session);
	seq_printf(m, "timeout_ms %u\n", READ_ONCE(tstub_timeout_ms));
	seq_printf(m, "requests_waiting %u\n", tstub.waiting);
	seq_printf(m, "requests_inflight %u\n", inflight);
	seq_printf(m, "clients %u\n", clients);
	mutex_unlock(&tstub.lock);
	seq_printf(m, "connects %lld\n",
		   atomic64_read(&tstub.stats.connects));
	seq_printf(m, "disconnects %lld\n",
		   atomic64_read(&tstub.stats.disconnects));
	seq_printf(m, "refused %lld\n", atomic64_read(&tstub.stats.refused));
	seq_printf(m, "bad_writes %lld\n",
		   atomic64_read(&tstub.stats.bad_writes));
	seq_printf(m, "unknown_replies %lld\n",
		   atomic64_read(&tstub.stats.unknown_replies));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tstub_state);

static void tstub_tuner_show(struct seq_file *m, struct tstub_tuner *c)
{
	struct tstub_tuner_stats *s = &c->stats;

	seq_printf(m, "client=%u chip=%u name=%s adapter=%d addr=0x%02x",
		   c->id, c->cfg.chip_id,
		   c->have_info && c->info.name[0] ? c->info.name : "-",
		   i2c_adapter_id(c->adap), c->cfg.i2c_addr);
	seq_printf(m, " bridge=%s bound=%d announced=%d announce_err=%d",
		   c->bridge[0] ? c->bridge : "-", c->chan ? 1 : 0,
		   c->announced == tstub.session && tstub.ready,
		   c->announce_err);
	seq_printf(m, " frequency=%u requests=%lld errors=%lld",
		   c->params.flags & TSTUB_PARAMS_VALID ?
		   c->params.frequency : 0,
		   atomic64_read(&s->requests), atomic64_read(&s->errors));
	seq_printf(m, " timeouts=%lld interrupts=%lld aborts=%lld",
		   atomic64_read(&s->timeouts), atomic64_read(&s->interrupts),
		   atomic64_read(&s->aborts));
	seq_printf(m, " i2c_xfers=%lld i2c_errors=%lld bridge_ctrls=%lld",
		   atomic64_read(&s->i2c_xfers), atomic64_read(&s->i2c_errors),
		   atomic64_read(&s->bridge_ctrls));
	seq_printf(m, " holds=%lld hold_lapses=%lld\n",
		   atomic64_read(&s->holds), atomic64_read(&s->hold_lapses));
}

static int tstub_clients_show(struct seq_file *m, void *unused)
{
	struct tstub_tuner *c;

	mutex_lock(&tstub.lock);
	list_for_each_entry(c, &tstub.clients, link)
		tstub_tuner_show(m, c);
	mutex_unlock(&tstub.lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tstub_clients);

void tstub_debugfs_init(void)
{
	tstub_dir = debugfs_create_dir("tuner_stub", NULL);
	debugfs_create_file("state", 0444, tstub_dir, NULL,
			    &tstub_state_fops);
	debugfs_create_file("clients", 0444, tstub_dir, NULL,
			    &tstub_clients_fops);
}

void tstub_debugfs_exit(void)
{
	debugfs_remove_recursive(tstub_dir);
}

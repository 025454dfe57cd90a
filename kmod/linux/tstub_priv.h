/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tuner stub's internal state, shared by its files.
 *
 * Locking: tstub.lock (a mutex) guards the channels, the request queues,
 * the client list and every request's state.  It is never held across a
 * wait, a copy to or from user memory, or a call into a bridge.  Outside
 * it, per client: announce_lock serialises LOAD_PLUGIN + ATTACH, and
 * bridge_sem (read side) keeps the bridge's adapter and callbacks alive
 * while a daemon request uses them; detaching takes it for writing.
 * Order: announce_lock, then bridge_sem, then tstub.lock.  hold_lock
 * (taken under bridge_sem) and gate_lock are taken with nothing else of
 * the stub's held inside them; the bridge's own lock (cfg.lock) is taken
 * only by the hold work and around a lone daemon request (tstub_hold.c).
 */
#ifndef _TSTUB_PRIV_H
#define _TSTUB_PRIV_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/idr.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "tuner_stub.h"
#include "tuner_stub_kernel.h"

#define TSTUB_MAX_CLIENTS 64
#define TSTUB_REANNOUNCE_TRIES 5	/* per client and daemon */

enum tstub_chan_kind {
	TSTUB_CHAN_UNBOUND,
	TSTUB_CHAN_CONTROL,
	TSTUB_CHAN_TUNER,
	TSTUB_CHAN_DEAD,	/* closed by the stub: read() gives EOF */
};

/*
 * A message waiting to be read that nobody waits for: a reply to a
 * daemon request, INIT, or an INTERRUPT notification.
 */
struct tstub_msg {
	struct list_head link;		/* chan->outq */
	u32 len;
	u8 data[] __aligned(8);
};

/* One open file of /dev/tuner. */
struct tstub_chan {
	enum tstub_chan_kind kind;
	struct tstub_tuner *client;	/* TSTUB_CHAN_TUNER: bound client */
	struct list_head outq;		/* struct tstub_msg */
	unsigned long opened;		/* jiffies, for the INIT deadline */
	pid_t pid;
};

struct tstub_tuner_stats {
	atomic64_t requests;
	atomic64_t errors;
	atomic64_t timeouts;
	atomic64_t interrupts;
	atomic64_t aborts;
	atomic64_t i2c_xfers;
	atomic64_t i2c_errors;
	atomic64_t bridge_ctrls;
	atomic64_t holds;		/* CMD_BEGIN brackets granted */
	atomic64_t hold_lapses;		/* brackets ended by a quiet daemon */
};

/* A tuner a bridge attached. */
struct tstub_tuner {
	struct kref ref;
	struct list_head link;		/* tstub.clients */
	u32 id;
	struct tuner_stub_config cfg;
	char bridge[TSTUB_NAME_LEN];
	struct i2c_adapter *adap;
	struct dvb_frontend *fe;	/* DVB bridges */
	struct v4l2_subdev *sd;		/* analog bridges */

	/* under tstub.lock */
	struct list_head queue;		/* requests not yet read */
	struct tstub_chan *chan;	/* bound tuner channel */
	struct tstub_params params;	/* last params, TSTUB_PARAMS_VALID */
	struct tstub_chip_info info;
	bool have_info;

	struct mutex announce_lock;	/* LOAD_PLUGIN + ATTACH, announced */
	u64 announced;			/* session LOAD + ATTACH succeeded in */
	u32 announced_adapter;		/* the dvb_adapter that ATTACH named */
	/* Another announce later (tstub_tuner.c), under announce_lock. */
	struct delayed_work reannounce_work;
	u64 reannounce_session;
	unsigned int reannounce_tries;
	/* under tstub.lock: the daemon refused this tuner in that session */
	u64 failed_session;
	int announce_err;

	struct rw_semaphore bridge_sem;
	bool detached;

	/* The gate and the bridge's lock per command (tstub_hold.c). */
	struct mutex gate_lock;		/* gate_users and the gate calls */
	unsigned int gate_users;
	atomic_t kernel_cmds;		/* kernel tuner operations running */
	struct mutex hold_lock;		/* CMD_BEGIN, CMD_END, holding */
	bool holding;			/* a daemon's bracket is open */
	bool hold_on;			/* the work holds lock and gate */
	unsigned long hold_touched;	/* jiffies of the bracket's last use */
	struct work_struct hold_work;
	struct completion hold_taken;
	struct completion hold_release;

	struct tstub_tuner_stats stats;
};

enum tstub_req_state {
	TSTUB_REQ_QUEUED,	/* on ctrl_queue or client->queue */
	TSTUB_REQ_SENT,		/* read by the daemon, on tstub.inflight */
	TSTUB_REQ_DONE,
};

/* A stub -> daemon request.  Refs: the caller's, and one while listed. */
struct tstub_req {
	struct kref ref;
	struct list_head link;
	struct completion done;
	enum tstub_req_state state;
	struct tstub_tuner *client;	/* NULL: a control channel request */
	struct tstub_chan *chan;	/* the channel that read it */
	int error;
	u32 reply_len;			/* expected reply body size */
	void *reply;			/* reply body, inside this allocation */
	u8 msg[] __aligned(8);		/* header + body, then reply space */
};

struct tstub_stats {
	atomic64_t refused;		/* daemons turned away (-EBUSY) */
	atomic64_t bad_writes;		/* writes answered with an errno */
	atomic64_t unknown_replies;	/* -ENOENT: late or foreign replies */
	atomic64_t connects;		/* INITs completed */
	atomic64_t disconnects;		/* control channels lost */
};

struct tstub_state {
	struct mutex lock;		/* see the top of this file */
	wait_queue_head_t read_wq;	/* every channel's readers */
	atomic_t wake_seq;		/* bumped at every wake-up */
	struct tstub_chan *control;
	bool ready;			/* INIT completed on control */
	u64 session;			/* bumped at every INIT and loss */
	u64 init_unique;
	u32 minor;
	u64 caps;
	u64 next_unique;
	unsigned int waiting;		/* requests not yet DONE */
	struct list_head ctrl_queue;	/* control requests not yet read */
	struct list_head inflight;	/* requests read, not yet answered */
	struct list_head clients;
	struct ida ida;
	struct work_struct resend_work;
	struct tstub_stats stats;
};

extern struct tstub_state tstub;
extern unsigned int tstub_timeout_ms;

/* Something changed for readers: queued data, a channel's kind. */
static inline void tstub_wake(void)
{
	atomic_inc(&tstub.wake_seq);
	wake_up_interruptible_all(&tstub.read_wq);
}

/* tstub_req.c */
int tstub_call(struct tstub_tuner *client, u64 session, u16 opcode,
	       const void *body, u32 body_len, void *reply, u32 reply_len);
void tstub_req_complete(struct tstub_req *req, int error, const void *body,
			u32 len);
struct tstub_req *tstub_req_find(struct tstub_chan *chan,
				 const struct tstub_hdr *h);
void tstub_abort_all(int error);
void tstub_abort_chan(struct tstub_chan *chan, int error);
void tstub_abort_tuner(struct tstub_tuner *client, int error);
void tstub_req_put(struct tstub_req *req);
struct tstub_req *tstub_req_take(struct tstub_chan *chan);
void tstub_req_unread(struct tstub_req *req, struct tstub_chan *chan);
int tstub_queue_msg(struct tstub_chan *chan, u16 opcode, u16 flags,
		    u64 unique, s32 error, u32 client, const void *body,
		    u32 body_len);

/* tstub_chan.c */
int tstub_msg_check(const struct tstub_hdr *h, size_t n);
extern const struct file_operations tstub_fops;

/* tstub_tuner.c */
struct tstub_tuner *tstub_tuner_create(struct i2c_adapter *i2c,
				       const struct tuner_stub_config *cfg);
void tstub_tuner_publish(struct tstub_tuner *c);
void tstub_tuner_destroy(struct tstub_tuner *c);
int tstub_tuner_announce(struct tstub_tuner *c);
void tstub_tuner_put(struct tstub_tuner *c);
void tstub_resend_work(struct work_struct *work);
void tstub_reannounce_work(struct work_struct *work);
int tstub_bind(struct tstub_chan *chan, const struct tstub_hdr *h);
void tstub_unbind(struct tstub_chan *chan, enum tstub_chan_kind kind);
void tstub_tuner_cache_params(struct tstub_tuner *c,
			      const struct tstub_params *p);

/* tstub_bridge.c */
int tstub_chan_request(struct tstub_chan *chan, const struct tstub_hdr *h);

/* tstub_hold.c */
void tstub_hold_init(struct tstub_tuner *c);
void tstub_kcmd_begin(struct tstub_tuner *c);
void tstub_kcmd_end(struct tstub_tuner *c);
int tstub_hold_begin(struct tstub_tuner *c);
int tstub_hold_end(struct tstub_tuner *c);
void tstub_hold_drop(struct tstub_tuner *c);
void tstub_hold_abandon(struct tstub_tuner *c);
int tstub_bridge_enter(struct tstub_tuner *c);
void tstub_bridge_leave(struct tstub_tuner *c, int own);

/* tstub_dvb.c */
void tstub_dvb_set_info(struct tstub_tuner *c);

/* tstub_debugfs.c */
void tstub_debugfs_init(void);
void tstub_debugfs_exit(void);

#endif /* _TSTUB_PRIV_H */

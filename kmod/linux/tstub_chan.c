// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/tuner: one open file is one message channel.
 *
 * read() returns one whole message, write() takes one whole message.  An
 * unbound channel that reads while no daemon holds the control channel
 * receives TSTUB_INIT and becomes the control channel; another daemon's
 * channel is refused with -EBUSY.  A channel that writes TSTUB_BIND
 * becomes a tuner client's channel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "tstub_priv.h"

#define TSTUB_OFFER (TSTUB_CAP_RESEND | TSTUB_CAP_INTERRUPT | \
		     TSTUB_CAP_DEMOD_STATUS | TSTUB_CAP_DVB_ADAPTER | \
		     TSTUB_CAP_CMD_BRACKET)

static int tstub_i2c_check(const struct tstub_hdr *h)
{
	const struct tstub_i2c_xfer *x = (const void *)(h + 1);
	u32 body = h->len - sizeof(*h);
	u32 wr = 0, rd = 0, i;

	if (body < sizeof(*x))
		return -EBADMSG;
	if (x->nsegs == 0 || x->nsegs > TSTUB_I2C_SEGS_MAX)
		return -EBADMSG;
	for (i = 0; i < x->nsegs; i++) {
		const struct tstub_i2c_seg *s = &x->segs[i];

		if (s->len == 0 || s->addr > 0x7f ||
		    (s->flags & ~TSTUB_I2C_RD))
			return -EBADMSG;
		if (s->flags & TSTUB_I2C_RD)
			rd += s->len;
		else
			wr += s->len;
	}
	if (wr + rd > TSTUB_I2C_DATA_MAX || body != sizeof(*x) + wr)
		return -EBADMSG;
	return 0;
}

/**
 * tstub_msg_check() - check a message written by the daemon
 * @h: the message
 * @n: the number of bytes written
 *
 * Return: 0, -EMSGSIZE (shorter than a header or longer than
 * TSTUB_MSG_MAX), -EBADMSG (length field, flags, error field or body size
 * wrong, bad I2C segments) or -EOPNOTSUPP (unknown opcode).
 */
int tstub_msg_check(const struct tstub_hdr *h, size_t n)
{
	int reply, want;

	if (n < sizeof(*h) || n > TSTUB_MSG_MAX)
		return -EMSGSIZE;
	if (h->len != n || (h->flags & ~TSTUB_F_REPLY))
		return -EBADMSG;
	reply = !!(h->flags & TSTUB_F_REPLY);
	want = tstub_body_size(h->opcode, reply);
	if (want == -1)
		return -EOPNOTSUPP;
	if (!reply && h->error)
		return -EBADMSG;
	if (reply && h->error)
		return n == sizeof(*h) && h->error < 0 &&
		       h->error >= -MAX_ERRNO ? 0 : -EBADMSG;
	if (want == -2)
		return reply ? (n - sizeof(*h) <= TSTUB_I2C_DATA_MAX ?
				0 : -EBADMSG) :
			       tstub_i2c_check(h);
	return n - sizeof(*h) == want ? 0 : -EBADMSG;
}

/* Under tstub.lock: the control channel is gone (closed or refused). */
static void tstub_control_lost(struct tstub_chan *chan)
{
	struct tstub_tuner *c;

	lockdep_assert_held(&tstub.lock);
	if (tstub.ready) {
		atomic64_inc(&tstub.stats.disconnects);
		pr_info("daemon (pid %d) disconnected\n", chan->pid);
	}
	tstub.control = NULL;
	tstub.ready = false;
	tstub.session++;
	chan->kind = TSTUB_CHAN_DEAD;
	tstub_abort_all(-ECONNABORTED);
	/* Tuner channels belong to the daemon that is gone. */
	list_for_each_entry(c, &tstub.clients, link)
		if (c->chan)
			tstub_unbind(c->chan, TSTUB_CHAN_DEAD);
	tstub_wake();
}

static bool tstub_init_overdue(void)
{
	unsigned long tmo = msecs_to_jiffies(READ_ONCE(tstub_timeout_ms));

	return tstub.control && !tstub.ready &&
	       time_after(jiffies, tstub.control->opened + tmo);
}

/* Under tstub.lock: an unbound channel reads; it may become control. */
static int tstub_claim_control(struct tstub_chan *chan)
{
	struct tstub_init init = {
		.major = TSTUB_MAJOR,
		.minor = TSTUB_MINOR,
		.flags = TSTUB_OFFER,
		.max_msg = TSTUB_MSG_MAX,
		.kind = TSTUB_KIND_KERNEL,
		.settle_permille = 1000,
		.max_clients = TSTUB_MAX_CLIENTS,
	};
	int ret;

	/* A daemon that never answers INIT does not keep the stub. */
	if (tstub_init_overdue())
		tstub_control_lost(tstub.control);
	if (tstub.control) {
		atomic64_inc(&tstub.stats.refused);
		return -EBUSY;
	}
	tstub.init_unique = tstub.next_unique++;
	ret = tstub_queue_msg(chan, TSTUB_INIT, 0, tstub.init_unique, 0, 0,
			      &init, sizeof(init));
	if (ret)
		return ret;
	chan->kind = TSTUB_CHAN_CONTROL;
	chan->opened = jiffies;
	tstub.control = chan;
	return 0;
}

static int tstub_init_reply(struct tstub_chan *chan, const struct tstub_hdr *h)
{
	const struct tstub_init *in = (const void *)(h + 1);

	if (tstub.ready || h->unique != tstub.init_unique)
		return -ENOENT;
	if (h->error || in->major != TSTUB_MAJOR) {
		pr_warn("daemon (pid %d) refused INIT: error %d, major %u\n",
			chan->pid, h->error, h->error ? 0 : in->major);
		tstub_control_lost(chan);
		return 0;
	}
	tstub.minor = min_t(u32, in->minor, TSTUB_MINOR);
	tstub.caps = in->flags & TSTUB_OFFER;
	tstub.ready = true;
	tstub.session++;
	atomic64_inc(&tstub.stats.connects);
	pr_info("daemon (pid %d) connected, ABI %u.%u, caps 0x%llx\n",
		chan->pid, TSTUB_MAJOR, tstub.minor, tstub.caps);
	queue_work(system_unbound_wq, &tstub.resend_work);
	return 0;
}

static int tstub_unbound_err(void)
{
	return tstub.control ? -EBUSY : -ENOTCONN;
}

/* Under tstub.lock: a reply from the daemon. */
static int tstub_handle_reply(struct tstub_chan *chan,
			      const struct tstub_hdr *h)
{
	struct tstub_req *req;

	switch (chan->kind) {
	case TSTUB_CHAN_UNBOUND:
		return tstub_unbound_err();
	case TSTUB_CHAN_DEAD:
		return -EPIPE;
	case TSTUB_CHAN_CONTROL:
		if (h->opcode == TSTUB_INIT)
			return tstub_init_reply(chan, h);
		break;
	case TSTUB_CHAN_TUNER:
		break;
	}
	req = tstub_req_find(chan, h);
	if (!req) {
		atomic64_inc(&tstub.stats.unknown_replies);
		pr_info_ratelimited("dropped a %#x reply: unique %llu not outstanding\n",
				    h->opcode, h->unique);
		return -ENOENT;
	}
	tstub_req_complete(req, h->error, h + 1, h->len - sizeof(*h));
	return 0;
}

/* Under tstub.lock: a daemon request other than the tuner ones. */
static int tstub_handle_request(struct tstub_chan *chan,
				const struct tstub_hdr *h)
{
	if (chan->kind == TSTUB_CHAN_DEAD)
		return -EPIPE;
	if (h->opcode != TSTUB_BIND)
		return chan->kind == TSTUB_CHAN_UNBOUND ? tstub_unbound_err() :
							  -EOPNOTSUPP;
	switch (chan->kind) {
	case TSTUB_CHAN_UNBOUND:
		return tstub_bind(chan, h);
	case TSTUB_CHAN_TUNER:
		return tstub_queue_msg(chan, TSTUB_BIND, TSTUB_F_REPLY,
				       h->unique, -EBUSY, h->client, NULL, 0);
	default:
		return -EOPNOTSUPP;
	}
}

static bool tstub_is_tuner_request(u16 opcode)
{
	return opcode == TSTUB_I2C_XFER || opcode == TSTUB_BRIDGE_CTRL ||
	       opcode == TSTUB_DEMOD_STATUS || opcode == TSTUB_PARAMS_CHANGED ||
	       opcode == TSTUB_CMD_BEGIN || opcode == TSTUB_CMD_END;
}

static int tstub_dispatch(struct tstub_chan *chan, const struct tstub_hdr *h)
{
	bool reply = h->flags & TSTUB_F_REPLY;
	int ret;

	/* Requests carry a unique id; only notifications have 0. */
	if (!reply && !h->unique && h->opcode != TSTUB_PARAMS_CHANGED)
		return -EBADMSG;
	if (!reply && tstub_is_tuner_request(h->opcode))
		return tstub_chan_request(chan, h);
	mutex_lock(&tstub.lock);
	if (reply)
		ret = tstub_handle_reply(chan, h);
	else
		ret = tstub_handle_request(chan, h);
	mutex_unlock(&tstub.lock);
	return ret;
}

static ssize_t tstub_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	struct tstub_chan *chan = file->private_data;
	struct tstub_hdr *h;
	int ret;

	/*
	 * The whole fixed-size message is copied once; nothing in it is
	 * ever used as a pointer.
	 */
	if (count < sizeof(*h) || count > TSTUB_MSG_MAX) {
		ret = -EMSGSIZE;
		goto out;
	}
	h = memdup_user(ubuf, count);
	if (IS_ERR(h))
		return PTR_ERR(h);
	ret = tstub_msg_check(h, count);
	if (!ret)
		ret = tstub_dispatch(chan, h);
	kfree(h);
out:
	if (ret) {
		atomic64_inc(&tstub.stats.bad_writes);
		return ret;
	}
	return count;
}

/*
 * Under tstub.lock: take the next message for @chan.  Returns its length
 * with *msg or *req set, 0 at end of file, -EAGAIN when none waits,
 * -EBUSY for a second daemon, -EINVAL when @count cannot hold it.
 */
static ssize_t tstub_next(struct tstub_chan *chan, size_t count,
			  struct tstub_msg **msg, struct tstub_req **req)
{
	struct tstub_msg *m;
	struct tstub_req *r;
	int ret;

	m = list_first_entry_or_null(&chan->outq, struct tstub_msg, link);
	if (m) {
		if (count < m->len)
			return -EINVAL;
		list_del_init(&m->link);
		*msg = m;
		return m->len;
	}
	if (chan->kind == TSTUB_CHAN_DEAD)
		return 0;
	if (chan->kind == TSTUB_CHAN_UNBOUND) {
		ret = tstub_claim_control(chan);
		return ret ? ret : tstub_next(chan, count, msg, req);
	}
	r = tstub_req_take(chan);
	if (!r)
		return -EAGAIN;
	if (count < ((struct tstub_hdr *)r->msg)->len) {
		tstub_req_unread(r, chan);
		tstub_req_put(r);
		return -EINVAL;
	}
	*req = r;
	return ((struct tstub_hdr *)r->msg)->len;
}

static ssize_t tstub_copy_out(struct tstub_chan *chan, char __user *buf,
			      struct tstub_msg *m, struct tstub_req *r,
			      size_t len)
{
	const void *src = m ? (const void *)m->data : (const void *)r->msg;

	if (!copy_to_user(buf, src, len)) {
		kfree(m);
		if (r)
			tstub_req_put(r);
		return len;
	}
	mutex_lock(&tstub.lock);
	if (m)
		list_add(&m->link, &chan->outq);
	else
		tstub_req_unread(r, chan);
	mutex_unlock(&tstub.lock);
	if (r)
		tstub_req_put(r);
	return -EFAULT;
}

static ssize_t tstub_read(struct file *file, char __user *buf, size_t count,
			  loff_t *ppos)
{
	struct tstub_chan *chan = file->private_data;
	struct tstub_msg *m = NULL;
	struct tstub_req *r = NULL;
	ssize_t ret;
	int seq;

	for (;;) {
		seq = atomic_read(&tstub.wake_seq);
		mutex_lock(&tstub.lock);
		ret = tstub_next(chan, count, &m, &r);
		mutex_unlock(&tstub.lock);
		if (ret != -EAGAIN || (file->f_flags & O_NONBLOCK))
			break;
		if (wait_event_interruptible(tstub.read_wq,
					     atomic_read(&tstub.wake_seq) != seq))
			return -ERESTARTSYS;
	}
	if (ret <= 0)
		return ret;
	return tstub_copy_out(chan, buf, m, r, ret);
}

static __poll_t tstub_poll(struct file *file, poll_table *wait)
{
	struct tstub_chan *chan = file->private_data;
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;
	struct list_head *q = NULL;

	poll_wait(file, &tstub.read_wq, wait);
	mutex_lock(&tstub.lock);
	if (chan->kind == TSTUB_CHAN_CONTROL)
		q = &tstub.ctrl_queue;
	else if (chan->kind == TSTUB_CHAN_TUNER && chan->client)
		q = &chan->client->queue;
	if (!list_empty(&chan->outq) || (q && !list_empty(q)))
		mask |= EPOLLIN | EPOLLRDNORM;
	else if (chan->kind == TSTUB_CHAN_DEAD)
		mask |= EPOLLIN | EPOLLHUP;
	else if (chan->kind == TSTUB_CHAN_UNBOUND)
		/* read() answers at once: INIT, or -EBUSY */
		mask |= EPOLLIN | EPOLLRDNORM |
			(tstub.control && !tstub_init_overdue() ? EPOLLERR : 0);
	mutex_unlock(&tstub.lock);
	return mask;
}

static int tstub_open(struct inode *inode, struct file *file)
{
	struct tstub_chan *chan;

	/* The node's group (udev: video) or an administrator. */
	if (!capable(CAP_SYS_ADMIN) && !in_group_p(inode->i_gid))
		return -EPERM;
	chan = kzalloc(sizeof(*chan), GFP_KERNEL);
	if (!chan)
		return -ENOMEM;
	INIT_LIST_HEAD(&chan->outq);
	chan->kind = TSTUB_CHAN_UNBOUND;
	chan->opened = jiffies;
	chan->pid = task_tgid_vnr(current);
	file->private_data = chan;
	return stream_open(inode, file);
}

static int tstub_release(struct inode *inode, struct file *file)
{
	struct tstub_chan *chan = file->private_data;
	struct tstub_msg *m, *tmp;

	mutex_lock(&tstub.lock);
	if (chan->kind == TSTUB_CHAN_CONTROL) {
		tstub_control_lost(chan);
	} else if (chan->kind == TSTUB_CHAN_TUNER) {
		tstub_abort_chan(chan, -ECONNABORTED);
		tstub_unbind(chan, TSTUB_CHAN_DEAD);
	}
	list_for_each_entry_safe(m, tmp, &chan->outq, link) {
		list_del(&m->link);
		kfree(m);
	}
	mutex_unlock(&tstub.lock);
	kfree(chan);
	return 0;
}

const struct file_operations tstub_fops = {
	.owner = THIS_MODULE,
	.open = tstub_open,
	.release = tstub_release,
	.read = tstub_read,
	.write = tstub_write,
	.poll = tstub_poll,
	.llseek = no_llseek,
};

// SPDX-License-Identifier: MIT
/*
 * box_channel.c - the stub socket: accepting channels, reading and
 * validating what the daemon sends and dispatching it, writing to
 * channels without ever blocking, and closing them (with what a closing
 * control channel means for the daemon's whole session).
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "box_i.h"

/*
 * A socket cannot tell the box that a daemon is waiting to read, the way
 * the first read() on /dev/tuner tells the kernel.  So a channel that
 * opens while a control channel exists and stays silent this long is
 * taken for a second daemon (INIT reply -EBUSY, closed), or, if the
 * control channel went away meanwhile, becomes the control channel.
 * Workers send BIND right after connecting, well within it.
 */
#define CHAN_BIND_GRACE_MS 1000
/* Messages waiting for room in a socket nobody reads: the daemon hangs.
 * A resend puts a LOAD_PLUGIN and then an ATTACH per tuner on the control
 * channel at once, so the bound follows the box's tuner limit. */
#define CHAN_OUT_MAX (2 * SIM_BOX_TUNERS_MAX + 64)

#define CHAN_EVENTS LOOP_READ

int box_chan_send(struct box_channel *chan, const union tstub_buf *msg)
{
	size_t len = msg->hdr.len;
	struct box_out_msg *m;
	ssize_t n;

	if (chan->closed)
		return -EPIPE;
	if (box_list_empty(&chan->out)) {
		n = send(chan->fd, msg->bytes, len,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			goto broken;
	}
	if (chan->nout >= CHAN_OUT_MAX) {
		box_log(chan->box, 0,
			"channel %u: %d messages wait for the peer to read "
			"(the limit)",
			chan->id, CHAN_OUT_MAX);
		errno = ENOBUFS;
		goto broken;
	}
	m = malloc(sizeof(*m) + len);
	if (!m)
		goto broken;
	m->len = len;
	memcpy(m->data, msg->bytes, len);
	box_list_add_tail(&chan->out, &m->link);
	if (chan->nout++ == 0)
		loop_set_fd_mask(chan->box->loop, chan->fd,
				 CHAN_EVENTS | LOOP_WRITE);
	return 0;
broken:
	/* Closing here would re-enter whoever is sending; the hangup comes
	 * back through the loop instead. */
	box_log(chan->box, 0, "channel %u: send failed: %s", chan->id,
		strerror(errno));
	shutdown(chan->fd, SHUT_RDWR);
	return -EPIPE;
}

static void chan_flush(struct box_channel *chan)
{
	while (!box_list_empty(&chan->out)) {
		struct box_out_msg *m =
		    box_container_of(chan->out.next, struct box_out_msg, link);
		ssize_t n = send(chan->fd, m->data, m->len,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			shutdown(chan->fd, SHUT_RDWR);
			return;
		}
		box_list_del(&m->link);
		free(m);
		chan->nout--;
	}
	loop_set_fd_mask(chan->box->loop, chan->fd, CHAN_EVENTS);
}

void box_chan_reply(struct box_channel *chan, const struct tstub_hdr *req,
		    int error, const void *body, size_t len)
{
	union tstub_buf msg;

	if (tstub_build_reply(&msg, req, error, body, len) < 0)
		return;
	box_log(chan->box, 2, "channel %u: -> %s reply unique %llu: %d",
		chan->id, tstub_opcode_name(req->opcode),
		(unsigned long long)req->unique, error);
	box_chan_send(chan, &msg);
}

static void chan_free_out(struct box_channel *chan)
{
	while (!box_list_empty(&chan->out)) {
		struct box_list *n = chan->out.next;

		box_list_del(n);
		free(box_container_of(n, struct box_out_msg, link));
	}
	chan->nout = 0;
}

/* The daemon is gone: its workers' channels go with it, so that a new
 * daemon's workers can bind. */
static void chan_end_session(struct sim_box *box)
{
	box_request_abort_all(box, -ECONNABORTED);
	for (size_t i = 0; i < box->nclients; i++) {
		box->clients[i].attached = false;
		if (box->clients[i].chan)
			box_chan_close(box->clients[i].chan,
				       "the control channel closed");
	}
}

void box_chan_close(struct box_channel *chan, const char *why)
{
	struct sim_box *box = chan->box;
	bool was_control = chan == box->control;

	if (chan->closed)
		return;
	chan->closed = true;
	box_log(box, 1, "channel %u closed: %s", chan->id, why);
	loop_del_timer(box->loop, chan->timer);
	chan->timer = 0;
	loop_del_fd(box->loop, chan->fd);
	close(chan->fd);
	chan->fd = -1;
	chan_free_out(chan);
	box_i2c_chan_closed(chan);
	box_list_del(&chan->link);
	box_list_add_tail(&box->dead_channels, &chan->link);
	if (was_control) {
		box->control = NULL;
		box->ready = false;
	}
	if (chan->client) {
		chan->client->chan = NULL;
		box_request_chan_closed(chan);
	}
	if (was_control)
		chan_end_session(box);
}

static long on_bind_grace(struct loop *l, uint64_t id, void *arg)
{
	struct box_channel *chan = arg;
	union tstub_buf msg;

	(void)l;
	(void)id;
	chan->timer = 0;
	if (chan->role != CHAN_NEW)
		return LOOP_TIMER_DONE;
	if (!chan->box->control) {
		box_session_start_init(chan);
		return LOOP_TIMER_DONE;
	}
	tstub_build(&msg, TSTUB_INIT, TSTUB_F_REPLY, 0, -EBUSY, 0, NULL, 0);
	box_chan_send(chan, &msg);
	box_chan_close(chan, "a control channel exists already (-EBUSY)");
	return LOOP_TIMER_DONE;
}

static void chan_request(struct box_channel *chan, const struct tstub_hdr *h)
{
	bool tuner = chan->role == CHAN_TUNER;

	switch (h->opcode) {
	case TSTUB_BIND:
		box_session_bind(chan, h);
		return;
	case TSTUB_I2C_XFER:
		if (tuner)
			box_i2c_xfer(chan, h);
		break;
	case TSTUB_BRIDGE_CTRL:
		if (tuner) {
			chan->box->stats.bridge_requests++;
			box_bridge_ctrl(chan, h);
		}
		break;
	case TSTUB_DEMOD_STATUS:
		if (tuner) {
			chan->box->stats.bridge_requests++;
			box_demod_status(chan, h);
		}
		break;
	case TSTUB_PARAMS_CHANGED:
		if (tuner)
			box_session_params_changed(chan, h);
		return;
	default:
		box_log(chan->box, 0, "channel %u: %s is not a daemon request",
			chan->id, tstub_opcode_name(h->opcode));
		if (h->unique)
			box_chan_reply(chan, h, -EOPNOTSUPP, NULL, 0);
		return;
	}
	if (!tuner) {
		box_log(chan->box, 0, "channel %u: %s on an unbound channel",
			chan->id, tstub_opcode_name(h->opcode));
		box_chan_reply(chan, h, -ENOTCONN, NULL, 0);
	}
}

static void chan_message(struct box_channel *chan, const union tstub_buf *m,
			 size_t n)
{
	struct sim_box *box = chan->box;
	const struct tstub_hdr *h = &m->hdr;
	int err = tstub_validate(m, n);

	if (err) {
		box->stats.bad_messages++;
		box_log(box, 0,
			"channel %u: dropped a message of %zu bytes: %s",
			chan->id, n, box_errname(err));
		return;
	}
	box_log(box, 2, "channel %u: <- %s%s unique %llu client %u error %d",
		chan->id, tstub_opcode_name(h->opcode),
		(h->flags & TSTUB_F_REPLY) ? " reply" : "",
		(unsigned long long)h->unique, h->client, h->error);
	if (chan->role == CHAN_NEW) {
		loop_del_timer(box->loop, chan->timer);
		chan->timer = 0;
		chan->role = CHAN_OTHER;
	}
	if (!(h->flags & TSTUB_F_REPLY)) {
		chan_request(chan, h);
	} else if (chan->role == CHAN_CONTROL_INIT && h->opcode == TSTUB_INIT) {
		box_session_init_reply(chan, h);
	} else if (box_request_reply(chan, h) < 0) {
		box->stats.unknown_uniques++;
		box_log(box, 0,
			"channel %u: %s reply with unknown unique %llu "
			"dropped",
			chan->id, tstub_opcode_name(h->opcode),
			(unsigned long long)h->unique);
	}
}

/*
 * When a message was sent, on the monotonic clock, from the kernel's
 * stamp (SO_TIMESTAMPNS, wall clock); now when there is none.  A
 * transfer's bus time counts from there: on /dev/tuner the write() runs
 * the transfer, so the hop to this process is not the chip's time.
 */
static uint64_t chan_sent_ns(struct msghdr *mh, uint64_t now)
{
	struct timespec wall, sent;
	struct cmsghdr *cm;
	int64_t ago;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_TIMESTAMPNS ||
		    cm->cmsg_len < CMSG_LEN(sizeof(sent)))
			continue;
		memcpy(&sent, CMSG_DATA(cm), sizeof(sent));
		clock_gettime(CLOCK_REALTIME, &wall);
		ago = (int64_t)(wall.tv_sec - sent.tv_sec) * 1000000000ll +
		      (wall.tv_nsec - sent.tv_nsec);
		/* A clock stepped meanwhile: never later than now. */
		return ago > 0 && (uint64_t)ago < now ? now - (uint64_t)ago
						      : now;
	}
	return now;
}

/* One message per readiness event: the loop is level-triggered, so a
 * channel with more queued is reported again, no channel starves the
 * others, and no receive is spent finding the channel empty. */
static void chan_read(struct box_channel *chan, unsigned int events)
{
	union tstub_buf msg;
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {.iov_base = msg.bytes, .iov_len = sizeof(msg)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	/* MSG_TRUNC: the real size of an oversized message.  recv() when
	 * there is no bus time, hence no stamp: it copies no msghdr. */
	ssize_t n = chan->box->i2c_khz
			? recvmsg(chan->fd, &mh, MSG_DONTWAIT | MSG_TRUNC)
			: recv(chan->fd, msg.bytes, sizeof(msg),
			       MSG_DONTWAIT | MSG_TRUNC);

	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			box_chan_close(chan, strerror(errno));
		return;
	}
	/* 0 is the end of the stream, or an empty message. */
	if (n == 0 && (events & LOOP_HUP)) {
		box_chan_close(chan, "closed by the daemon");
		return;
	}
	chan->sent_ns = chan_sent_ns(&mh, box_now_ns());
	chan_message(chan, &msg, (size_t)n);
}

static void on_chan_event(struct loop *l, int fd, unsigned int events,
			  void *arg)
{
	struct box_channel *chan = arg;

	(void)l;
	(void)fd;
	if (events & LOOP_WRITE)
		chan_flush(chan);
	if (!chan->closed && (events & (LOOP_READ | LOOP_HUP)))
		chan_read(chan, events);
}

static void chan_new(struct sim_box *box, int fd)
{
	struct box_channel *chan = calloc(1, sizeof(*chan));

	if (!chan) {
		close(fd);
		return;
	}
	chan->box = box;
	chan->fd = fd;
	chan->id = ++box->next_chan_id;
	/* Each message stamped as it is sent (chan_sent_ns()), when there is
	 * bus time to count: the stamp costs each message a clock read. */
	if (box->i2c_khz)
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &(int){1},
			   sizeof(int));
	box_list_init(&chan->out);
	box_list_init(&chan->i2c_replies);
	if (loop_add_fd(box->loop, fd, CHAN_EVENTS, on_chan_event, chan) < 0) {
		close(fd);
		free(chan);
		return;
	}
	box_list_add_tail(&box->channels, &chan->link);
	box_log(box, 1, "channel %u opened", chan->id);
	if (!box->control)
		box_session_start_init(chan);
	else
		chan->timer = loop_add_timer_ns(box->loop,
						CHAN_BIND_GRACE_MS * 1000000ull,
						on_bind_grace, chan);
}

static void on_listen(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct sim_box *box = arg;

	(void)l;
	(void)events;
	for (int i = 0; i < 16; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				box_log(box, 0, "accept: %s", strerror(errno));
			return;
		}
		chan_new(box, cfd);
	}
}

int box_listen(struct sim_box *box, const char *path, char *err, size_t errlen)
{
	int rc;

	box->listen_fd = box_unix_listen(path, SOCK_SEQPACKET, err, errlen);
	if (box->listen_fd < 0)
		return box->listen_fd;
	rc = loop_add_fd(box->loop, box->listen_fd, LOOP_READ, on_listen, box);
	if (rc < 0)
		snprintf(err, errlen, "event loop: %s", strerror(-rc));
	return rc;
	return 0;
}

static void chan_free(struct box_channel *chan)
{
	loop_del_timer(chan->box->loop, chan->timer);
	if (chan->fd >= 0) {
		loop_del_fd(chan->box->loop, chan->fd);
		close(chan->fd);
	}
	chan_free_out(chan);
	box_i2c_chan_closed(chan);
	box_list_del(&chan->link);
	free(chan);
}

void box_channels_reap(struct sim_box *box)
{
	while (!box_list_empty(&box->dead_channels)) {
		struct box_channel *chan = box_container_of(
		    box->dead_channels.next, struct box_channel, link);

		box_list_del(&chan->link);
		free(chan);
	}
}

void box_channels_free(struct sim_box *box)
{
	while (!box_list_empty(&box->channels))
		chan_free(box_container_of(box->channels.next,
					   struct box_channel, link));
	while (!box_list_empty(&box->dead_channels))
		chan_free(box_container_of(box->dead_channels.next,
					   struct box_channel, link));
	for (size_t i = 0; i < box->nclients; i++)
		box->clients[i].chan = NULL;
	box->control = NULL;
	box->ready = false;
}

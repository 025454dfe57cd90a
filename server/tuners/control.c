// SPDX-License-Identifier: MIT
#include "control.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "eventbus.h"
#include "log.h"
#include "loop.h"
#include "plugin_host.h"
#include "stub.h"
#include "tuner.h"

struct control {
	struct daemon *d;
	int fd;           /* -1 while disconnected */
	uint64_t session; /* bumped per connection: stale replies drop */
	int initialised;  /* INIT answered on this connection */
	int down_logged;  /* "unreachable" said once per outage */
	uint64_t retry_timer;
};

/* An ATTACH waiting for its tuner's probe, or a LOAD_PLUGIN for its
 * plugin's description. */
struct pending_attach {
	struct control *c;
	uint64_t session;
	struct tstub_hdr req;
};

static void control_readable(struct loop *l, int fd, unsigned int ev,
			     void *arg);
static long control_retry(struct loop *l, uint64_t id, void *arg);

static void control_arm_retry(struct control *c)
{
	if (!c->retry_timer && !c->d->stopping)
		c->retry_timer = loop_add_timer(c->d->loop, CONTROL_RETRY_MS,
						control_retry, c);
}

static int control_connect(struct control *c)
{
	char where[PATH_MAX + 8];
	int fd = stub_open(&c->d->stub);

	if (fd < 0) {
		if (!c->down_logged)
			log_warn(
			    "stub %s unreachable (%s); retrying every "
			    "%d ms",
			    stub_addr_str(&c->d->stub, where, sizeof(where)),
			    strerror(-fd), CONTROL_RETRY_MS);
		c->down_logged = 1;
		return fd;
	}
	if (loop_add_fd(c->d->loop, fd, LOOP_READ, control_readable, c)) {
		close(fd);
		return -ENOMEM;
	}
	c->fd = fd;
	c->session++;
	c->initialised = 0;
	log_debug("control channel open, waiting for INIT");
	return 0;
}

static long control_retry(struct loop *l, uint64_t id, void *arg)
{
	struct control *c = arg;

	(void)l;
	(void)id;
	if (c->fd >= 0 || control_connect(c) == 0) {
		c->retry_timer = 0;
		return LOOP_TIMER_DONE;
	}
	return CONTROL_RETRY_MS;
}

/* The stub went away (or refused us): tuners offline, retry. */
static void control_lost(struct control *c, const char *why)
{
	struct daemon *d = c->d;
	struct stub_session none = {0};
	int was_up = c->initialised;

	loop_del_fd(d->loop, c->fd);
	close(c->fd);
	c->fd = -1;
	c->initialised = 0;
	c->session++;
	d->session = none;
	tuners_offline(d);
	if (was_up) {
		log_warn("stub disconnected (%s); reconnecting every %d ms",
			 why, CONTROL_RETRY_MS);
		c->down_logged = 1;
		eventbus_publish(d->events, "stub.disconnected",
				 EVENTBUS_NO_TUNER,
				 json_pack("{s:s}", "reason", why));
	} else if (!c->down_logged) {
		log_warn("stub closed the control channel (%s); retrying "
			 "every %d ms",
			 why, CONTROL_RETRY_MS);
		c->down_logged = 1;
	}
	control_arm_retry(c);
}

static void control_reply(struct control *c, const struct tstub_hdr *req,
			  int err, const void *body, size_t len)
{
	int ret = stub_reply(c->fd, req, err, body, len);

	if (ret)
		log_warn("control: reply to %s failed: %s",
			 tstub_opcode_name(req->opcode), strerror(-ret));
}

static void control_init(struct control *c, const union tstub_buf *m)
{
	const struct tstub_init *in = tstub_body(&m->hdr);
	struct tstub_init out = {.major = TSTUB_MAJOR,
				 .max_msg = TSTUB_MSG_MAX};
	struct stub_session s = {.connected = 1};

	if (in->major != TSTUB_MAJOR) {
		log_err("stub speaks ABI %u.%u, the daemon %d.%d: refused",
			in->major, in->minor, TSTUB_MAJOR, TSTUB_MINOR);
		eventbus_publish(c->d->events, "stub.refused",
				 EVENTBUS_NO_TUNER,
				 json_pack("{s:i,s:i}", "major", in->major,
					   "minor", in->minor));
		control_reply(c, &m->hdr, -EPROTO, NULL, 0);
		return;
	}
	out.minor = in->minor > TSTUB_MINOR ? TSTUB_MINOR : in->minor;
	out.flags = in->flags & CONTROL_ACCEPTED_CAPS;
	control_reply(c, &m->hdr, 0, &out, sizeof(out));
	s.kind = in->kind;
	s.major = out.major;
	s.minor = out.minor;
	s.flags = out.flags;
	s.settle_permille = in->settle_permille;
	s.max_clients = in->max_clients;
	s.since_ms = eventbus_now_ms();
	c->d->session = s;
	c->initialised = 1;
	c->down_logged = 0;
	log_info("stub connected: %s, ABI %u.%u, flags 0x%llx, settle %u/1000",
		 s.kind == TSTUB_KIND_SIM ? "simulated box" : "kernel", s.major,
		 s.minor, (unsigned long long)s.flags, s.settle_permille);
	eventbus_publish(c->d->events, "stub.connected", EVENTBUS_NO_TUNER,
			 json_pack("{s:s,s:i,s:i,s:I,s:i,s:i}", "kind",
				   s.kind == TSTUB_KIND_SIM ? "sim" : "kernel",
				   "major", s.major, "minor", s.minor, "flags",
				   (json_int_t)s.flags, "settle_permille",
				   s.settle_permille, "max_clients",
				   s.max_clients));
}

static void control_load_done(int err, struct plugin *p, void *arg)
{
	struct pending_attach *pa = arg;
	struct control *c = pa->c;

	if (c->fd >= 0 && c->session == pa->session)
		control_reply(c, &pa->req, err, err ? NULL : &p->info,
			      err ? 0 : sizeof(p->info));
	free(pa);
}

static void control_load(struct control *c, const union tstub_buf *m)
{
	const struct tstub_load *ld = tstub_body(&m->hdr);
	struct pending_attach *pa = malloc(sizeof(*pa));
	int err = -ENOMEM;

	if (pa) {
		*pa = (struct pending_attach){
		    .c = c, .session = c->session, .req = m->hdr};
		err = plugin_host_load(c->d->plugins, ld->chip_id,
				       control_load_done, pa);
	}
	if (err) {
		free(pa);
		control_reply(c, &m->hdr, err, NULL, 0);
	}
}

static void control_attach_done(int err, const struct tstub_chip_info *info,
				void *arg)
{
	struct pending_attach *pa = arg;
	struct control *c = pa->c;

	if (c->fd >= 0 && c->session == pa->session)
		control_reply(c, &pa->req, err, info, info ? sizeof(*info) : 0);
	else
		log_debug("attach of client %u answered after the stub left",
			  pa->req.client);
	free(pa);
}

static void control_attach(struct control *c, const union tstub_buf *m)
{
	const struct tstub_attach *a = tstub_body(&m->hdr);
	struct pending_attach *pa = malloc(sizeof(*pa));

	if (!pa) {
		control_reply(c, &m->hdr, -ENOMEM, NULL, 0);
		return;
	}
	pa->c = c;
	pa->session = c->session;
	pa->req = m->hdr;
	if (a->client == 0) {
		control_attach_done(-EINVAL, NULL, pa);
		return;
	}
	tuners_attach(c->d, a, control_attach_done, pa);
}

static void control_detach(struct control *c, const union tstub_buf *m)
{
	const struct tstub_client *cl = tstub_body(&m->hdr);

	control_reply(c, &m->hdr, tuners_detach(c->d, cl->client), NULL, 0);
}

static void control_dispatch(struct control *c, const union tstub_buf *m)
{
	const struct tstub_hdr *h = &m->hdr;

	if (h->flags & TSTUB_F_REPLY) {
		if (h->opcode == TSTUB_INIT && h->error)
			log_err("stub refused the control channel: %s "
				"(another daemon holds it?)",
				strerror(-h->error));
		else
			log_warn("control: dropped a %s reply with unknown "
				 "unique %llu",
				 tstub_opcode_name(h->opcode),
				 (unsigned long long)h->unique);
		return;
	}
	if (h->opcode == TSTUB_INIT) {
		control_init(c, m);
		return;
	}
	if (!c->initialised) {
		control_reply(c, h, -ENOTCONN, NULL, 0);
		return;
	}
	switch (h->opcode) {
	case TSTUB_LOAD_PLUGIN:
		control_load(c, m);
		break;
	case TSTUB_ATTACH:
		control_attach(c, m);
		break;
	case TSTUB_DETACH:
		control_detach(c, m);
		break;
	case TSTUB_INTERRUPT:
		break; /* nothing on the control channel is interruptible */
	default:
		if (h->unique)
			control_reply(c, h, -EOPNOTSUPP, NULL, 0);
	}
}

static void control_readable(struct loop *l, int fd, unsigned int ev, void *arg)
{
	struct control *c = arg;
	union tstub_buf m;
	int n;

	(void)l;
	(void)fd;
	(void)ev;
	n = stub_recv(c->fd, &m);
	if (n == -EAGAIN || n == -ENOMSG)
		return;
	if (n <= 0) {
		control_lost(c, n == 0 ? "closed" : strerror(-n));
		return;
	}
	control_dispatch(c, &m);
}

int control_start(struct daemon *d)
{
	struct control *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->d = d;
	c->fd = -1;
	d->control = c;
	if (control_connect(c))
		control_arm_retry(c);
	return 0;
}

void control_stop(struct daemon *d)
{
	struct control *c = d->control;

	if (!c)
		return;
	if (c->fd >= 0) {
		loop_del_fd(d->loop, c->fd);
		close(c->fd);
	}
	loop_del_timer(d->loop, c->retry_timer);
	free(c);
	d->control = NULL;
}

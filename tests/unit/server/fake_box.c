// SPDX-License-Identifier: MIT
#include "fake_box.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_stub.h"
#include "loop.h"

struct box_msg {
	uint32_t op, arg;
};

#define ATTACH_UNIQUE 1000

static void box_send_attach(struct box *b, uint32_t client)
{
	struct tstub_attach a = {.client = client,
				 .chip_id = b->chip,
				 .i2c_addr = 0x60,
				 .adapter = 0};

	snprintf(a.bridge, sizeof(a.bridge), "fakebridge");
	fake_send(b->ctl, TSTUB_ATTACH, 0, ATTACH_UNIQUE + client, 0, 0, &a,
		  sizeof(a));
}

static void box_send_load(struct box *b)
{
	struct tstub_load l = {.chip_id = b->chip};

	fake_send(b->ctl, TSTUB_LOAD_PLUGIN, 0, 10, 0, 0, &l, sizeof(l));
}

static void box_close_all(struct box *b)
{
	if (b->ctl >= 0)
		close(b->ctl);
	b->ctl = -1;
	for (int i = 0; i < BOX_CONNS; i++)
		if (b->conns[i] >= 0) {
			close(b->conns[i]);
			b->conns[i] = -1;
		}
}

static void box_accept(struct box *b)
{
	struct tstub_init in = {.major = TSTUB_MAJOR,
				.minor = TSTUB_MINOR,
				.flags = TSTUB_CAP_RESEND | TSTUB_CAP_INTERRUPT,
				.max_msg = TSTUB_MSG_MAX,
				.kind = TSTUB_KIND_SIM,
				.max_clients = BOX_CLIENTS - 1};
	int fd = accept(b->listen_fd, NULL, NULL);

	if (fd < 0)
		return;
	if (b->ctl < 0) {
		b->ctl = fd;
		fake_send(fd, TSTUB_INIT, 0, 1, 0, 0, &in, sizeof(in));
		return;
	}
	for (int i = 0; i < BOX_CONNS; i++)
		if (b->conns[i] < 0) {
			b->conns[i] = fd;
			return;
		}
	close(fd);
}

static void box_control_reply(struct box *b, const union tstub_buf *m)
{
	const struct tstub_hdr *h = &m->hdr;
	uint32_t client = (uint32_t)(h->unique - ATTACH_UNIQUE);

	switch (h->opcode) {
	case TSTUB_INIT:
		b->init_replies++;
		b->init_err = h->error;
		if (h->error)
			break;
		/* TSTUB_CAP_RESEND: what a new daemon must learn again. */
		for (uint32_t c = 1; c < BOX_CLIENTS; c++)
			if (b->attached[c]) {
				box_send_load(b);
				box_send_attach(b, c);
			}
		break;
	case TSTUB_LOAD_PLUGIN:
		b->load_replies++;
		b->load_err = h->error;
		if (!h->error)
			memcpy(&b->load_info, tstub_body(h),
			       sizeof(b->load_info));
		break;
	case TSTUB_ATTACH:
		if (client >= BOX_CLIENTS)
			break;
		b->attach_replies[client]++;
		b->attach_err[client] = h->error;
		b->attached[client] = !h->error;
		break;
	case TSTUB_DETACH:
		b->detach_replies++;
		b->detach_err = h->error;
		break;
	}
}

static void box_tuner_msg(struct box *b, int fd, const union tstub_buf *m)
{
	const struct tstub_hdr *h = &m->hdr;
	uint32_t client = h->client;

	if (client >= BOX_CLIENTS || (h->flags & TSTUB_F_REPLY))
		return;
	if (h->opcode == TSTUB_BIND) {
		client = ((const struct tstub_client *)tstub_body(h))->client;
		if (client >= BOX_CLIENTS) {
			fake_reply(fd, h, -ENOENT, NULL, 0);
			return;
		}
		b->binds[client]++;
		fake_reply(fd, h, 0, &b->cached[client],
			   sizeof(b->cached[client]));
	} else if (h->opcode == TSTUB_PARAMS_CHANGED) {
		/* cached first: a reader that sees the count sees them */
		memcpy(&b->cached[client], tstub_body(h),
		       sizeof(b->cached[client]));
		b->params_changed[client]++;
	} else if (h->unique) {
		fake_reply(fd, h, -EOPNOTSUPP, NULL, 0);
	}
}

static int box_command(struct box *b)
{
	struct box_msg c;

	if (read(b->cmd_pipe[0], &c, sizeof(c)) != sizeof(c))
		return 1;
	switch (c.op) {
	case BOX_LOAD:
		b->chip = c.arg;
		box_send_load(b);
		break;
	case BOX_ATTACH:
		box_send_attach(b, c.arg);
		break;
	case BOX_DETACH: {
		struct tstub_client cl = {.client = c.arg};

		b->attached[c.arg] = 0;
		fake_send(b->ctl, TSTUB_DETACH, 0, 20, 0, 0, &cl, sizeof(cl));
		break;
	}
	case BOX_DROP_CONTROL:
		box_close_all(b);
		break;
	case BOX_QUIT:
		return 1;
	}
	return 0;
}

/* One readable fd: its message, or its close. */
static void box_readable(struct box *b, int *fd, int control)
{
	union tstub_buf m;
	int n = fake_recv(*fd, &m, 0);

	if (n == 0 || (n < 0 && n != -ETIMEDOUT && n != -EBADMSG &&
		       n != -EMSGSIZE && n != -EOPNOTSUPP)) {
		close(*fd);
		*fd = -1;
		return;
	}
	if (n <= 0)
		return;
	if (control && (m.hdr.flags & TSTUB_F_REPLY))
		box_control_reply(b, &m);
	else if (!control)
		box_tuner_msg(b, *fd, &m);
}

static void *box_run(void *arg)
{
	struct box *b = arg;

	for (;;) {
		struct pollfd p[BOX_CONNS + 3];
		int n = 0;

		p[n++] =
		    (struct pollfd){.fd = b->cmd_pipe[0], .events = POLLIN};
		p[n++] = (struct pollfd){.fd = b->listen_fd, .events = POLLIN};
		p[n++] = (struct pollfd){.fd = b->ctl, .events = POLLIN};
		for (int i = 0; i < BOX_CONNS; i++)
			p[n++] = (struct pollfd){.fd = b->conns[i],
						 .events = POLLIN};
		if (poll(p, (nfds_t)n, 1000) < 0 && errno != EINTR)
			break;
		pthread_mutex_lock(&b->lock);
		if (p[0].revents && box_command(b)) {
			pthread_mutex_unlock(&b->lock);
			break;
		}
		if (p[1].revents)
			box_accept(b);
		if (p[2].revents && b->ctl >= 0)
			box_readable(b, &b->ctl, 1);
		for (int i = 0; i < BOX_CONNS; i++)
			if (p[3 + i].revents && b->conns[i] >= 0)
				box_readable(b, &b->conns[i], 0);
		pthread_mutex_unlock(&b->lock);
	}
	return NULL;
}

int box_start(struct box *b, const char *path)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
	b->ctl = -1;
	for (int i = 0; i < BOX_CONNS; i++)
		b->conns[i] = -1;
	b->addr.sun_family = AF_UNIX;
	snprintf(b->addr.sun_path, sizeof(b->addr.sun_path), "%s", path);
	unlink(path);
	b->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (b->listen_fd < 0 ||
	    bind(b->listen_fd, (struct sockaddr *)&b->addr, sizeof(b->addr)) ||
	    listen(b->listen_fd, 8) || pipe(b->cmd_pipe))
		return -errno;
	return pthread_create(&b->thread, NULL, box_run, b) ? -EAGAIN : 0;
}

void box_cmd(struct box *b, enum box_op op, uint32_t arg)
{
	struct box_msg c = {op, arg};

	if (write(b->cmd_pipe[1], &c, sizeof(c)) != sizeof(c))
		perror("box_cmd");
}

void box_stop(struct box *b)
{
	box_cmd(b, BOX_QUIT, 0);
	pthread_join(b->thread, NULL);
	box_close_all(b);
	close(b->listen_fd);
	close(b->cmd_pipe[0]);
	close(b->cmd_pipe[1]);
	unlink(b->addr.sun_path);
	pthread_mutex_destroy(&b->lock);
}

int box_get(struct box *b, const int *field)
{
	int v;

	pthread_mutex_lock(&b->lock);
	v = *field;
	pthread_mutex_unlock(&b->lock);
	return v;
}

int box_run_until(struct loop *l, int (*cond)(void *arg), void *arg, int ms)
{
	uint64_t end = loop_now_ms() + (uint64_t)ms;

	while (!cond(arg) && loop_now_ms() < end)
		loop_run_once(l, 10);
	return cond(arg);
}

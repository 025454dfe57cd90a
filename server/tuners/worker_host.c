// SPDX-License-Identifier: MIT
#include "worker_host.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"
#include "stub.h"

uint64_t worker_deadline(const struct worker_ctx *w, uint64_t cap_ns)
{
	uint64_t d = loop_now_ns() + (uint64_t)w->deadline_ms * 1000000ull;

	return cap_ns && cap_ns < d ? cap_ns : d;
}

static int worker_fifo_push(struct worker_ctx *w, const union tstub_buf *m)
{
	if (w->fifo_count == WORKER_FIFO_MAX)
		return -EBUSY;
	memcpy(&w->fifo[(w->fifo_head + w->fifo_count) % WORKER_FIFO_MAX], m,
	       m->hdr.len);
	w->fifo_count++;
	return 0;
}

int worker_fifo_pop(struct worker_ctx *w, union tstub_buf *out)
{
	const union tstub_buf *m;

	if (!w->fifo_count)
		return 0;
	m = &w->fifo[w->fifo_head];
	memcpy(out, m, m->hdr.len);
	w->fifo_head = (w->fifo_head + 1) % WORKER_FIFO_MAX;
	w->fifo_count--;
	return 1;
}

int worker_fifo_cancel(struct worker_ctx *w, uint64_t unique)
{
	union tstub_buf keep[WORKER_FIFO_MAX];
	unsigned int n = 0, found = 0;
	union tstub_buf m;

	while (worker_fifo_pop(w, &m)) {
		if (m.hdr.unique == unique && !found)
			found = 1;
		else
			memcpy(&keep[n++], &m, m.hdr.len);
	}
	for (unsigned int i = 0; i < n; i++)
		worker_fifo_push(w, &keep[i]);
	return (int)found;
}

/* A message that is not the awaited reply, arriving during a wait. */
static void worker_stash(struct worker_ctx *w, const union tstub_buf *m)
{
	const struct tstub_hdr *h = &m->hdr;

	if (h->flags & TSTUB_F_REPLY) {
		w->dropped_replies++;
		log_warn("tuner %u: dropped a %s reply with unknown unique "
			 "%llu",
			 w->client, tstub_opcode_name(h->opcode),
			 (unsigned long long)h->unique);
		return;
	}
	if (h->opcode == TSTUB_INTERRUPT) {
		const struct tstub_interrupt *in = tstub_body(h);

		worker_fifo_cancel(w, in->unique);
		return;
	}
	if (worker_fifo_push(w, m) == 0)
		return;
	w->busy_refusals++;
	log_warn("tuner %u: %s request while busy and queue full: -EBUSY",
		 w->client, tstub_opcode_name(h->opcode));
	if (h->unique)
		stub_reply(w->stub_fd, h, -EBUSY, NULL, 0);
}

static int worker_wait_readable(int fd, uint64_t deadline_ns)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	uint64_t now = loop_now_ns();
	int timeout_ms = 0;
	int n;

	/* Past the deadline a reply already queued still counts: look once
	 * without waiting. */
	if (now < deadline_ns)
		timeout_ms = (int)((deadline_ns - now + 999999) / 1000000);
	n = poll(&p, 1, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

/*
 * The next message before the deadline, or -EAGAIN (none yet: ask again)
 * or -ETIMEDOUT.  Far from the deadline a socket channel waits in the
 * read itself, one slice at a time; near it poll() keeps the exact bound.
 */
static int worker_recv_by(struct worker_ctx *w, uint64_t deadline_ns,
			  union tstub_buf *m)
{
	uint64_t now = loop_now_ns();
	int err;

	if (w->recv_slice_ns && deadline_ns > now &&
	    deadline_ns - now > w->recv_slice_ns)
		return stub_recv_wait(w->stub_fd, m);
	/* The reply cannot be there yet right after the request: wait first,
	 * sparing a receive that would only find the channel empty. */
	err = worker_wait_readable(w->stub_fd, deadline_ns);
	return err ? err : stub_recv(w->stub_fd, m);
}

/* Wait for the reply to unique, stashing everything else. */
static int worker_await(struct worker_ctx *w, uint64_t unique, uint16_t opcode,
			union tstub_buf *reply)
{
	uint64_t deadline = worker_deadline(w, w->cmd_deadline_ns);

	for (;;) {
		int n = worker_recv_by(w, deadline, reply);

		if (n == -EAGAIN || n == -ENOMSG)
			continue;
		if (n == -ETIMEDOUT)
			return n;
		if (n <= 0) {
			w->stub_closed = 1;
			return -ECONNABORTED;
		}
		if ((reply->hdr.flags & TSTUB_F_REPLY) &&
		    reply->hdr.unique == unique && reply->hdr.opcode == opcode)
			return reply->hdr.error;
		worker_stash(w, reply);
	}
}

static int uses_bridge(uint16_t opcode)
{
	return opcode == TSTUB_I2C_XFER || opcode == TSTUB_BRIDGE_CTRL ||
	       opcode == TSTUB_DEMOD_STATUS;
}

/* Before a bridge request of the worker's own command: its CMD_BEGIN. */
static int worker_bracket_open(struct worker_ctx *w)
{
	union tstub_buf reply;
	int err;

	if (!w->cmd_bracket || w->stub_cmd || w->bracket_open)
		return 0;
	err = worker_call(w, TSTUB_CMD_BEGIN, NULL, 0, &reply);
	if (!err)
		w->bracket_open = 1;
	return err;
}

int worker_bracket_close(struct worker_ctx *w)
{
	union tstub_buf reply;

	if (!w->bracket_open)
		return 0;
	w->bracket_open = 0;
	return worker_call(w, TSTUB_CMD_END, NULL, 0, &reply);
}

int worker_call(struct worker_ctx *w, uint16_t opcode, const void *body,
		size_t len, union tstub_buf *reply)
{
	uint64_t unique;
	int err;

	if (w->stub_closed)
		return -ECONNABORTED;
	if (uses_bridge(opcode)) {
		err = worker_bracket_open(w);
		if (err)
			return err;
	}
	unique = ++w->next_unique;
	if (tstub_build(reply, opcode, 0, unique, 0, w->client, body, len) < 0)
		return -EMSGSIZE;
	err = stub_send(w->stub_fd, reply);
	if (err == -EPIPE || err == -ECONNRESET || err == -ENOTCONN) {
		w->stub_closed = 1;
		return -ECONNABORTED;
	}
	if (err)
		return err;
	err = worker_await(w, unique, opcode, reply);
	if (err == -ETIMEDOUT)
		log_warn("tuner %u (%s): %s %llu: no reply within the deadline",
			 w->client, w->chip, tstub_opcode_name(opcode),
			 (unsigned long long)unique);
	return err;
}

int worker_notify(struct worker_ctx *w, uint16_t opcode, const void *body,
		  size_t len)
{
	union tstub_buf m;

	if (w->stub_closed)
		return -ECONNABORTED;
	if (tstub_build(&m, opcode, 0, 0, 0, w->client, body, len) < 0)
		return -EMSGSIZE;
	return stub_send(w->stub_fd, &m);
}

/* ---- struct tunerd_host services ---- */

static int host_i2c_call(void *ctx, const void *body, size_t len,
			 union tstub_buf *reply)
{
	struct worker_ctx *w = ctx;

	w->i2c_transfers++;
	return worker_call(w, TSTUB_I2C_XFER, body, len, reply);
}

static int host_i2c_transfer(void *ctx, struct tunerd_i2c_msg *msgs,
			     unsigned int n)
{
	struct worker_ctx *w = ctx;
	int err = tstub_i2c_transfer(msgs, n, host_i2c_call, w);

	if (err == -EPROTO)
		log_warn("tuner %u (%s): I2C reply not the size read",
			 w->client, w->chip);
	return err;
}

static void host_sleep_ms(void *ctx, unsigned int ms)
{
	struct worker_ctx *w = ctx;
	uint64_t ns = (uint64_t)ms * w->settle_permille * 1000ull;
	struct timespec ts = loop_timespec(ns);

	while (ns && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void host_log(void *ctx, int level, const char *fmt, ...)
{
	struct worker_ctx *w = ctx;
	char text[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (level < LL_ERR)
		level = LL_ERR;
	log_msg(level, "tuner %u (%s): %s", w->client, w->chip, text);
}

static int firmware_name_ok(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") &&
	       !strstr(name, "..");
}

static int host_firmware_get(void *ctx, const char *name, const uint8_t **data,
			     size_t *size)
{
	static const uint8_t empty[1];
	struct worker_ctx *w = ctx;
	char path[4096];
	struct stat st;
	void *map;
	int fd, err = 0;

	*data = NULL;
	*size = 0;
	if (!firmware_name_ok(name) || !w->firmware_dir)
		return -ENOENT;
	if (snprintf(path, sizeof(path), "%s/%s", w->firmware_dir, name) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		err = -ENOENT;
	else if (st.st_size > WORKER_FIRMWARE_MAX)
		err = -EFBIG;
	if (err || st.st_size == 0)
		goto out;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	*data = map;
	*size = (size_t)st.st_size;
out:
	close(fd);
	if (!err && !*data)
		*data = empty; /* an empty file: nothing mapped */
	log_msg(err ? LL_WARN : LL_DEBUG, "tuner %u (%s): firmware %s: %s",
		w->client, w->chip, name, err ? strerror(-err) : "mapped");
	return err;
}

static void host_firmware_put(void *ctx, const uint8_t *data, size_t size)
{
	(void)ctx;
	if (data && size)
		munmap((void *)data, size);
}

static int host_bridge_ctrl(void *ctx, uint32_t cmd, uint32_t arg)
{
	struct worker_ctx *w = ctx;
	struct tstub_ctrl c = {.cmd = cmd, .arg = arg};
	union tstub_buf reply;

	return worker_call(w, TSTUB_BRIDGE_CTRL, &c, sizeof(c), &reply);
}

void worker_ctx_init(struct worker_ctx *w, int stub_fd, uint32_t client,
		     const char *chip, const char *firmware_dir,
		     unsigned int deadline_ms, unsigned int settle_permille)
{
	memset(w, 0, sizeof(*w));
	w->stub_fd = stub_fd;
	w->client = client;
	snprintf(w->chip, sizeof(w->chip), "%s", chip ? chip : "?");
	w->firmware_dir = firmware_dir;
	w->deadline_ms = deadline_ms;
	w->settle_permille = settle_permille;
	if (!stub_recv_wait_set(stub_fd, WORKER_RECV_SLICE_MS))
		w->recv_slice_ns = WORKER_RECV_SLICE_MS * 1000000ull;
	w->host = (struct tunerd_host){
	    .size = sizeof(struct tunerd_host),
	    .abi = TUNERD_PLUGIN_ABI,
	    .ctx = w,
	    .i2c_transfer = host_i2c_transfer,
	    .sleep_ms = host_sleep_ms,
	    .log = host_log,
	    .firmware_get = host_firmware_get,
	    .firmware_put = host_firmware_put,
	    .bridge_ctrl = host_bridge_ctrl,
	};
}

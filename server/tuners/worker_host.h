/* SPDX-License-Identifier: MIT */
/*
 * worker_host.h - inside a tuner's worker process: the worker's own stub
 * channel and the host services (struct tunerd_host) its plugin calls.
 *
 * A plugin call blocks; an I2C transfer or bridge control is a request on
 * the channel whose reply the worker waits for, bounded by the daemon's
 * deadline and by what is left of the command's own deadline.  Requests
 * the stub sends meanwhile are queued (a small bounded FIFO, -EBUSY to the
 * stub when full) and served after the command.
 *
 * A command the worker starts itself (not one the stub asked for) is
 * bracketed when the stub offers TSTUB_CAP_CMD_BRACKET: TSTUB_CMD_BEGIN
 * before its first request on the bridge (I2C, bridge control,
 * demodulator status), TSTUB_CMD_END after its last, so the bridge keeps
 * its demodulator's gate open and its own operations out for the whole
 * command rather than per transfer.  A command with no bridge request
 * sends neither; the stub's own commands need none (the kernel caller
 * holds the gate).
 */
#ifndef TUNERD_WORKER_HOST_H
#define TUNERD_WORKER_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "tstub_codec.h"
#include "tunerd_plugin.h"

#define WORKER_FIFO_MAX     8
#define WORKER_FIRMWARE_MAX (1024 * 1024)

/* A socket channel's reads wait at most this long each: a bound far
 * above a reply's time, far below any deadline. */
#define WORKER_RECV_SLICE_MS 100

struct worker_ctx {
	int stub_fd;
	uint32_t client;
	char chip[TSTUB_NAME_LEN];
	const char *firmware_dir;
	unsigned int deadline_ms;     /* bound of any one wait */
	unsigned int settle_permille; /* chip waits vs real time */
	uint64_t next_unique;
	uint64_t cmd_deadline_ns; /* command in progress; 0 none */
	int stub_closed;          /* the channel reached EOF or broke */
	unsigned int fifo_head, fifo_count;
	union tstub_buf fifo[WORKER_FIFO_MAX];
	uint64_t dropped_replies;
	uint64_t busy_refusals;
	int cmd_bracket;        /* the stub takes CMD_BEGIN/CMD_END */
	int stub_cmd;           /* a command of the stub's runs: no bracket */
	int bracket_open;       /* CMD_BEGIN answered, CMD_END owed */
	uint32_t i2c_transfers; /* since the last report to the daemon */
	uint64_t recv_slice_ns; /* a read's own wait (socket); 0: poll() */
	struct tunerd_host host;
};

void worker_ctx_init(struct worker_ctx *w, int stub_fd, uint32_t client,
		     const char *chip, const char *firmware_dir,
		     unsigned int deadline_ms, unsigned int settle_permille);

/*
 * Send a request (opcode, body) and wait for its reply into *reply.
 * Returns 0 (reply body in *reply), the reply's negative errno,
 * -ETIMEDOUT past the deadline, -ECONNABORTED when the channel closed,
 * or a send error.
 */
int worker_call(struct worker_ctx *w, uint16_t opcode, const void *body,
		size_t len, union tstub_buf *reply);
/* Send a notification (unique 0). */
int worker_notify(struct worker_ctx *w, uint16_t opcode, const void *body,
		  size_t len);

/* The end of a command the worker started: CMD_END if its bracket is
 * open.  Returns 0 or the stub's error (-ETIMEDOUT: the bracket lapsed). */
int worker_bracket_close(struct worker_ctx *w);

/* Take the oldest queued stub request.  1 if there was one. */
int worker_fifo_pop(struct worker_ctx *w, union tstub_buf *out);
/* A TSTUB_INTERRUPT: forget the queued request it names.  1 if found. */
int worker_fifo_cancel(struct worker_ctx *w, uint64_t unique);

/* The deadline of a command starting now, capped by cap_ns if non-zero. */
uint64_t worker_deadline(const struct worker_ctx *w, uint64_t cap_ns);

#endif /* TUNERD_WORKER_HOST_H */

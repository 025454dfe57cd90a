// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: what the stub sends a tuner's worker on its own
 * channel while a plugin waits for an I2C transfer or a bridge control
 * (worker_host.c: stub_recv(), the reply matched by unique and opcode,
 * requests queued in the bounded FIFO or refused -EBUSY, INTERRUPT
 * taking a queued request back, stray replies dropped).  The fuzzer is
 * the stub at the other end of a SOCK_SEQPACKET socket pair: it queues
 * the input's messages, then the plugin's calls run with a zero deadline
 * (what is queued is read, nothing is waited for).  The worker must
 * send only valid messages, hand the plugin no more bytes than it read,
 * and queue only valid requests.
 *
 * Input: byte 0 is the read length of the transfer (1..64), then records
 * of a byte k, a le16 length and that many bytes: k & 3 = 0 sent as
 * they are; 1 with the header's length and flags made right; 2 a request
 * of opcode TYPED[byte 0], unique byte 1, its exact body; 3 a reply to
 * the worker's call byte 0 & 1 (1 the transfer, 2 the bridge control),
 * error -byte 1 when odd, the rest as body.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "stub_records.h"
#include "worker_host.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_CLIENT 3

static const uint16_t fz_typed[] = {
    TSTUB_TUNER_INIT, TSTUB_TUNER_SLEEP,   TSTUB_SET_PARAMS,
    TSTUB_GET_STATUS, TSTUB_GET_FREQUENCY, TSTUB_INTERRUPT,
    TSTUB_BIND,       TSTUB_I2C_XFER,      TSTUB_BRIDGE_CTRL,
    TSTUB_ATTACH,     TSTUB_DEMOD_STATUS,  TSTUB_CMD_BEGIN,
    TSTUB_CMD_END,
};

static void fz_send(int fd, const void *buf, size_t len)
{
	if (len)
		send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static size_t fz_typed_message(union tstub_buf *m, const uint8_t *p, size_t len)
{
	uint16_t opcode;
	int want;
	size_t body;

	if (len < 2)
		return 0;
	opcode = fz_typed[p[0] % (sizeof(fz_typed) / sizeof(fz_typed[0]))];
	want = tstub_body_size(opcode, 0);
	body = fz_body(m, want >= 0 ? (size_t)want : len - 2, p + 2, len - 2);
	return (size_t)tstub_build(m, opcode, 0, p[1], 0, FZ_CLIENT,
				   m->bytes + sizeof(m->hdr), body);
}

/* A reply to the worker's call 1 (I2C_XFER) or 2 (BRIDGE_CTRL). */
static size_t fz_reply(union tstub_buf *m, const uint8_t *p, size_t len)
{
	uint16_t opcode = p[0] & 1 ? TSTUB_BRIDGE_CTRL : TSTUB_I2C_XFER;
	int32_t error = len > 1 && (p[1] & 1) ? -(int32_t)p[1] : 0;
	size_t body = len > 2 && !error ? len - 2 : 0;

	body = fz_body(m, body, p + 2, body);
	return (size_t)tstub_build(m, opcode, TSTUB_F_REPLY, (p[0] & 1) + 1u,
				   error, FZ_CLIENT, m->bytes + sizeof(m->hdr),
				   body);
}

static void fz_record(void *ctx, int k, const uint8_t *p, size_t len)
{
	int fd = *(const int *)ctx;
	union tstub_buf m;
	size_t n = 0;

	switch (k & 3) {
	case 0:
		fz_send(fd, p, len);
		return;
	case 1:
		n = fz_fixed_header(&m, p, len);
		break;
	case 2:
		n = fz_typed_message(&m, p, len);
		break;
	case 3:
		n = len ? fz_reply(&m, p, len) : 0;
		break;
	}
	fz_send(fd, m.bytes, n);
}

/* What the worker sent: its two requests and its refusals, all valid. */
static void fz_check_sent(int fd)
{
	union tstub_buf m;
	ssize_t n;

	while ((n = recv(fd, m.bytes, sizeof(m.bytes),
			 MSG_DONTWAIT | MSG_TRUNC)) > 0)
		if (tstub_validate(m.bytes, (size_t)n))
			abort();
}

static void fz_calls(struct worker_ctx *w, unsigned int rlen)
{
	uint8_t reg[2] = {0x00, 0x08}, rd[64 + 1];
	struct tunerd_i2c_msg msgs[2] = {
	    {.addr = 0x61, .len = 2, .buf = reg},
	    {.addr = 0x61,
	     .flags = TUNERD_I2C_RD,
	     .len = (uint16_t)rlen,
	     .buf = rd},
	};
	union tstub_buf m;

	rd[rlen] = 0xA5; /* the byte after the read must stay */
	w->host.i2c_transfer(w, msgs, 2);
	if (rd[rlen] != 0xA5)
		abort();
	w->host.bridge_ctrl(w, TSTUB_CTRL_TUNER_RESET, 0);
	if (w->fifo_count > WORKER_FIFO_MAX)
		abort();
	while (worker_fifo_pop(w, &m))
		if (tstub_validate(m.bytes, m.hdr.len) ||
		    (m.hdr.flags & TSTUB_F_REPLY) ||
		    m.hdr.opcode == TSTUB_INTERRUPT)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct worker_ctx *w;
	int sv[2];

	if (!size)
		return 0;
	log_set_level(0);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		abort();
	w = malloc(sizeof(*w));
	if (!w)
		abort();
	/* Deadline 0: a call reads what is queued and never waits. */
	worker_ctx_init(w, sv[0], FZ_CLIENT, "FUZZ", NULL, 0, 0);
	fz_for_each_record(data + 1, size - 1, fz_record, &sv[1]);
	fz_calls(w, data[0] % 64 + 1);
	fz_check_sent(sv[1]);
	close(sv[0]);
	close(sv[1]);
	free(w);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * tstub_codec.h - building and checking tuner-stub messages in userspace
 * (the daemon, its workers and the simulated box share it).
 */
#ifndef TSTUB_CODEC_H
#define TSTUB_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "tuner_stub.h"
#include "tunerd_plugin.h"

/* A message buffer large enough for any valid message, aligned for the
 * header and bodies. */
union tstub_buf {
	struct tstub_hdr hdr;
	uint64_t align;
	uint8_t bytes[TSTUB_MSG_MAX];
};

/*
 * Check one received message of n bytes: length field, size limits, known
 * opcode, exact body size for its direction, I2C segment bounds.
 * Returns 0, -EMSGSIZE (shorter than a header or longer than
 * TSTUB_MSG_MAX), -EBADMSG (length field or body size wrong, bad I2C
 * segments) or -EOPNOTSUPP (unknown opcode).
 */
int tstub_validate(const void *buf, size_t n);

/* Fill a header + body into buf (TSTUB_MSG_MAX bytes).  Returns the
 * message length, or -EMSGSIZE if the body does not fit. */
int tstub_build(union tstub_buf *buf, uint16_t opcode, uint16_t flags,
		uint64_t unique, int32_t error, uint32_t client,
		const void *body, size_t body_len);

/* Build the reply to req: same opcode, unique and client. */
int tstub_build_reply(union tstub_buf *buf, const struct tstub_hdr *req,
		      int32_t error, const void *body, size_t body_len);

/* The largest TSTUB_I2C_XFER request body. */
#define TSTUB_I2C_BODY_MAX (sizeof(struct tstub_i2c_xfer) + TSTUB_I2C_DATA_MAX)

/*
 * A plugin's I2C transfer as a TSTUB_I2C_XFER request body in body
 * (TSTUB_I2C_BODY_MAX bytes): the segments, then every write segment's
 * bytes.  Returns the body's length, with in *rlen the bytes the reply
 * must carry, or -EINVAL (no message or more than TSTUB_I2C_SEGS_MAX, an
 * empty one, a bad address or flag, over TSTUB_I2C_DATA_MAX bytes).
 */
int tstub_i2c_request(const struct tunerd_i2c_msg *msgs, unsigned int n,
		      uint8_t *body, size_t *rlen);

/* The reply's bytes into the transfer's read messages, in order: 0, or
 * -EPROTO when the reply does not carry exactly rlen bytes. */
int tstub_i2c_reply(const struct tstub_hdr *reply, struct tunerd_i2c_msg *msgs,
		    unsigned int n, size_t rlen);

/* Sends body (len bytes) as a TSTUB_I2C_XFER request on the caller's
 * channel and waits for the reply: 0, or its error. */
typedef int (*tstub_i2c_call_fn)(void *ctx, const void *body, size_t len,
				 union tstub_buf *reply);

/* One I2C transfer through call: the request built, sent, and its reply
 * read into msgs.  0, -EINVAL, call's error, or -EPROTO (a reply of the
 * wrong size). */
int tstub_i2c_transfer(struct tunerd_i2c_msg *msgs, unsigned int n,
		       tstub_i2c_call_fn call, void *ctx);

static inline const void *tstub_body(const struct tstub_hdr *h)
{
	return (const uint8_t *)h + sizeof(*h);
}

static inline size_t tstub_body_len(const struct tstub_hdr *h)
{
	return h->len - sizeof(*h);
}

/* Sum of the write-segment lengths of an I2C transfer request. */
size_t tstub_i2c_write_bytes(const struct tstub_i2c_xfer *x);
/* Sum of the read-segment lengths. */
size_t tstub_i2c_read_bytes(const struct tstub_i2c_xfer *x);

/* Names as the API and the logs show them ("DVBT", "DVBC_ANNEX_A", ...).
 * Unknown values give "UNKNOWN"; parse returns TSTUB_DELSYS_NONE. */
const char *tstub_delsys_name(uint32_t delsys);
uint32_t tstub_delsys_parse(const char *name);
const char *tstub_opcode_name(uint16_t opcode);

#endif /* TSTUB_CODEC_H */

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

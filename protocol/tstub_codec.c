// SPDX-License-Identifier: MIT
#include "tstub_codec.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

static int seg_bytes(const struct tstub_i2c_xfer *x, int want_read, size_t *out)
{
	size_t sum = 0;

	if (x->nsegs == 0 || x->nsegs > TSTUB_I2C_SEGS_MAX)
		return -EBADMSG;
	for (uint32_t i = 0; i < x->nsegs; i++) {
		const struct tstub_i2c_seg *s = &x->segs[i];

		if (s->len == 0 || s->addr > 0x7f || (s->flags & ~TSTUB_I2C_RD))
			return -EBADMSG;
		if (!!(s->flags & TSTUB_I2C_RD) == want_read)
			sum += s->len;
	}
	*out = sum;
	return 0;
}

size_t tstub_i2c_write_bytes(const struct tstub_i2c_xfer *x)
{
	size_t n = 0;

	return seg_bytes(x, 0, &n) ? 0 : n;
}

size_t tstub_i2c_read_bytes(const struct tstub_i2c_xfer *x)
{
	size_t n = 0;

	return seg_bytes(x, 1, &n) ? 0 : n;
}

static int validate_i2c_request(const struct tstub_hdr *h)
{
	const struct tstub_i2c_xfer *x = tstub_body(h);
	size_t wr, rd;

	if (tstub_body_len(h) < sizeof(*x))
		return -EBADMSG;
	if (seg_bytes(x, 0, &wr) || seg_bytes(x, 1, &rd))
		return -EBADMSG;
	if (wr + rd > TSTUB_I2C_DATA_MAX)
		return -EBADMSG;
	if (tstub_body_len(h) != sizeof(*x) + wr)
		return -EBADMSG;
	return 0;
}

int tstub_validate(const void *buf, size_t n)
{
	const struct tstub_hdr *h = buf;
	int reply, want;

	if (n < sizeof(*h) || n > TSTUB_MSG_MAX)
		return -EMSGSIZE;
	if (h->len != n || (h->flags & ~TSTUB_F_REPLY))
		return -EBADMSG;
	reply = !!(h->flags & TSTUB_F_REPLY);
	want = tstub_body_size(h->opcode, reply);
	if (want == -1)
		return -EOPNOTSUPP;
	if (!reply && h->error != 0)
		return -EBADMSG;
	/* A notification is never answered, so it carries no unique: one
	 * that does would be answered with a reply that does not exist. */
	if (!reply && h->unique && tstub_body_size(h->opcode, 1) == -1)
		return -EBADMSG;
	/* A failed request is answered by a bare header. */
	if (reply && h->error != 0)
		return n == sizeof(*h) && h->error < 0 && h->error > -4096
			   ? 0
			   : -EBADMSG;
	if (want == -2)
		return reply ? (tstub_body_len(h) <= TSTUB_I2C_DATA_MAX
				    ? 0
				    : -EBADMSG)
			     : validate_i2c_request(h);
	return tstub_body_len(h) == (size_t)want ? 0 : -EBADMSG;
}

int tstub_build(union tstub_buf *buf, uint16_t opcode, uint16_t flags,
		uint64_t unique, int32_t error, uint32_t client,
		const void *body, size_t body_len)
{
	if (body_len > TSTUB_MSG_MAX - sizeof(struct tstub_hdr))
		return -EMSGSIZE;
	buf->hdr = (struct tstub_hdr){
	    .len = (uint32_t)(sizeof(struct tstub_hdr) + body_len),
	    .opcode = opcode,
	    .flags = flags,
	    .unique = unique,
	    .error = error,
	    .client = client,
	};
	if (body_len)
		memcpy(buf->bytes + sizeof(struct tstub_hdr), body, body_len);
	return (int)buf->hdr.len;
}

int tstub_build_reply(union tstub_buf *buf, const struct tstub_hdr *req,
		      int32_t error, const void *body, size_t body_len)
{
	if (error)
		body_len = 0;
	return tstub_build(buf, req->opcode, TSTUB_F_REPLY, req->unique, error,
			   req->client, body, body_len);
}

static const char *const delsys_names[TSTUB_DELSYS_COUNT] = {
    [TSTUB_DELSYS_NONE] = "NONE",   [TSTUB_DELSYS_DVBT] = "DVBT",
    [TSTUB_DELSYS_DVBT2] = "DVBT2", [TSTUB_DELSYS_DVBC_A] = "DVBC_ANNEX_A",
    [TSTUB_DELSYS_DVBS] = "DVBS",   [TSTUB_DELSYS_DVBS2] = "DVBS2",
    [TSTUB_DELSYS_ATSC] = "ATSC",   [TSTUB_DELSYS_ANALOG_TV] = "ANALOG_TV",
    [TSTUB_DELSYS_RADIO] = "RADIO",
};

const char *tstub_delsys_name(uint32_t delsys)
{
	return delsys < TSTUB_DELSYS_COUNT ? delsys_names[delsys] : "UNKNOWN";
}

uint32_t tstub_delsys_parse(const char *name)
{
	for (uint32_t i = 1; i < TSTUB_DELSYS_COUNT; i++)
		if (name && strcasecmp(name, delsys_names[i]) == 0)
			return i;
	return TSTUB_DELSYS_NONE;
}

const char *tstub_opcode_name(uint16_t opcode)
{
	switch (opcode) {
	case TSTUB_INIT:
		return "INIT";
	case TSTUB_LOAD_PLUGIN:
		return "LOAD_PLUGIN";
	case TSTUB_ATTACH:
		return "ATTACH";
	case TSTUB_DETACH:
		return "DETACH";
	case TSTUB_TUNER_INIT:
		return "TUNER_INIT";
	case TSTUB_TUNER_SLEEP:
		return "TUNER_SLEEP";
	case TSTUB_SET_PARAMS:
		return "SET_PARAMS";
	case TSTUB_GET_STATUS:
		return "GET_STATUS";
	case TSTUB_GET_FREQUENCY:
		return "GET_FREQUENCY";
	case TSTUB_INTERRUPT:
		return "INTERRUPT";
	case TSTUB_BIND:
		return "BIND";
	case TSTUB_I2C_XFER:
		return "I2C_XFER";
	case TSTUB_BRIDGE_CTRL:
		return "BRIDGE_CTRL";
	case TSTUB_PARAMS_CHANGED:
		return "PARAMS_CHANGED";
	case TSTUB_DEMOD_STATUS:
		return "DEMOD_STATUS";
	case TSTUB_CMD_BEGIN:
		return "CMD_BEGIN";
	case TSTUB_CMD_END:
		return "CMD_END";
	}
	return "UNKNOWN";
}

int tstub_i2c_request(const struct tunerd_i2c_msg *msgs, unsigned int n,
		      uint8_t *body, size_t *rlen)
{
	struct tstub_i2c_xfer x = {.nsegs = n};
	size_t wlen = 0;

	*rlen = 0;
	if (n == 0 || n > TSTUB_I2C_SEGS_MAX)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		const struct tunerd_i2c_msg *m = &msgs[i];
		int rd = m->flags & TUNERD_I2C_RD;

		if (m->len == 0 || m->addr > 0x7f || !m->buf ||
		    (m->flags & ~TUNERD_I2C_RD) ||
		    wlen + *rlen + m->len > TSTUB_I2C_DATA_MAX)
			return -EINVAL;
		x.segs[i] = (struct tstub_i2c_seg){
		    .addr = m->addr,
		    .flags = rd ? TSTUB_I2C_RD : 0,
		    .len = m->len,
		};
		if (rd) {
			*rlen += m->len;
		} else {
			memcpy(body + sizeof(x) + wlen, m->buf, m->len);
			wlen += m->len;
		}
	}
	memcpy(body, &x, sizeof(x));
	return (int)(sizeof(x) + wlen);
}

int tstub_i2c_reply(const struct tstub_hdr *reply, struct tunerd_i2c_msg *msgs,
		    unsigned int n, size_t rlen)
{
	const uint8_t *rd = tstub_body(reply);
	size_t off = 0;

	if (tstub_body_len(reply) != rlen)
		return -EPROTO;
	for (unsigned int i = 0; i < n; i++) {
		if (!(msgs[i].flags & TUNERD_I2C_RD))
			continue;
		memcpy(msgs[i].buf, rd + off, msgs[i].len);
		off += msgs[i].len;
	}
	return 0;
}

int tstub_i2c_transfer(struct tunerd_i2c_msg *msgs, unsigned int n,
		       tstub_i2c_call_fn call, void *ctx)
{
	uint8_t body[TSTUB_I2C_BODY_MAX];
	union tstub_buf reply;
	size_t rlen;
	int len = tstub_i2c_request(msgs, n, body, &rlen), err;

	if (len < 0)
		return len;
	err = call(ctx, body, (size_t)len, &reply);
	return err ? err : tstub_i2c_reply(&reply.hdr, msgs, n, rlen);
}

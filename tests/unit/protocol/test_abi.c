// SPDX-License-Identifier: MIT
/*
 * The stub ABI: struct layouts are frozen (a 32-bit daemon must work on a
 * 64-bit kernel), and the codec refuses every malformed message.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "tstub_codec.h"

/* Layout is ABI: a change here is an incompatible change. */
_Static_assert(sizeof(struct tstub_hdr) == 24, "hdr");
_Static_assert(sizeof(struct tstub_init) == 64, "init");
_Static_assert(sizeof(struct tstub_load) == 32, "load");
_Static_assert(sizeof(struct tstub_chip_info) == 152, "chip_info");
_Static_assert(sizeof(struct tstub_attach) == 80, "attach");
_Static_assert(sizeof(struct tstub_client) == 8, "client");
_Static_assert(sizeof(struct tstub_params) == 48, "params");
_Static_assert(sizeof(struct tstub_status) == 56, "status");
_Static_assert(sizeof(struct tstub_freq) == 16, "freq");
_Static_assert(sizeof(struct tstub_interrupt) == 8, "interrupt");
_Static_assert(sizeof(struct tstub_i2c_xfer) == 40, "i2c_xfer");
_Static_assert(sizeof(struct tstub_ctrl) == 8, "ctrl");
_Static_assert(offsetof(struct tstub_hdr, unique) == 8, "hdr.unique");
_Static_assert(offsetof(struct tstub_params, std) == 16, "params.std");
_Static_assert(offsetof(struct tstub_attach, bridge) == 32, "attach.bridge");
/* 1.1: the DVB adapter took the first reserved word of tstub_attach. */
_Static_assert(offsetof(struct tstub_attach, dvb_adapter) == 64,
	       "attach.dvb_adapter");
_Static_assert(offsetof(struct tstub_attach, reserved) == 72,
	       "attach.reserved");
_Static_assert(TSTUB_MINOR >= 1, "minor with dvb_adapter");
_Static_assert((TSTUB_CAP_DVB_ADAPTER &
		(TSTUB_CAP_RESEND | TSTUB_CAP_INTERRUPT |
		 TSTUB_CAP_DEMOD_STATUS | TSTUB_CAP_EXT)) == 0,
	       "cap bit unique");
/* 1.2: command brackets; the gate request is retired (0x25 unused). */
_Static_assert(TSTUB_MINOR >= 2, "minor with command brackets");
_Static_assert((TSTUB_CAP_CMD_BRACKET &
		(TSTUB_CAP_RESEND | TSTUB_CAP_INTERRUPT |
		 TSTUB_CAP_DEMOD_STATUS | TSTUB_CAP_DVB_ADAPTER |
		 TSTUB_CAP_EXT)) == 0,
	       "bracket cap bit unique");

static const uint16_t all_opcodes[] = {
    TSTUB_INIT,        TSTUB_LOAD_PLUGIN,    TSTUB_ATTACH,
    TSTUB_DETACH,      TSTUB_TUNER_INIT,     TSTUB_TUNER_SLEEP,
    TSTUB_SET_PARAMS,  TSTUB_GET_STATUS,     TSTUB_GET_FREQUENCY,
    TSTUB_INTERRUPT,   TSTUB_BIND,           TSTUB_I2C_XFER,
    TSTUB_BRIDGE_CTRL, TSTUB_PARAMS_CHANGED, TSTUB_DEMOD_STATUS,
    TSTUB_CMD_BEGIN,   TSTUB_CMD_END,
};

static void test_sizes_padded(void)
{
	for (size_t i = 0; i < sizeof(all_opcodes) / sizeof(*all_opcodes);
	     i++) {
		for (int reply = 0; reply < 2; reply++) {
			int n = tstub_body_size(all_opcodes[i], reply);

			CHECK(n == -1 || n == -2 || n % 8 == 0);
		}
		CHECK(strcmp(tstub_opcode_name(all_opcodes[i]), "UNKNOWN"));
	}
}

static void test_roundtrip(void)
{
	union tstub_buf b, r;
	struct tstub_params p = {
	    .delsys = TSTUB_DELSYS_DVBT,
	    .frequency = 474000000,
	    .bandwidth = 8000000,
	    .flags = TSTUB_PARAMS_VALID,
	};
	int n = tstub_build(&b, TSTUB_SET_PARAMS, 0, 77, 0, 3, &p, sizeof(p));

	CHECK_EQ_INT(n, sizeof(struct tstub_hdr) + sizeof(p));
	CHECK_EQ_INT(tstub_validate(&b, n), 0);
	CHECK_EQ_INT(b.hdr.unique, 77);
	CHECK_EQ_INT(b.hdr.client, 3);
	CHECK(!memcmp(tstub_body(&b.hdr), &p, sizeof(p)));

	n = tstub_build_reply(&r, &b.hdr, 0, NULL, 0);
	CHECK_EQ_INT(tstub_validate(&r, n), 0);
	CHECK_EQ_INT(r.hdr.unique, 77);
	CHECK(r.hdr.flags & TSTUB_F_REPLY);

	/* an error reply is a bare header, whatever body was offered */
	n = tstub_build_reply(&r, &b.hdr, -ETIMEDOUT, &p, sizeof(p));
	CHECK_EQ_INT(n, sizeof(struct tstub_hdr));
	CHECK_EQ_INT(tstub_validate(&r, n), 0);
}

static void test_refusals(void)
{
	union tstub_buf b;
	struct tstub_params p = {0};
	int n = tstub_build(&b, TSTUB_SET_PARAMS, 0, 1, 0, 1, &p, sizeof(p));

	/* short: less than a header */
	CHECK_EQ_INT(tstub_validate(&b, 10), -EMSGSIZE);
	/* oversized */
	CHECK_EQ_INT(tstub_validate(&b, TSTUB_MSG_MAX + 1), -EMSGSIZE);
	CHECK_EQ_INT(
	    tstub_build(&b, TSTUB_I2C_XFER, 0, 1, 0, 1, &p, TSTUB_MSG_MAX),
	    -EMSGSIZE);
	n = tstub_build(&b, TSTUB_SET_PARAMS, 0, 1, 0, 1, &p, sizeof(p));
	/* len field disagrees with the bytes received */
	CHECK_EQ_INT(tstub_validate(&b, n - 8), -EBADMSG);
	b.hdr.len = n + 8;
	CHECK_EQ_INT(tstub_validate(&b, n), -EBADMSG);
	/* body of the wrong size for the opcode */
	n = tstub_build(&b, TSTUB_SET_PARAMS, 0, 1, 0, 1, &p, 8);
	CHECK_EQ_INT(tstub_validate(&b, n), -EBADMSG);
	/* unknown opcode, zeroed header */
	n = tstub_build(&b, 0x7777, 0, 1, 0, 1, NULL, 0);
	CHECK_EQ_INT(tstub_validate(&b, n), -EOPNOTSUPP);
	memset(&b, 0, sizeof(b));
	b.hdr.len = sizeof(b.hdr);
	CHECK_EQ_INT(tstub_validate(&b, sizeof(b.hdr)), -EOPNOTSUPP);
	/* unknown flag bit; a request that claims an error */
	n = tstub_build(&b, TSTUB_TUNER_INIT, 0x8000, 1, 0, 1, NULL, 0);
	CHECK_EQ_INT(tstub_validate(&b, n), -EBADMSG);
	n = tstub_build(&b, TSTUB_TUNER_INIT, 0, 1, -5, 1, NULL, 0);
	CHECK_EQ_INT(tstub_validate(&b, n), -EBADMSG);
	/* error reply with a body, positive error */
	struct tstub_status st = {0};

	n = tstub_build(&b, TSTUB_GET_STATUS, TSTUB_F_REPLY, 1, -5, 1, &st,
			sizeof(st));
	CHECK_EQ_INT(tstub_validate(&b, n), -EBADMSG);
	n = tstub_build(&b, TSTUB_GET_STATUS, TSTUB_F_REPLY, 1, 5, 1, NULL, 0);
	CHECK_EQ_INT(tstub_validate(&b, n), -EBADMSG);
	/* notifications are never answered */
	n = tstub_build(&b, TSTUB_INTERRUPT, TSTUB_F_REPLY, 1, 0, 1, NULL, 0);
	CHECK_EQ_INT(tstub_validate(&b, n), -EOPNOTSUPP);
	/* ... so they carry no unique */
	struct tstub_interrupt in = {.unique = 3};

	n = tstub_build(&b, TSTUB_INTERRUPT, 0, 0, 0, 1, &in, sizeof(in));
	CHECK_EQ_INT(tstub_validate(&b, n), 0);
	n = tstub_build(&b, TSTUB_INTERRUPT, 0, 7, 0, 1, &in, sizeof(in));
	CHECK_EQ_INT(tstub_validate(&b, n), -EBADMSG);
	n = tstub_build(&b, TSTUB_PARAMS_CHANGED, 0, 7, 0, 1, &p, sizeof(p));
	CHECK_EQ_INT(tstub_validate(&b, n), -EBADMSG);
}

static int build_i2c(union tstub_buf *b, const struct tstub_i2c_xfer *x,
		     size_t wbytes)
{
	uint8_t body[sizeof(*x) + TSTUB_I2C_DATA_MAX];

	memcpy(body, x, sizeof(*x));
	memset(body + sizeof(*x), 0xAB, wbytes);
	return tstub_build(b, TSTUB_I2C_XFER, 0, 9, 0, 1, body,
			   sizeof(*x) + wbytes);
}

static void test_i2c_bounds(void)
{
	union tstub_buf b;
	struct tstub_i2c_xfer x = {
	    .nsegs = 2,
	    .segs = {{.addr = 0x60, .len = 1},
		     {.addr = 0x60, .flags = TSTUB_I2C_RD, .len = 2}},
	};
	int n = build_i2c(&b, &x, 1);

	CHECK_EQ_INT(tstub_validate(&b, n), 0);
	CHECK_EQ_INT(tstub_i2c_write_bytes(&x), 1);
	CHECK_EQ_INT(tstub_i2c_read_bytes(&x), 2);
	/* write bytes missing */
	n = build_i2c(&b, &x, 0);
	CHECK_EQ_INT(tstub_validate(&b, n), -EBADMSG);
	/* too many segments, none, zero length, 10-bit address, bad flag */
	x.nsegs = TSTUB_I2C_SEGS_MAX + 1;
	CHECK_EQ_INT(tstub_validate(&b, build_i2c(&b, &x, 1)), -EBADMSG);
	x.nsegs = 0;
	CHECK_EQ_INT(tstub_validate(&b, build_i2c(&b, &x, 0)), -EBADMSG);
	x.nsegs = 2;
	x.segs[1].len = 0;
	CHECK_EQ_INT(tstub_validate(&b, build_i2c(&b, &x, 1)), -EBADMSG);
	x.segs[1].len = 2;
	x.segs[0].addr = 0x3ff;
	CHECK_EQ_INT(tstub_validate(&b, build_i2c(&b, &x, 1)), -EBADMSG);
	x.segs[0].addr = 0x60;
	x.segs[0].flags = 0x10;
	CHECK_EQ_INT(tstub_validate(&b, build_i2c(&b, &x, 1)), -EBADMSG);
	x.segs[0].flags = 0;
	/* total data over the bound (reads count too) */
	x.segs[1].len = TSTUB_I2C_DATA_MAX;
	CHECK_EQ_INT(tstub_validate(&b, build_i2c(&b, &x, 1)), -EBADMSG);
	/* a reply may not exceed the data bound */
	n = tstub_build(&b, TSTUB_I2C_XFER, TSTUB_F_REPLY, 9, 0, 1, NULL, 0);
	b.hdr.len = sizeof(b.hdr) + TSTUB_I2C_DATA_MAX + 8;
	CHECK_EQ_INT(tstub_validate(&b, b.hdr.len), -EBADMSG);
}

/* A plugin's write-then-read as a request body and back, and the
 * transfers the request refuses. */
static void test_i2c_request_reply(void)
{
	uint8_t reg[2] = {0x0a, 0x0b}, val[3] = {0};
	struct tunerd_i2c_msg msgs[2] = {
	    {.addr = 0x60, .len = 2, .buf = reg},
	    {.addr = 0x60, .flags = TUNERD_I2C_RD, .len = 3, .buf = val},
	};
	static const uint8_t answer[3] = {1, 2, 3};
	uint8_t body[TSTUB_I2C_BODY_MAX];
	struct tstub_i2c_xfer x;
	union tstub_buf m;
	size_t rlen = 0;
	int len = tstub_i2c_request(msgs, 2, body, &rlen);

	CHECK_EQ_INT(len, (int)(sizeof(x) + 2));
	CHECK(rlen == 3);
	memcpy(&x, body, sizeof(x));
	CHECK_EQ_INT(x.nsegs, 2);
	CHECK_EQ_INT(x.segs[1].flags, TSTUB_I2C_RD);
	CHECK_EQ_INT(x.segs[1].len, 3);
	CHECK(!memcmp(body + sizeof(x), reg, sizeof(reg)));
	tstub_build(&m, TSTUB_I2C_XFER, TSTUB_F_REPLY, 1, 0, 1, answer, 2);
	CHECK_EQ_INT(tstub_i2c_reply(&m.hdr, msgs, 2, rlen), -EPROTO);
	tstub_build(&m, TSTUB_I2C_XFER, TSTUB_F_REPLY, 1, 0, 1, answer, 3);
	CHECK_EQ_INT(tstub_i2c_reply(&m.hdr, msgs, 2, rlen), 0);
	CHECK(!memcmp(val, answer, sizeof(val)));
	CHECK_EQ_INT(tstub_i2c_request(msgs, 0, body, &rlen), -EINVAL);
	msgs[0].addr = 0x80;
	CHECK_EQ_INT(tstub_i2c_request(msgs, 2, body, &rlen), -EINVAL);
	msgs[0].addr = 0x60;
	msgs[0].len = 0;
	CHECK_EQ_INT(tstub_i2c_request(msgs, 2, body, &rlen), -EINVAL);
	msgs[0].len = 2; /* and a read that takes the sum over the bound */
	msgs[1].len = TSTUB_I2C_DATA_MAX - 1;
	CHECK_EQ_INT(tstub_i2c_request(msgs, 2, body, &rlen), -EINVAL);
}

static void test_delsys_names(void)
{
	for (uint32_t d = 1; d < TSTUB_DELSYS_COUNT; d++)
		CHECK_EQ_INT(tstub_delsys_parse(tstub_delsys_name(d)), d);
	CHECK_EQ_INT(tstub_delsys_parse("dvbt2"), TSTUB_DELSYS_DVBT2);
	CHECK_EQ_INT(tstub_delsys_parse("NONE"), TSTUB_DELSYS_NONE);
	CHECK_EQ_INT(tstub_delsys_parse("DVB-X"), TSTUB_DELSYS_NONE);
	CHECK_EQ_INT(tstub_delsys_parse(NULL), TSTUB_DELSYS_NONE);
	CHECK(!strcmp(tstub_delsys_name(99), "UNKNOWN"));
}

int main(void)
{
	test_sizes_padded();
	test_roundtrip();
	test_refusals();
	test_i2c_bounds();
	test_i2c_request_reply();
	test_delsys_names();
	return check_done("test_abi");
}

/* SPDX-License-Identifier: MIT */
/*
 * box_test.h - the simulated box in the test's own process, and the
 * daemon's side of the stub ABI played by hand over real SEQPACKET
 * sockets.  The box runs only while a helper waits, so every wait pumps
 * it.
 */
#ifndef BOX_TEST_H
#define BOX_TEST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "box.h"
#include "check.h"
#include "tstub_codec.h"
#include "xc3028_fwgen.h"

#define BT_MAX_BRIDGES 8
#define BT_WAIT_MS     2000

/* The test spectrum: a strong DVB-T mux and a weak one. */
static const char bt_env_text[] =
    "# system freq bandwidth level_dBm cnr_dB label\n"
    "DVBT 474000000 8000000 -50.0 30.0 \"MUX A\"\n"
    "DVBT 506000000 8000000 -88.0 4.0 weak\n";

/* MT2060 registers 1..5 for 474 MHz (start register first). */
static const uint8_t bt_mt2060_474[] = {0x01, 0x6e, 0x69, 0x03, 0xfb, 0x93};

struct bt {
	struct sim_box *box;
	struct sim_box_config cfg;
	struct sim_box_bridge bridges[BT_MAX_BRIDGES];
	char chips[BT_MAX_BRIDGES][16];
	char dir[64];
	char stub[128], app[128], trace[128], env[128], fw[128];
	uint64_t unique; /* the test daemon's own request ids */
};

/* The box under test: one per test program at a time. */
static struct bt t_box __attribute__((unused));

struct bt_result {
	int done;
	int err;
	size_t len;
	uint8_t body[512];
};

static inline uint64_t bt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t bt_now_ms(void)
{
	return bt_now_ns() / 1000000;
}

static inline void bt_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* chips: "mt2060,qt1010"; bridge i has adapter i and client id i + 1. */
static inline void bt_setup(struct bt *t, const char *chips)
{
	char err[256];
	size_t n = 0;

	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/tunerd-boxtest-XXXXXX");
	if (!mkdtemp(t->dir)) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(t->stub, sizeof(t->stub), "%s/sim.sock", t->dir);
	snprintf(t->app, sizeof(t->app), "%s/app.sock", t->dir);
	snprintf(t->trace, sizeof(t->trace), "%s/i2c.trace", t->dir);
	snprintf(t->env, sizeof(t->env), "%s/test.env", t->dir);
	snprintf(t->fw, sizeof(t->fw), "%s/xc3028-v27.fw", t->dir);
	bt_write_file(t->env, bt_env_text);
	while (*chips && n < BT_MAX_BRIDGES) {
		size_t len = strcspn(chips, ",");

		snprintf(t->chips[n], sizeof(t->chips[n]), "%.*s", (int)len,
			 chips);
		t->bridges[n].chip = t->chips[n];
		t->bridges[n].adapter = (uint32_t)n;
		n++;
		chips += len + (chips[len] == ',');
	}
	if (xc3028_fwgen_write(t->fw, err, sizeof(err)))
		fprintf(stderr, "firmware: %s\n", err);
	t->cfg = (struct sim_box_config){
	    .stub_path = t->stub,
	    .app_path = t->app,
	    .bridges = t->bridges,
	    .nbridges = n,
	    .env_path = t->env,
	    .firmware_path = t->fw,
	    .deadline_ms = 3000,
	    .trace_path = t->trace,
	    .seed = 1,
	    .verbosity = getenv("BOX_TEST_VERBOSE") ? 2 : 0,
	};
}

static inline int bt_start(struct bt *t)
{
	char err[512];

	t->box = sim_box_new(&t->cfg, err, sizeof(err));
	if (!t->box)
		fprintf(stderr, "sim_box_new: %s\n", err);
	return t->box ? 0 : -1;
}

static inline void bt_stop(struct bt *t)
{
	sim_box_free(t->box);
	t->box = NULL;
	unlink(t->env);
	unlink(t->trace);
	unlink(t->fw);
	unlink(t->stub);
	unlink(t->app);
	rmdir(t->dir);
}

static inline void bt_pump(struct bt *t, int ms)
{
	uint64_t end = bt_now_ms() + (uint64_t)ms;

	do
		sim_box_run(t->box, 1);
	while (bt_now_ms() < end);
}

/*
 * Run the box until cond(t, arg) holds, at most timeout_ms (the bound
 * only fails a box that never gets there).  0, or -ETIMEDOUT.
 */
static inline int bt_pump_until(struct bt *t, int (*cond)(struct bt *, void *),
				void *arg, int timeout_ms)
{
	uint64_t end = bt_now_ms() + (uint64_t)timeout_ms;

	while (!cond(t, arg)) {
		if (bt_now_ms() >= end)
			return -ETIMEDOUT;
		sim_box_run(t->box, 1);
	}
	return 0;
}

/* Whether the box saw every client attached (its ATTACH replies read). */
static inline int bt_all_attached(struct bt *t, void *arg)
{
	struct sim_box_client_info ci;

	(void)arg;
	for (uint32_t c = 1; c <= t->cfg.nbridges; c++)
		if (sim_box_client_info(t->box, c, &ci) || !ci.attached)
			return 0;
	return 1;
}

/* Whether client (a uint32_t *) has a bound tuner channel. */
static inline int bt_client_bound(struct bt *t, void *arg)
{
	struct sim_box_client_info ci;

	return !sim_box_client_info(t->box, *(uint32_t *)arg, &ci) && ci.bound;
}

static inline int bt_client_unbound(struct bt *t, void *arg)
{
	return !bt_client_bound(t, arg);
}

static inline int bt_connect(struct bt *t)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path, t->stub, sizeof(sa.sun_path) - 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		exit(2);
	}
	sim_box_run(t->box, 0); /* accept it */
	return fd;
}

/* One message: its length, 0 at the end of the stream, -ETIMEDOUT. */
static inline int bt_recv(struct bt *t, int fd, union tstub_buf *m,
			  int timeout_ms)
{
	uint64_t end = bt_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		ssize_t n = recv(fd, m->bytes, sizeof(*m), MSG_DONTWAIT);

		if (n >= 0)
			return (int)n;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if (bt_now_ms() >= end)
			return -ETIMEDOUT;
		sim_box_run(t->box, 2);
	}
}

static inline int bt_send(int fd, uint16_t opcode, uint16_t flags,
			  uint64_t unique, int32_t error, uint32_t client,
			  const void *body, size_t len)
{
	union tstub_buf m;
	int n =
	    tstub_build(&m, opcode, flags, unique, error, client, body, len);

	return send(fd, m.bytes, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -1;
}

static inline int bt_reply(int fd, const struct tstub_hdr *req, int error,
			   const void *body, size_t len)
{
	union tstub_buf m;
	int n = tstub_build_reply(&m, req, error, body, len);

	return send(fd, m.bytes, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -1;
}

/* The next message must be opcode (a reply if reply != 0). */
static inline int bt_expect(struct bt *t, int fd, uint16_t opcode, int reply,
			    union tstub_buf *m)
{
	int n = bt_recv(t, fd, m, BT_WAIT_MS);

	if (n <= 0) {
		fprintf(stderr, "expected %s, got %d\n",
			tstub_opcode_name(opcode), n);
		return -1;
	}
	if (tstub_validate(m, (size_t)n) || m->hdr.opcode != opcode ||
	    !!(m->hdr.flags & TSTUB_F_REPLY) != !!reply) {
		fprintf(stderr, "expected %s, got %s flags %u\n",
			tstub_opcode_name(opcode),
			tstub_opcode_name(m->hdr.opcode), m->hdr.flags);
		return -1;
	}
	return 0;
}

static inline struct tstub_chip_info bt_chip_info(uint32_t chip_id)
{
	struct tstub_chip_info ci = {.chip_id = chip_id, .plugin_version = 1};

	snprintf(ci.name, sizeof(ci.name), "CHIP%x", chip_id);
	snprintf(ci.vendor, sizeof(ci.vendor), "Test");
	snprintf(ci.plugin, sizeof(ci.plugin), "test%x", chip_id);
	return ci;
}

/* Answer LOAD_PLUGIN and ATTACH until every client is attached.
 * Returns the number of ATTACH requests seen. */
static inline int bt_serve_attach(struct bt *t, int ctl)
{
	size_t attached = 0;
	union tstub_buf m;

	while (attached < t->cfg.nbridges) {
		struct tstub_chip_info ci;

		if (bt_recv(t, ctl, &m, BT_WAIT_MS) <= 0)
			break;
		if (m.hdr.opcode == TSTUB_LOAD_PLUGIN) {
			const struct tstub_load *l = tstub_body(&m.hdr);

			ci = bt_chip_info(l->chip_id);
		} else if (m.hdr.opcode == TSTUB_ATTACH) {
			const struct tstub_attach *a = tstub_body(&m.hdr);

			ci = bt_chip_info(a->chip_id);
			attached++;
		} else {
			continue;
		}
		bt_reply(ctl, &m.hdr, 0, &ci, sizeof(ci));
	}
	if (attached == t->cfg.nbridges)
		bt_pump_until(t, bt_all_attached, NULL, BT_WAIT_MS);
	return (int)attached;
}

/* Connect, answer INIT and the resend.  The control channel's fd. */
static inline int bt_daemon(struct bt *t)
{
	struct tstub_init reply = {.major = TSTUB_MAJOR,
				   .minor = TSTUB_MINOR,
				   .max_msg = TSTUB_MSG_MAX};
	union tstub_buf m;
	int ctl = bt_connect(t);

	if (bt_expect(t, ctl, TSTUB_INIT, 0, &m))
		return -1;
	reply.flags = ((const struct tstub_init *)tstub_body(&m.hdr))->flags;
	bt_reply(ctl, &m.hdr, 0, &reply, sizeof(reply));
	bt_serve_attach(t, ctl);
	return ctl;
}

/* BIND a new channel to client: the fd, or -errno from the reply. */
static inline int bt_bind(struct bt *t, uint32_t client,
			  struct tstub_params *params)
{
	struct tstub_client body = {.client = client};
	union tstub_buf m;
	int fd = bt_connect(t);

	bt_send(fd, TSTUB_BIND, 0, ++t->unique, 0, client, &body, sizeof(body));
	if (bt_expect(t, fd, TSTUB_BIND, 1, &m)) {
		close(fd);
		return -EPROTO;
	}
	if (m.hdr.error) {
		close(fd);
		return m.hdr.error;
	}
	if (params)
		memcpy(params, tstub_body(&m.hdr), sizeof(*params));
	return fd;
}

static inline void bt_done(void *arg, int err, const void *body, size_t len)
{
	struct bt_result *r = arg;

	r->done++;
	r->err = err;
	r->len = len < sizeof(r->body) ? len : sizeof(r->body);
	if (body && r->len)
		memcpy(r->body, body, r->len);
}

static inline int bt_wait(struct bt *t, struct bt_result *r, int timeout_ms)
{
	uint64_t end = bt_now_ms() + (uint64_t)timeout_ms;

	while (!r->done && bt_now_ms() < end)
		sim_box_run(t->box, 2);
	return r->done ? 0 : -ETIMEDOUT;
}

/*
 * One I2C_XFER: segments, then the write bytes.  Returns the reply's
 * error (0 with the read bytes in rd), or -ETIMEDOUT without a reply.
 */
static inline int bt_i2c(struct bt *t, int fd, uint32_t client,
			 const struct tstub_i2c_seg *segs, uint32_t nsegs,
			 const uint8_t *wr, size_t wlen, uint8_t *rd,
			 int timeout_ms)
{
	uint8_t body[sizeof(struct tstub_i2c_xfer) + TSTUB_I2C_DATA_MAX];
	struct tstub_i2c_xfer x = {.nsegs = nsegs};
	uint64_t unique = ++t->unique;
	union tstub_buf m;

	memcpy(x.segs, segs, nsegs * sizeof(*segs));
	memcpy(body, &x, sizeof(x));
	memcpy(body + sizeof(x), wr, wlen);
	bt_send(fd, TSTUB_I2C_XFER, 0, unique, 0, client, body,
		sizeof(x) + wlen);
	if (bt_recv(t, fd, &m, timeout_ms) <= 0)
		return -ETIMEDOUT;
	if (m.hdr.opcode != TSTUB_I2C_XFER || m.hdr.unique != unique)
		return -EPROTO;
	if (!m.hdr.error && rd)
		memcpy(rd, tstub_body(&m.hdr), tstub_body_len(&m.hdr));
	return m.hdr.error;
}

static inline int bt_i2c_write(struct bt *t, int fd, uint32_t client,
			       uint16_t addr, const uint8_t *buf, size_t len)
{
	struct tstub_i2c_seg seg = {.addr = addr, .len = (uint16_t)len};

	return bt_i2c(t, fd, client, &seg, 1, buf, len, NULL, BT_WAIT_MS);
}

/* Register pointer write, then a read: a combined transfer. */
static inline int bt_i2c_read(struct bt *t, int fd, uint32_t client,
			      uint16_t addr, uint8_t reg, uint8_t *out,
			      size_t len)
{
	struct tstub_i2c_seg segs[2] = {
	    {.addr = addr, .len = 1},
	    {.addr = addr, .flags = TSTUB_I2C_RD, .len = (uint16_t)len},
	};

	return bt_i2c(t, fd, client, segs, 2, &reg, 1, out, BT_WAIT_MS);
}

/* MT2060 registers 1..5 for rf_hz (tuner-chips.md), start register 1. */
static inline void bt_mt2060_regs(uint32_t rf_hz, uint8_t out[6])
{
	static const struct {
		long max_mhz;
		uint8_t band;
	} lna[] = {{95, 0xb0},  {180, 0xa0}, {260, 0x90},   {335, 0x80},
		   {425, 0x70}, {480, 0x60}, {570, 0x50},   {645, 0x40},
		   {730, 0x30}, {810, 0x20}, {100000, 0x10}};
	long rf = rf_hz / 1000, lo1 = (rf + 1220000) / 250 * 250;
	long num1t = lo1 / 250, div1 = num1t / 64, num1 = num1t & 0x3f;
	long lo2 = (lo1 - rf - 36150 + 25) / 50 * 50;
	long n = lo2 * 64 / 125, div2 = n / 8192, num2 = n & 0x1fff;
	size_t i = 0;

	while (rf / 1000 > lna[i].max_mhz)
		i++;
	out[0] = 0x01;
	out[1] = (uint8_t)(lna[i].band | ((num1 >> 2) & 0xf));
	out[2] = (uint8_t)div1;
	out[3] = (uint8_t)((num2 & 0xf) | ((num1 & 3) << 4));
	out[4] = (uint8_t)((num2 >> 4) & 0xff);
	out[5] = (uint8_t)(((num2 >> 12) & 1) | (div2 << 1));
}

static inline struct tstub_params bt_dvbt(uint32_t freq)
{
	return (struct tstub_params){.delsys = TSTUB_DELSYS_DVBT,
				     .frequency = freq,
				     .bandwidth = 8000000};
}

#endif /* BOX_TEST_H */

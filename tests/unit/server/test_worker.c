// SPDX-License-Identifier: MIT
/*
 * A whole worker (worker_main) against a fake simulated box: bind, a
 * probe over I2C during which the stub sends a request (served after the
 * probe and the restore), demodulator status merged into GET_STATUS, an
 * API tune that tells the stub PARAMS_CHANGED, and every command reported
 * to the daemon's end of the socketpair: the stub's short commands with
 * one report each (no BEGIN), a stub's tune reported after the kernel's
 * next request with that request's status read as its own, and a burst
 * of the stub's requests, more than the worker holds reports for, every
 * one reported in order before the daemon's next command, and a stub's
 * tune with nothing after it: the worker's timer wakes it once the stub
 * is quiet, it reads the status itself and reports; and a stub's tune
 * held past WORKER_BEGIN_LATE_NS reports its start while it runs.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "fake_stub.h"
#include "loop.h"
#include "worker.h"
#include "worker_priv.h"
#include "worker_proto.h"

#define CLIENT 7
/* Pipelined stub requests: past the reports the worker holds. */
#define BURST (WORKER_HELD_MAX + 8)

/* ---- the plugin under the worker: a chip with ID 0x63 at 0x60 ---- */

static int chip_read(const struct tunerd_host *h, uint8_t reg, uint8_t *val)
{
	struct tunerd_i2c_msg m[2] = {
	    {.addr = 0x60, .len = 1, .buf = &reg},
	    {.addr = 0x60, .flags = TUNERD_I2C_RD, .len = 1, .buf = val},
	};

	return h->i2c_transfer(h->ctx, m, 2);
}

static int fake_probe(const struct tunerd_host *h,
		      const struct tunerd_tuner_config *cfg, void **priv)
{
	uint8_t id = 0;
	int err = chip_read(h, 0, &id);

	if (err)
		return err;
	if (id != 0x63 || cfg->i2c_addr != 0x60)
		return -ENODEV;
	*priv = (void *)h;
	return 0;
}

static void fake_release(void *priv)
{
	(void)priv;
}

static int fake_nop(void *priv)
{
	(void)priv;
	return 0;
}

static int fake_set_params(void *priv, const struct tstub_params *p)
{
	const struct tunerd_host *h = priv;
	uint8_t regs[5] = {1, (uint8_t)(p->frequency >> 24),
			   (uint8_t)(p->frequency >> 16),
			   (uint8_t)(p->frequency >> 8), (uint8_t)p->frequency};
	struct tunerd_i2c_msg m = {.addr = 0x60, .len = 5, .buf = regs};

	return h->i2c_transfer(h->ctx, &m, 1);
}

static int fake_get_status(void *priv, struct tstub_status *st)
{
	(void)priv;
	st->valid = TSTUB_ST_PLL_LOCK;
	st->pll_locked = 1;
	return 0;
}

static const struct tunerd_plugin_ops fake_ops = {
    .size = sizeof(struct tunerd_plugin_ops),
    .probe = fake_probe,
    .release = fake_release,
    .init = fake_nop,
    .sleep = fake_nop,
    .set_params = fake_set_params,
    .get_status = fake_get_status,
};

/* ---- the fake box ---- */

struct box {
	int listen_fd, fd;
	int step;         /* how far the script got */
	int status_after; /* the GET_STATUS reply came after restore */
	struct tstub_status status_seen;
	uint32_t changed_freq; /* PARAMS_CHANGED */
	int go[2];             /* the daemon's end saw the burst: a pipe */
};

static int box_expect(struct box *b, union tstub_buf *m, uint16_t opcode)
{
	int n = fake_recv(b->fd, m, 3000);

	if (n <= 0 || m->hdr.opcode != opcode) {
		fprintf(stderr, "box step %d: wanted %s, got %d/%s\n", b->step,
			tstub_opcode_name(opcode), n,
			n > 0 ? tstub_opcode_name(m->hdr.opcode) : "-");
		return -1;
	}
	b->step++;
	return 0;
}

static const struct tstub_status demod = {
    .valid = TSTUB_ST_FE_STATUS | TSTUB_ST_STRENGTH_DBM | TSTUB_ST_CNR_DB,
    .fe_status = TSTUB_FE_HAS_SIGNAL | TSTUB_FE_HAS_CARRIER | TSTUB_FE_HAS_LOCK,
    .strength_mdbm = -45500,
    .cnr_mdb = 28000,
};

/* A tune from the stub and, already queued when it is answered, the
 * kernel's status read: the worker reads nothing of its own between. */
static void *box_stub_tune(struct box *b)
{
	struct tstub_params p = {.delsys = TSTUB_DELSYS_DVBT,
				 .frequency = 514000000,
				 .bandwidth = 8000000};
	union tstub_buf m;

	fake_send(b->fd, TSTUB_SET_PARAMS, 0, 501, 0, CLIENT, &p, sizeof(p));
	if (box_expect(b, &m, TSTUB_I2C_XFER))
		return NULL;
	/* Sent before the transfer's reply: queued when the tune ends. */
	fake_send(b->fd, TSTUB_GET_STATUS, 0, 502, 0, CLIENT, NULL, 0);
	fake_reply(b->fd, &m.hdr, 0, NULL, 0);
	if (box_expect(b, &m, TSTUB_SET_PARAMS) || m.hdr.unique != 501)
		return NULL;
	if (box_expect(b, &m, TSTUB_DEMOD_STATUS))
		return NULL;
	fake_reply(b->fd, &m.hdr, 0, &demod, sizeof(demod));
	if (box_expect(b, &m, TSTUB_GET_STATUS) || m.hdr.unique != 502)
		return NULL;
	return NULL;
}

/* INIT and SLEEP in turn, all sent before the first answer. */
static void box_burst(struct box *b)
{
	union tstub_buf m;

	for (int i = 0; i < BURST; i++)
		fake_send(b->fd, i % 2 ? TSTUB_TUNER_SLEEP : TSTUB_TUNER_INIT,
			  0, 600 + (uint64_t)i, 0, CLIENT, NULL, 0);
	for (int i = 0; i < BURST; i++)
		if (box_expect(b, &m,
			       i % 2 ? TSTUB_TUNER_SLEEP : TSTUB_TUNER_INIT) ||
		    m.hdr.unique != 600 + (uint64_t)i || m.hdr.error)
			return;
}

/*
 * Once the daemon's end says go: a stub's tune, then silence, so the
 * worker's own status read follows.  With hold, the tune's transfer is
 * answered only at the next go: once the daemon's end saw the tune's
 * start, which the worker's late timer reported.
 */
static void box_go_tune(struct box *b, uint32_t hz, uint64_t unique, int hold)
{
	struct tstub_params p = {
	    .delsys = TSTUB_DELSYS_DVBT, .frequency = hz, .bandwidth = 8000000};
	union tstub_buf m;
	char go;

	if (read(b->go[0], &go, 1) != 1)
		return;
	fake_send(b->fd, TSTUB_SET_PARAMS, 0, unique, 0, CLIENT, &p, sizeof(p));
	if (box_expect(b, &m, TSTUB_I2C_XFER) ||
	    (hold && read(b->go[0], &go, 1) != 1))
		return;
	fake_reply(b->fd, &m.hdr, 0, NULL, 0);
	if (box_expect(b, &m, TSTUB_SET_PARAMS) || m.hdr.unique != unique ||
	    box_expect(b, &m, TSTUB_DEMOD_STATUS))
		return;
	fake_reply(b->fd, &m.hdr, 0, &demod, sizeof(demod));
}

static void *box_run(void *arg)
{
	struct box *b = arg;
	struct tstub_params cached = {.delsys = TSTUB_DELSYS_DVBT,
				      .frequency = 474000000,
				      .bandwidth = 8000000,
				      .flags = TSTUB_PARAMS_VALID};
	const uint8_t id = 0x63;
	union tstub_buf m;

	b->fd = accept(b->listen_fd, NULL, NULL);
	if (box_expect(b, &m, TSTUB_BIND))
		return NULL;
	fake_reply(b->fd, &m.hdr, 0, &cached, sizeof(cached));
	/* The probe's ID read: a kernel-side request arrives meanwhile. */
	if (box_expect(b, &m, TSTUB_I2C_XFER))
		return NULL;
	fake_send(b->fd, TSTUB_GET_STATUS, 0, 500, 0, CLIENT, NULL, 0);
	fake_reply(b->fd, &m.hdr, 0, &id, 1);
	/* Restore of the cached params: one register write. */
	if (box_expect(b, &m, TSTUB_I2C_XFER))
		return NULL;
	fake_reply(b->fd, &m.hdr, 0, NULL, 0);
	if (box_expect(b, &m, TSTUB_DEMOD_STATUS)) /* status after tune */
		return NULL;
	fake_reply(b->fd, &m.hdr, 0, &demod, sizeof(demod));
	/* Now the queued GET_STATUS is served. */
	if (box_expect(b, &m, TSTUB_DEMOD_STATUS))
		return NULL;
	fake_reply(b->fd, &m.hdr, 0, &demod, sizeof(demod));
	if (box_expect(b, &m, TSTUB_GET_STATUS))
		return NULL;
	if ((m.hdr.flags & TSTUB_F_REPLY) && m.hdr.unique == 500 &&
	    !m.hdr.error) {
		b->status_after = 1;
		memcpy(&b->status_seen, tstub_body(&m.hdr),
		       sizeof(b->status_seen));
	}
	/* The API tune. */
	if (box_expect(b, &m, TSTUB_I2C_XFER))
		return NULL;
	fake_reply(b->fd, &m.hdr, 0, NULL, 0);
	if (box_expect(b, &m, TSTUB_PARAMS_CHANGED))
		return NULL;
	b->changed_freq =
	    ((const struct tstub_params *)tstub_body(&m.hdr))->frequency;
	if (box_expect(b, &m, TSTUB_DEMOD_STATUS))
		return NULL;
	fake_reply(b->fd, &m.hdr, -EOPNOTSUPP, NULL, 0);
	box_stub_tune(b);
	box_burst(b);
	box_go_tune(b, 522000000, 700, 0);
	box_go_tune(b, 530000000, 800, 1);
	return NULL;
}

/* ---- the daemon's end ---- */

static int next_report(int fd, union wmsg *m)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	if (poll(&p, 1, 3000) <= 0)
		return -ETIMEDOUT;
	return wmsg_recv(fd, m);
}

/* Skip BEGINs; return the next PROBED or DONE. */
static int next_result(int fd, union wmsg *m, int *begins)
{
	int n;

	while ((n = next_report(fd, m)) > 0 && m->h.type == WMSG_BEGIN)
		(*begins)++;
	return n;
}

struct worker_thread {
	struct worker_args a;
	int ret;
};

static void *worker_thread(void *arg)
{
	struct worker_thread *w = arg;

	w->ret = worker_main(&w->a);
	return NULL;
}

/* The next DONE; a BEGIN came before it exactly when it says so. */
static void next_done(int fd, union wmsg *m, int *begins)
{
	int before = *begins;

	CHECK(next_result(fd, m, begins) > 0);
	CHECK_EQ_INT(m->h.type, WMSG_DONE);
	CHECK_EQ_INT(*begins - before, (int)m->done.began);
}

/* The burst's reports, held and sent in batches, arrive whole and in
 * order; the daemon's next command is reported after them. */
static void check_burst(int fd, int *begins)
{
	union wmsg m = {0};

	for (int i = 0; i < BURST; i++) {
		next_done(fd, &m, begins);
		CHECK_EQ_INT(m.done.origin, TUNER_ORIGIN_KERNEL);
		CHECK_EQ_INT(m.done.op, i % 2 ? TUNER_OP_SLEEP : TUNER_OP_INIT);
		CHECK_EQ_INT(m.done.error, 0);
	}
	m = (union wmsg){.cmd = {.h.type = WMSG_CMD,
				 .op = TUNER_OP_INIT,
				 .req_id = 43,
				 .deadline_ns = loop_now_ns() + 2000000000ull}};
	CHECK_EQ_INT(wmsg_send(fd, &m), 0);
	next_done(fd, &m, begins);
	CHECK_EQ_INT(m.done.origin, TUNER_ORIGIN_API);
	CHECK_EQ_INT(m.done.req_id, 43);
}

/* The lone tune's report, with the status the worker read by itself:
 * nothing but its timer woke it. */
static void check_lone_tune(int fd, struct box *b, int *begins)
{
	union wmsg m = {0};

	CHECK_EQ_INT(write(b->go[1], "g", 1), 1);
	next_done(fd, &m, begins);
	CHECK_EQ_INT(m.done.origin, TUNER_ORIGIN_KERNEL);
	CHECK_EQ_INT(m.done.op, TUNER_OP_TUNE);
	CHECK_EQ_INT(m.done.params.frequency, 522000000);
	CHECK_EQ_INT(m.done.have_status, 1);
	CHECK_EQ_INT(m.done.status.strength_mdbm, -45500);
}

/* The slow tune's start is reported while its transfer waits (the
 * worker idle before it: its late timer armed again), then its end. */
static void check_slow_tune(int fd, struct box *b, int *begins)
{
	union wmsg m = {0};

	CHECK_EQ_INT(write(b->go[1], "g", 1), 1);
	CHECK(next_report(fd, &m) > 0);
	CHECK_EQ_INT(m.h.type, WMSG_BEGIN);
	CHECK_EQ_INT(m.begin.origin, TUNER_ORIGIN_KERNEL);
	CHECK_EQ_INT(m.begin.op, TUNER_OP_TUNE);
	CHECK_EQ_INT(m.begin.params.frequency, 530000000);
	CHECK_EQ_INT(write(b->go[1], "g", 1), 1);
	CHECK(next_result(fd, &m, begins) > 0);
	CHECK_EQ_INT(m.h.type, WMSG_DONE);
	CHECK_EQ_INT(m.done.origin, TUNER_ORIGIN_KERNEL);
	CHECK_EQ_INT(m.done.op, TUNER_OP_TUNE);
	CHECK_EQ_INT(m.done.began, 1);
	CHECK_EQ_INT(m.done.params.frequency, 530000000);
}

static void check_reports(int fd, struct box *b)
{
	union wmsg m = {0};
	struct wmsg_done tune;
	int begins = 0;

	CHECK(next_result(fd, &m, &begins) > 0);
	CHECK_EQ_INT(m.h.type, WMSG_PROBED);
	CHECK_EQ_INT(m.probed.error, 0);
	CHECK_EQ_INT(m.probed.stub_params.frequency, 474000000);

	next_done(fd, &m, &begins);
	CHECK_EQ_INT(m.done.origin, TUNER_ORIGIN_RESTORE);
	CHECK_EQ_INT(m.done.op, TUNER_OP_INIT);

	next_done(fd, &m, &begins);
	CHECK_EQ_INT(m.done.origin, TUNER_ORIGIN_RESTORE);
	CHECK_EQ_INT(m.done.op, TUNER_OP_TUNE);
	CHECK_EQ_INT(m.done.error, 0);
	CHECK_EQ_INT(m.done.params.frequency, 474000000);
	CHECK_EQ_INT(m.done.have_status, 1);

	/* The kernel's GET_STATUS, queued during the probe, served now. */
	next_done(fd, &m, &begins);
	CHECK_EQ_INT(m.done.origin, TUNER_ORIGIN_KERNEL);
	CHECK_EQ_INT(m.done.op, TUNER_OP_STATUS);
	CHECK_EQ_INT(m.done.have_status, 1);

	/* An API tune. */
	m = (union wmsg){.cmd = {.h.type = WMSG_CMD,
				 .op = TUNER_OP_TUNE,
				 .req_id = 42,
				 .deadline_ns = loop_now_ns() + 2000000000ull,
				 .params = {.delsys = TSTUB_DELSYS_DVBT,
					    .frequency = 506000000}}};
	CHECK_EQ_INT(wmsg_send(fd, &m), 0);
	next_done(fd, &m, &begins);
	CHECK_EQ_INT(m.done.origin, TUNER_ORIGIN_API);
	CHECK_EQ_INT(m.done.req_id, 42);
	CHECK_EQ_INT(m.done.error, 0);
	CHECK_EQ_INT(m.done.have_status, 1); /* chip only: demod refused */
	CHECK_EQ_INT(m.done.status.valid, TSTUB_ST_PLL_LOCK);
	CHECK_EQ_INT(m.done.status.frequency, 506000000);

	/* The stub's tune: its report goes once the kernel's next request
	 * was answered, with that request's status (the demodulator's
	 * levels show it is the kernel's read); then the read's own. */
	next_done(fd, &m, &begins);
	CHECK_EQ_INT(m.done.origin, TUNER_ORIGIN_KERNEL);
	CHECK_EQ_INT(m.done.op, TUNER_OP_TUNE);
	CHECK_EQ_INT(m.done.params.frequency, 514000000);
	tune = m.done;
	next_done(fd, &m, &begins);
	CHECK_EQ_INT(m.done.origin, TUNER_ORIGIN_KERNEL);
	CHECK_EQ_INT(m.done.op, TUNER_OP_STATUS);
	/* Unless the read ran past WORKER_BEGIN_LATE_NS (its BEGIN then
	 * had to follow the tune's report, without a status). */
	if (!m.done.began) {
		CHECK_EQ_INT(tune.have_status, 1);
		CHECK_EQ_INT(tune.status.strength_mdbm, -45500);
	}
	/* A BEGIN for each of the restore's two and the API's one; the
	 * stub's three short ones have one report each, bar a stall past
	 * WORKER_BEGIN_LATE_NS on a loaded machine. */
	CHECK(begins >= 3 && begins <= 4);
	check_burst(fd, &begins);
	check_lone_tune(fd, b, &begins);
	check_slow_tune(fd, b, &begins);
}

int main(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct worker_thread wt = {0};
	struct stub_addr addr;
	struct box b = {0};
	pthread_t box_th, w_th;
	char spec[128];
	int sv[2];

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/tunerd-tw-%d.sock",
		 (int)getpid());
	unlink(sa.sun_path);
	b.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	CHECK_EQ_INT(bind(b.listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_EQ_INT(listen(b.listen_fd, 4), 0);
	snprintf(spec, sizeof(spec), "sim:%s", sa.sun_path);
	CHECK_EQ_INT(stub_parse(spec, &addr), 0);
	CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	CHECK_EQ_INT(pipe(b.go), 0);

	wt.a = (struct worker_args){
	    .client = CLIENT,
	    .abi = TUNERD_PLUGIN_ABI,
	    .ops = &fake_ops,
	    .info = {.name = "FAKE"},
	    .cfg = {.size = sizeof(struct tunerd_tuner_config),
		    .i2c_addr = 0x60},
	    .stub = &addr,
	    .deadline_ms = 2000,
	    .settle_permille = 0,
	    .demod_status = 1,
	    .daemon_fd = sv[1],
	};
	pthread_create(&box_th, NULL, box_run, &b);
	pthread_create(&w_th, NULL, worker_thread, &wt);
	check_reports(sv[0], &b);
	pthread_join(box_th, NULL);

	CHECK_EQ_INT(b.step, 13 + BURST + 3 + 3);
	CHECK_EQ_INT(b.status_after, 1);
	/* Merged: lock bits and levels from the demodulator, PLL from the
	 * chip, frequency from the params. */
	CHECK(b.status_seen.valid & TSTUB_ST_PLL_LOCK);
	CHECK(b.status_seen.valid & TSTUB_ST_STRENGTH_DBM);
	CHECK(b.status_seen.fe_status & TSTUB_FE_HAS_LOCK);
	CHECK_EQ_INT(b.status_seen.strength_mdbm, -45500);
	CHECK_EQ_INT(b.status_seen.cnr_mdb, 28000);
	CHECK_EQ_INT(b.status_seen.frequency, 474000000);
	CHECK_EQ_INT(b.changed_freq, 506000000);

	/* The daemon closes its end: the worker releases and exits 0. */
	close(sv[0]);
	pthread_join(w_th, NULL);
	CHECK_EQ_INT(wt.ret, WORKER_EXIT_OK);
	close(sv[1]);
	close(b.fd);
	close(b.listen_fd);
	unlink(sa.sun_path);
	return check_done("test_worker");
}

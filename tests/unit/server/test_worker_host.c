// SPDX-License-Identifier: MIT
/*
 * The worker's host services against a fake stub: a socketpair whose
 * other end a thread plays with raw ABI messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fake_stub.h"
#include "log.h"
#include "loop.h"
#include "worker_host.h"

#define CLIENT 5

struct script {
	int fd;
	void (*run)(struct script *s);
	/* What the stub side saw, checked by the main thread. */
	struct tstub_hdr req;
	uint8_t body[TSTUB_MSG_MAX];
	size_t body_len;
	int got_busy;
	int failed;
	sem_t gave_up; /* posted by the main thread when the caller gave up */
};

/*
 * The host's sleeps, recorded instead of slept: what the host asks the
 * kernel for is the behaviour under test; how long the machine then took
 * is not.  This definition takes the place of libc's for the code linked
 * into this test; only host_sleep_ms() calls it.
 */
static struct timespec slept;
static unsigned int sleeps;

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	(void)rem;
	slept = *req;
	sleeps++;
	return 0;
}

static void *script_thread(void *arg)
{
	struct script *s = arg;

	s->run(s);
	return NULL;
}

static int script_recv(struct script *s, union tstub_buf *m)
{
	int n = fake_recv(s->fd, m, 3000);

	if (n <= 0) {
		s->failed = 1;
		return -1;
	}
	s->req = m->hdr;
	s->body_len = tstub_body_len(&m->hdr);
	memcpy(s->body, tstub_body(&m->hdr), s->body_len);
	return 0;
}

static const uint8_t chip_bytes[2] = {0x63, 0x01};

/* A reply with a wrong unique, a stub request, then the real reply. */
static void run_unknown_then_request(struct script *s)
{
	static const uint8_t junk[2] = {0xde, 0xad};
	union tstub_buf m;

	if (script_recv(s, &m))
		return;
	fake_send(s->fd, TSTUB_I2C_XFER, TSTUB_F_REPLY, m.hdr.unique + 1000, 0,
		  CLIENT, junk, 2);
	fake_send(s->fd, TSTUB_GET_FREQUENCY, 0, 77, 0, CLIENT, NULL, 0);
	fake_reply(s->fd, &m.hdr, 0, chip_bytes, 2);
}

static void run_silent(struct script *s)
{
	union tstub_buf m;

	script_recv(s, &m);
}

/* Answers the first request only after the caller gave up on it. */
static void run_late_reply(struct script *s)
{
	struct timespec bound;
	union tstub_buf a, b;

	if (script_recv(s, &a))
		return;
	/* The bound only keeps a broken worker from hanging the test. */
	clock_gettime(CLOCK_REALTIME, &bound);
	bound.tv_sec += 10;
	if (sem_timedwait(&s->gave_up, &bound)) {
		s->failed = 1;
		return;
	}
	fake_reply(s->fd, &a.hdr, 0, chip_bytes, 2);
	if (script_recv(s, &b))
		return;
	fake_reply(s->fd, &b.hdr, 0, chip_bytes, 2);
}

static void run_flood(struct script *s)
{
	struct tstub_params p = {.delsys = TSTUB_DELSYS_DVBT};
	union tstub_buf m, r;

	if (script_recv(s, &m))
		return;
	for (int i = 0; i < WORKER_FIFO_MAX + 1; i++) {
		p.frequency = 474000000 + i;
		fake_send(s->fd, TSTUB_SET_PARAMS, 0, 101 + i, 0, CLIENT, &p,
			  sizeof(p));
	}
	/* An interrupt for a queued request removes it. */
	struct tstub_interrupt in = {.unique = 103};
	fake_send(s->fd, TSTUB_INTERRUPT, 0, 0, 0, CLIENT, &in, sizeof(in));
	fake_reply(s->fd, &m.hdr, 0, chip_bytes, 2);
	if (fake_recv(s->fd, &r, 3000) > 0 && (r.hdr.flags & TSTUB_F_REPLY) &&
	    r.hdr.error == -EBUSY && r.hdr.unique == 101 + WORKER_FIFO_MAX)
		s->got_busy = 1;
}

static void run_nak(struct script *s)
{
	union tstub_buf m;

	if (!script_recv(s, &m))
		fake_reply(s->fd, &m.hdr, -EREMOTEIO, NULL, 0);
}

static void run_short_read(struct script *s)
{
	union tstub_buf m;

	if (!script_recv(s, &m))
		fake_reply(s->fd, &m.hdr, 0, chip_bytes, 1);
}

static void run_ack(struct script *s)
{
	union tstub_buf m;

	if (!script_recv(s, &m))
		fake_reply(s->fd, &m.hdr, 0, NULL, 0);
}

struct rig {
	int sv[2];
	struct worker_ctx w;
	struct script s;
	pthread_t th;
};

static void rig_start(struct rig *r, void (*run)(struct script *))
{
	memset(&r->s, 0, sizeof(r->s));
	sem_init(&r->s.gave_up, 0, 0);
	r->s.fd = r->sv[1];
	r->s.run = run;
	pthread_create(&r->th, NULL, script_thread, &r->s);
}

static void rig_join(struct rig *r)
{
	pthread_join(r->th, NULL);
	sem_destroy(&r->s.gave_up);
	CHECK_EQ_INT(r->s.failed, 0);
}

/* Write register 0, read two bytes: the chip-id read of a probe. */
static int read_id(struct worker_ctx *w, uint8_t out[2])
{
	uint8_t reg = 0;
	struct tunerd_i2c_msg msgs[2] = {
	    {.addr = 0x60, .len = 1, .buf = &reg},
	    {.addr = 0x60, .flags = TUNERD_I2C_RD, .len = 2, .buf = out},
	};

	return w->host.i2c_transfer(w->host.ctx, msgs, 2);
}

static void test_unknown_reply_and_queue(struct rig *r)
{
	uint8_t id[2] = {0};
	const struct tstub_i2c_xfer *x;
	union tstub_buf q;

	rig_start(r, run_unknown_then_request);
	CHECK_EQ_INT(read_id(&r->w, id), 0);
	rig_join(r);
	CHECK_EQ_INT(id[0], 0x63);
	CHECK_EQ_INT(id[1], 0x01);
	CHECK_EQ_INT(r->s.req.opcode, TSTUB_I2C_XFER);
	CHECK_EQ_INT(r->s.req.client, CLIENT);
	CHECK(r->s.req.unique != 0);
	x = (const struct tstub_i2c_xfer *)r->s.body;
	CHECK_EQ_INT(x->nsegs, 2);
	CHECK_EQ_INT(x->segs[0].addr, 0x60);
	CHECK_EQ_INT(x->segs[1].flags, TSTUB_I2C_RD);
	CHECK_EQ_INT(r->s.body_len, sizeof(*x) + 1);
	CHECK_EQ_INT(r->w.dropped_replies, 1);
	/* The stub's request waits in the FIFO, to be served after. */
	CHECK_EQ_INT(r->w.fifo_count, 1);
	CHECK_EQ_INT(worker_fifo_pop(&r->w, &q), 1);
	CHECK_EQ_INT(q.hdr.opcode, TSTUB_GET_FREQUENCY);
	CHECK_EQ_INT(q.hdr.unique, 77);
	CHECK_EQ_INT(worker_fifo_pop(&r->w, &q), 0);
}

static void test_deadlines(struct rig *r)
{
	unsigned int daemon_ms = r->w.deadline_ms;
	uint8_t id[2];

	/* Nobody answers: the daemon's deadline ends the transfer. */
	rig_start(r, run_silent);
	CHECK_EQ_INT(read_id(&r->w, id), -ETIMEDOUT);
	rig_join(r);

	/*
	 * The command's own deadline is nearer than the daemon's, which is a
	 * minute away now: only the command's can end these transfers (a
	 * worker that ignored it would run into ctest's timeout).
	 */
	r->w.deadline_ms = 60000;
	rig_start(r, run_silent);
	r->w.cmd_deadline_ns = loop_now_ns() + 40 * 1000000ull;
	CHECK_EQ_INT(read_id(&r->w, id), -ETIMEDOUT);
	rig_join(r);

	/* Its late reply is dropped; the next transfer works. */
	rig_start(r, run_late_reply);
	r->w.cmd_deadline_ns = loop_now_ns() + 50 * 1000000ull;
	CHECK_EQ_INT(read_id(&r->w, id), -ETIMEDOUT);
	sem_post(&r->s.gave_up);
	r->w.cmd_deadline_ns = 0;
	r->w.dropped_replies = 0;
	CHECK_EQ_INT(read_id(&r->w, id), 0);
	rig_join(r);
	r->w.deadline_ms = daemon_ms;
	CHECK_EQ_INT(r->w.dropped_replies, 1);
}

static void test_fifo_full(struct rig *r)
{
	union tstub_buf q;
	uint8_t id[2];
	int n = 0;

	rig_start(r, run_flood);
	CHECK_EQ_INT(read_id(&r->w, id), 0);
	rig_join(r);
	CHECK_EQ_INT(r->s.got_busy, 1);
	CHECK_EQ_INT(r->w.busy_refusals, 1);
	CHECK_EQ_INT(r->w.fifo_count, WORKER_FIFO_MAX - 1);
	while (worker_fifo_pop(&r->w, &q)) {
		CHECK(q.hdr.unique != 103);
		CHECK_EQ_INT(q.hdr.opcode, TSTUB_SET_PARAMS);
		n++;
	}
	CHECK_EQ_INT(n, WORKER_FIFO_MAX - 1);
}

static void test_errors(struct rig *r)
{
	uint8_t id[2], big[TSTUB_I2C_DATA_MAX + 1];
	struct tunerd_i2c_msg msgs[5] = {0};
	struct pollfd p = {.fd = r->sv[1], .events = POLLIN};

	rig_start(r, run_nak);
	CHECK_EQ_INT(read_id(&r->w, id), -EREMOTEIO);
	rig_join(r);
	rig_start(r, run_short_read);
	CHECK_EQ_INT(read_id(&r->w, id), -EPROTO);
	rig_join(r);

	for (int i = 0; i < 5; i++)
		msgs[i] =
		    (struct tunerd_i2c_msg){.addr = 0x60, .len = 1, .buf = big};
	CHECK_EQ_INT(r->w.host.i2c_transfer(&r->w, msgs, 0), -EINVAL);
	CHECK_EQ_INT(r->w.host.i2c_transfer(&r->w, msgs, 5), -EINVAL);
	msgs[0].len = 0;
	CHECK_EQ_INT(r->w.host.i2c_transfer(&r->w, msgs, 1), -EINVAL);
	msgs[0].len = sizeof(big);
	CHECK_EQ_INT(r->w.host.i2c_transfer(&r->w, msgs, 1), -EINVAL);
	msgs[0] = (struct tunerd_i2c_msg){.addr = 0x80, .len = 1, .buf = big};
	CHECK_EQ_INT(r->w.host.i2c_transfer(&r->w, msgs, 1), -EINVAL);
	CHECK_EQ_INT(poll(&p, 1, 0), 0); /* none reached the stub */
}

static void test_bridge_ctrl(struct rig *r)
{
	const struct tstub_ctrl *c = (const struct tstub_ctrl *)r->s.body;

	rig_start(r, run_ack);
	CHECK_EQ_INT(r->w.host.bridge_ctrl(&r->w, TSTUB_CTRL_TUNER_RESET, 1),
		     0);
	rig_join(r);
	CHECK_EQ_INT(r->s.req.opcode, TSTUB_BRIDGE_CTRL);
	CHECK_EQ_INT(c->cmd, TSTUB_CTRL_TUNER_RESET);
	CHECK_EQ_INT(c->arg, 1);
}

static void write_file(const char *dir, const char *name, size_t size)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	for (size_t i = 0; i < size && i < 100; i++) {
		uint8_t b = (uint8_t)i;

		CHECK_EQ_INT(write(fd, &b, 1), 1);
	}
	if (size > 100)
		CHECK_EQ_INT(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

static void test_firmware(struct worker_ctx *w)
{
	char dir[] = "/tmp/tunerd-fw-XXXXXX", sub[600];
	const uint8_t *data;
	size_t size;

	CHECK(mkdtemp(dir) != NULL);
	w->firmware_dir = dir;
	write_file(dir, "fw.bin", 100);
	write_file(dir, "empty.bin", 0);
	write_file(dir, "big.bin", WORKER_FIRMWARE_MAX + 1);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	mkdir(sub, 0755);
	write_file(sub, "fw.bin", 10);

	CHECK_EQ_INT(w->host.firmware_get(w, "fw.bin", &data, &size), 0);
	CHECK_EQ_INT(size, 100);
	CHECK(data && data[0] == 0 && data[99] == 99);
	w->host.firmware_put(w, data, size);
	CHECK_EQ_INT(w->host.firmware_get(w, "empty.bin", &data, &size), 0);
	CHECK_EQ_INT(size, 0);
	w->host.firmware_put(w, data, size);
	CHECK_EQ_INT(w->host.firmware_get(w, "big.bin", &data, &size), -EFBIG);
	CHECK(data == NULL);
	CHECK_EQ_INT(w->host.firmware_get(w, "missing.bin", &data, &size),
		     -ENOENT);
	CHECK_EQ_INT(w->host.firmware_get(w, "sub/fw.bin", &data, &size),
		     -ENOENT);
	CHECK_EQ_INT(w->host.firmware_get(w, "../fw.bin", &data, &size),
		     -ENOENT);
	CHECK_EQ_INT(w->host.firmware_get(w, "sub", &data, &size), -ENOENT);
	CHECK_EQ_INT(w->host.firmware_get(w, "", &data, &size), -ENOENT);

	snprintf(sub, sizeof(sub), "rm -rf %s", dir);
	CHECK_EQ_INT(system(sub), 0);
}

/* sleep_ms() asks for the time scaled by the stub's settle permille. */
static void test_sleep(struct worker_ctx *w)
{
	w->settle_permille = 0;
	sleeps = 0;
	w->host.sleep_ms(w, 2000);
	CHECK_EQ_INT(sleeps, 0);
	w->settle_permille = 500;
	w->host.sleep_ms(w, 100);
	CHECK_EQ_INT(sleeps, 1);
	CHECK_EQ_INT(slept.tv_sec, 0);
	CHECK_EQ_INT(slept.tv_nsec, 50 * 1000000L);
	w->settle_permille = 1000;
	w->host.sleep_ms(w, 2500);
	CHECK_EQ_INT(sleeps, 2);
	CHECK_EQ_INT(slept.tv_sec, 2);
	CHECK_EQ_INT(slept.tv_nsec, 500 * 1000000L);
	w->host.log(w, 6, "sleep checked at %u permille", w->settle_permille);
}

static void test_closed(struct rig *r)
{
	uint8_t id[2];

	close(r->sv[1]);
	CHECK_EQ_INT(read_id(&r->w, id), -ECONNABORTED);
	CHECK_EQ_INT(r->w.stub_closed, 1);
	CHECK_EQ_INT(read_id(&r->w, id), -ECONNABORTED);
}

int main(void)
{
	static struct rig r;

	CHECK_EQ_INT(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, r.sv), 0);
	fcntl(r.sv[0], F_SETFL, O_NONBLOCK);
	worker_ctx_init(&r.w, r.sv[0], CLIENT, "TEST", NULL, 200, 0);
	test_unknown_reply_and_queue(&r);
	test_deadlines(&r);
	test_fifo_full(&r);
	test_errors(&r);
	test_bridge_ctrl(&r);
	test_firmware(&r.w);
	test_sleep(&r.w);
	test_closed(&r);
	close(r.sv[0]);
	return check_done("test_worker_host");
}

// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: what the stub sends the daemon on its control
 * channel, read and checked by stub_recv() (tstub_validate()) and
 * dispatched by control.c.  The fuzzer is the stub: it listens on a
 * SOCK_SEQPACKET socket, a real daemon (loop, event bus, plugin host with
 * an empty plugin directory, no workers) connects to it through
 * daemon_start(), and the daemon's loop runs until every message was
 * read.  Every message the daemon sends back must itself pass
 * tstub_validate() and be a reply.
 *
 * Each input starts with a good INIT, so every input meets an
 * initialised session, then holds records: a byte k, a le16 length, and
 * that many bytes (k & 3: 0 sent as they are; 1 the header's length and
 * flags made right; 2 a message of opcode TYPED[byte 0] with the body
 * size its direction needs, reply if k & 4, error 0 or -byte 1, the
 * rest as header fields and body; 3 likewise with a wrong body size).
 * An empty message is never sent: on a SOCK_SEQPACKET socket it reads as
 * the end of the stream, and the reconnect it causes takes 500 ms.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <linux/sockios.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "loop.h"
#include "stub_records.h"
#include "tstub_codec.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct daemon fz_daemon;
static int fz_stub = -1; /* the stub's end of the control channel */

static const uint16_t fz_typed[] = {
    TSTUB_INIT,        TSTUB_LOAD_PLUGIN,    TSTUB_ATTACH,
    TSTUB_DETACH,      TSTUB_TUNER_INIT,     TSTUB_TUNER_SLEEP,
    TSTUB_SET_PARAMS,  TSTUB_GET_STATUS,     TSTUB_GET_FREQUENCY,
    TSTUB_INTERRUPT,   TSTUB_BIND,           TSTUB_I2C_XFER,
    TSTUB_BRIDGE_CTRL, TSTUB_PARAMS_CHANGED, TSTUB_DEMOD_STATUS,
    TSTUB_CMD_BEGIN,   TSTUB_CMD_END,
};

static void fz_setup(void)
{
	static char dir[] = "/tmp/tunerd-fuzz-stub-XXXXXX";
	static char plugins[sizeof(dir) + 16];
	const char *plugin_dirs[] = {plugins, NULL};
	/* A short event ring: full early, it frees as much as it keeps, so
	 * libFuzzer sees no growth to check for leaks after each input. */
	struct daemon_config cfg = {
	    .plugin_dirs = plugin_dirs, .name = "fuzz", .event_ring = 16};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int lfd;

	log_set_level(0);
	if (!mkdtemp(dir))
		abort();
	snprintf(plugins, sizeof(plugins), "%s/plugins", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/stub.sock", dir);
	if (mkdir(plugins, 0700) && errno != EEXIST)
		abort();
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lfd, 4))
		abort();
	cfg.stub.transport = STUB_TRANSPORT_SIM;
	snprintf(cfg.stub.path, sizeof(cfg.stub.path), "%s", sa.sun_path);
	if (daemon_init(&fz_daemon, &cfg) || daemon_start(&fz_daemon))
		abort();
	fz_stub = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fz_stub < 0)
		abort();
	close(lfd);
	unlink(sa.sun_path);
}

/* What the daemon sent back: replies only, each a valid message. */
static void fz_read_replies(void)
{
	union tstub_buf m;
	ssize_t n;

	while ((n = recv(fz_stub, m.bytes, sizeof(m.bytes),
			 MSG_DONTWAIT | MSG_TRUNC)) > 0) {
		int err = tstub_validate(m.bytes, (size_t)n);

		if (err || !(m.hdr.flags & TSTUB_F_REPLY)) {
			fprintf(stderr,
				"daemon sent %zd bytes: len %u opcode 0x%x "
				"flags 0x%x error %d: %s\n",
				n, m.hdr.len, m.hdr.opcode, m.hdr.flags,
				m.hdr.error, strerror(-err));
			abort();
		}
	}
}

/* Run the daemon's loop until it read everything sent (the kernel's
 * count of unread bytes on the stub's end drops to 0), then until its
 * zero-delay timers (plugin lookups) are done. */
static void fz_pump(void)
{
	int unread = 0;

	for (int i = 0; i < 64; i++) {
		if (ioctl(fz_stub, SIOCOUTQ, &unread) || !unread)
			break;
		loop_run_once(fz_daemon.loop, 0);
		fz_read_replies();
	}
	while (loop_run_once(fz_daemon.loop, 0) > 0)
		fz_read_replies();
	fz_read_replies();
}

static void fz_send(const void *buf, size_t len)
{
	if (!len)
		return;
	if (send(fz_stub, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
	    errno != EMSGSIZE && errno != EAGAIN)
		abort();
	fz_pump();
}

/* Mode 2 and 3: a message of a known opcode, its header filled in. */
static size_t fz_typed_message(union tstub_buf *m, const uint8_t *p, size_t len,
			       int reply, int exact)
{
	uint16_t opcode = fz_typed[p[0] % (sizeof(fz_typed) / 2)];
	int want = tstub_body_size(opcode, reply);
	size_t src_len = len > 2 ? len - 2 : 0;
	size_t body = want >= 0 && exact ? (size_t)want : src_len;

	body = fz_body(m, body, src_len ? p + 2 : p, src_len);
	m->hdr.len = (uint32_t)(sizeof(m->hdr) + body);
	m->hdr.opcode = opcode;
	m->hdr.flags = reply ? TSTUB_F_REPLY : 0;
	m->hdr.unique = len > 1 ? p[1] : 1;
	m->hdr.error = reply && len > 1 && (p[1] & 1) ? -(int32_t)p[1] : 0;
	if (m->hdr.error)
		m->hdr.len = sizeof(m->hdr); /* a failed reply is bare */
	return m->hdr.len;
}

static void fz_record(void *ctx, int k, const uint8_t *p, size_t len)
{
	union tstub_buf m;

	(void)ctx;
	switch (k & 3) {
	case 0:
		fz_send(p, len);
		break;
	case 1:
		fz_send(m.bytes, fz_fixed_header(&m, p, len));
		break;
	default:
		if (len)
			fz_send(m.bytes, fz_typed_message(&m, p, len, k & 4,
							  (k & 3) == 2));
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tstub_init init = {.major = TSTUB_MAJOR,
				  .minor = TSTUB_MINOR,
				  .kind = TSTUB_KIND_SIM,
				  .max_clients = 8};
	union tstub_buf m;

	tstub_build(&m, TSTUB_INIT, 0, 1, 0, 0, &init, sizeof(init));
	fz_send(m.bytes, m.hdr.len);
	fz_for_each_record(data, size, fz_record, NULL);
	return 0;
}

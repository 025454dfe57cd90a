// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: what the daemon sends the simulated box, read and
 * checked by box_channel.c (tstub_validate()) and handled by the box's
 * session, requests and I2C on its chip models.  The fuzzer is the
 * daemon: a fresh box per input (MT2060, QT1010, XC3028 with the
 * synthetic firmware, the unit tests' RF environment, no bus or settle
 * time) listens on a SOCK_SEQPACKET socket, the fuzzer connects its
 * control channel and up to three tuner channels, and the box runs until
 * it is idle after every message.  Every message the box sends must
 * itself pass tstub_validate().
 *
 * Input: records of a byte k, a le16 length and that many bytes.  Bits
 * 4:3 of k pick the channel (0 the control channel, 1..3 tuner channels,
 * connected on first use); k & 3 how the bytes are sent: 0 as they are;
 * 1 with the header's length and flags made right; 2 as the reply to
 * one of the last FZ_HISTORY requests the box sent on that channel (bits
 * 3:1 of byte 0, 0 the latest; error -byte 0 when byte 0 is odd, else 0
 * and the rest as body, cut or padded to the reply's size); 3 as a request of opcode TYPED[byte 0], unique byte 1, client
 * byte 2 % 5, the rest as body (cut or padded when k & 4).
 * FUZZ_BOX_VERBOSE=1 in the environment shows the box's log of an input.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "box.h"
#include "stub_records.h"
#include "tstub_codec.h"
#include "xc3028_fwgen.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_CHANNELS 4
#define FZ_HISTORY  8 /* the box sends LOAD_PLUGIN for every client at once */

static const uint16_t fz_typed[] = {
    TSTUB_BIND,         TSTUB_I2C_XFER,       TSTUB_BRIDGE_CTRL,
    TSTUB_DEMOD_STATUS, TSTUB_PARAMS_CHANGED, TSTUB_INIT,
    TSTUB_LOAD_PLUGIN,  TSTUB_ATTACH,         TSTUB_DETACH,
    TSTUB_INTERRUPT,    TSTUB_SET_PARAMS,     TSTUB_GET_STATUS,
};

static struct sim_box_config fz_cfg;
static char fz_stub_path[108];

struct fz_chan {
	int fd;
	struct tstub_hdr requests[FZ_HISTORY]; /* opcode 0: none yet */
	unsigned int nrequests;
};

static void fz_setup(void)
{
	static char dir[] = "/tmp/tunerd-fuzz-box-XXXXXX";
	static char env[sizeof(dir) + 16], fw[sizeof(dir) + 16];
	static const struct sim_box_bridge bridges[] = {
	    {.chip = "mt2060", .adapter = 0},
	    {.chip = "qt1010", .adapter = 1},
	    {.chip = "xc3028", .adapter = 2},
	};
	static const char env_text[] =
	    "DVBT 474000000 8000000 -50.0 30.0 \"MUX A\"\n"
	    "DVBT 506000000 8000000 -88.0 4.0 weak\n";
	char err[256];
	FILE *f;

	if (!mkdtemp(dir))
		abort();
	snprintf(env, sizeof(env), "%s/test.env", dir);
	snprintf(fw, sizeof(fw), "%s/xc3028-v27.fw", dir);
	snprintf(fz_stub_path, sizeof(fz_stub_path), "%s/sim.sock", dir);
	f = fopen(env, "w");
	if (!f || fputs(env_text, f) < 0 || fclose(f))
		abort();
	if (xc3028_fwgen_write(fw, err, sizeof(err)))
		abort();
	fz_cfg = (struct sim_box_config){
	    .stub_path = fz_stub_path,
	    .bridges = bridges,
	    .nbridges = sizeof(bridges) / sizeof(bridges[0]),
	    .env_path = env,
	    .firmware_path = fw,
	    .seed = 1,
	    .verbosity = getenv("FUZZ_BOX_VERBOSE") ? 2 : -1,
	};
}

/* What the box sent: every message valid; remember its last request. */
static void fz_read(struct fz_chan *ch)
{
	union tstub_buf m;
	ssize_t n;

	while ((n = recv(ch->fd, m.bytes, sizeof(m.bytes),
			 MSG_DONTWAIT | MSG_TRUNC)) > 0) {
		int err = tstub_validate(m.bytes, (size_t)n);

		if (err) {
			fprintf(stderr,
				"box sent %zd bytes: len %u opcode 0x%x "
				"flags 0x%x unique %llu error %d: %s\n",
				n, m.hdr.len, m.hdr.opcode, m.hdr.flags,
				(unsigned long long)m.hdr.unique, m.hdr.error,
				strerror(-err));
			abort();
		}
		if (!(m.hdr.flags & TSTUB_F_REPLY))
			ch->requests[ch->nrequests++ % FZ_HISTORY] = m.hdr;
	}
}

/* Run the box until it has nothing left to do now. */
static void fz_pump(struct sim_box *box, struct fz_chan *chans)
{
	for (int i = 0; i < 256; i++) {
		int ran = sim_box_run(box, 0);

		for (int c = 0; c < FZ_CHANNELS; c++)
			if (chans[c].fd >= 0)
				fz_read(&chans[c]);
		if (ran <= 0)
			break;
	}
}

static void fz_connect(struct sim_box *box, struct fz_chan *chans, int c)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path, fz_stub_path, sizeof(fz_stub_path));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		abort();
	chans[c].fd = fd;
	fz_pump(box, chans);
}

/* Mode 2: the reply to one of the channel's last requests. */
static size_t fz_reply(union tstub_buf *m, const struct fz_chan *ch,
		       const uint8_t *p, size_t len)
{
	unsigned int back = len ? (p[0] >> 1) & (FZ_HISTORY - 1) : 0;
	const struct tstub_hdr *req =
	    &ch->requests[(ch->nrequests - 1 - back) % FZ_HISTORY];
	int32_t error = len && (p[0] & 1) ? -(int32_t)p[0] : 0;
	int want = tstub_body_size(req->opcode, 1);
	size_t body = len ? len - 1 : 0;

	if (!req->opcode)
		return 0;

	if (want >= 0)
		body = (size_t)want;
	body = fz_body(m, body, len > 1 ? p + 1 : p, len > 1 ? len - 1 : 0);
	return (size_t)tstub_build(m, req->opcode, TSTUB_F_REPLY, req->unique,
				   error, req->client,
				   m->bytes + sizeof(m->hdr), error ? 0 : body);
}

/* Mode 3: a request of a known opcode. */
static size_t fz_request(union tstub_buf *m, const uint8_t *p, size_t len,
			 int exact)
{
	uint16_t opcode;
	int want;
	size_t n;

	if (len < 3)
		return 0;
	opcode = fz_typed[p[0] % (sizeof(fz_typed) / sizeof(fz_typed[0]))];
	want = tstub_body_size(opcode, 0);
	n = exact && want >= 0 ? (size_t)want : len - 3;
	n = fz_body(m, n, p + 3, len - 3);
	return (size_t)tstub_build(m, opcode, 0, p[1], 0, p[2] % 5u,
				   m->bytes + sizeof(m->hdr), n);
}

struct fz_session {
	struct sim_box *box;
	struct fz_chan *chans;
};

static void fz_record(void *ctx, int k, const uint8_t *p, size_t len)
{
	struct fz_session *s = ctx;
	struct sim_box *box = s->box;
	struct fz_chan *chans = s->chans;
	struct fz_chan *ch = &chans[(k >> 3) & 3];
	union tstub_buf m;
	size_t n = 0;

	if (ch->fd < 0)
		fz_connect(box, chans, (k >> 3) & 3);
	switch (k & 3) {
	case 0:
		if (send(ch->fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 &&
		    errno != EMSGSIZE && errno != EAGAIN && errno != EPIPE &&
		    errno != ECONNRESET)
			abort();
		fz_pump(box, chans);
		return;
	case 1:
		n = fz_fixed_header(&m, p, len);
		break;
	case 2:
		if (ch->nrequests)
			n = fz_reply(&m, ch, p, len);
		break;
	case 3:
		n = fz_request(&m, p, len, k & 4);
		break;
	}
	if (n)
		send(ch->fd, m.bytes, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	fz_pump(box, chans);
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
	struct fz_chan chans[FZ_CHANNELS];
	struct sim_box *box;
	struct fz_session session;
	char err[256];

	box = sim_box_new(&fz_cfg, err, sizeof(err));
	if (!box) {
		fprintf(stderr, "sim_box_new: %s\n", err);
		abort();
	}
	for (int c = 0; c < FZ_CHANNELS; c++)
		chans[c] = (struct fz_chan){.fd = -1};
	fz_connect(box, chans, 0); /* the box sends INIT */
	session = (struct fz_session){.box = box, .chans = chans};
	fz_for_each_record(data, size, fz_record, &session);
	for (int c = 0; c < FZ_CHANNELS; c++) {
		if (chans[c].fd >= 0)
			close(chans[c].fd);
		chans[c].fd = -1;
	}
	fz_pump(box, chans); /* the box sees the daemon go */
	sim_box_free(box);
	return 0;
}

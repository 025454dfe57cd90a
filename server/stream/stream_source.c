// SPDX-License-Identifier: MIT
/*
 * A tuner's transport stream source (stream_priv.h).
 *
 * The simulated box serves each tuner's TS on a unix stream socket next
 * to its stub socket; the kernel box through the bridge's DVB adapter:
 * a demux0 PES filter on PID 0x2000 (the whole multiplex) with output
 * DMX_OUT_TS_TAP, read from dvr0.  Both deliver whole packets in
 * practice; the reader still finds the sync byte again after garbage, a
 * short read or a dvr overflow, because a misaligned stream would be
 * passed on misaligned to every reader forever.
 */
#include "stream_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/dvb/dmx.h>

#include "daemon.h"
#include "log.h"
#include "tuner.h"

/* What the demux buffers between two reads of dvr0: ~1.4 s at 24 Mbit/s. */
#define STREAM_DVR_BUFFER (4 * 1024 * 1024)

static int open_sim(const struct daemon *d, uint32_t tuner)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, n;

	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.ts%u", d->stub.path,
		     tuner);
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A unix socket connects at once or not at all. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = -errno;

		close(fd);
		return err == -EAGAIN ? -EBUSY : err;
	}
	return fd;
}

static int open_kernel(const struct daemon *d, uint32_t tuner, int *demux_fd)
{
	struct tuner *t = tuner_find((struct daemon *)d, tuner);
	struct dmx_pes_filter_params pes = {
	    .pid = 0x2000, /* every PID */
	    .input = DMX_IN_FRONTEND,
	    .output = DMX_OUT_TS_TAP,
	    .pes_type = DMX_PES_OTHER,
	    .flags = DMX_IMMEDIATE_START,
	};
	struct tuner_snapshot s;
	char path[PATH_MAX];
	int fd, err;

	if (!t || !(d->session.flags & TSTUB_CAP_DVB_ADAPTER)) {
		log_info("stream: tuner %u: %s", tuner,
			 t ? "the stub offers no DVB adapters"
			   : "no such tuner");
		return -ENODEV;
	}
	tuner_snapshot(t, &s);
	if (s.attach.dvb_adapter == TSTUB_DVB_ADAPTER_NONE) {
		log_info("stream: tuner %u: its bridge has no DVB adapter",
			 tuner);
		return -ENODEV;
	}
	snprintf(path, sizeof(path), "/dev/dvb/adapter%u/demux0",
		 s.attach.dvb_adapter);
	*demux_fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (*demux_fd < 0)
		return -errno;
	if (ioctl(*demux_fd, DMX_SET_BUFFER_SIZE, STREAM_DVR_BUFFER) < 0)
		log_debug("stream: %s: DMX_SET_BUFFER_SIZE: %s", path,
			  strerror(errno));
	snprintf(path, sizeof(path), "/dev/dvb/adapter%u/dvr0",
		 s.attach.dvb_adapter);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || ioctl(*demux_fd, DMX_SET_PES_FILTER, &pes) < 0) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		close(*demux_fd);
		*demux_fd = -1;
		return err;
	}
	return fd;
}

int stream_source_open(struct daemon *d, uint32_t tuner,
		       struct stream_source *src)
{
	int fd;

	src->demux_fd = -1;
	if (!src->buf)
		src->buf = malloc(STREAM_SOURCE_READ + TS_PACKET);
	if (!src->buf)
		return -ENOMEM;
	if (d->stub.transport == STUB_TRANSPORT_SIM)
		fd = open_sim(d, tuner);
	else
		fd = open_kernel(d, tuner, &src->demux_fd);
	if (fd < 0)
		return fd;
	src->fd = fd;
	src->carry_len = 0;
	/* A new connection is a new stream: no continuity to check yet. */
	memset(src->cc, 0, sizeof(src->cc));
	return 0;
}

void stream_source_close(struct stream_source *src)
{
	if (src->fd >= 0)
		close(src->fd);
	if (src->demux_fd >= 0)
		close(src->demux_fd);
	src->fd = src->demux_fd = -1;
	free(src->buf);
	src->buf = NULL;
}

/* Counters and the continuity check of one aligned packet; returns 1 on
 * a CC error.  A packet with the transport error indicator set is
 * counted and not trusted for continuity. */
static int account(struct stream_source *src, const uint8_t *p)
{
	unsigned int pid = ((unsigned int)p[1] & 0x1F) << 8 | p[2];
	unsigned int afc = (p[3] >> 4) & 3, cc = p[3] & 0x0F;
	unsigned int last = src->cc[pid];
	int disc = (afc & 2) && p[4] && (p[5] & 0x80);
	int err = 0;

	src->packets++;
	if (p[1] & 0x80) {
		src->tei_errors++;
		return 0;
	}
	if (pid == 0x1FFF || !(afc & 1))
		return 0; /* null packets and adaptation-only keep no CC */
	if (last && !disc && cc != (last & 0x0F) && cc != ((last + 1) & 0x0F)) {
		src->cc_errors++;
		err = 1;
	}
	src->cc[pid] = (uint8_t)(0x10 | cc);
	return err;
}

/* Align buf[0..have) on sync bytes in place; the partial tail is kept. */
static long align(struct stream_source *src, size_t have)
{
	uint8_t *b = src->buf;
	size_t in = 0, out = 0;

	while (in + TS_PACKET <= have) {
		if (b[in] != 0x47 ||
		    (in + TS_PACKET < have && b[in + TS_PACKET] != 0x47 &&
		     in + 2 * TS_PACKET <= have)) {
			in++;
			src->resyncs++;
			continue;
		}
		if (out != in)
			memmove(b + out, b + in, TS_PACKET);
		src->bad[out / TS_PACKET] = (uint8_t)account(src, b + out);
		out += TS_PACKET;
		in += TS_PACKET;
	}
	src->carry_len = have - in;
	memcpy(src->carry, b + in, src->carry_len);
	src->bytes += out;
	return (long)(out / TS_PACKET);
}

long stream_source_read(struct stream_source *src)
{
	size_t have = src->carry_len;
	ssize_t n;

	memcpy(src->buf, src->carry, have);
	n = read(src->fd, src->buf + have, STREAM_SOURCE_READ);
	if (n == 0)
		return -EPIPE;
	if (n < 0) {
		src->carry_len = have;
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		if (errno == EOVERFLOW) { /* dvr0 lost data: go on */
			src->overflows++;
			return 0;
		}
		return -errno;
	}
	return align(src, have + (size_t)n);
}

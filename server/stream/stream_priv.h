/* SPDX-License-Identifier: MIT */
/*
 * stream_priv.h - private to server/stream: a tuner's source, as
 * stream_source.c opens and reads it and stream_fanout.c shares it.
 */
#ifndef TUNERD_STREAM_PRIV_H
#define TUNERD_STREAM_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

struct daemon;

/* One read takes at most this much: ~30 ms of a 24 Mbit/s multiplex. */
#define STREAM_SOURCE_READ (TS_PACKET * 512)

struct stream_source {
	int fd;       /* the TS: the box's socket, or dvr0 */
	int demux_fd; /* kernel: demux0 holding the filter; -1 otherwise */
	uint8_t *buf; /* STREAM_SOURCE_READ + a carried partial packet */
	uint8_t carry[TS_PACKET];
	size_t carry_len;
	uint8_t bad[STREAM_SOURCE_READ / TS_PACKET + 2]; /* CC error flags */
	uint8_t cc[TS_PID_COUNT]; /* 0x10 | last CC, 0 while unknown */
	uint64_t packets, bytes, cc_errors, tei_errors, resyncs, overflows;
};

/*
 * Open tuner's source: with the simulated box the socket PATH.ts<N>, with
 * the kernel stub /dev/dvb/adapterA/dvr0 behind a demux0 filter on every
 * PID (A from the stub's ATTACH).  Returns 0 or a negative errno
 * (-ENODEV: the stub gave no DVB adapter).  The counters persist across
 * opens (the caller zeroes src once).
 */
int stream_source_open(struct daemon *d, uint32_t tuner,
		       struct stream_source *src);
void stream_source_close(struct stream_source *src);
/*
 * Read once (non-blocking): returns the number of whole packets now at
 * src->buf (aligned on their sync bytes, counted, CC errors flagged in
 * src->bad), 0 when none, or a negative errno (-EPIPE: the source closed).
 */
long stream_source_read(struct stream_source *src);

#endif /* TUNERD_STREAM_PRIV_H */

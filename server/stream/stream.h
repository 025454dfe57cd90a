/* SPDX-License-Identifier: MIT */
/*
 * stream.h - the tuners' MPEG transport streams: one source per tuner,
 * opened while it has readers and shared by all of them, each reader with
 * its own bounded buffer and filter (whole multiplex, PIDs, one service).
 *
 * A reader that falls behind its buffer is dropped (counted, event
 * stream.stop with reason slow_reader): nobody waits for it, neither the
 * loop nor the other readers.  A transport (REST today) owns its readers:
 * it takes bytes with stream_reader_read() and is woken when more arrive
 * or the reader ended, and closes the reader when its client is done.
 *
 * Loop thread only, like the rest of the daemon.
 */
#ifndef TUNERD_STREAM_H
#define TUNERD_STREAM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "stream_filter.h"

struct daemon;
struct stream_hub;
struct stream_reader;

#define TS_PACKET 188
/* Each reader's buffer: about 0.7 s of a 24 Mbit/s multiplex beyond what
 * the kernel's socket buffer holds. */
#define STREAM_READER_BUF (2u * 1024 * 1024)
/* Readers at once, per tuner and in all (memory: their buffers). */
#define STREAM_READERS_PER_TUNER 16
#define STREAM_READERS_MAX       64

enum stream_end {
	STREAM_END_NONE = 0,
	STREAM_END_CLIENT,   /* client_closed */
	STREAM_END_SLOW,     /* slow_reader: its buffer overflowed */
	STREAM_END_GONE,     /* tuner_gone: detached, offline, source closed */
	STREAM_END_STOPPING, /* daemon_stopping */
};

struct stream_stats {
	uint64_t packets, bytes;
	uint64_t cc_errors, tei_errors;
	uint64_t bitrate_bps; /* over the last second */
	unsigned int readers;
	uint64_t dropped_readers; /* too slow, since the daemon started */
};

/* Called when a reader has new bytes or ended (never from inside a
 * stream_reader_* call of the same reader).  It may read, and close the
 * reader. */
typedef void (*stream_wake_fn)(void *owner);

/* A transport that can write at once: a reader of the whole multiplex
 * whose ring is empty hands each batch to it first, and only what it did
 * not take is copied into the ring.  Returns the bytes written (0 when
 * it cannot now), or -1 when its client is gone. */
typedef ssize_t (*stream_write_fn)(void *owner, const void *buf, size_t len);

struct stream_hub *stream_hub_new(struct daemon *d);
/* End every reader (daemon_stopping) and wake its owner; close sources. */
void stream_hub_stop(struct stream_hub *h);
/* After the owners closed their readers. */
void stream_hub_free(struct stream_hub *h);

/*
 * Open a reader of tuner with filter f (copied), by: who reads (events).
 * Returns it, or NULL with *err: -ENOENT no such tuner, -EAGAIN too many
 * readers, -ENODEV no source for this tuner (the box offers none, or it
 * cannot be opened), -ESHUTDOWN stopping, -ENOMEM.
 */
struct stream_reader *stream_reader_open(struct stream_hub *h, uint32_t tuner,
					 const struct stream_filter_spec *f,
					 const char *by, stream_wake_fn wake,
					 void *owner, int *err);
/* Let the reader write through fn (see stream_write_fn). */
void stream_reader_set_writer(struct stream_reader *r, stream_write_fn fn);
/* Copy up to max waiting bytes into buf; returns how many (0: none now). */
size_t stream_reader_read(struct stream_reader *r, void *buf, size_t max);
/* The waiting bytes where they are (at most two pieces of the ring), for
 * a writev(); returns their total.  stream_reader_consume() drops the
 * first n of them, once written. */
size_t stream_reader_peek(const struct stream_reader *r, struct iovec iov[2],
			  int *niov);
void stream_reader_consume(struct stream_reader *r, size_t n);
/* Why the reader ended, or STREAM_END_NONE while it runs. */
enum stream_end stream_reader_ended(const struct stream_reader *r);
/* The owner is done (why: the reason if the reader still ran): event
 * stream.stop, and the reader is freed. */
void stream_reader_close(struct stream_reader *r, enum stream_end why);

/* Statistics of tuner's stream (zeros when it never streamed).  Returns
 * 1 when a source is open now. */
int stream_hub_stats(struct stream_hub *h, uint32_t tuner,
		     struct stream_stats *s);
/* A number that changes whenever stream_hub_stats() of any tuner may
 * have changed; 0 while any stream is read (its counters move with every
 * packet, so no number would hold). */
uint64_t stream_hub_stats_version(const struct stream_hub *h);
/* The Tuner object's "stream" field. */
json_t *stream_stats_json(struct stream_hub *h, uint32_t tuner);

const char *stream_end_name(enum stream_end e);

#endif /* TUNERD_STREAM_H */

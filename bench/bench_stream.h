/* SPDX-License-Identifier: MIT */
/*
 * bench_stream.h - the processes bench_stream runs beside tunerd: the
 * transport stream source and the bare relay baseline
 * (bench_stream_proc.c).
 */
#ifndef TUNERD_BENCH_STREAM_H
#define TUNERD_BENCH_STREAM_H

#include <stddef.h>
#include <sys/types.h>

#define BENCH_TS_PACKET 188
/* What one read of a source takes, in tunerd (STREAM_SOURCE_READ) and in
 * the relay alike. */
#define BENCH_SOURCE_READ (BENCH_TS_PACKET * 512)

enum bench_relay_mode {
	BENCH_RELAY_RW = 1, /* read() the source, write() each reader */
	BENCH_RELAY_SPLICE, /* splice() into a pipe, tee() + splice() out */
};

/*
 * Fork the source: it listens on SOCKPATH.ts1 .. .ts<ntuners> and writes
 * every connection a multiplex (continuous continuity counters) at
 * rate_bps.  Returns its pid once the sockets listen, or -1.
 */
pid_t bench_source_start(const char *sockpath, int ntuners, double rate_bps);

/*
 * Fork the bare relay: HTTP/1.0 on 127.0.0.1:port, GET
 * /api/v1/tuners/N/stream answered with a head and then the bytes of
 * SOCKPATH.tsN, one source connection per tuner shared by its readers.
 * Returns its pid once it listens, or -1.
 */
pid_t bench_relay_start(const char *sockpath, int port,
			enum bench_relay_mode mode);

/* CPU seconds (user + system) a process used so far, or -1. */
double bench_cpu_s(pid_t pid);

#endif /* TUNERD_BENCH_STREAM_H */

/* SPDX-License-Identifier: MIT */
/*
 * ktest - the guest-side tool of the kernel test: a minimal daemon that
 * speaks the stub ABI on /dev/tuner, ABI edge checks, and DVB frontend
 * commands (FE_SET_PROPERTY, FE_READ_STATUS), and transport stream checks
 * (a stream on stdin, or dvr0 read directly).
 */
#ifndef KTEST_H
#define KTEST_H

#include <stddef.h>
#include <stdint.h>

#include "tstub_codec.h"

#define KTEST_DEV "/dev/tuner"

/* Messages read while waiting for a reply, handled afterwards. */
#define KTEST_STASH 16

struct kchan {
	int fd;
	uint64_t next_unique;
	int nstash;
	union tstub_buf stash[KTEST_STASH];
};

int kchan_open(struct kchan *ch, const char *dev, int nonblock);
void kchan_close(struct kchan *ch);
/* Write one message; returns 0 or -errno. */
int kchan_send(struct kchan *ch, const union tstub_buf *m);
/* Read one message within timeout_ms (-1: forever); stashed ones first.
 * Returns its length, 0 at end of file, or -errno (-ETIMEDOUT). */
int kchan_recv(struct kchan *ch, union tstub_buf *m, int timeout_ms);
/* Send a request and wait for its reply (other messages are stashed).
 * Returns the reply's error (0 or -errno) or a transport -errno. */
int kchan_call(struct kchan *ch, uint16_t opcode, uint32_t client,
	       const void *body, size_t len, union tstub_buf *reply);
int kchan_reply(struct kchan *ch, const struct tstub_hdr *req, int32_t error,
		const void *body, size_t len);

uint64_t ktest_now_ms(void);

int ktest_daemon_main(int argc, char **argv);
int ktest_abi_main(int argc, char **argv);
int ktest_busy_main(int argc, char **argv);
int ktest_fe_main(int argc, char **argv);
int ktest_ts_main(int argc, char **argv);
int ktest_dvr_main(int argc, char **argv);

#endif /* KTEST_H */

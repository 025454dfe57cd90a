/* SPDX-License-Identifier: MIT */
/*
 * stub.h - the transport to the tuner stub: the kernel's /dev/tuner or the
 * simulated box's AF_UNIX SOCK_SEQPACKET socket.  A channel is one fd; one
 * message per read and per write.  Nothing above this file knows which
 * kind of stub it talks to.
 */
#ifndef TUNERD_STUB_H
#define TUNERD_STUB_H

#include <limits.h>
#include <stdint.h>

#include "tstub_codec.h"

enum stub_transport {
	STUB_TRANSPORT_KERNEL = 1,
	STUB_TRANSPORT_SIM = 2,
};

struct stub_addr {
	enum stub_transport transport;
	char path[PATH_MAX];
};

#define STUB_DEFAULT_DEVICE "/dev/tuner"

/* "sim:/path/sim.sock", "kernel" or "kernel:/dev/tuner".  Returns 0 or
 * -EINVAL. */
int stub_parse(const char *spec, struct stub_addr *addr);
/* "sim:/path" or "kernel:/dev/tuner", for logs and the API. */
const char *stub_addr_str(const struct stub_addr *addr, char *buf, size_t len);

/* Open a new, unbound, non-blocking channel.  Returns the fd or a
 * negative errno. */
int stub_open(const struct stub_addr *addr);

/*
 * Read one message.  Returns its length (> 0) once tstub_validate()
 * accepted it, 0 when the stub closed the channel, -EAGAIN when nothing
 * is waiting, -ENOMSG when a message was refused (logged, dropped: read
 * again), or another negative errno (the channel is unusable: treat it as
 * closed).
 */
int stub_recv(int fd, union tstub_buf *buf);

/*
 * Let a socket channel's reads wait: the fd turns blocking with a receive
 * timeout of wait_ms, so one stub_recv_wait() both waits for the next
 * message and reads it (a poll() and a read cost two system calls and two
 * passes over the socket's wait queue per message).  stub_recv() and
 * stub_send() still never block on it.  Returns 0, or -ENOTSOCK for the
 * kernel's device, whose reads cannot time out: wait with poll() there.
 */
int stub_recv_wait_set(int fd, unsigned int wait_ms);
/* As stub_recv(), waiting at most the wait_ms set above (-EAGAIN then, or
 * when a signal cut the wait short). */
int stub_recv_wait(int fd, union tstub_buf *buf);

/* Write the message in buf (hdr.len bytes).  Waits at most
 * STUB_SEND_WAIT_MS for room.  Returns 0 or a negative errno. */
#define STUB_SEND_WAIT_MS 1000
int stub_send(int fd, const union tstub_buf *buf);

/* Build and send a reply to req. */
int stub_reply(int fd, const struct tstub_hdr *req, int32_t error,
	       const void *body, size_t body_len);

#endif /* TUNERD_STUB_H */

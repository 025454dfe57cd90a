/* SPDX-License-Identifier: MIT */
/*
 * worker_proto.h - private: the messages between the daemon and a tuner's
 * worker process over their SOCK_SEQPACKET socketpair.  Fixed structs, one
 * per datagram; both sides are the same build, so no versioning.
 */
#ifndef TUNERD_WORKER_PROTO_H
#define TUNERD_WORKER_PROTO_H

#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>

#include "tuner.h"
#include "tuner_stub.h"

enum wmsg_type {
	WMSG_CMD = 0x31,    /* daemon -> worker: run an API command */
	WMSG_PROBED = 0x32, /* worker -> daemon: bind + probe result */
	WMSG_BEGIN = 0x33,  /* worker -> daemon: a command starts (late) */
	WMSG_DONE = 0x34,   /* worker -> daemon: a command ended */
	WMSG_LOCK = 0x35,   /* worker -> daemon: its lock watch saw lock */
};

struct wmsg_hdr {
	uint32_t type;
	uint32_t size; /* of the whole struct */
};

struct wmsg_cmd {
	struct wmsg_hdr h;
	uint32_t op; /* enum tuner_op */
	uint32_t padding;
	uint64_t req_id;
	uint64_t deadline_ns; /* CLOCK_MONOTONIC, shared by both processes */
	/* TUNE: a caller waits for lock until then (0: nobody waits).  A
	 * tune that leaves the chip unlocked starts the worker's lock watch,
	 * which reports the lock (WMSG_LOCK) the moment a read shows it. */
	uint64_t lock_deadline_ns;
	struct tstub_params params;
};

struct wmsg_probed {
	struct wmsg_hdr h;
	int32_t error;
	uint32_t padding;
	struct tstub_params stub_params; /* what BIND returned */
};

struct wmsg_begin {
	struct wmsg_hdr h;
	uint32_t origin; /* enum tuner_origin */
	uint32_t op;
	uint64_t req_id;            /* API commands; 0 otherwise */
	struct tstub_params params; /* TUNE */
};

/* The end of a command; for one from the stub that ran under
 * WORKER_BEGIN_LATE_NS its one report (began 0: no BEGIN came, this one
 * says it all).  The daemon's and the restore's always have a BEGIN. */
struct wmsg_done {
	struct wmsg_hdr h;
	uint32_t origin;
	uint32_t op;
	int32_t error;
	uint32_t have_status;
	uint32_t began;         /* a BEGIN was sent for it */
	uint32_t i2c_transfers; /* since the worker's last report */
	uint64_t req_id;
	uint64_t duration_ns;
	struct tstub_params params; /* TUNE: the params asked for */
	struct tstub_status status; /* after the command, if have_status */
};

/* The lock watch read the status and found lock. */
struct wmsg_lock {
	struct wmsg_hdr h;
	uint32_t i2c_transfers; /* since the worker's last report */
	uint32_t reads;         /* status reads the watch took */
	uint64_t req_id;        /* the tune that started the watch */
	struct tstub_status status;
};

union wmsg {
	struct wmsg_hdr h;
	struct wmsg_cmd cmd;
	struct wmsg_probed probed;
	struct wmsg_begin begin;
	struct wmsg_done done;
	struct wmsg_lock lock;
};

static inline uint32_t wmsg_size(uint32_t type)
{
	switch (type) {
	case WMSG_CMD:
		return sizeof(struct wmsg_cmd);
	case WMSG_PROBED:
		return sizeof(struct wmsg_probed);
	case WMSG_BEGIN:
		return sizeof(struct wmsg_begin);
	case WMSG_DONE:
		return sizeof(struct wmsg_done);
	case WMSG_LOCK:
		return sizeof(struct wmsg_lock);
	}
	return 0;
}

/* Send m (its h.type set; h.size is filled in).  0 or a negative errno. */
static inline int wmsg_send(int fd, union wmsg *m)
{
	ssize_t n;

	m->h.size = wmsg_size(m->h.type);
	do
		n = send(fd, m, m->h.size, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)m->h.size ? 0 : -EIO;
}

/* Receive one message: its size (> 0), 0 at EOF, -EAGAIN, -EBADMSG
 * (wrong size or type: dropped), or another negative errno. */
static inline int wmsg_recv(int fd, union wmsg *m)
{
	ssize_t n = recv(fd, m, sizeof(*m), MSG_TRUNC | MSG_DONTWAIT);

	if (n < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	if (n == 0)
		return 0;
	if ((size_t)n < sizeof(m->h) || (size_t)n > sizeof(*m) ||
	    m->h.size != (uint32_t)n || wmsg_size(m->h.type) != (uint32_t)n)
		return -EBADMSG;
	return (int)n;
}

#endif /* TUNERD_WORKER_PROTO_H */

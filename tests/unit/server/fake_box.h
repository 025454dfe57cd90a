/* SPDX-License-Identifier: MIT */
/*
 * A minimal simulated box for the daemon's tests: a listening
 * SOCK_SEQPACKET socket, a thread that plays the stub's control channel
 * (INIT, LOAD_PLUGIN, ATTACH, DETACH, re-sending after a reconnect) and
 * the tuner channels (BIND, PARAMS_CHANGED).  The test drives it with
 * box_cmd() and reads what it saw under box.lock.
 */
#ifndef TEST_FAKE_BOX_H
#define TEST_FAKE_BOX_H

#include <pthread.h>
#include <stdint.h>
#include <sys/un.h>

#include "tuner_stub.h"

#define BOX_CLIENTS 4
#define BOX_CONNS   16

enum box_op {
	BOX_LOAD = 1,
	BOX_ATTACH,
	BOX_DETACH,
	BOX_DROP_CONTROL, /* close every channel, as a stub that went away */
	BOX_QUIT,
};

struct box {
	pthread_mutex_t lock;
	struct sockaddr_un addr;
	int listen_fd, cmd_pipe[2];
	int ctl;
	int conns[BOX_CONNS];
	pthread_t thread;
	/* What the daemon answered / did. */
	int init_replies, init_err;
	int load_replies, load_err;
	struct tstub_chip_info load_info;
	int attach_replies[BOX_CLIENTS], attach_err[BOX_CLIENTS];
	int detach_replies, detach_err;
	int binds[BOX_CLIENTS];
	int params_changed[BOX_CLIENTS];
	struct tstub_params cached[BOX_CLIENTS];
	int attached[BOX_CLIENTS];
	uint32_t chip;
};

int box_start(struct box *b, const char *path);
void box_cmd(struct box *b, enum box_op op, uint32_t arg);
void box_stop(struct box *b);
/* Read an int field under the lock. */
int box_get(struct box *b, const int *field);

/* Turn the daemon's loop l until cond(arg) holds, at most ms; whether it
 * holds.  The bound only fails a daemon that never gets there. */
struct loop;
int box_run_until(struct loop *l, int (*cond)(void *arg), void *arg, int ms);

#endif /* TEST_FAKE_BOX_H */

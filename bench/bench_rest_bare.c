// SPDX-License-Identifier: MIT
/*
 * bench_rest_bare.c - bench_rest's baseline processes.
 *
 * The front: libmicrohttpd with MHD_USE_EPOLL and no thread of its own,
 * its epoll fd in an outer epoll loop next to the worker's socket, as in
 * tunerd; a request waiting for the worker is a suspended connection.
 * Its fresh status shares reads as tunerd's does: one read in flight;
 * requests that arrive meanwhile wait for the next read, which starts
 * after they arrived.
 *
 * The worker and the box: a process each, on SOCK_SEQPACKET socketpairs,
 * moving the messages tunerd's worker and the box move for one status
 * read (command; BEGIN; k I2C transfers; DONE), with no chip logic.  So
 * the baseline does the same hops with the same bytes, and the ratio
 * shows what tunerd's code costs on top.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_rest.h"
#include "tuner_stub.h"

/* The sizes of tunerd's daemon <-> worker messages (struct wmsg_cmd,
 * wmsg_begin and wmsg_done of the server's worker_proto.h). */
#define BARE_CMD_LEN   (32 + sizeof(struct tstub_params))
#define BARE_BEGIN_LEN (24 + sizeof(struct tstub_params))
#define BARE_DONE_LEN                                                          \
	(48 + sizeof(struct tstub_params) + sizeof(struct tstub_status))
#define BARE_MSG_MAX 2048

static void die_with_parent(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
}

/* A message of len bytes whose first 4 say how long the answer is. */
static int send_sized(int fd, size_t len, uint32_t answer_len)
{
	uint64_t buf[BARE_MSG_MAX / 8] = {0};

	if (len > sizeof(buf) || len < sizeof(answer_len))
		return -EMSGSIZE;
	memcpy(buf, &answer_len, sizeof(answer_len));
	return send(fd, buf, len, 0) == (ssize_t)len ? 0 : -EIO;
}

/* The box: answers every message with as many bytes as it asks for. */
static void __attribute__((noreturn)) box_serve(int fd)
{
	uint64_t buf[BARE_MSG_MAX / 8];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		uint32_t len;

		if (n < (ssize_t)sizeof(len))
			_exit(n == 0 ? 0 : 1);
		memcpy(&len, buf, sizeof(len));
		if (len < sizeof(len) || len > sizeof(buf) ||
		    send(fd, buf, len, 0) != (ssize_t)len)
			_exit(1);
	}
}

/* The worker: per command BEGIN, k transfers with the box, then DONE. */
static void __attribute__((noreturn))
worker_serve(int front, int box, const struct bench_bare_cfg *cfg)
{
	uint64_t buf[BARE_MSG_MAX / 8];

	for (;;) {
		ssize_t n = recv(front, buf, sizeof(buf), 0);
		int err;

		if (n <= 0)
			_exit(n == 0 ? 0 : 1);
		err = send_sized(front, BARE_BEGIN_LEN, 0);
		for (unsigned int i = 0; i < cfg->k && !err; i++) {
			err = send_sized(box, cfg->xfer_len,
					 (uint32_t)cfg->xfer_reply_len);
			if (!err && recv(box, buf, sizeof(buf), 0) !=
					(ssize_t)cfg->xfer_reply_len)
				err = -EIO;
		}
		if (err || send_sized(front, BARE_DONE_LEN, 0))
			_exit(1);
	}
}

/* ---- the front ---- */

struct bare_req {
	struct MHD_Connection *conn;
	struct bare_req *next;
	int waiting;  /* suspended for a status read */
	int answered; /* its read is done */
};

struct bare_front {
	const struct bench_bare_cfg *cfg;
	struct MHD_Daemon *mhd;
	int worker;
	struct bare_req *waiting;  /* for the next read */
	struct bare_req *inflight; /* answered by the read in flight */
};

static void read_start(struct bare_front *f)
{
	if (f->inflight || !f->waiting)
		return;
	f->inflight = f->waiting;
	f->waiting = NULL;
	if (send_sized(f->worker, BARE_CMD_LEN, 0))
		_exit(1);
}

static void worker_readable(struct bare_front *f)
{
	uint64_t buf[BARE_MSG_MAX / 8];
	ssize_t n;

	while ((n = recv(f->worker, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		if ((size_t)n != BARE_DONE_LEN)
			continue; /* BEGIN */
		for (struct bare_req *r = f->inflight; r; r = r->next) {
			r->answered = 1;
			MHD_resume_connection(r->conn);
		}
		f->inflight = NULL;
		read_start(f);
	}
	if (n == 0 || (n < 0 && errno != EAGAIN))
		_exit(1);
}

static enum MHD_Result respond(struct MHD_Connection *c,
			       const struct bench_body *b)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
	    b->len, b->data, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result bare_answer(void *cls, struct MHD_Connection *c,
				   const char *url, const char *method,
				   const char *version, const char *upload,
				   size_t *upload_size, void **req_cls)
{
	struct bare_front *f = cls;
	struct bare_req *r = *req_cls;
	int status = strcmp(url, "/api/v1/tuners/1/status") == 0;

	(void)method;
	(void)version;
	(void)upload;
	(void)upload_size;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		r->conn = c;
		*req_cls = r;
		return MHD_YES; /* the head; answer on the next call */
	}
	if (status && !r->answered &&
	    !MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
					 "max_age_ms")) {
		r->next = f->waiting;
		f->waiting = r;
		MHD_suspend_connection(c);
		read_start(f);
		return MHD_YES;
	}
	if (strcmp(url, "/api/v1/tuners") == 0)
		return respond(c, &f->cfg->tuners);
	return respond(c, status ? &f->cfg->status : &f->cfg->tuner);
}

static void bare_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			   enum MHD_RequestTerminationCode why)
{
	(void)cls;
	(void)c;
	(void)why;
	free(*req_cls);
	*req_cls = NULL;
}

/* One thread: the outer epoll holds MHD's epoll fd and the worker's. */
static void __attribute__((noreturn)) front_serve(struct bare_front *f)
{
	const union MHD_DaemonInfo *info =
	    MHD_get_daemon_info(f->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	struct epoll_event ev = {.events = EPOLLIN}, evs[4];
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (!info || ep < 0)
		_exit(1);
	ev.data.fd = info->epoll_fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, info->epoll_fd, &ev);
	ev.data.fd = f->worker;
	epoll_ctl(ep, EPOLL_CTL_ADD, f->worker, &ev);
	for (;;) {
		MHD_UNSIGNED_LONG_LONG ms;
		int timeout = -1, n;

		if (MHD_get_timeout(f->mhd, &ms) == MHD_YES)
			timeout = ms > 1000 ? 1000 : (int)ms;
		n = epoll_wait(ep, evs, 4, timeout);
		for (int i = 0; i < n; i++)
			if (evs[i].data.fd == f->worker)
				worker_readable(f);
		MHD_run(f->mhd);
	}
}

static pid_t fork_tied(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0)
		die_with_parent(parent);
	return pid;
}

/* In the front's process: fork the worker (which forks the box), serve. */
static void __attribute__((noreturn))
front_main(const struct bench_bare_cfg *cfg)
{
	static struct bare_front f;
	int fw[2], wb[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fw) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, wb))
		_exit(1);
	if (fork_tied() == 0) {
		close(fw[0]);
		if (fork_tied() == 0) {
			close(fw[1]);
			close(wb[0]);
			box_serve(wb[1]);
		}
		close(wb[1]);
		worker_serve(fw[1], wb[0], cfg);
	}
	close(fw[1]);
	close(wb[0]);
	close(wb[1]);
	f.cfg = cfg;
	f.worker = fw[0];
	f.mhd = MHD_start_daemon(
	    MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, (uint16_t)cfg->port, NULL,
	    NULL, bare_answer, &f, MHD_OPTION_CONNECTION_LIMIT, 256u,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
	    MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_NOTIFY_COMPLETED,
	    bare_completed, NULL, MHD_OPTION_END);
	if (!f.mhd)
		_exit(1);
	front_serve(&f);
}

static int answers(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int ok = fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a));

	if (fd >= 0)
		close(fd);
	return ok;
}

pid_t bench_bare_start(const struct bench_bare_cfg *cfg)
{
	pid_t pid = fork_tied();

	if (pid == 0)
		front_main(cfg);
	if (pid < 0)
		return -1;
	/* Start-up only: the measurements begin once it accepts. */
	for (int i = 0; i < 500; i++) {
		if (answers(cfg->port))
			return pid;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		usleep(10000);
	}
	bench_bare_stop(pid);
	return -1;
}

void bench_bare_stop(pid_t front)
{
	if (front > 0) {
		kill(front, SIGTERM);
		waitpid(front, NULL, 0);
	}
}

// SPDX-License-Identifier: MIT
/*
 * box_app.c - the app socket: what a DVB or V4L application on the box
 * would cause, for tests and tunerd-simctl.  AF_UNIX SOCK_STREAM, one
 * JSON object per line in, one JSON line out per request, in order.
 */
#define _GNU_SOURCE /* accept4 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "box_app_i.h"

/* A client that does not read its replies stops being served at
 * APP_OUT_PAUSE and is dropped at APP_OUT_MAX. */
#define APP_OUT_PAUSE (64 * 1024)
#define APP_OUT_MAX   (1024 * 1024)

struct app_call {
	struct box_list link;  /* app->calls */
	struct app_conn *conn; /* NULL once the connection is gone */
	uint16_t opcode;
	uint32_t client;
	uint64_t start_ns;
};

struct app_conn {
	struct box_list link; /* app->conns, then app->dead */
	struct box_app *app;
	int fd; /* watched until closed, then -1 */
	char in[APP_LINE_MAX];
	size_t inlen;
	char *out;
	size_t outlen, outcap;
	struct app_call *call; /* the request being served */
	bool eof;              /* the client sent everything it will */
	bool closing;          /* close once the output is written */
	bool dead;
};

struct box_app {
	struct sim_box *box;
	char *path;
	int fd;
	struct box_list conns;
	struct box_list dead;
	struct box_list calls; /* requests in flight, owned here */
	size_t nconns;
};

static void app_process(struct app_conn *conn);

static void app_close(struct app_conn *conn)
{
	struct box_app *app = conn->app;

	if (conn->dead)
		return;
	conn->dead = true;
	loop_del_fd(app->box->loop, conn->fd);
	close(conn->fd);
	conn->fd = -1;
	if (conn->call)
		conn->call->conn = NULL;
	conn->call = NULL;
	box_list_del(&conn->link);
	box_list_add_tail(&app->dead, &conn->link);
	app->nconns--;
}

static void app_update_mask(struct app_conn *conn)
{
	unsigned int ev = 0;

	if (conn->dead)
		return;
	/* Without LOOP_READ a hang-up is not reported: the client's end is
	 * then noticed by the next write (its request ends at the latest at
	 * the box's deadline). */
	if (!conn->eof && !conn->closing && conn->inlen < APP_LINE_MAX)
		ev |= LOOP_READ;
	if (conn->outlen)
		ev |= LOOP_WRITE;
	loop_set_fd_mask(conn->app->box->loop, conn->fd, ev);
}

/* Nothing left to do for a client that finished or misbehaved. */
static void app_close_if_done(struct app_conn *conn)
{
	if (conn->dead || conn->call || conn->outlen)
		return;
	if (conn->closing || (conn->eof && !conn->inlen))
		app_close(conn);
}

static void app_flush(struct app_conn *conn)
{
	size_t done = 0;

	while (done < conn->outlen) {
		ssize_t n =
		    send(conn->fd, conn->out + done, conn->outlen - done,
			 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			app_close(conn);
			return;
		}
		done += (size_t)n;
	}
	memmove(conn->out, conn->out + done, conn->outlen - done);
	conn->outlen -= done;
	app_update_mask(conn);
	app_close_if_done(conn);
}

static void app_write(struct app_conn *conn, json_t *reply)
{
	/* Measurements are in thousandths: no binary-float noise digits. */
	char *s = json_dumps(reply, JSON_COMPACT | JSON_REAL_PRECISION(10));
	size_t len = s ? strlen(s) : 0;

	json_decref(reply);
	if (!s || conn->dead)
		goto out;
	if (conn->outlen + len + 1 > APP_OUT_MAX) {
		app_close(conn);
		goto out;
	}
	if (conn->outlen + len + 1 > conn->outcap) {
		size_t cap = conn->outcap ? conn->outcap : 1024;
		char *p;

		while (cap < conn->outlen + len + 1)
			cap *= 2;
		p = realloc(conn->out, cap);
		if (!p) {
			app_close(conn);
			goto out;
		}
		conn->out = p;
		conn->outcap = cap;
	}
	memcpy(conn->out + conn->outlen, s, len);
	conn->out[conn->outlen + len] = '\n';
	conn->outlen += len + 1;
	app_flush(conn);
out:
	free(s);
}

static void app_on_done(void *arg, int err, const void *body, size_t len)
{
	struct app_call *call = arg;
	struct app_conn *conn = call->conn;

	if (conn) {
		uint64_t us = (box_now_ns() - call->start_ns) / 1000;

		conn->call = NULL;
		app_write(conn, app_call_reply(call->opcode, call->client, err,
					       body, len, us));
		app_process(conn);
	}
	box_list_del(&call->link);
	free(call);
}

int app_call_start(struct app_conn *conn, uint32_t client, uint16_t opcode,
		   const struct tstub_params *p)
{
	struct sim_box *box = conn->app->box;
	struct app_call *call = calloc(1, sizeof(*call));
	int err;

	if (!call)
		return -ENOMEM;
	call->conn = conn;
	call->opcode = opcode;
	call->client = client;
	call->start_ns = box_now_ns();
	err = sim_box_request(box, client, opcode, p, app_on_done, call);
	if (err) {
		free(call);
		return err;
	}
	box_list_add_tail(&conn->app->calls, &call->link);
	conn->call = call;
	return 0;
}

static void app_line(struct app_conn *conn, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *req, *reply;

	while (len && isspace((unsigned char)line[len - 1]))
		len--;
	while (len && isspace((unsigned char)*line)) {
		line++;
		len--;
	}
	if (!len)
		return;
	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!req)
		reply = app_error(-EINVAL, "bad JSON: %s", jerr.text);
	else if (!json_is_object(req))
		reply = app_error(-EINVAL, "a request is one JSON object");
	else
		reply = app_op(conn, conn->app->box, req);
	json_decref(req);
	if (reply)
		app_write(conn, reply);
}

/* Serve complete lines, one request at a time. */
static void app_process(struct app_conn *conn)
{
	while (!conn->dead && !conn->call && !conn->closing &&
	       conn->outlen < APP_OUT_PAUSE) {
		char *nl = memchr(conn->in, '\n', conn->inlen);
		size_t len, used;

		if (nl) {
			len = (size_t)(nl - conn->in);
			used = len + 1;
		} else if (conn->inlen == APP_LINE_MAX) {
			app_write(conn, app_error(-EINVAL,
						  "request line longer than %d "
						  "bytes",
						  APP_LINE_MAX));
			conn->closing = true;
			conn->inlen = 0;
			break;
		} else if (conn->eof && conn->inlen) {
			len = used = conn->inlen; /* last line, no newline */
		} else {
			break;
		}
		app_line(conn, conn->in, len);
		memmove(conn->in, conn->in + used, conn->inlen - used);
		conn->inlen -= used;
	}
	app_update_mask(conn);
	app_close_if_done(conn);
}

static void app_read(struct app_conn *conn)
{
	ssize_t n = recv(conn->fd, conn->in + conn->inlen,
			 APP_LINE_MAX - conn->inlen, MSG_DONTWAIT);

	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			app_close(conn);
		return;
	}
	if (n == 0)
		conn->eof = true;
	conn->inlen += (size_t)n;
	app_process(conn);
}

static void on_conn_event(struct loop *l, int fd, unsigned int events,
			  void *arg)
{
	struct app_conn *conn = arg;

	(void)l;
	(void)fd;
	if (events & LOOP_WRITE)
		app_flush(conn);
	if (conn->dead)
		return;
	if (!(events & (LOOP_READ | LOOP_HUP)))
		return;
	if (!conn->eof && conn->inlen < APP_LINE_MAX)
		app_read(conn);
	else if (events & LOOP_HUP)
		app_close(conn); /* the fd errored while not reading */
}

static void app_refuse(int fd)
{
	static const char msg[] =
	    "{\"ok\":false,\"error\":-16,\"errname\":\"EBUSY\","
	    "\"message\":\"too many connections\"}\n";

	send(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

static void app_accept(struct box_app *app, int fd)
{
	struct app_conn *conn;

	if (app->nconns >= APP_CONN_MAX) {
		app_refuse(fd);
		return;
	}
	conn = calloc(1, sizeof(*conn));
	if (!conn) {
		close(fd);
		return;
	}
	conn->app = app;
	conn->fd = fd;
	if (loop_add_fd(app->box->loop, fd, LOOP_READ, on_conn_event, conn) <
	    0) {
		close(fd);
		free(conn);
		return;
	}
	box_list_add_tail(&app->conns, &conn->link);
	app->nconns++;
}

static void on_app_listen(struct loop *l, int fd, unsigned int events,
			  void *arg)
{
	struct box_app *app = arg;

	(void)l;
	(void)events;
	for (int i = 0; i < 16; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0)
			return;
		app_accept(app, cfd);
	}
}

struct box_app *box_app_new(struct sim_box *box, const char *path, char *err,
			    size_t errlen)
{
	struct box_app *app = calloc(1, sizeof(*app));

	if (!app) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	app->box = box;
	box_list_init(&app->conns);
	box_list_init(&app->dead);
	box_list_init(&app->calls);
	app->fd = box_unix_listen(path, SOCK_STREAM, err, errlen);
	if (app->fd < 0) {
		free(app);
		return NULL;
	}
	app->path = strdup(path);
	if (!app->path || loop_add_fd(box->loop, app->fd, LOOP_READ,
				      on_app_listen, app) < 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		box_app_free(app);
		return NULL;
	}
	return app;
}

static void app_conn_free(struct app_conn *conn)
{
	box_list_del(&conn->link);
	free(conn->out);
	free(conn);
}

void box_app_reap(struct box_app *app)
{
	if (!app)
		return;
	while (!box_list_empty(&app->dead))
		app_conn_free(
		    box_container_of(app->dead.next, struct app_conn, link));
}

void box_app_free(struct box_app *app)
{
	if (!app)
		return;
	while (!box_list_empty(&app->conns))
		app_close(
		    box_container_of(app->conns.next, struct app_conn, link));
	box_app_reap(app);
	/* Their requests are dropped with the box, callbacks uncalled. */
	while (!box_list_empty(&app->calls)) {
		struct box_list *n = app->calls.next;

		box_list_del(n);
		free(box_container_of(n, struct app_call, link));
	}
	loop_del_fd(app->box->loop, app->fd);
	close(app->fd);
	if (app->path)
		unlink(app->path);
	free(app->path);
	free(app);
}

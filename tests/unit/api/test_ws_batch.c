// SPDX-License-Identifier: MIT
/*
 * The WebSocket server's writes (server/net/events/ws_write.c), through
 * real TCP connections on loopback to the network API's front on the
 * loop (api_start(): the peek, libmicrohttpd's upgrade, wslay):
 *  - the events queued for a client go out in one batch (framed by wslay
 *    into one buffer, one write), as ws_server_stats() counts them;
 *  - a loop turn writes a bounded number of messages: with more queued
 *    than a turn takes, some clients wait for a later turn ("deferred"),
 *    and every client still gets every event, in order;
 *  - a client catching up whose waiting batch a ping emptied gets the
 *    rest of its queue.
 * No timing: the loop runs until what is waited for has happened.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "daemon.h"
#include "event_stream.h"
#include "eventbus.h"
#include "http_front.h"
#include "loop.h"
#include "net_api.h"
#include "ws.h"

#define MAX_CLIENTS 200
#define TURNS_MAX   20000
#define CLIENT_BUF  (256 * 1024)

static const char upgrade[] = "GET /api/v1/events?types=test.* HTTP/1.1\r\n"
			      "Host: 127.0.0.1\r\n"
			      "Upgrade: websocket\r\n"
			      "Connection: Upgrade\r\n"
			      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
			      "Sec-WebSocket-Version: 13\r\n"
			      "Sec-WebSocket-Protocol: tunerd.v1\r\n\r\n";

struct client {
	int fd;
	char *buf;
	size_t len;
	int open; /* the 101 came */
};

static struct daemon D;
static struct ws_server *Srv;
static int Port;
static struct client Cl[MAX_CLIENTS];

/* What the client's socket holds now, appended to its buffer. */
static void client_read(struct client *c)
{
	ssize_t n;

	while (c->len < CLIENT_BUF &&
	       (n = recv(c->fd, c->buf + c->len, CLIENT_BUF - c->len,
			 MSG_DONTWAIT)) > 0)
		c->len += (size_t)n;
	if (!c->open && memmem(c->buf, c->len, "\r\n\r\n", 4))
		c->open = !strncmp(c->buf, "HTTP/1.1 101", 12);
}

static size_t count(const struct client *c, const char *what)
{
	size_t n = 0, wl = strlen(what);
	const char *p = c->buf, *end = c->buf + c->len;

	while ((p = memmem(p, (size_t)(end - p), what, wl))) {
		n++;
		p += wl;
	}
	return n;
}

/* rcvbuf: the client socket's receive buffer, 0 for the default. */
static int client_open_with(struct client *c, int port, const char *req,
			    int rcvbuf)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	c->buf = malloc(CLIENT_BUF);
	/* Before the connect: the window it offers follows. */
	if (c->fd >= 0 && rcvbuf)
		setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
			   sizeof(rcvbuf));
	if (c->fd < 0 || !c->buf ||
	    connect(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	return write(c->fd, req, strlen(req)) == (ssize_t)strlen(req) ? 0 : -1;
}

static int client_open(struct client *c, int port)
{
	return client_open_with(c, port, upgrade, 0);
}

/* Run the loop until every client has n copies of what (or its 101 when
 * what is NULL); 0, or -1 after TURNS_MAX turns. */
static int pump(int nclients, const char *what, size_t n)
{
	for (int turn = 0; turn < TURNS_MAX; turn++) {
		int done = 0;

		for (int i = 0; i < nclients; i++) {
			client_read(&Cl[i]);
			done += what ? count(&Cl[i], what) == n : Cl[i].open;
		}
		if (done == nclients)
			return 0;
		loop_run_once(D.loop, 10);
	}
	return -1;
}

static int setup(int nclients)
{
	struct net_api *net;
	int err = 0, port;

	memset(&D, 0, sizeof(D));
	D.loop = loop_new();
	D.events = eventbus_new(4096);
	snprintf(D.name, sizeof(D.name), "test");
	eventbus_set_box(D.events, D.name);
	if (api_option(&D, "listen", "127.0.0.1:0") ||
	    api_option(&D, "status-interval-ms", "0") || api_start(&D))
		return -1;
	net = net_api_of(&D);
	Srv = http_front_ws(net->front);
	port = Port = http_front_port(net->front);
	if (!Srv || port <= 0)
		return -1;
	/* The front accepts as the loop runs: the listen backlog is
	 * shorter than the clients. */
	for (int i = 0; i < nclients && !err; i++) {
		err = client_open(&Cl[i], port);
		loop_run_once(D.loop, 0);
	}
	return err ? -1 : pump(nclients, NULL, 0);
}

static void teardown(int nclients)
{
	event_streams_stop(&D);
	api_stop(&D);
	for (int i = 0; i < nclients; i++) {
		close(Cl[i].fd);
		free(Cl[i].buf);
	}
	memset(Cl, 0, sizeof(Cl));
	eventbus_free(D.events);
	loop_free(D.loop);
}

static void publish(int n)
{
	for (int i = 0; i < n; i++)
		eventbus_publish(D.events, "test.tick", 1,
				 json_pack("{s:i}", "i", i));
}

/* Ten events published at once reach the client in one batch. */
static void test_one_batch(void)
{
	struct ws_stats before, after;

	CHECK(setup(1) == 0);
	ws_server_stats(Srv, &before);
	publish(10);
	CHECK(pump(1, "\"type\":\"test.tick\"", 10) == 0);
	ws_server_stats(Srv, &after);
	CHECK_EQ_INT(after.messages - before.messages, 10);
	CHECK_EQ_INT(after.batches - before.batches, 1);
	CHECK_EQ_INT(after.max_batch, 10);
	/* In order. */
	CHECK(strstr(Cl[0].buf, "\"i\":0") < strstr(Cl[0].buf, "\"i\":9"));
	teardown(1);
}

/* More than a turn takes: some clients wait a turn, all get everything. */
static void test_turn_budget(void)
{
	const int nclients = 150, nevents = 10;
	struct ws_stats before, after;

	CHECK(setup(nclients) == 0);
	ws_server_stats(Srv, &before);
	publish(nevents);
	CHECK(pump(nclients, "\"type\":\"test.tick\"", (size_t)nevents) == 0);
	ws_server_stats(Srv, &after);
	CHECK_EQ_INT(after.messages - before.messages, nclients * nevents);
	CHECK_EQ_INT(after.batches - before.batches, nclients);
	CHECK(after.deferred > before.deferred);
	teardown(nclients);
}

/* Run the loop until the writer has made no progress for a while (the
 * sockets are full); the messages it wrote. */
static uint64_t run_until_stalled(void)
{
	struct ws_stats st = {0};
	uint64_t last = 0;
	int still = 0;

	for (int turn = 0; turn < TURNS_MAX && still < 200; turn++) {
		loop_run_once(D.loop, 0);
		ws_server_stats(Srv, &st);
		still = st.messages && st.messages == last ? still + 1 : 0;
		last = st.messages;
	}
	return last;
}

/*
 * A client catching up (since=) that stopped reading has a batch waiting
 * for room in its socket and more in its queue.  It reads again, and a
 * ping (the keepalive) empties the waiting batch before the loop saw the
 * room: the rest of the queue still reaches it.  (Once nothing watched
 * the socket for room, nothing brought such a client back: the soak
 * found 140 of 1,000 subscribers stalled so.)
 */
static void test_flush_resumes(void)
{
	const int nevents = 2000, turns = 1000;
	const char *since =
	    "GET /api/v1/events?types=test.*&since=0 HTTP/1.1\r\n"
	    "Host: 127.0.0.1\r\n"
	    "Upgrade: websocket\r\n"
	    "Connection: Upgrade\r\n"
	    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	    "Sec-WebSocket-Version: 13\r\n\r\n";
	struct client *c = &Cl[0];
	int turn;

	CHECK(setup(0) == 0);
	publish(nevents);
	c->fd = -1;
	CHECK(client_open_with(c, Port, since, 2048) == 0);
	CHECK(run_until_stalled() < (uint64_t)nevents);
	client_read(c);
	ws_server_keepalive(Srv, loop_now_ms() + 31000);
	for (turn = 0; turn < turns; turn++) {
		client_read(c);
		if (count(c, "\"type\":\"test.tick\"") == (size_t)nevents)
			break;
		loop_run_once(D.loop, 10);
	}
	CHECK(turn < turns);
	CHECK_EQ_INT(count(c, "\"type\":\"test.tick\""), nevents);
	teardown(1);
}

int main(void)
{
	test_one_batch();
	test_flush_resumes();
	test_turn_budget();
	return check_done("test_ws_batch");
}

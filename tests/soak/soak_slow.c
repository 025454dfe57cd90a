// SPDX-License-Identifier: MIT
/*
 * The slowloris client: slow_conns connections, each sending a request
 * line and then one header byte every SLOW_TRICKLE_MS, never ending its
 * head.  The daemon should close each at its head deadline without an
 * answer, and refuse the connections beyond its per-address cap with a
 * 503; each slot reconnects shortly after, so the attacker keeps trying
 * for the whole run.  From a non-loopback source address (slow_source)
 * it meets the per-address cap; from loopback only the total cap.
 *
 * Nothing here is a pass/fail check: the checks are that the other
 * clients lose nothing meanwhile.  The figures (how the daemon ended the
 * attacker's connections, and how long the silent ones lived) show the
 * defence at work.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "soak.h"

#define SLOW_TRICKLE_MS 2000
#define SLOW_REDO_MS    500
#define SLOW_POLL_MS    100
#define SLOW_MAX        1024
#define SLOW_ANSWER_LOG 5

static const char slow_head[] = "GET /api/v1/tuners HTTP/1.1\r\n"
				"Host: soak\r\n"
				"X-Trickle: ";

struct slot {
	int fd; /* -1: waiting to reconnect */
	int connected;
	uint64_t opened_at, next_at;
};

struct slow {
	const struct soak_opts *o;
	struct slot s[SLOW_MAX];
	int n;
	struct sockaddr_in dst, src;
	struct soak_slow_result r;
};

static struct slow W;

static void slot_close(struct slot *s, uint64_t now)
{
	close(s->fd);
	s->fd = -1;
	s->connected = 0;
	s->next_at = now + SLOW_REDO_MS;
}

static void slot_open(struct slot *s, uint64_t now)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	s->next_at = now + SLOW_REDO_MS;
	if (fd < 0)
		return;
	if ((W.o->slow_source &&
	     bind(fd, (struct sockaddr *)&W.src, sizeof(W.src)) < 0) ||
	    (connect(fd, (struct sockaddr *)&W.dst, sizeof(W.dst)) < 0 &&
	     errno != EINPROGRESS)) {
		W.r.connect_fail++;
		close(fd);
		return;
	}
	s->fd = fd;
	s->connected = 0;
	s->opened_at = now;
	W.r.opened++;
}

/* Connected: the request line at once, then a byte at a time. */
static void slot_write(struct slot *s, uint64_t now)
{
	ssize_t n;

	if (!s->connected) {
		s->connected = 1;
		n = send(s->fd, slow_head, sizeof(slow_head) - 1, MSG_NOSIGNAL);
	} else {
		n = send(s->fd, "a", 1, MSG_NOSIGNAL);
	}
	if (n < 0) {
		W.r.closed_silent++;
		slot_close(s, now);
		return;
	}
	W.r.bytes += (uint64_t)n;
	s->next_at = now + SLOW_TRICKLE_MS;
}

/* Something came back: an answer or the daemon's close. */
static void slot_read(struct slot *s, uint64_t now)
{
	char buf[512];
	ssize_t n = recv(s->fd, buf, sizeof(buf) - 1, 0);

	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		uint64_t life = now - s->opened_at;

		W.r.closed_silent++;
		W.r.life_ms_sum += life;
		if (life > W.r.life_ms_max)
			W.r.life_ms_max = life;
	} else if (!strncmp(buf, "HTTP/1.1 503", 12)) {
		W.r.refused_503++;
	} else {
		buf[n] = 0;
		if (W.r.answered++ < SLOW_ANSWER_LOG)
			fprintf(stderr,
				"soak: slowloris got an answer: %.80s\n", buf);
	}
	slot_close(s, now);
}

static void turn(void)
{
	struct pollfd pfd[SLOW_MAX];
	uint64_t now = soak_now_ms();

	for (int i = 0; i < W.n; i++) {
		struct slot *s = &W.s[i];

		if (s->fd < 0 && now >= s->next_at)
			slot_open(s, now);
		pfd[i].fd = s->fd;
		pfd[i].events = POLLIN | (s->connected ? 0 : POLLOUT);
		pfd[i].revents = 0;
	}
	if (poll(pfd, (nfds_t)W.n, SLOW_POLL_MS) < 0)
		return;
	now = soak_now_ms();
	for (int i = 0; i < W.n; i++) {
		struct slot *s = &W.s[i];

		if (s->fd < 0)
			continue;
		if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
			slot_read(s, now);
		else if ((pfd[i].revents & POLLOUT) ||
			 (s->connected && now >= s->next_at))
			slot_write(s, now);
	}
}

int soak_slow_main(const struct soak_opts *o, int ctl)
{
	char ready = SOAK_READY, z = 'Z', c;
	int ret;

	W.o = o;
	W.n = o->slow_conns > SLOW_MAX ? SLOW_MAX : o->slow_conns;
	W.dst.sin_family = AF_INET;
	W.dst.sin_port = htons((uint16_t)o->port);
	W.src.sin_family = AF_INET;
	if (inet_pton(AF_INET, o->host, &W.dst.sin_addr) != 1 ||
	    (o->slow_source &&
	     inet_pton(AF_INET, o->slow_source, &W.src.sin_addr) != 1)) {
		fprintf(stderr, "soak: slowloris: IPv4 addresses only\n");
		return 1;
	}
	for (int i = 0; i < W.n; i++)
		W.s[i].fd = -1;
	if (soak_write_all(ctl, &ready, 1))
		return 1;
	for (;;) {
		ssize_t n = read(ctl, &c, 1);

		if (n == 0 || (n == 1 && c == SOAK_CMD_STOP) ||
		    (n < 0 && errno != EAGAIN))
			break;
		turn();
	}
	for (int i = 0; i < W.n; i++)
		if (W.s[i].fd >= 0)
			close(W.s[i].fd);
	ret = soak_write_all(ctl, &z, 1) ||
	      soak_write_all(ctl, &W.r, sizeof(W.r));
	return ret;
}

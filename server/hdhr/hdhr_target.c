// SPDX-License-Identifier: MIT
/*
 * A tuner's stream target: a reader of the tuner's stream (with the
 * tuner's PID or program filter) sent as 1316-byte UDP datagrams (7 TS
 * packets), or as RTP (12-byte header, payload type 33, sequence numbers,
 * 90 kHz timestamps).
 *
 * The socket is connected, so an ICMP port unreachable comes back as
 * ECONNREFUSED on a later send: the target is stopped after
 * target_timeout_s of those, or of no renewal (no request of its client).
 * A datagram the socket cannot take now is dropped and counted, as a
 * network would drop it: the loop never waits for a target.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "hdhr_priv.h"
#include "log.h"
#include "loop.h"
#include "net_api.h"

static void send_one(struct hdhr_target *g, uint8_t *dgram, size_t len)
{
	uint64_t now;

	if (send(g->fd, dgram, len, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) {
		g->datagrams++;
		return;
	}
	if (errno != ECONNREFUSED) {
		g->dropped++;
		return;
	}
	now = loop_now_ms();
	if (!g->refused_first_ms || now - g->refused_last_ms > 2000)
		g->refused_first_ms = now;
	g->refused_last_ms = now;
}

static void rtp_header(struct hdhr_target *g, uint8_t *h)
{
	uint32_t ts = (uint32_t)(loop_now_ns() / 100000u * 9u); /* 90 kHz */

	h[0] = 0x80;
	h[1] = 33; /* MP2T */
	h[2] = (uint8_t)(g->rtp_seq >> 8);
	h[3] = (uint8_t)g->rtp_seq;
	g->rtp_seq++;
	h[4] = (uint8_t)(ts >> 24);
	h[5] = (uint8_t)(ts >> 16);
	h[6] = (uint8_t)(ts >> 8);
	h[7] = (uint8_t)ts;
	h[8] = (uint8_t)(g->rtp_ssrc >> 24);
	h[9] = (uint8_t)(g->rtp_ssrc >> 16);
	h[10] = (uint8_t)(g->rtp_ssrc >> 8);
	h[11] = (uint8_t)g->rtp_ssrc;
}

static void on_stream(void *owner)
{
	struct hdhr_tuner *t = owner;
	struct hdhr_target *g = t->target;
	uint8_t dgram[HDHR_RTP_HEADER + HDHR_TARGET_DGRAM];
	size_t head = g->rtp ? HDHR_RTP_HEADER : 0;
	struct iovec iov[2];
	int niov;

	while (stream_reader_peek(g->reader, iov, &niov) >= HDHR_TARGET_DGRAM) {
		stream_reader_read(g->reader, dgram + head, HDHR_TARGET_DGRAM);
		if (g->rtp)
			rtp_header(g, dgram);
		send_one(g, dgram, head + HDHR_TARGET_DGRAM);
	}
	if (stream_reader_ended(g->reader))
		hdhr_target_stop(
		    t, stream_end_name(stream_reader_ended(g->reader)));
}

static int reader_open(struct hdhr_tuner *t)
{
	char by[48], ip[INET_ADDRSTRLEN];
	int err = 0;

	inet_ntop(AF_INET, &t->target->to.sin_addr, ip, sizeof(ip));
	snprintf(by, sizeof(by), "hdhomerun:%s", ip);
	t->target->reader =
	    stream_reader_open(net_api_of(t->h->d)->streams, t->id, &t->spec,
			       by, on_stream, t, &err);
	return t->target->reader ? 0 : err;
}

/* "udp://1.2.3.4:5000" or "rtp://..." */
static int parse_target(const char *v, struct hdhr_target *g)
{
	char ip[INET_ADDRSTRLEN + 1];
	unsigned int port;
	int n = 0;

	g->rtp = !strncmp(v, "rtp://", 6);
	if (!g->rtp && strncmp(v, "udp://", 6))
		return -EINVAL;
	if (sscanf(v + 6, "%15[0-9.]:%u%n", ip, &port, &n) != 2 || v[6 + n] ||
	    port == 0 || port > 65535)
		return -EINVAL;
	g->to.sin_family = AF_INET;
	g->to.sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, ip, &g->to.sin_addr) == 1 ? 0 : -EINVAL;
}

int hdhr_target_set(struct hdhr_tuner *t, const char *value, const char **why)
{
	struct hdhr_target *g;
	int err;

	hdhr_target_stop(t, "target changed");
	if (!strcmp(value, "none"))
		return 0;
	*why = "ERROR: invalid target";
	g = calloc(1, sizeof(*g));
	if (!g || parse_target(value, g)) {
		free(g);
		return -EINVAL;
	}
	g->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (g->fd < 0 ||
	    connect(g->fd, (struct sockaddr *)&g->to, sizeof(g->to))) {
		if (g->fd >= 0)
			close(g->fd);
		free(g);
		return -EINVAL;
	}
	if (getrandom(&g->rtp_ssrc, sizeof(g->rtp_ssrc), 0) < 0)
		g->rtp_ssrc = (uint32_t)loop_now_ns();
	g->renewed_ms = loop_now_ms();
	t->target = g;
	snprintf(t->target_text, sizeof(t->target_text), "%s", value);
	err = reader_open(t);
	if (err) {
		hdhr_target_stop(t, "no stream");
		*why = err == -EAGAIN ? "ERROR: too many streams"
				      : "ERROR: no stream for this tuner";
		return err;
	}
	*why = NULL;
	return 0;
}

void hdhr_target_stop(struct hdhr_tuner *t, const char *why)
{
	struct hdhr_target *g = t->target;

	if (!g)
		return;
	t->target = NULL;
	log_debug("hdhomerun: tuner%u target %s stopped: %s (%llu sent, %llu "
		  "dropped)",
		  t->index, t->target_text, why,
		  (unsigned long long)g->datagrams,
		  (unsigned long long)g->dropped);
	if (g->reader)
		stream_reader_close(g->reader, STREAM_END_CLIENT);
	close(g->fd);
	free(g);
}

int hdhr_target_refilter(struct hdhr_tuner *t)
{
	if (!t->target)
		return 0;
	stream_reader_close(t->target->reader, STREAM_END_CLIENT);
	return reader_open(t);
}

void hdhr_target_tick(struct hdhr_tuner *t, uint64_t now_ms)
{
	struct hdhr_target *g = t->target;
	uint64_t limit = (uint64_t)t->h->cfg->hdhomerun.target_timeout_s * 1000;

	if (!g)
		return;
	if (g->refused_first_ms && now_ms - g->refused_last_ms <= 2000 &&
	    now_ms - g->refused_first_ms >= limit)
		hdhr_target_stop(t, "refused by the target");
	else if (now_ms - g->renewed_ms >= limit)
		hdhr_target_stop(t, "not renewed");
}

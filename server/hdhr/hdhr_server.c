// SPDX-License-Identifier: MIT
/*
 * The HDHomeRun face's listeners: discovery on UDP, the control channel's
 * TCP port, and the one-second tick that ends stale locks and targets.
 *
 * Discovery listens on the wildcard address with IP_PKTINFO rather than
 * one socket per interface: a broadcast (255.255.255.255, how
 * libhdhomerun discovers) reaches only a socket bound to the wildcard,
 * and the packet info names the interface it came in on and the box's
 * address there, which is both the filter (the configured interfaces or
 * addresses) and the BASE_URL the client can reach.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "hdhr_device.h"
#include "hdhr_priv.h"
#include "log.h"
#include "loop.h"
#include "net_api.h"

int hdhr_peer_allowed(const struct hdhr *h, const struct sockaddr_in *peer)
{
	return addr_list_match(&h->cfg->hdhomerun.allow,
			       (const struct sockaddr *)peer);
}

int hdhr_main_port(const struct hdhr *h)
{
	const struct net_api *net = net_api_of(h->d);
	const char *colon;

	if (h->cfg->hdhomerun.http_port > 0)
		return h->cfg->hdhomerun.http_port;
	colon = net && net->listen ? strrchr(net->listen, ':') : NULL;
	return colon ? atoi(colon + 1) : 80;
}

/* Is (ifindex, local) one of the configured interfaces or addresses? */
static int discovery_on(const struct hdhr *h, unsigned int ifindex,
			struct in_addr local)
{
	const struct hdhr_config *c = &h->cfg->hdhomerun;
	struct in_addr a;

	for (size_t i = 0; i < c->ndiscovery; i++) {
		if (inet_pton(AF_INET, c->discovery[i], &a) == 1) {
			if (a.s_addr == local.s_addr)
				return 1;
		} else if (if_nametoindex(c->discovery[i]) == ifindex) {
			return 1;
		}
	}
	return 0;
}

/* Does a DISCOVER_REQ ask for us?  Absent tags match, as on a device. */
static int discover_matches(const struct hdhr *h, struct hdhomerun_pkt_t *pkt)
{
	uint8_t tag;
	size_t len;
	uint8_t *next;

	while ((next = hdhomerun_pkt_read_tlv(pkt, &tag, &len))) {
		/* read_tlv passes a two-byte length cut off at the end. */
		if (len > (size_t)(pkt->end - pkt->pos))
			return 0;
		if (len == 4 && (tag == HDHOMERUN_TAG_DEVICE_TYPE ||
				 tag == HDHOMERUN_TAG_DEVICE_ID)) {
			uint32_t v = hdhomerun_pkt_read_u32(pkt);
			uint32_t want = tag == HDHOMERUN_TAG_DEVICE_TYPE
					    ? HDHOMERUN_DEVICE_TYPE_TUNER
					    : h->device_id;

			if (v != 0xFFFFFFFFu && v != want)
				return 0;
		}
		pkt->pos = next;
	}
	return 1;
}

static void write_str_tlv(struct hdhomerun_pkt_t *pkt, uint8_t tag,
			  const char *s)
{
	size_t n = strlen(s) + 1;

	hdhomerun_pkt_write_u8(pkt, tag);
	hdhomerun_pkt_write_var_length(pkt, n);
	hdhomerun_pkt_write_mem(pkt, s, n);
}

static void build_reply(const struct hdhr *h, struct hdhomerun_pkt_t *pkt,
			struct in_addr local)
{
	char ip[INET_ADDRSTRLEN], url[96];

	inet_ntop(AF_INET, &local, ip, sizeof(ip));
	hdhomerun_pkt_reset(pkt);
	hdhomerun_pkt_write_u8(pkt, HDHOMERUN_TAG_DEVICE_TYPE);
	hdhomerun_pkt_write_var_length(pkt, 4);
	hdhomerun_pkt_write_u32(pkt, HDHOMERUN_DEVICE_TYPE_TUNER);
	hdhomerun_pkt_write_u8(pkt, HDHOMERUN_TAG_DEVICE_ID);
	hdhomerun_pkt_write_var_length(pkt, 4);
	hdhomerun_pkt_write_u32(pkt, h->device_id);
	hdhomerun_pkt_write_u8(pkt, HDHOMERUN_TAG_TUNER_COUNT);
	hdhomerun_pkt_write_var_length(pkt, 1);
	hdhomerun_pkt_write_u8(pkt, (uint8_t)h->ntuners);
	snprintf(url, sizeof(url), "http://%s:%d", ip, hdhr_main_port(h));
	write_str_tlv(pkt, HDHOMERUN_TAG_BASE_URL, url);
	snprintf(url, sizeof(url), "http://%s:%d/lineup.json", ip,
		 hdhr_main_port(h));
	write_str_tlv(pkt, HDHOMERUN_TAG_LINEUP_URL, url);
	hdhomerun_pkt_seal_frame(pkt, HDHOMERUN_TYPE_DISCOVER_RPY);
}

static int recv_request(int fd, struct hdhomerun_pkt_t *pkt,
			struct sockaddr_in *peer, struct in_pktinfo *info)
{
	char cbuf[CMSG_SPACE(sizeof(struct in_pktinfo))];
	struct iovec iov = {pkt->end, (size_t)(pkt->limit - pkt->end)};
	struct msghdr m = {.msg_name = peer,
			   .msg_namelen = sizeof(*peer),
			   .msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = cbuf,
			   .msg_controllen = sizeof(cbuf)};
	ssize_t n = recvmsg(fd, &m, 0);

	if (n <= 0 || m.msg_namelen != sizeof(*peer))
		return -1;
	pkt->end += n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			memcpy(info, CMSG_DATA(c), sizeof(*info));
			return 0;
		}
	return -1;
}

static void send_reply(int fd, struct hdhomerun_pkt_t *pkt,
		       const struct sockaddr_in *peer,
		       const struct in_pktinfo *in)
{
	char cbuf[CMSG_SPACE(sizeof(struct in_pktinfo))] = {0};
	struct iovec iov = {pkt->start, (size_t)(pkt->end - pkt->start)};
	struct msghdr m = {.msg_name = (void *)peer,
			   .msg_namelen = sizeof(*peer),
			   .msg_iov = &iov,
			   .msg_iovlen = 1,
			   .msg_control = cbuf,
			   .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	struct in_pktinfo out = {.ipi_spec_dst = in->ipi_spec_dst};

	/* From the address the request reached, so the client's reply
	 * address is the one it connects to next. */
	c->cmsg_level = IPPROTO_IP;
	c->cmsg_type = IP_PKTINFO;
	c->cmsg_len = CMSG_LEN(sizeof(out));
	memcpy(CMSG_DATA(c), &out, sizeof(out));
	if (sendmsg(fd, &m, MSG_DONTWAIT) < 0)
		log_debug("hdhomerun: discover reply: %s", strerror(errno));
}

static void on_discover(struct loop *l, int fd, unsigned int ev, void *arg)
{
	struct hdhr *h = arg;
	struct hdhomerun_pkt_t pkt;
	struct sockaddr_in peer;
	struct in_pktinfo info;
	uint16_t type;

	(void)l;
	(void)ev;
	hdhomerun_pkt_reset(&pkt);
	if (recv_request(fd, &pkt, &peer, &info))
		return;
	if (!hdhr_peer_allowed(h, &peer) ||
	    !discovery_on(h, (unsigned int)info.ipi_ifindex, info.ipi_spec_dst))
		return;
	if (hdhomerun_pkt_open_frame(&pkt, &type) != 1 ||
	    type != HDHOMERUN_TYPE_DISCOVER_REQ || !discover_matches(h, &pkt))
		return;
	build_reply(h, &pkt, info.ipi_spec_dst);
	send_reply(fd, &pkt, &peer, &info);
}

static void on_accept(struct loop *l, int fd, unsigned int ev, void *arg)
{
	struct hdhr *h = arg;
	struct sockaddr_in peer;
	socklen_t len = sizeof(peer);
	int c;

	(void)l;
	(void)ev;
	c = accept4(fd, (struct sockaddr *)&peer, &len,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (c < 0)
		return;
	if (len != sizeof(peer) || !hdhr_peer_allowed(h, &peer) ||
	    h->nconns >= HDHR_CONNS_MAX || h->stopping) {
		close(c);
		return;
	}
	if (hdhr_control_accept(h, c))
		close(c);
}

static int bound_socket(int type, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_ANY)};
	int one = 1,
	    fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (type == SOCK_DGRAM)
		setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    (type == SOCK_STREAM && listen(fd, 16))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static long on_tick(struct loop *l, uint64_t id, void *arg)
{
	(void)l;
	(void)id;
	hdhr_tuners_tick(arg);
	return 1000;
}

static int open_listeners(struct hdhr *h)
{
	const struct hdhr_config *c = &h->cfg->hdhomerun;

	if (c->ndiscovery) {
		h->udp_fd = bound_socket(SOCK_DGRAM, c->discovery_port);
		if (h->udp_fd < 0) {
			log_err("hdhomerun: discovery on UDP %d: %s",
				c->discovery_port, strerror(-h->udp_fd));
			return h->udp_fd;
		}
		loop_add_fd(h->d->loop, h->udp_fd, LOOP_READ, on_discover, h);
	}
	if (c->control_port) {
		h->tcp_fd = bound_socket(SOCK_STREAM, c->control_port);
		if (h->tcp_fd < 0) {
			log_err("hdhomerun: control on TCP %d: %s",
				c->control_port, strerror(-h->tcp_fd));
			return h->tcp_fd;
		}
		loop_add_fd(h->d->loop, h->tcp_fd, LOOP_READ, on_accept, h);
	}
	return 0;
}

int hdhr_start(struct daemon *d, struct hdhr **out)
{
	const struct api_config *cfg = net_api_config(d);
	struct hdhr *h;
	char idtext[16];
	int err;

	*out = NULL;
	if (!cfg || !cfg->hdhomerun.enabled)
		return 0;
	if (!net_api_of(d)->commands) {
		/* Its tunes, leases and streams are the network API's. */
		log_warn("hdhomerun: enabled, but off without --listen");
		return 0;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->d = d;
	/* The running configuration's place: a reload (api_reload) puts the
	 * new file there, so allow, discovery, TTLs and role follow it. */
	h->cfg = cfg;
	h->udp_fd = h->tcp_fd = -1;
	snprintf(h->model, sizeof(h->model), "%s", HDHR_MODEL);
	hdhr_device_id_load(d->state, &h->device_id);
	hdhr_tuners_init(h);
	err = open_listeners(h);
	h->timer = loop_add_timer(d->loop, 1000, on_tick, h);
	if (err || !h->timer) {
		hdhr_stop(h);
		return err ? err : -ENOMEM;
	}
	hdhr_device_id_text(h->device_id, idtext, sizeof(idtext));
	log_info("hdhomerun: device %s, %u tuner(s), control on TCP %d", idtext,
		 h->ntuners, cfg->hdhomerun.control_port);
	*out = h;
	return 0;
}

void hdhr_stop(struct hdhr *h)
{
	if (!h)
		return;
	h->stopping = 1;
	hdhr_control_close_all(h);
	hdhr_tuners_fini(h);
	loop_del_timer(h->d->loop, h->timer);
	if (h->udp_fd >= 0) {
		loop_del_fd(h->d->loop, h->udp_fd);
		close(h->udp_fd);
	}
	if (h->tcp_fd >= 0) {
		loop_del_fd(h->d->loop, h->tcp_fd);
		close(h->tcp_fd);
	}
	free(h);
}

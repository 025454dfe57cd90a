// SPDX-License-Identifier: MIT
/*
 * The control channel's connections: frames in and out with
 * libhdhomerun's packet functions (open_frame checks the CRC, seal_frame
 * writes it), one GETSET request at a time per connection (the clients
 * wait for each answer), bounded buffers and an idle timeout.  A frame
 * that cannot be a request (bad CRC, over the size, not a GETSET) closes
 * the connection: the protocol has no way to resynchronise a TCP stream.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"
#include "hdhr_priv.h"
#include "log.h"
#include "loop.h"
#include "net_api.h"
#include "tuner.h"

struct hdhr_conn {
	struct hdhr *h;
	struct hdhr_conn *next;
	int fd;
	struct sockaddr_in peer;
	struct hdhomerun_pkt_t rx, tx;
	size_t tx_off; /* bytes of tx already sent */
	int waiting;   /* a request is being answered */
	char name[64]; /* the request's variable */
	uint64_t idle_timer;
	struct command_client cl;
	char label[40]; /* "hdhomerun:<IP>" */
	struct hdhr_conn_tune tune;
};

static void conn_close(struct hdhr_conn *c)
{
	struct hdhr_conn **pp = &c->h->conns;

	while (*pp && *pp != c)
		pp = &(*pp)->next;
	if (*pp)
		*pp = c->next;
	c->h->nconns--;
	command_client_cancel(&c->cl);
	tuner_forget(c->h->d, c); /* a status read's answer */
	loop_del_timer(c->h->d->loop, c->idle_timer);
	loop_del_fd(c->h->d->loop, c->fd);
	close(c->fd);
	free(c);
}

static long on_idle(struct loop *l, uint64_t id, void *arg)
{
	struct hdhr_conn *c = arg;

	(void)l;
	(void)id;
	c->idle_timer = 0;
	conn_close(c);
	return LOOP_TIMER_DONE;
}

static void touch(struct hdhr_conn *c)
{
	loop_del_timer(c->h->d->loop, c->idle_timer);
	c->idle_timer =
	    loop_add_timer(c->h->d->loop, HDHR_CONN_IDLE_MS, on_idle, c);
}

/* A request's TLVs; 0, or -1 when one is malformed. */
static int parse_request(struct hdhomerun_pkt_t *p, struct hdhr_req *req)
{
	uint8_t tag;
	size_t len;
	uint8_t *next;

	memset(req, 0, sizeof(*req));
	while ((next = hdhomerun_pkt_read_tlv(p, &tag, &len))) {
		/* read_tlv passes a two-byte length cut off at the end. */
		if (len > (size_t)(p->end - p->pos))
			return -1;
		if ((tag == HDHOMERUN_TAG_GETSET_NAME ||
		     tag == HDHOMERUN_TAG_GETSET_VALUE) &&
		    (len == 0 || p->pos[len - 1] != '\0' ||
		     strlen((char *)p->pos) != len - 1))
			return -1;
		if (tag == HDHOMERUN_TAG_GETSET_NAME)
			req->name = (const char *)p->pos;
		else if (tag == HDHOMERUN_TAG_GETSET_VALUE)
			req->value = (const char *)p->pos;
		else if (tag == HDHOMERUN_TAG_GETSET_LOCKKEY && len == 4)
			req->lockkey = hdhomerun_pkt_read_u32(p);
		p->pos = next;
	}
	return p->pos == p->end && req->name ? 0 : -1;
}

static void write_str(struct hdhomerun_pkt_t *p, uint8_t tag, const char *s)
{
	size_t n = strlen(s);

	if (n > HDHR_VALUE_MAX - 1)
		n = HDHR_VALUE_MAX - 1;
	n++;

	hdhomerun_pkt_write_u8(p, tag);
	hdhomerun_pkt_write_var_length(p, n);
	hdhomerun_pkt_write_mem(p, s, n - 1);
	hdhomerun_pkt_write_u8(p, 0);
}

static void flush_tx(struct hdhr_conn *c)
{
	size_t len = (size_t)(c->tx.end - c->tx.start);
	ssize_t n;

	while (c->tx_off < len) {
		n = send(c->fd, c->tx.start + c->tx_off, len - c->tx_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN) {
			loop_set_fd_mask(c->h->d->loop, c->fd, LOOP_WRITE);
			return;
		}
		if (n <= 0) {
			conn_close(c);
			return;
		}
		c->tx_off += (size_t)n;
	}
	c->waiting = 0;
	loop_set_fd_mask(c->h->d->loop, c->fd, LOOP_READ);
}

void hdhr_conn_answer(struct hdhr_conn *c, const char *value, const char *error)
{
	hdhomerun_pkt_reset(&c->tx);
	write_str(&c->tx, HDHOMERUN_TAG_GETSET_NAME, c->name);
	if (error)
		write_str(&c->tx, HDHOMERUN_TAG_ERROR_MESSAGE, error);
	else
		write_str(&c->tx, HDHOMERUN_TAG_GETSET_VALUE,
			  value ? value : "");
	hdhomerun_pkt_seal_frame(&c->tx, HDHOMERUN_TYPE_GETSET_RPY);
	c->tx_off = 0;
	/* Sent from the loop, never from inside the caller: a failed send
	 * closes the connection, which must not vanish under a caller. */
	loop_set_fd_mask(c->h->d->loop, c->fd, LOOP_WRITE);
}

struct hdhr_conn_tune *hdhr_conn_tune(struct hdhr_conn *c)
{
	return &c->tune;
}

struct command_client *hdhr_conn_client(struct hdhr_conn *c)
{
	return &c->cl;
}

const struct sockaddr_in *hdhr_conn_peer(const struct hdhr_conn *c)
{
	return &c->peer;
}

/* One whole frame in rx: serve it.  0, or -1 to close. */
static int serve_frame(struct hdhr_conn *c)
{
	struct hdhr_req req;
	uint16_t type;
	int ret = hdhomerun_pkt_open_frame(&c->rx, &type);

	if (ret == 0)
		return 0; /* more bytes to come */
	if (ret < 0 || type != HDHOMERUN_TYPE_GETSET_REQ ||
	    parse_request(&c->rx, &req))
		return -1;
	snprintf(c->name, sizeof(c->name), "%s", req.name);
	c->waiting = 1;
	/* Quiet until the answer is out: a client that sends ahead is not
	 * read (nor spun on) meanwhile. */
	loop_set_fd_mask(c->h->d->loop, c->fd, 0);
	hdhr_vars_getset(c->h, c, &req);
	/* The request's bytes are used: the next frame starts afresh (a
	 * client sends none before its answer). */
	hdhomerun_pkt_reset(&c->rx);
	return 0;
}

static void on_conn(struct loop *l, int fd, unsigned int ev, void *arg)
{
	struct hdhr_conn *c = arg;
	ssize_t n;

	(void)l;
	if (ev & LOOP_WRITE) {
		flush_tx(c);
		return;
	}
	if (c->waiting)
		return;
	if (c->rx.end >= c->rx.start + HDHOMERUN_MAX_PACKET_SIZE) {
		conn_close(c); /* a frame over the protocol's size */
		return;
	}
	n = recv(fd, c->rx.end,
		 (size_t)(c->rx.start + HDHOMERUN_MAX_PACKET_SIZE - c->rx.end),
		 MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->rx.end += n;
	touch(c);
	if (serve_frame(c))
		conn_close(c);
}

int hdhr_control_accept(struct hdhr *h, int fd)
{
	struct hdhr_conn *c = calloc(1, sizeof(*c));
	socklen_t len = sizeof(c->peer);
	char ip[INET_ADDRSTRLEN];

	if (!c)
		return -ENOMEM;
	c->h = h;
	c->fd = fd;
	getpeername(fd, (struct sockaddr *)&c->peer, &len);
	inet_ntop(AF_INET, &c->peer.sin_addr, ip, sizeof(ip));
	snprintf(c->label, sizeof(c->label), "hdhomerun:%s", ip);
	command_client_init(&c->cl, net_api_of(h->d)->commands,
			    h->cfg->hdhomerun.role, NULL, 4);
	c->cl.label = c->label;
	hdhomerun_pkt_reset(&c->rx);
	if (loop_add_fd(h->d->loop, fd, LOOP_READ, on_conn, c)) {
		free(c);
		return -ENOMEM;
	}
	c->next = h->conns;
	h->conns = c;
	h->nconns++;
	touch(c);
	return 0;
}

void hdhr_control_close_all(struct hdhr *h)
{
	while (h->conns)
		conn_close(h->conns);
}

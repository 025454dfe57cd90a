// SPDX-License-Identifier: MIT
/*
 * Who holds the front's connections (http_front_priv.h): one entry per
 * open connection from a non-loopback address, from its accept to its
 * close, whoever serves it (peek, libmicrohttpd, a WebSocket on a socket
 * MHD upgraded).
 *
 * Loopback clients are not listed: they are the box's own admin (and
 * any local proxy, which carries many clients on one address), so they
 * are bounded only by the class caps, of which the last
 * HTTP_FRONT_LOOPBACK_RESERVE request slots are theirs alone.  Everyone
 * else gets HTTP_FRONT_PER_ADDR connections per address.
 *
 * A flat array scanned in full: it never holds more entries than both
 * class caps together (2,304 x 20 bytes by default), and one scan of
 * that per accept or close costs microseconds, less than keeping a hash
 * table right.
 */
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "auth.h"
#include "http_front_priv.h"

int front_peer_addr(const struct sockaddr *sa, unsigned char addr[16])
{
	static const unsigned char v4_mapped[12] = {0, 0, 0, 0, 0,    0,
						    0, 0, 0, 0, 0xff, 0xff};

	memset(addr, 0, 16);
	if (sa->sa_family == AF_INET) {
		memcpy(addr, v4_mapped, sizeof(v4_mapped));
		memcpy(addr + 12,
		       &((const struct sockaddr_in *)sa)->sin_addr.s_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
	return auth_peer_is_loopback(sa);
}

unsigned int front_peer_count(const struct http_front *f,
			      const unsigned char addr[16])
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < f->npeers; i++)
		n += !memcmp(f->peers[i].addr, addr, 16);
	return n;
}

void front_peer_add(struct http_front *f, int fd, const unsigned char addr[16])
{
	if (f->npeers >= f->max[FRONT_REQUESTS] + f->max[FRONT_STREAMS])
		return; /* cannot happen: the caps admit fewer */
	f->peers[f->npeers].fd = fd;
	memcpy(f->peers[f->npeers].addr, addr, 16);
	f->npeers++;
}

/* No-op for an fd not listed (loopback, or deleted already). */
void front_peer_del(struct http_front *f, int fd)
{
	for (unsigned int i = 0; i < f->npeers; i++)
		if (f->peers[i].fd == fd) {
			f->peers[i] = f->peers[--f->npeers];
			return;
		}
}

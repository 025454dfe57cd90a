/* SPDX-License-Identifier: MIT */
/*
 * client_addr.h - who the client is when a reverse proxy stands between:
 * the address in X-Forwarded-For, believed only when the connection comes
 * from a proxy listed in the configuration's "trusted_proxies".
 */
#ifndef TUNERD_CLIENT_ADDR_H
#define TUNERD_CLIENT_ADDR_H

#include <sys/socket.h>

struct addr_list;

/* The longest X-Forwarded-For list looked at, in bytes. */
#define CLIENT_ADDR_XFF_MAX 1024

/*
 * The client's address into *out.  xff is the request's X-Forwarded-For
 * (NULL: none).  From a trusted proxy the list is walked from the right
 * (the nearest hop), skipping further trusted proxies: the first address
 * that is not one is the client (a client can prepend anything, so what
 * lies left of it is never believed).  From any other peer the socket's
 * address is the client, except that a request carrying X-Forwarded-For
 * from an untrusted loopback peer gets an unknown address (AF_UNSPEC): a
 * proxy on the box itself that is not listed must not make every remote
 * client a loopback client.  Returns 1 when the forwarded address was
 * used, else 0.
 */
int client_addr_resolve(const struct addr_list *trusted,
			const struct sockaddr *peer, const char *xff,
			struct sockaddr_storage *out);

#endif /* TUNERD_CLIENT_ADDR_H */

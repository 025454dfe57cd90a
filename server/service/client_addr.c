// SPDX-License-Identifier: MIT
/*
 * The client behind a reverse proxy.  Only X-Forwarded-For is read (what
 * nginx's $proxy_add_x_forwarded_for writes); RFC 7239's Forwarded would
 * add a parser for quoted pairs and obfuscated identifiers that no
 * deployment here needs.
 */
#include "client_addr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "addr_list.h"
#include "auth.h"

static void copy_peer(const struct sockaddr *peer, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	if (peer && peer->sa_family == AF_INET)
		memcpy(out, peer, sizeof(struct sockaddr_in));
	else if (peer && peer->sa_family == AF_INET6)
		memcpy(out, peer, sizeof(struct sockaddr_in6));
	else
		out->ss_family = AF_UNSPEC;
}

/* One list element, trimmed, as an address; 0 or -1. */
static int parse_hop(const char *s, size_t len, struct sockaddr_storage *out)
{
	char text[INET6_ADDRSTRLEN + 1];
	struct sockaddr_in *in = (struct sockaddr_in *)out;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;

	while (len && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (!len || len >= sizeof(text))
		return -1;
	memcpy(text, s, len);
	text[len] = '\0';
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		return 0;
	}
	return -1;
}

int client_addr_resolve(const struct addr_list *trusted,
			const struct sockaddr *peer, const char *xff,
			struct sockaddr_storage *out)
{
	size_t end;

	copy_peer(peer, out);
	if (!xff)
		return 0;
	if (!trusted || !addr_list_match(trusted, peer)) {
		if (auth_peer_is_loopback(peer))
			out->ss_family = AF_UNSPEC;
		return 0;
	}
	end = strnlen(xff, CLIENT_ADDR_XFF_MAX + 1);
	if (end > CLIENT_ADDR_XFF_MAX) {
		/* Longer than any real chain of proxies: unknown. */
		out->ss_family = AF_UNSPEC;
		return 1;
	}
	while (end) {
		size_t start = end;
		struct sockaddr_storage hop;

		while (start && xff[start - 1] != ',')
			start--;
		if (parse_hop(xff + start, end - start, &hop)) {
			/* A hop we cannot read: the client is unknown, not
			 * the proxy (which may well be loopback). */
			memset(out, 0, sizeof(*out));
			out->ss_family = AF_UNSPEC;
			return 1;
		}
		*out = hop;
		if (!addr_list_match(trusted, (struct sockaddr *)&hop))
			return 1;
		end = start ? start - 1 : 0;
	}
	return 1;
}

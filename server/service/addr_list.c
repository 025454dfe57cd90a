// SPDX-License-Identifier: MIT
/*
 * Address ranges.  Linear search: the lists are short (a handful of LANs
 * or proxies) and a match runs once per connection or datagram, so a trie
 * would buy nothing but code.
 */
#include "addr_list.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static int host_bits_clear(const struct addr_range *r)
{
	size_t len = r->family == AF_INET ? 4 : 16;

	for (size_t bit = r->prefix_len; bit < len * 8; bit++)
		if (r->addr[bit / 8] & (0x80u >> (bit % 8)))
			return 0;
	return 1;
}

static int prefix_parse(const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v > max)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

int addr_range_parse(const char *text, struct addr_range *out, char *err,
		     size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(text, '/');
	size_t hlen = slash ? (size_t)(slash - text) : strlen(text);

	memset(out, 0, sizeof(*out));
	if (hlen == 0 || hlen >= sizeof(host))
		goto bad;
	memcpy(host, text, hlen);
	host[hlen] = '\0';
	if (inet_pton(AF_INET, host, out->addr) == 1) {
		out->family = AF_INET;
		out->prefix_len = 32;
	} else if (inet_pton(AF_INET6, host, out->addr) == 1) {
		out->family = AF_INET6;
		out->prefix_len = 128;
	} else {
		goto bad;
	}
	if (slash && prefix_parse(slash + 1, out->prefix_len, &out->prefix_len))
		goto bad;
	if (!host_bits_clear(out)) {
		snprintf(err, errlen,
			 "\"%s\": bits set past the /%u prefix (write the "
			 "network address)",
			 text, out->prefix_len);
		return -1;
	}
	return 0;
bad:
	snprintf(err, errlen,
		 "\"%.64s\" is not an address or ADDRESS/PREFIX range", text);
	return -1;
}

int addr_list_add(struct addr_list *list, const struct addr_range *r)
{
	struct addr_range *grown;

	if (list->n >= ADDR_LIST_MAX)
		return -1;
	grown = realloc(list->ranges, (list->n + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	list->ranges = grown;
	list->ranges[list->n++] = *r;
	return 0;
}

static int prefix_equal(const unsigned char *a, const unsigned char *b,
			unsigned int bits)
{
	unsigned int whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole))
		return 0;
	if (!rest)
		return 1;
	return ((a[whole] ^ b[whole]) & (0xffu << (8 - rest)) & 0xffu) == 0;
}

/* The peer as (family, bytes), an IPv4-mapped IPv6 address as IPv4. */
static int peer_bytes(const struct sockaddr *peer, const unsigned char **out)
{
	static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0,    0,
						   0, 0, 0, 0, 0xff, 0xff};

	if (peer->sa_family == AF_INET) {
		*out =
		    (const unsigned char *)&((const struct sockaddr_in *)peer)
			->sin_addr;
		return AF_INET;
	}
	if (peer->sa_family == AF_INET6) {
		const unsigned char *a =
		    ((const struct sockaddr_in6 *)peer)->sin6_addr.s6_addr;

		if (!memcmp(a, v4mapped, sizeof(v4mapped))) {
			*out = a + 12;
			return AF_INET;
		}
		*out = a;
		return AF_INET6;
	}
	return -1;
}

int addr_list_match(const struct addr_list *list, const struct sockaddr *peer)
{
	const unsigned char *bytes;
	int family = peer ? peer_bytes(peer, &bytes) : -1;

	if (family < 0)
		return 0;
	for (size_t i = 0; i < list->n; i++)
		if (list->ranges[i].family == family &&
		    prefix_equal(list->ranges[i].addr, bytes,
				 list->ranges[i].prefix_len))
			return 1;
	return 0;
}

void addr_list_free(struct addr_list *list)
{
	free(list->ranges);
	list->ranges = NULL;
	list->n = 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * addr_list.h - a list of address ranges ("192.168.1.0/24", "10.0.0.7",
 * "fd00::/8") from the configuration, and the test of a peer against it.
 * The HDHomeRun face's allow list, the trusted proxies and any other
 * "who may" list share it.
 */
#ifndef TUNERD_ADDR_LIST_H
#define TUNERD_ADDR_LIST_H

#include <stddef.h>

#define ADDR_LIST_MAX 256 /* entries; a config is read by a person */

struct sockaddr;

struct addr_range {
	int family;              /* AF_INET or AF_INET6 */
	unsigned char addr[16];  /* network byte order; 4 used for AF_INET */
	unsigned int prefix_len; /* 0..32 or 0..128 */
};

struct addr_list {
	struct addr_range *ranges;
	size_t n;
};

/*
 * Parse one range, "ADDR" or "ADDR/LEN".  Bits past the prefix must be
 * zero ("192.168.1.5/24" is refused: a typo for /32 or for .0/24 should
 * not pass as either).  Returns 0, or -1 with a sentence in err.
 */
int addr_range_parse(const char *text, struct addr_range *out, char *err,
		     size_t errlen);
/* Append a parsed range; -1 when full or out of memory. */
int addr_list_add(struct addr_list *list, const struct addr_range *r);
/*
 * 1 when peer (AF_INET or AF_INET6; an IPv4-mapped IPv6 address counts as
 * its IPv4 address) lies in one of the ranges.  An empty list matches
 * nothing.
 */
int addr_list_match(const struct addr_list *list, const struct sockaddr *peer);
void addr_list_free(struct addr_list *list);

#endif /* TUNERD_ADDR_LIST_H */

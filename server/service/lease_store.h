/* SPDX-License-Identifier: MIT */
/*
 * lease_store.h - private to lease.c: the lease table as the state
 * directory's document "leases".  Each lease is kept whole, its id too
 * (the holder renews with it after a restart; the file is 0600), with
 * its expiry on the wall clock: the monotonic clock starts again at a
 * reboot.
 */
#ifndef TUNERD_LEASE_STORE_H
#define TUNERD_LEASE_STORE_H

#include <jansson.h>

#include "lease.h"

struct state_dir;

#define LEASE_STORE_DOC "leases"

/* One lease as the document keeps it (NULL: out of memory). */
json_t *lease_store_entry(const struct lease *l);
/* Write the document of entries (an array, stolen; NULL or one with a
 * NULL appended: -ENOMEM).  0 or -errno. */
int lease_store_write(struct state_dir *sd, json_t *entries);
/*
 * Read the document back: fn for each lease in it (tuner, id, holder,
 * priority, ttl_s and expires_wall filled; expires_ms 0).  A document
 * that is not a valid list of leases is set aside, whole: one bad entry
 * would make every other one doubtful.  Returns the number of leases,
 * 0 when there is no document, or -ENOMEM.
 */
int lease_store_read(struct state_dir *sd,
		     void (*fn)(const struct lease *l, void *arg), void *arg);

#endif /* TUNERD_LEASE_STORE_H */

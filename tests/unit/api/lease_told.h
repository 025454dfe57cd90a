/* SPDX-License-Identifier: MIT */
/*
 * lease_told.h - a lease waiter that counts what it was told: how many
 * times the lease table called it back (once, or the test fails) and the
 * last error it was given.  The tests turn the loop until calls is set.
 */
#ifndef LEASE_TOLD_H
#define LEASE_TOLD_H

#include "lease.h"

struct told {
	struct lease_waiter w;
	int calls, err;
};

/* Resets t and returns its waiter, to pass to a lease change. */
struct lease_waiter *told(struct told *t);

#endif

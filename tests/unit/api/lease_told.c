// SPDX-License-Identifier: MIT
/* lease_told.c - a lease waiter that counts what it was told. */
#include "lease_told.h"

static void on_saved(int err, void *arg)
{
	struct told *t = arg;

	t->calls++;
	t->err = err;
}

struct lease_waiter *told(struct told *t)
{
	*t = (struct told){.w = {.fn = on_saved, .arg = t}};
	return &t->w;
}

// SPDX-License-Identifier: MIT
/* The network layer's hooks for a daemon built without it. */
#include "daemon.h"

const struct api_option api_options[] = {{0}};

int api_option(struct daemon *d, const char *name, const char *value)
{
	(void)d;
	(void)name;
	(void)value;
	return -1;
}

int api_start(struct daemon *d)
{
	(void)d;
	return 0;
}

void api_stop(struct daemon *d)
{
	(void)d;
}

// SPDX-License-Identifier: MIT
/*
 * ctorhang.c - a test plugin that never finishes loading: its constructor
 * blocks for good, before the host can call anything.  The host must
 * refuse it without waiting on it, and a process stuck loading it must
 * hold nothing of the daemon's nor outlive it.
 *
 * With TUNERD_TEST_HANG_MARK set, the constructor first writes its pid to
 * that file (whole, by a rename), so a test knows the hang has begun and
 * which process hangs.  Built into its own folder (test-plugins-hang) so
 * that only the tests that want a hang meet it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tunerd_plugin.h"

#define CTORHANG_EXPORT  __attribute__((visibility("default")))
#define CTORHANG_CHIP_ID (TSTUB_CHIP_TEST_FIRST + 9)

static void ctorhang_mark(const char *mark)
{
	char tmp[4096], pid[32];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", mark) >= (int)sizeof(tmp))
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, pid, (size_t)n) == n)
		rename(tmp, mark);
	close(fd);
}

static void __attribute__((constructor)) ctorhang_load(void)
{
	const char *mark = getenv("TUNERD_TEST_HANG_MARK");

	if (mark)
		ctorhang_mark(mark);
	for (;;)
		pause();
}

CTORHANG_EXPORT int tunerd_plugin_version(int count, const int *versions)
{
	return tunerd_plugin_pick_version(count, versions);
}

CTORHANG_EXPORT const struct tunerd_plugin *tunerd_plugin_describe(int v)
{
	(void)v;
	return NULL;
}

// SPDX-License-Identifier: MIT
/* unit_tmpdir.c - removing a test's mkdtemp() directory at its end. */
#define _GNU_SOURCE /* nftw */
#include "unit_tmpdir.h"

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int unit_tmpdir_remove(const char *dir)
{
	return nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

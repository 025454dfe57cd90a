/* SPDX-License-Identifier: MIT */
/* unit_tmpdir.h - removing a test's mkdtemp() directory at its end. */
#ifndef UNIT_TMPDIR_H
#define UNIT_TMPDIR_H

/* Removes dir and everything under it, symlinks not followed; 0 or -1. */
int unit_tmpdir_remove(const char *dir);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * check.h - the assertions of the C test programs.  A failed check prints
 * where and why, and the program's exit status counts the failures.
 */
#ifndef TUNERD_CHECK_H
#define TUNERD_CHECK_H

#include <stdio.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                            \
	do {                                                                   \
		check_count++;                                                 \
		if (!(cond)) {                                                 \
			check_failures++;                                      \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
		}                                                              \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                     \
	do {                                                                   \
		long long check_a_ = (long long)(a);                           \
		long long check_b_ = (long long)(b);                           \
		check_count++;                                                 \
		if (check_a_ != check_b_) {                                    \
			check_failures++;                                      \
			fprintf(stderr,                                        \
				"%s:%d: %s == %lld, expected %s == %lld\n",    \
				__FILE__, __LINE__, #a, check_a_, #b,          \
				check_b_);                                     \
		}                                                              \
	} while (0)

/* Print the totals and give main() its exit status. */
static inline int check_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif /* TUNERD_CHECK_H */

/* SPDX-License-Identifier: MIT */
/*
 * util.h - small helpers of tunerctl: a growable byte buffer, number
 * parsing and frequency formatting.
 */
#ifndef TUNERCTL_UTIL_H
#define TUNERCTL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ctl_buf {
	char *data; /* always NUL-terminated when non-NULL */
	size_t len;
	size_t cap;
	size_t max; /* refuse to grow beyond this; 0 = no limit */
};

/* Returns 0 or -ENOMEM (also when max would be exceeded). */
int ctl_buf_append(struct ctl_buf *b, const void *p, size_t n);
void ctl_buf_reset(struct ctl_buf *b);
void ctl_buf_free(struct ctl_buf *b);

/*
 * Parses a frequency or rate in Hz: "474000000", "474M", "474.25MHz",
 * "6.9M", "200k".  Suffixes k, M, G (any case, optional "Hz").  The value
 * must come out as a whole number of Hz.  Returns 0 or -EINVAL/-ERANGE.
 */
int ctl_parse_hz(const char *s, uint64_t *hz);

/* A decimal integer in [min, max], nothing else.  Returns 0 or -EINVAL. */
int ctl_parse_long(const char *s, long min, long max, long *out);

/* Seconds with an optional fraction ("2", "0.5") to milliseconds > 0. */
int ctl_parse_seconds_ms(const char *s, long *ms);

/* "474.000", "474.015625", "88.800": MHz with 3 to 6 decimals. */
void ctl_fmt_mhz(uint64_t hz, char *out, size_t n);

/* Milliseconds of a monotonic clock. */
int64_t ctl_now_ms(void);

#endif

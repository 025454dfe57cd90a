// SPDX-License-Identifier: MIT
/*
 * util.c - byte buffer, number parsing and frequency formatting.
 */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int ctl_buf_append(struct ctl_buf *b, const void *p, size_t n)
{
	size_t want = b->len + n + 1;
	char *grown;

	if (b->max && b->len + n > b->max)
		return -ENOMEM;
	if (want > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < want)
			cap *= 2;
		grown = realloc(b->data, cap);
		if (!grown)
			return -ENOMEM;
		b->data = grown;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

void ctl_buf_reset(struct ctl_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void ctl_buf_free(struct ctl_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

static int hz_multiplier(const char *suffix, unsigned int *exp10)
{
	static const struct {
		const char *name;
		unsigned int exp10;
	} units[] = {
	    {"", 0},  {"hz", 0},  {"k", 3}, {"khz", 3},
	    {"m", 6}, {"mhz", 6}, {"g", 9}, {"ghz", 9},
	};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcasecmp(suffix, units[i].name)) {
			*exp10 = units[i].exp10;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * Integer and fraction digits are scaled separately so "474.25M" is exact;
 * going through a double would turn some values into N-1 Hz.
 */
int ctl_parse_hz(const char *s, uint64_t *hz)
{
	uint64_t whole = 0, frac = 0;
	unsigned int exp10, frac_digits = 0, i;
	const char *p = s;
	bool digits = false;

	for (; isdigit((unsigned char)*p); p++, digits = true) {
		uint64_t d = (uint64_t)(*p - '0');

		if (whole > (UINT64_MAX - d) / 10)
			return -ERANGE;
		whole = whole * 10 + d;
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, digits = true) {
			if (frac_digits == 18)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*p - '0');
			frac_digits++;
		}
	}
	if (!digits || hz_multiplier(p, &exp10))
		return -EINVAL;
	while (frac_digits > exp10) {
		if (frac % 10)
			return -EINVAL; /* finer than 1 Hz */
		frac /= 10;
		frac_digits--;
	}
	for (i = frac_digits; i < exp10; i++)
		frac *= 10;
	for (i = 0; i < exp10; i++) {
		if (whole > UINT64_MAX / 10)
			return -ERANGE;
		whole *= 10;
	}
	if (whole > UINT64_MAX - frac)
		return -ERANGE;
	*hz = whole + frac;
	return 0;
}

int ctl_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int ctl_parse_seconds_ms(const char *s, long *ms)
{
	char scaled[64];
	size_t len = s ? strlen(s) : 0;
	uint64_t v;

	/* seconds read to ms exactly as kHz read to Hz */
	if (!len || len > 32 || !isdigit((unsigned char)s[len - 1]))
		return -EINVAL;
	snprintf(scaled, sizeof(scaled), "%sk", s);
	if (ctl_parse_hz(scaled, &v) || v == 0 || v > LONG_MAX)
		return -EINVAL;
	*ms = (long)v;
	return 0;
}

void ctl_fmt_mhz(uint64_t hz, char *out, size_t n)
{
	char frac[8];
	int len;

	snprintf(frac, sizeof(frac), "%06" PRIu64, hz % 1000000);
	for (len = 6; len > 3 && frac[len - 1] == '0'; len--)
		frac[len - 1] = '\0';
	snprintf(out, n, "%" PRIu64 ".%s", hz / 1000000, frac);
}

int64_t ctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

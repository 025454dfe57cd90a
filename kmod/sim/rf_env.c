// SPDX-License-Identifier: MIT
/*
 * rf_env.c - the carriers on the simulated antenna: parsing the
 * environment file and what a receiver tuned somewhere sees.
 */
#include "rf_env.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tstub_codec.h"

#define RF_FREQ_MIN            1000000u    /* 1 MHz */
#define RF_FREQ_MAX            3000000000u /* 3 GHz */
#define RF_BW_MIN              1000u       /* 1 kHz */
#define RF_BW_MAX              100000000u  /* 100 MHz */
#define RF_NOISE_FLOOR_DBM     -105.0
#define RF_SIGNAL_MIN_DBM      -90.0
#define RF_NARROW_TOLERANCE_HZ 100000
#define RF_FILE_MAX            (4u << 20)

struct rf_parser {
	const char *name;
	unsigned int line;
	char *err;
	size_t errlen;
};

static int rf_fail(struct rf_parser *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int rf_fail(struct rf_parser *p, const char *fmt, ...)
{
	char reason[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (p->err && p->errlen)
		snprintf(p->err, p->errlen, "%s:%u: %s", p->name, p->line,
			 reason);
	return -EINVAL;
}

/* Next whitespace-separated token; NUL-terminates it in place. */
static char *rf_next_token(char **cursor)
{
	char *s = *cursor;
	char *start;

	while (*s && isspace((unsigned char)*s))
		s++;
	if (!*s) {
		*cursor = s;
		return NULL;
	}
	start = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	if (*s)
		*s++ = '\0';
	*cursor = s;
	return start;
}

static int rf_parse_u32(struct rf_parser *p, const char *tok, const char *what,
			uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)tok[0]))
		return rf_fail(p, "bad number '%s' for %s", tok, what);
	errno = 0;
	v = strtoull(tok, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return rf_fail(p, "bad number '%s' for %s", tok, what);
	*out = (uint32_t)v;
	return 0;
}

static int rf_parse_double(struct rf_parser *p, const char *tok,
			   const char *what, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(tok, &end);
	if (errno || *end || end == tok || !isfinite(v))
		return rf_fail(p, "bad number '%s' for %s", tok, what);
	if (v < lo || v > hi)
		return rf_fail(p, "%s %s out of range %g..%g", what, tok, lo,
			       hi);
	*out = v;
	return 0;
}

/*
 * The label is the rest of the line: either one quoted string (may hold
 * spaces and '#') or bare words up to a comment.
 */
static int rf_parse_label(struct rf_parser *p, char *rest, char *label)
{
	char *s = rest;
	char *end;
	size_t n;

	while (*s && isspace((unsigned char)*s))
		s++;
	if (*s == '"') {
		end = strchr(s + 1, '"');
		if (!end)
			return rf_fail(p, "unterminated quoted label");
		s++;
		n = (size_t)(end - s);
		for (char *t = end + 1; *t && *t != '#'; t++)
			if (!isspace((unsigned char)*t))
				return rf_fail(p, "text after quoted label");
	} else {
		end = strchr(s, '#');
		if (!end)
			end = s + strlen(s);
		while (end > s && isspace((unsigned char)end[-1]))
			end--;
		n = (size_t)(end - s);
	}
	if (n >= SIM_RF_LABEL_LEN)
		return rf_fail(p, "label longer than %d characters",
			       SIM_RF_LABEL_LEN - 1);
	memcpy(label, s, n);
	label[n] = '\0';
	return 0;
}

static int rf_parse_numbers(struct rf_parser *p, char **cursor,
			    struct sim_carrier *c)
{
	const char *names[4] = {"frequency", "bandwidth", "level", "CNR"};
	char *tok[4];

	for (int i = 0; i < 4; i++) {
		tok[i] = rf_next_token(cursor);
		if (!tok[i] || tok[i][0] == '#')
			return rf_fail(p, "missing %s", names[i]);
	}
	if (rf_parse_u32(p, tok[0], names[0], &c->frequency) ||
	    rf_parse_u32(p, tok[1], names[1], &c->bandwidth))
		return -EINVAL;
	if (c->frequency < RF_FREQ_MIN || c->frequency > RF_FREQ_MAX)
		return rf_fail(p, "frequency %u Hz out of range 1 MHz..3 GHz",
			       c->frequency);
	if (c->bandwidth < RF_BW_MIN || c->bandwidth > RF_BW_MAX)
		return rf_fail(p, "bandwidth %u Hz out of range 1 kHz..100 MHz",
			       c->bandwidth);
	if (rf_parse_double(p, tok[2], names[2], -150.0, 30.0, &c->level_dbm) ||
	    rf_parse_double(p, tok[3], names[3], -50.0, 100.0, &c->cnr_db))
		return -EINVAL;
	return 0;
}

/* A MUX or SERVICE line belongs to the digital carrier just above it. */
static int rf_parse_mux_line(struct rf_parser *p, const char *keyword,
			     char *rest, struct sim_rf_env *env)
{
	struct sim_carrier *c =
	    env->count ? &env->carriers[env->count - 1] : NULL;
	char why[160] = "";
	int rc;

	if (!c || !c->digital)
		return rf_fail(p, "%s without a digital carrier above it",
			       keyword);
	if (!strcmp(keyword, "MUX")) {
		if (c->nservices)
			return rf_fail(p, "MUX after the carrier's services");
		rc = sim_mux_parse(rest, c, why, sizeof(why));
	} else {
		rc = sim_service_parse(rest, env, c, why, sizeof(why));
	}
	return rc ? rf_fail(p, "%s", why) : 0;
}

/* One line; 0 also for blank and comment lines (nothing added). */
static int rf_parse_line(struct rf_parser *p, char *line,
			 struct sim_rf_env *env)
{
	struct sim_carrier c = {0};
	char *cursor = line;
	char *sys = rf_next_token(&cursor);

	if (!sys || sys[0] == '#')
		return 0;
	if (!strcmp(sys, "MUX") || !strcmp(sys, "SERVICE"))
		return rf_parse_mux_line(p, sys, cursor, env);
	c.delsys = tstub_delsys_parse(sys);
	if (c.delsys == TSTUB_DELSYS_NONE)
		return rf_fail(p, "unknown system '%s'", sys);
	if (rf_parse_numbers(p, &cursor, &c) ||
	    rf_parse_label(p, cursor, c.label))
		return -EINVAL;
	if (env->count >= SIM_RF_MAX_CARRIERS)
		return rf_fail(p, "too many carriers (at most %d)",
			       SIM_RF_MAX_CARRIERS);
	c.digital = sim_mux_defaults(c.delsys, &c.mux);
	if (c.digital) {
		c.mux.tsid = (uint16_t)(env->count + 1);
		c.mux.bitrate = sim_mux_bitrate(c.delsys, c.bandwidth, &c.mux);
	}
	c.first_service = (uint32_t)env->nservices;
	env->carriers[env->count++] = c;
	return 0;
}

static struct sim_rf_env *rf_parse_named(const char *name, const char *text,
					 char *err, size_t errlen)
{
	struct rf_parser p = {name, 0, err, errlen};
	struct sim_rf_env *env = calloc(1, sizeof(*env));
	char *copy = strdup(text);
	char *line = copy;

	if (!env || !copy) {
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", name);
		goto fail;
	}
	while (line) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		p.line++;
		if (rf_parse_line(&p, line, env))
			goto fail;
		line = nl ? nl + 1 : NULL;
	}
	free(copy);
	return env;
fail:
	free(copy);
	free(env);
	return NULL;
}

struct sim_rf_env *sim_rf_env_parse(const char *text, char *err, size_t errlen)
{
	return rf_parse_named("<text>", text ? text : "", err, errlen);
}

struct sim_rf_env *sim_rf_env_load(const char *path, char *err, size_t errlen)
{
	struct sim_rf_env *env = NULL;
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t n;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	text = malloc(RF_FILE_MAX + 1);
	if (!text) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	n = fread(text, 1, RF_FILE_MAX + 1, f);
	if (ferror(f) || n > RF_FILE_MAX) {
		snprintf(err, errlen, "%s: %s", path,
			 ferror(f) ? "read error" : "file too large");
		goto out;
	}
	text[n] = '\0';
	if (memchr(text, '\0', n)) {
		snprintf(err, errlen, "%s: not a text file", path);
		goto out;
	}
	env = rf_parse_named(path, text, err, errlen);
out:
	free(text);
	fclose(f);
	return env;
}

void sim_rf_env_free(struct sim_rf_env *env)
{
	free(env);
}

/* ------------------------------------------------------------------ */

/* Uniform in [-0.5, 0.5) dB; no noise without a state. */
static double rf_noise(uint32_t *rng)
{
	uint32_t x;

	if (!rng)
		return 0.0;
	x = *rng ? *rng : 0x2545F491u;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*rng = x;
	return (double)x / 4294967296.0 - 0.5;
}

/* CNR a demodulator of the system needs for a quasi-error-free lock. */
double sim_rf_cnr_threshold(uint32_t delsys)
{
	switch (delsys) {
	case TSTUB_DELSYS_DVBT:
		return 18.0;
	case TSTUB_DELSYS_DVBT2:
		return 20.0;
	case TSTUB_DELSYS_DVBC_A:
		return 24.0;
	case TSTUB_DELSYS_DVBS:
		return 7.0;
	case TSTUB_DELSYS_DVBS2:
		return 9.0;
	case TSTUB_DELSYS_ATSC:
		return 15.0;
	case TSTUB_DELSYS_ANALOG_TV:
		return 25.0;
	case TSTUB_DELSYS_RADIO:
		return 12.0;
	}
	return 20.0;
}

static int rf_is_narrow_tolerance(uint32_t delsys)
{
	return delsys == TSTUB_DELSYS_ANALOG_TV || delsys == TSTUB_DELSYS_RADIO;
}

/* The carrier whose band holds f, nearest centre first; -1 if none. */
static int rf_find_carrier(const struct sim_rf_env *env, uint32_t f)
{
	long long best_dist = -1;
	int best = -1;

	for (size_t i = 0; env && i < env->count; i++) {
		const struct sim_carrier *c = &env->carriers[i];
		long long dist = llabs((long long)f - (long long)c->frequency);

		if (dist * 2 > (long long)c->bandwidth)
			continue;
		if (best < 0 || dist < best_dist) {
			best = (int)i;
			best_dist = dist;
		}
	}
	return best;
}

/*
 * A digital demodulator whose channel filter is narrower than the
 * carrier loses its edge pilots and never locks; analog and radio
 * receivers only care about the carrier itself.
 */
static int rf_filter_fits(const struct sim_carrier *c, uint32_t bandwidth)
{
	if (rf_is_narrow_tolerance(c->delsys) || bandwidth == 0)
		return 1;
	return bandwidth >= c->bandwidth;
}

void sim_rf_measure(const struct sim_rf_env *env, uint32_t frequency,
		    uint32_t bandwidth, uint32_t delsys, uint32_t *rng,
		    struct sim_rf_reading *out)
{
	const struct sim_carrier *c;
	long long tolerance;
	int idx = rf_find_carrier(env, frequency);

	memset(out, 0, sizeof(*out));
	out->carrier = idx;
	if (idx < 0) {
		out->level_dbm = RF_NOISE_FLOOR_DBM + rf_noise(rng);
		out->cnr_db = 0.0;
		return;
	}
	c = &env->carriers[idx];
	out->level_dbm = c->level_dbm + rf_noise(rng);
	out->cnr_db = c->cnr_db + rf_noise(rng);
	out->offset_hz = (int)((long long)frequency - (long long)c->frequency);
	if (out->level_dbm <= RF_SIGNAL_MIN_DBM)
		return;
	out->fe_status = TSTUB_FE_HAS_SIGNAL;
	tolerance = rf_is_narrow_tolerance(c->delsys) ? RF_NARROW_TOLERANCE_HZ
						      : c->bandwidth / 4;
	if (llabs(out->offset_hz) > tolerance)
		return;
	out->fe_status |= TSTUB_FE_HAS_CARRIER;
	if (delsys != TSTUB_DELSYS_NONE && delsys != c->delsys)
		return;
	if (!rf_filter_fits(c, bandwidth))
		return;
	if (out->cnr_db > sim_rf_cnr_threshold(c->delsys))
		out->fe_status |= TSTUB_FE_HAS_VITERBI | TSTUB_FE_HAS_SYNC |
				  TSTUB_FE_HAS_LOCK;
}

void sim_rf_status(const struct sim_rf_reading *r, struct tstub_status *st)
{
	double rel = (r->level_dbm + 100.0) / 80.0;

	memset(st, 0, sizeof(*st));
	st->valid = TSTUB_ST_FE_STATUS | TSTUB_ST_STRENGTH_DBM |
		    TSTUB_ST_STRENGTH_REL | TSTUB_ST_CNR_DB;
	st->fe_status = r->fe_status;
	st->strength_mdbm = (int32_t)lround(r->level_dbm * 1000.0);
	if (rel < 0.0)
		rel = 0.0;
	if (rel > 1.0)
		rel = 1.0;
	st->strength_rel = (uint32_t)lround(rel * 65535.0);
	st->cnr_mdb = (int32_t)lround(r->cnr_db * 1000.0);
	st->afc_hz = r->offset_hz;
	if (r->fe_status & TSTUB_FE_HAS_CARRIER)
		st->valid |= TSTUB_ST_AFC;
}

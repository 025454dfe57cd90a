// SPDX-License-Identifier: MIT
/*
 * The network API's JSON shapes.  Measurements always travel with their
 * unit: DVB users mix up dB and percent constantly, so a relative value
 * is never passed off as a dB figure.
 */
#include "json_api.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tstub_codec.h"

void api_error_clear(struct api_error *e)
{
	json_decref(e->details);
	e->details = NULL;
	e->status = 0;
	e->code = NULL;
	e->message[0] = '\0';
}

void api_error_set(struct api_error *e, int status, const char *code,
		   json_t *details, const char *fmt, ...)
{
	va_list ap;

	json_decref(e->details);
	e->status = status;
	e->code = code;
	e->details = details;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

void api_errno_to_http(int err, int *status, const char **code)
{
	switch (err) {
	case -EBUSY:
		*status = 429;
		*code = "too_many_requests";
		break;
	case -ETIMEDOUT:
		*status = 504;
		*code = "deadline";
		break;
	case -ECONNABORTED:
	case -ENOTCONN:
	case -ESHUTDOWN:
	case -ENODEV:
	case -ECANCELED:
	case -EPIPE:
		*status = 503;
		*code = "unavailable";
		break;
	case -EINVAL:
	case -ERANGE:
	case -EOPNOTSUPP:
		*status = 422;
		*code = "unsupported_params";
		break;
	default:
		*status = 500;
		*code = "internal";
		break;
	}
}

void api_error_from_errno(struct api_error *e, int err, const char *what)
{
	const char *code;
	int status;

	api_errno_to_http(err, &status, &code);
	switch (status) {
	case 429:
		api_error_set(e, status, code, NULL,
			      "%s: the tuner's request queue is full", what);
		break;
	case 504:
		api_error_set(e, status, code, NULL,
			      "%s: the tuner did not answer in time", what);
		break;
	case 503:
		api_error_set(e, status, code, NULL,
			      "%s: the tuner is not available (%s)", what,
			      strerror(-err));
		break;
	case 422:
		api_error_set(e, status, code, NULL,
			      "%s: the chip refused these parameters", what);
		break;
	default:
		api_error_set(e, status, code, NULL, "%s failed: %s", what,
			      strerror(err < 0 ? -err : err));
		break;
	}
}

json_t *api_error_json(const char *code, const char *message, json_t *details)
{
	json_t *err = json_pack("{s:s, s:s}", "code", code, "message", message);

	if (err && details)
		json_object_set_new(err, "details", details);
	else
		json_decref(details);
	return err ? json_pack("{s:o}", "error", err) : NULL;
}

json_t *api_error_to_json(struct api_error *e)
{
	json_t *details = e->details;

	e->details = NULL;
	return api_error_json(e->code ? e->code : "internal", e->message,
			      details);
}

int json_depth(const json_t *v)
{
	int deepest = 0;

	if (json_is_object(v)) {
		const char *key;
		json_t *child;

		json_object_foreach((json_t *)v, key, child)
		{
			int d = json_depth(child);

			if (d > deepest)
				deepest = d;
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *child;

		json_array_foreach(v, i, child)
		{
			int d = json_depth(child);

			if (d > deepest)
				deepest = d;
		}
	} else {
		return 0;
	}
	return deepest + 1;
}

/* ------------------------------------------------------------------ */

static const struct {
	const char *name;
	uint64_t std;
} std_names[] = {
    {"PAL-BG", 0x7},       {"PAL-I", 0x10},        {"PAL-DK", 0xe0},
    {"PAL-M", 0x100},      {"PAL-N", 0x200},       {"PAL-Nc", 0x400},
    {"PAL-60", 0x800},     {"NTSC-M", 0x1000},     {"NTSC-M-JP", 0x2000},
    {"NTSC-443", 0x4000},  {"NTSC-M-KR", 0x8000},  {"SECAM-B", 0x10000},
    {"SECAM-G", 0x40000},  {"SECAM-H", 0x80000},   {"SECAM-DK", 0x320000},
    {"SECAM-L", 0x400000}, {"SECAM-Lc", 0x800000},
};

uint64_t api_std_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(std_names) / sizeof(std_names[0]); i++)
		if (name && strcasecmp(name, std_names[i].name) == 0)
			return std_names[i].std;
	return 0;
}

const char *api_std_name(uint64_t std)
{
	size_t n = sizeof(std_names) / sizeof(std_names[0]);

	for (size_t i = 0; i < n; i++)
		if (std_names[i].std == std)
			return std_names[i].name;
	for (size_t i = 0; i < n; i++)
		if (std_names[i].std & std)
			return std_names[i].name;
	return NULL;
}

static const uint32_t bw_table[][2] = {
    {TSTUB_BW_1_712MHZ, 1712000}, {TSTUB_BW_5MHZ, 5000000},
    {TSTUB_BW_6MHZ, 6000000},     {TSTUB_BW_7MHZ, 7000000},
    {TSTUB_BW_8MHZ, 8000000},     {TSTUB_BW_10MHZ, 10000000},
};

uint32_t api_bw_hz(uint32_t bw_bit)
{
	for (size_t i = 0; i < sizeof(bw_table) / sizeof(bw_table[0]); i++)
		if (bw_table[i][0] == bw_bit)
			return bw_table[i][1];
	return 0;
}

uint32_t api_bw_bit(uint32_t hz)
{
	for (size_t i = 0; i < sizeof(bw_table) / sizeof(bw_table[0]); i++)
		if (bw_table[i][1] == hz)
			return bw_table[i][0];
	return 0;
}

uint64_t api_realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

char *api_time_format(uint64_t realtime_ms, char *buf, size_t len)
{
	time_t secs = (time_t)(realtime_ms / 1000);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (unsigned int)(realtime_ms % 1000));
	return buf;
}

json_t *api_time_json(uint64_t realtime_ms)
{
	char buf[40];

	if (!realtime_ms)
		return json_null();
	return json_string(api_time_format(realtime_ms, buf, sizeof(buf)));
}

/* ------------------------------------------------------------------ */

json_t *params_to_json(const struct tstub_params *p)
{
	json_t *o = json_pack("{s:s, s:I, s:I}", "delivery_system",
			      tstub_delsys_name(p->delsys), "frequency",
			      (json_int_t)p->frequency, "bandwidth",
			      (json_int_t)p->bandwidth);

	if (!o)
		return NULL;
	if (p->delsys == TSTUB_DELSYS_DVBC_A ||
	    p->delsys == TSTUB_DELSYS_DVBS || p->delsys == TSTUB_DELSYS_DVBS2)
		json_object_set_new(o, "symbol_rate",
				    json_integer(p->symbol_rate));
	if (p->delsys == TSTUB_DELSYS_ANALOG_TV) {
		const char *name = api_std_name(p->std);

		json_object_set_new(o, "standard",
				    name ? json_string(name) : json_null());
	}
	return o;
}

/* A measurement rounded to 0.1 of its unit. */
static json_t *measure_json(double value, const char *unit)
{
	return json_pack("{s:f, s:s}", "value", round(value * 10.0) / 10.0,
			 "unit", unit);
}

static json_t *pick_measure(uint32_t valid, uint32_t abs_bit, int32_t milli,
			    uint32_t rel_bit, uint32_t rel, const char *unit)
{
	if (valid & abs_bit)
		return measure_json(milli / 1000.0, unit);
	if (valid & rel_bit)
		return measure_json(rel * 100.0 / 65535.0, "%");
	return json_null();
}

json_t *status_to_json(const struct tstub_status *st, uint64_t changed_at_ms)
{
	uint32_t fe = st->valid & TSTUB_ST_FE_STATUS ? st->fe_status : 0;
	json_t *o;

	o = json_pack(
	    "{s:{s:b, s:b, s:b, s:b, s:b}, s:I, s:I}", "fe_status", "signal",
	    !!(fe & TSTUB_FE_HAS_SIGNAL), "carrier",
	    !!(fe & TSTUB_FE_HAS_CARRIER), "viterbi",
	    !!(fe & TSTUB_FE_HAS_VITERBI), "sync", !!(fe & TSTUB_FE_HAS_SYNC),
	    "lock", !!(fe & TSTUB_FE_HAS_LOCK), "frequency",
	    (json_int_t)st->frequency, "bandwidth", (json_int_t)st->bandwidth);
	if (!o)
		return NULL;
	json_object_set_new(
	    o, "signal_strength",
	    pick_measure(st->valid, TSTUB_ST_STRENGTH_DBM, st->strength_mdbm,
			 TSTUB_ST_STRENGTH_REL, st->strength_rel, "dBm"));
	json_object_set_new(o, "cnr",
			    pick_measure(st->valid, TSTUB_ST_CNR_DB,
					 st->cnr_mdb, TSTUB_ST_CNR_REL,
					 st->cnr_rel, "dB"));
	json_object_set_new(o, "afc_hz",
			    st->valid & TSTUB_ST_AFC ? json_integer(st->afc_hz)
						     : json_null());
	json_object_set_new(o, "pll_locked",
			    st->valid & TSTUB_ST_PLL_LOCK
				? json_boolean(st->pll_locked)
				: json_null());
	json_object_set_new(o, "changed_at", api_time_json(changed_at_ms));
	return o;
}

static json_t *delsys_list(uint32_t mask)
{
	json_t *a = json_array();

	for (uint32_t i = 1; i < TSTUB_DELSYS_COUNT; i++)
		if (mask & (1u << i))
			json_array_append_new(
			    a, json_string(tstub_delsys_name(i)));
	return a;
}

static json_t *bandwidth_list(uint32_t mask)
{
	json_t *a = json_array();

	for (uint32_t bit = 1; bit && bit <= TSTUB_BW_10MHZ; bit <<= 1)
		if ((mask & bit) && api_bw_hz(bit))
			json_array_append_new(a, json_integer(api_bw_hz(bit)));
	return a;
}

void chip_to_json(json_t *obj, const struct tstub_chip_info *chip)
{
	json_object_set_new(
	    obj, "chip",
	    json_pack("{s:s%, s:s%, s:s%, s:I}", "name", chip->name,
		      strnlen(chip->name, TSTUB_NAME_LEN), "vendor",
		      chip->vendor, strnlen(chip->vendor, TSTUB_NAME_LEN),
		      "plugin", chip->plugin,
		      strnlen(chip->plugin, TSTUB_NAME_LEN), "chip_id",
		      (json_int_t)chip->chip_id));
	json_object_set_new(obj, "delivery_systems",
			    delsys_list(chip->delsys_mask));
	json_object_set_new(obj, "frequency",
			    json_pack("{s:I, s:I, s:I}", "min",
				      (json_int_t)chip->freq_min, "max",
				      (json_int_t)chip->freq_max, "step",
				      (json_int_t)chip->freq_step));
	json_object_set_new(obj, "bandwidths",
			    bandwidth_list(chip->bandwidth_mask));
}

json_t *chip_limits_json(const struct tstub_chip_info *chip)
{
	return json_pack("{s:o, s:I, s:I, s:I, s:o}", "delivery_systems",
			 delsys_list(chip->delsys_mask), "frequency_min",
			 (json_int_t)chip->freq_min, "frequency_max",
			 (json_int_t)chip->freq_max, "frequency_step",
			 (json_int_t)chip->freq_step, "bandwidths",
			 bandwidth_list(chip->bandwidth_mask));
}

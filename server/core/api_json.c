// SPDX-License-Identifier: MIT
/*
 * The network API's shapes of params and status (api_json.h).
 * Measurements always travel with their unit: DVB users mix up dB and
 * percent constantly, so a relative value is never passed off as a dB
 * figure.
 */
#include "api_json.h"

#include <errno.h>
#include <math.h>
#include <strings.h>

#include "eventbus.h"
#include "tstub_codec.h"

/* ---- errors ---- */

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

const char *api_errno_code(int err)
{
	const char *code;
	int status;

	api_errno_to_http(err, &status, &code);
	return code;
}

/* ---- times ---- */

uint64_t api_realtime_ms(void)
{
	return (uint64_t)eventbus_now_ms();
}

char *api_time_format(uint64_t realtime_ms, char *buf, size_t len)
{
	eventbus_format_time((int64_t)realtime_ms, buf, len);
	return buf;
}

json_t *api_time_json(uint64_t realtime_ms)
{
	char buf[40];

	if (!realtime_ms)
		return json_null();
	return json_string(api_time_format(realtime_ms, buf, sizeof(buf)));
}

/* ---- analog standards, bandwidths ---- */

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

/* ---- params and status ---- */

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

int api_status_locked(const struct tstub_status *st)
{
	if (st->valid & TSTUB_ST_FE_STATUS)
		return !!(st->fe_status & TSTUB_FE_HAS_LOCK);
	if (st->valid & TSTUB_ST_PLL_LOCK)
		return !!st->pll_locked;
	return 0;
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

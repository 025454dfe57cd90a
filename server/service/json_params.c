// SPDX-License-Identifier: MIT
/*
 * Tune parameters from a request body.  Everything a client can get
 * wrong is answered precisely: a type or a name (400, details.field) or
 * something the chip cannot do (422, with what it can do).  Frequencies
 * inside the chip's range but off its step are accepted: the chip rounds
 * to its grid, as DVB frontends do, and the status reports the frequency
 * actually tuned (broadcast offsets such as +166 kHz are off most grids).
 */
#include <stdio.h>
#include <string.h>

#include "json_api.h"
#include "tstub_codec.h"

static const char *const param_fields[] = {
    "delivery_system", "frequency", "bandwidth",
    "symbol_rate",     "standard",  NULL,
};

static int name_in(const char *name, const char *const *list)
{
	for (; list && *list; list++)
		if (strcmp(name, *list) == 0)
			return 1;
	return 0;
}

static int bad_field(struct api_error *e, const char *field, const char *why)
{
	api_error_set(e, 400, "bad_request", json_pack("{s:s}", "field", field),
		      "%s: %s", field, why);
	return -1;
}

static int unsupported(struct api_error *e, const struct tstub_chip_info *chip,
		       const char *fmt, const char *what)
{
	api_error_set(e, 422, "unsupported_params", chip_limits_json(chip), fmt,
		      what, chip->name);
	return -1;
}

/* An unsigned 32-bit integer field; absent: *out untouched, 0 returned. */
static int get_u32(json_t *obj, const char *field, int required, uint32_t *out,
		   struct api_error *e)
{
	json_t *v = json_object_get(obj, field);
	json_int_t n;

	if (!v)
		return required ? bad_field(e, field, "missing") : 0;
	if (!json_is_integer(v))
		return bad_field(e, field, "must be an integer");
	n = json_integer_value(v);
	if (n < 0 || n > UINT32_MAX)
		return bad_field(e, field, "out of range");
	*out = (uint32_t)n;
	return 0;
}

static int check_fields(json_t *obj, const char *const *allow_extra,
			struct api_error *e)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj)) {
		api_error_set(e, 400, "bad_request", NULL,
			      "the body must be a JSON object");
		return -1;
	}
	json_object_foreach(obj, key, v)
	{
		if (!name_in(key, param_fields) && !name_in(key, allow_extra))
			return bad_field(e, key, "unknown field");
	}
	return 0;
}

static int get_delsys(json_t *obj, const struct tstub_chip_info *chip,
		      struct tstub_params *out, struct api_error *e)
{
	json_t *v = json_object_get(obj, "delivery_system");
	const char *name;

	if (!v)
		return bad_field(e, "delivery_system", "missing");
	if (!json_is_string(v))
		return bad_field(e, "delivery_system", "must be a string");
	name = json_string_value(v);
	out->delsys = tstub_delsys_parse(name);
	/* The codec's parser ignores case (the kernel side and simctl use
	 * it); the API's names are case-sensitive (openapi.yaml's enum). */
	if (out->delsys != TSTUB_DELSYS_NONE &&
	    strcmp(name, tstub_delsys_name(out->delsys)))
		return bad_field(e, "delivery_system",
				 "names are upper case (e.g. DVBT)");
	if (out->delsys == TSTUB_DELSYS_NONE) {
		if (chip)
			return unsupported(e, chip,
					   "unknown delivery system \"%s\" "
					   "(%s)",
					   name);
		return bad_field(e, "delivery_system", "unknown name");
	}
	if (chip && !(chip->delsys_mask & (1u << out->delsys)))
		return unsupported(e, chip,
				   "delivery system %s is not supported by "
				   "the %s",
				   tstub_delsys_name(out->delsys));
	return 0;
}

static int has_symbol_rate(uint32_t delsys)
{
	return delsys == TSTUB_DELSYS_DVBC_A || delsys == TSTUB_DELSYS_DVBS ||
	       delsys == TSTUB_DELSYS_DVBS2;
}

/* Systems whose channel bandwidth the chip's bandwidth list governs. */
static int has_channel_bw(uint32_t delsys)
{
	return delsys == TSTUB_DELSYS_DVBT || delsys == TSTUB_DELSYS_DVBT2 ||
	       delsys == TSTUB_DELSYS_DVBC_A || delsys == TSTUB_DELSYS_ATSC;
}

static int get_mode_fields(json_t *obj, struct tstub_params *out,
			   struct api_error *e)
{
	json_t *std = json_object_get(obj, "standard");

	if (json_object_get(obj, "symbol_rate") &&
	    !has_symbol_rate(out->delsys))
		return bad_field(e, "symbol_rate",
				 "only for DVBC_ANNEX_A, DVBS and DVBS2");
	if (get_u32(obj, "symbol_rate", 0, &out->symbol_rate, e))
		return -1;
	if (out->delsys != TSTUB_DELSYS_ANALOG_TV) {
		if (std)
			return bad_field(e, "standard", "only for ANALOG_TV");
		return 0;
	}
	if (!std)
		return bad_field(e, "standard", "missing");
	if (!json_is_string(std))
		return bad_field(e, "standard", "must be a string");
	out->std = api_std_parse(json_string_value(std));
	if (!out->std)
		return bad_field(e, "standard",
				 "unknown analog standard (PAL-BG, PAL-I, "
				 "PAL-DK, NTSC-M, SECAM-L, ...)");
	return 0;
}

static int check_chip_limits(const struct tstub_params *p,
			     const struct tstub_chip_info *chip,
			     struct api_error *e)
{
	char what[48];

	if (p->frequency < chip->freq_min || p->frequency > chip->freq_max) {
		snprintf(what, sizeof(what), "%u Hz", p->frequency);
		return unsupported(e, chip,
				   "frequency %s is outside the %s's "
				   "range",
				   what);
	}
	if (p->bandwidth && has_channel_bw(p->delsys) &&
	    !(chip->bandwidth_mask & api_bw_bit(p->bandwidth))) {
		snprintf(what, sizeof(what), "%u Hz", p->bandwidth);
		return unsupported(e, chip,
				   "bandwidth %s is not supported by "
				   "the %s",
				   what);
	}
	return 0;
}

int params_from_json_ext(json_t *obj, const struct tstub_chip_info *chip,
			 const char *const *allow_extra,
			 struct tstub_params *out, struct api_error *e)
{
	memset(out, 0, sizeof(*out));
	if (check_fields(obj, allow_extra, e) ||
	    get_delsys(obj, chip, out, e) ||
	    get_u32(obj, "frequency", 1, &out->frequency, e) ||
	    get_u32(obj, "bandwidth", 0, &out->bandwidth, e) ||
	    get_mode_fields(obj, out, e))
		return -1;
	if (!out->frequency)
		return bad_field(e, "frequency", "must be positive");
	if (chip && check_chip_limits(out, chip, e))
		return -1;
	out->flags = TSTUB_PARAMS_VALID;
	return 0;
}

int params_from_json(json_t *obj, const struct tstub_chip_info *chip,
		     struct tstub_params *out, struct api_error *e)
{
	return params_from_json_ext(obj, chip, NULL, out, e);
}

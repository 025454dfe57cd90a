// SPDX-License-Identifier: MIT
/*
 * The network API's JSON shapes that only the network layer needs:
 * errors, the chip's capabilities.  Params and Status are the core's
 * (api_json.c), shared with the events.
 */
#include "json_api.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

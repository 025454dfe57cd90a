// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: a tune body as REST and WebSocket read it (jansson
 * with duplicate keys refused, the depth bound), then the params parser
 * against no chip, a digital chip and an analog one.  Every refusal must
 * make the API's error object; every accepted body must survive the trip
 * through params_to_json() and back unchanged.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_api.h"
#include "tstub_codec.h"

static const struct tstub_chip_info chip_digital = {
    .name = "DIGITAL",
    .delsys_mask = 1u << TSTUB_DELSYS_DVBT | 1u << TSTUB_DELSYS_DVBC_A,
    .bandwidth_mask = TSTUB_BW_6MHZ | TSTUB_BW_7MHZ | TSTUB_BW_8MHZ,
    .freq_min = 48000000,
    .freq_max = 870000000,
    .freq_step = 62500,
};

static const struct tstub_chip_info chip_hybrid = {
    .name = "HYBRID",
    .delsys_mask = 1u << TSTUB_DELSYS_DVBT | 1u << TSTUB_DELSYS_ATSC |
		   1u << TSTUB_DELSYS_ANALOG_TV | 1u << TSTUB_DELSYS_RADIO |
		   1u << TSTUB_DELSYS_DVBS,
    .bandwidth_mask = TSTUB_BW_6MHZ | TSTUB_BW_8MHZ,
    .freq_min = 42000000,
    .freq_max = 2150000000u,
    .freq_step = 50000,
};

static void check_error(struct api_error *e)
{
	json_t *j = api_error_to_json(e);
	char *text;

	if (!j || !json_is_object(json_object_get(j, "error")) || !e->code ||
	    e->status < 400 || e->status > 499)
		abort();
	text = json_dumps(j, JSON_COMPACT);
	if (!text)
		abort();
	free(text);
	json_decref(j);
	api_error_clear(e);
}

/* What was accepted must read back the same from its own JSON. */
static void check_round_trip(const struct tstub_params *p)
{
	json_t *j = params_to_json(p);
	struct tstub_params again;
	struct api_error e = {0};

	if (!j)
		abort();
	if (params_from_json(j, NULL, &again, &e) ||
	    again.delsys != p->delsys || again.frequency != p->frequency ||
	    again.bandwidth != p->bandwidth ||
	    again.symbol_rate != p->symbol_rate || again.std != p->std) {
		fprintf(stderr, "round trip: %s\n", e.message);
		abort();
	}
	json_decref(j);
	api_error_clear(&e);
}

static void parse_with(json_t *body, const struct tstub_chip_info *chip,
		       const char *const *extra)
{
	struct tstub_params p;
	struct api_error e = {0};

	if (params_from_json_ext(body, chip, extra, &p, &e)) {
		check_error(&e);
		return;
	}
	if (!(p.flags & TSTUB_PARAMS_VALID) || !p.frequency)
		abort();
	if (chip && !(chip->delsys_mask & (1u << p.delsys)))
		abort();
	check_round_trip(&p);
	api_error_clear(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const inline_extra[] = {"lease_id", "wait_lock_ms",
						   NULL};
	json_error_t jerr;
	json_t *body;

	body =
	    json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
	if (!body)
		return 0;
	if (json_depth(body) <= API_JSON_MAX_DEPTH) {
		parse_with(body, NULL, NULL);
		parse_with(body, &chip_digital, inline_extra);
		parse_with(body, &chip_hybrid, NULL);
	}
	json_decref(body);
	return 0;
}

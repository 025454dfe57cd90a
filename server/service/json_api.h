/* SPDX-License-Identifier: MIT */
/*
 * json_api.h - the network API's JSON: params from requests, tuners,
 * errors.  Shared by REST and WebSocket so both speak the same shapes
 * (protocol/API.md, protocol/openapi.yaml).  Params and Status out,
 * the errno mapping, times, standards and bandwidths are the core's
 * (api_json.h), so that the events carry the very same shapes.
 */
#ifndef TUNERD_JSON_API_H
#define TUNERD_JSON_API_H

#include <jansson.h>
#include <stdint.h>

#include "api_json.h"
#include "tuner_stub.h"

struct daemon;
struct lease;
struct tuner_snapshot;

/* Deepest JSON nesting a request body may have. */
#define API_JSON_MAX_DEPTH 16

/* An error answer under construction (status, code, message, details). */
struct api_error {
	int status;       /* HTTP status, e.g. 400 */
	const char *code; /* "bad_request", "unsupported_params", ... */
	char message[200];
	json_t *details; /* owned; NULL for none */
};

/* Fill e (dropping earlier details); takes the reference to details. */
void api_error_set(struct api_error *e, int status, const char *code,
		   json_t *details, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void api_error_clear(struct api_error *e);
/* api_errno_to_http() into e, with a message naming what failed. */
void api_error_from_errno(struct api_error *e, int err, const char *what);

/* {"error":{"code","message","details"}}; takes the reference to details
 * (NULL: "details" is omitted). */
json_t *api_error_json(const char *code, const char *message, json_t *details);
/* The same from e (moves e->details). */
json_t *api_error_to_json(struct api_error *e);

/* Nesting depth of a JSON value: a scalar is 0, [] and {"a":1} are 1,
 * [[1]] is 2. */
int json_depth(const json_t *v);

/*
 * Params from a JSON object: types, unknown fields (except the names in
 * allow_extra, a NULL-terminated list or NULL: e.g. "lease_id",
 * "wait_lock_ms" for a tune body), delivery system supported by chip
 * (NULL: not checked), frequency range and step, bandwidth, symbol rate,
 * analog standard.  Returns 0, or -1 with e filled: 400 bad_request
 * (details.field) or 422 unsupported_params (details: delivery_systems,
 * frequency_min, frequency_max, frequency_step, bandwidths).
 */
int params_from_json_ext(json_t *obj, const struct tstub_chip_info *chip,
			 const char *const *allow_extra,
			 struct tstub_params *out, struct api_error *e);
/* Same, no extra fields allowed. */
int params_from_json(json_t *obj, const struct tstub_chip_info *chip,
		     struct tstub_params *out, struct api_error *e);

/* The capability fields of a Tuner from the chip info: delivery_systems,
 * frequency {min,max,step}, bandwidths, chip {name,vendor,plugin,chip_id}
 * added into obj. */
void chip_to_json(json_t *obj, const struct tstub_chip_info *chip);

/*
 * A Tuner per api.md from a snapshot and its live lease (NULL: none):
 * id, state, chip, bridge, delivery_systems, frequency, bandwidths,
 * params, status, lease, last_change.
 */
json_t *tuner_to_json(const struct tuner_snapshot *s, const struct lease *l);
/* Who last changed the params: the API label without its "api:" prefix,
 * or NULL (kernel, restore, anonymous). */
const char *api_changed_by(const struct tuner_snapshot *s);

/* The 422 details: delivery_systems, frequency_min/max/step, bandwidths. */
json_t *chip_limits_json(const struct tstub_chip_info *chip);

#endif /* TUNERD_JSON_API_H */

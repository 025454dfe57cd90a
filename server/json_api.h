/* SPDX-License-Identifier: MIT */
/*
 * json_api.h - the network API's JSON: params, status, tuners, errors.
 * Shared by REST and WebSocket so both speak the same shapes
 * (/work/notes/api.md, protocol/openapi.yaml).
 */
#ifndef TUNERD_JSON_API_H
#define TUNERD_JSON_API_H

#include <jansson.h>
#include <stdint.h>

#include "tuner_stub.h"

struct daemon;
struct lease;
struct tuner_snapshot;

/* Deepest JSON nesting a request body may have. */
#define API_JSON_MAX_DEPTH 16
/* How answers are serialised: measurements are rounded to 0.1, so a
 * bounded precision prints -50.2 rather than -50.200000000000003. */
#define API_JSON_DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(12))

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
/* Map a negative errno from the tuner API to (status, code) per api.md:
 * -EBUSY 429 too_many_requests, -ETIMEDOUT 504 deadline,
 * -ECONNABORTED/-ENOTCONN/-ENODEV/-ESHUTDOWN 503 unavailable,
 * -EINVAL/-ERANGE/-EOPNOTSUPP 422 unsupported_params, else 500 internal. */
void api_errno_to_http(int err, int *status, const char **code);
/* The same into e, with a message naming what failed. */
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
json_t *params_to_json(const struct tstub_params *p);

/*
 * Status per api.md: fe_status bits, signal_strength and cnr as
 * {"value","unit"} in dBm/dB when the chip measured them, else % from the
 * relative fields, else null; afc_hz and pll_locked null when not valid.
 * changed_at_ms: wall-clock ms since the epoch (0: null).
 */
json_t *status_to_json(const struct tstub_status *st, uint64_t changed_at_ms);

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
/* 1 when a status says the frontend (or else the PLL) is locked. */
int api_status_locked(const struct tstub_status *st);

/* The 422 details: delivery_systems, frequency_min/max/step, bandwidths. */
json_t *chip_limits_json(const struct tstub_chip_info *chip);

/* RFC 3339 UTC with milliseconds, "2026-12-03T04:39:18.123Z"; buf >= 32. */
char *api_time_format(uint64_t realtime_ms, char *buf, size_t len);
json_t *api_time_json(uint64_t realtime_ms);
uint64_t api_realtime_ms(void);

/* V4L2 analog standard names ("PAL-BG", "NTSC-M", ...): 0 / NULL if
 * unknown. */
uint64_t api_std_parse(const char *name);
const char *api_std_name(uint64_t std);

/* Bandwidth in Hz for one TSTUB_BW_* bit (0 if unknown), and back. */
uint32_t api_bw_hz(uint32_t bw_bit);
uint32_t api_bw_bit(uint32_t hz);

#endif /* TUNERD_JSON_API_H */

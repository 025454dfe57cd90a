/* SPDX-License-Identifier: MIT */
/*
 * api_json.h - the network API's JSON shapes of what the core itself
 * knows: Params, Status, the error code of a negative errno, times,
 * analog standard names and channel bandwidths (protocol/API.md,
 * protocol/openapi.yaml).
 *
 * They live in the core (tunerd_core) because the core publishes the
 * events and the events carry the same shapes as the REST answers: one
 * conversion serves the event bus, REST and WebSocket.
 */
#ifndef TUNERD_API_JSON_H
#define TUNERD_API_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "tuner_stub.h"

/* How answers and events are serialised: measurements are rounded to
 * 0.1, so a bounded precision prints -50.2 rather than
 * -50.200000000000003. */
#define API_JSON_DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(12))

/*
 * Params: delivery_system, frequency, bandwidth, plus symbol_rate
 * (DVBC_ANNEX_A, DVBS, DVBS2) and standard (ANALOG_TV: its V4L2 name, or
 * null for bits without one).
 */
json_t *params_to_json(const struct tstub_params *p);

/*
 * Status: fe_status as booleans, signal_strength and cnr as
 * {"value","unit"} in dBm/dB when the chip measured them, else % from the
 * relative fields, else null; afc_hz and pll_locked null when not valid;
 * frequency, bandwidth; changed_at (wall-clock ms since the epoch of the
 * last params change, 0: null).
 */
json_t *status_to_json(const struct tstub_status *st, uint64_t changed_at_ms);

/* 1 when a status says the frontend (or else the PLL) is locked. */
int api_status_locked(const struct tstub_status *st);

/*
 * The API's error of a negative errno from the tuners:
 * -EBUSY 429 too_many_requests, -ETIMEDOUT 504 deadline,
 * -ECONNABORTED/-ENOTCONN/-ENODEV/-ESHUTDOWN/-ECANCELED/-EPIPE
 * 503 unavailable, -EINVAL/-ERANGE/-EOPNOTSUPP 422 unsupported_params,
 * else 500 internal.
 */
void api_errno_to_http(int err, int *status, const char **code);
/* Only the code ("deadline", ...; a static string). */
const char *api_errno_code(int err);

/* RFC 3339 UTC with milliseconds, "2026-12-03T04:39:18.123Z"; buf >= 32. */
char *api_time_format(uint64_t realtime_ms, char *buf, size_t len);
/* The same as a JSON string; 0 is null. */
json_t *api_time_json(uint64_t realtime_ms);
uint64_t api_realtime_ms(void);

/* V4L2 analog standard names ("PAL-BG", "NTSC-M", ...): 0 / NULL if
 * unknown. */
uint64_t api_std_parse(const char *name);
const char *api_std_name(uint64_t std);

/* Bandwidth in Hz for one TSTUB_BW_* bit (0 if unknown), and back. */
uint32_t api_bw_hz(uint32_t bw_bit);
uint32_t api_bw_bit(uint32_t hz);

#endif /* TUNERD_API_JSON_H */

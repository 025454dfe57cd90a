/* SPDX-License-Identifier: MIT */
/*
 * show.h - text rendering of tunerd's JSON: tuner params, status and
 * measured values with their units.
 */
#ifndef TUNERCTL_SHOW_H
#define TUNERCTL_SHOW_H

#include <jansson.h>
#include <stddef.h>

/* {"value":-50.2,"unit":"dBm"} -> "-50.2 dBm"; null or absent -> "-". */
void ctl_fmt_quantity(json_t *q, char *out, size_t n);
/* A frequency member in MHz ("474.000"), or "-" when absent. */
void ctl_fmt_json_mhz(json_t *hz, char *out, size_t n);
/* Params -> "DVBT 474.000 MHz bandwidth 8.000 MHz". */
void ctl_fmt_params(json_t *params, char *out, size_t n);
/*
 * The tuner's state as lines on stdout: a title (label and params), then
 * the status; answer is a tune answer (elapsed_ms) or NULL.
 */
void ctl_print_status(const char *label, json_t *params, json_t *status,
		      json_t *answer);

#endif

// SPDX-License-Identifier: MIT
/*
 * show.c - text rendering of params and status.
 */
#include "show.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

void ctl_fmt_quantity(json_t *q, char *out, size_t n)
{
	json_t *value = json_object_get(q, "value");
	const char *unit = json_string_value(json_object_get(q, "unit"));

	if (!json_is_number(value)) {
		snprintf(out, n, "-");
		return;
	}
	/* a value never goes out without its unit: dB and % differ */
	snprintf(out, n, "%.1f %s", json_number_value(value),
		 unit ? unit : "(no unit)");
}

void ctl_fmt_json_mhz(json_t *hz, char *out, size_t n)
{
	if (!json_is_integer(hz) || json_integer_value(hz) < 0) {
		snprintf(out, n, "-");
		return;
	}
	ctl_fmt_mhz((uint64_t)json_integer_value(hz), out, n);
}

void ctl_fmt_params(json_t *params, char *out, size_t n)
{
	const char *sys =
	    json_string_value(json_object_get(params, "delivery_system"));
	const char *std =
	    json_string_value(json_object_get(params, "standard"));
	json_t *bw = json_object_get(params, "bandwidth");
	json_t *sr = json_object_get(params, "symbol_rate");
	char freq[32], bws[32];
	size_t len;

	ctl_fmt_json_mhz(json_object_get(params, "frequency"), freq,
			 sizeof(freq));
	len = (size_t)snprintf(out, n, "%s %s MHz", sys ? sys : "?", freq);
	if (len < n && json_integer_value(bw) > 0) {
		ctl_fmt_json_mhz(bw, bws, sizeof(bws));
		len += (size_t)snprintf(out + len, n - len,
					"  bandwidth %s MHz", bws);
	}
	if (len < n && json_integer_value(sr) > 0)
		len += (size_t)snprintf(out + len, n - len,
					"  symbol rate %lld Bd",
					(long long)json_integer_value(sr));
	if (len < n && std)
		snprintf(out + len, n - len, "  standard %s", std);
}

static void print_fe_status(json_t *fe)
{
	static const char *const bits[] = {"signal", "carrier", "viterbi",
					   "sync", "lock"};
	json_t *lock = json_object_get(fe, "lock");
	size_t i;

	printf("  %-8s %s  (", "lock",
	       json_is_boolean(lock) ? (json_is_true(lock) ? "yes" : "no")
				     : "-");
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		printf("%s%s%s", i ? " " : "",
		       json_is_true(json_object_get(fe, bits[i])) ? "" : "no-",
		       bits[i]);
	}
	printf(")\n");
}

static void print_tuned(json_t *status)
{
	json_t *afc = json_object_get(status, "afc_hz");
	json_t *pll = json_object_get(status, "pll_locked");
	json_t *bw = json_object_get(status, "bandwidth");
	const char *changed =
	    json_string_value(json_object_get(status, "changed_at"));
	char freq[32], bws[32];

	ctl_fmt_json_mhz(json_object_get(status, "frequency"), freq,
			 sizeof(freq));
	ctl_fmt_json_mhz(bw, bws, sizeof(bws));
	printf("  %-8s %s MHz", "tuned", freq);
	if (json_integer_value(bw) > 0)
		printf("  bandwidth %s MHz", bws);
	printf("\n");
	if (json_is_integer(afc))
		printf("  %-8s %+lld Hz\n", "afc",
		       (long long)json_integer_value(afc));
	if (json_is_boolean(pll))
		printf("  %-8s %s\n", "pll",
		       json_is_true(pll) ? "locked" : "unlocked");
	if (changed)
		printf("  %-8s %s\n", "changed", changed);
}

void ctl_print_status(const char *label, json_t *params, json_t *status,
		      json_t *answer)
{
	json_t *elapsed = json_object_get(answer, "elapsed_ms");
	char line[256];

	printf("%s", label);
	if (json_is_object(params)) {
		ctl_fmt_params(params, line, sizeof(line));
		printf("  %s", line);
	}
	printf("\n");
	if (!json_is_object(status)) {
		printf("  no status yet\n");
	} else {
		print_fe_status(json_object_get(status, "fe_status"));
		ctl_fmt_quantity(json_object_get(status, "signal_strength"),
				 line, sizeof(line));
		printf("  %-8s %s\n", "signal", line);
		ctl_fmt_quantity(json_object_get(status, "cnr"), line,
				 sizeof(line));
		printf("  %-8s %s\n", "cnr", line);
		print_tuned(status);
	}
	if (json_is_integer(elapsed))
		printf("  %-8s %lld ms\n", "elapsed",
		       (long long)json_integer_value(elapsed));
	fflush(stdout);
}

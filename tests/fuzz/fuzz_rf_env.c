// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the simulated box's RF environment file
 * (sim_rf_env_parse(), what sim_rf_env_load() parses), then what a
 * receiver tuned on and beside every carrier parsed would see.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rf_env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void measure_around(const struct sim_rf_env *env,
			   const struct sim_carrier *c, uint32_t *rng)
{
	const int64_t offsets[] = {0, -1, 1, -(int64_t)c->bandwidth / 2,
				   (int64_t)c->bandwidth / 2 + 1};
	struct sim_rf_reading r;
	struct tstub_status st;

	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		int64_t f = (int64_t)c->frequency + offsets[i];

		if (f < 0 || f > UINT32_MAX)
			continue;
		sim_rf_measure(env, (uint32_t)f, c->bandwidth, c->delsys, rng,
			       &r);
		if (r.carrier >= (int)env->count || !isfinite(r.level_dbm) ||
		    !isfinite(r.cnr_db))
			abort();
		sim_rf_status(&r, &st);
		sim_rf_measure(env, (uint32_t)f, 0, TSTUB_DELSYS_NONE, NULL,
			       &r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "";
	char *text = malloc(size + 1);
	struct sim_rf_env *env;
	uint32_t rng = 1;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0'; /* the loader refuses a file holding a NUL */
	env = memchr(data, '\0', size)
		  ? NULL
		  : sim_rf_env_parse(text, err, sizeof(err));
	if (env) {
		if (env->count > SIM_RF_MAX_CARRIERS)
			abort();
		for (size_t i = 0; i < env->count; i++) {
			const struct sim_carrier *c = &env->carriers[i];

			if (memchr(c->label, '\0', SIM_RF_LABEL_LEN) == NULL ||
			    c->delsys == TSTUB_DELSYS_NONE ||
			    c->delsys >= TSTUB_DELSYS_COUNT)
				abort();
			measure_around(env, c, &rng);
		}
		sim_rf_env_free(env);
	} else if (!memchr(data, '\0', size) && !err[0]) {
		abort(); /* a refusal names file, line and reason */
	}
	free(text);
	return 0;
}

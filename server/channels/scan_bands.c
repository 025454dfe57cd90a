// SPDX-License-Identifier: MIT
/*
 * Band plans a scan can walk: the DVB-T channel rasters of region "eu"
 * (ETSI EN 300 744 / the CEPT GE06 plan):
 *
 * | band | channels | centre frequency        | bandwidth |
 * |------|----------|-------------------------|-----------|
 * | uhf  | 21..69   | 474 MHz + (ch-21) 8 MHz | 8 MHz     |
 * | vhf  | 5..12    | 177.5 MHz + (ch-5) 7 MHz| 7 MHz     |
 *
 * Offset carriers (the UK's +/-166.67 kHz) are not in the raster: a scan
 * by frequencies reaches them.
 */
#include <errno.h>
#include <string.h>

#include "scan_job.h"

static const struct band_plan {
	const char *band, *region;
	unsigned int first, last; /* channel numbers */
	uint32_t base_hz;         /* centre of the first channel */
	uint32_t step_hz;
} plans[] = {
    {"uhf", "eu", 21, 69, 474000000u, 8000000u},
    {"vhf", "eu", 5, 12, 177500000u, 7000000u},
};

int scan_band(const char *band, const char *region, json_t **out,
	      uint32_t *bandwidth)
{
	for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		const struct band_plan *p = &plans[i];
		json_t *arr;

		if (strcmp(band, p->band) || strcmp(region, p->region))
			continue;
		arr = json_array();
		for (unsigned int ch = p->first; arr && ch <= p->last; ch++)
			json_array_append_new(
			    arr, json_integer((json_int_t)p->base_hz +
					      (json_int_t)(ch - p->first) *
						  p->step_hz));
		*out = arr;
		*bandwidth = p->step_hz;
		return arr ? 0 : -ENOMEM;
	}
	return -EINVAL;
}

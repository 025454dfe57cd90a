// SPDX-License-Identifier: MIT
/*
 * Channels and status lines in HDHomeRun's words: a /tunerN/channel value
 * as tstub params, and the status line (ss/snq/seq) from a tuner's
 * Status.  Channel-map numbers use libhdhomerun's own channel tables.
 *
 * The status mapping (README.md says the same):
 *   ss  = (dBm + 100) * 100 / 70, 0..100: -100 dBm is 0, -30 dBm 100;
 *         without dBm, the chip's relative strength in percent.
 *   snq = CNR dB * 100 / 30, 0..100: 30 dB and more is 100; without dB,
 *         the relative CNR in percent.
 *   seq = 100 while locked, else 0 (the chips report no error counts).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_json.h"
#include "hdhr_priv.h"

static uint32_t bw_of_map(const char *map, uint32_t hz)
{
	if (!strncmp(map, "us-", 3))
		return 6000000;
	if (!strcmp(map, "au-bcast"))
		return 7000000;
	/* eu-bcast: 7 MHz in VHF band III, 8 MHz in UHF. */
	return hz < 300000000 ? 7000000 : 8000000;
}

/* "auto", "auto6t"...: what the channel map implies. */
static void auto_params(const char *mod, const char *map, uint32_t hz,
			struct tstub_params *p)
{
	int cable = strstr(map, "cable") || !strncmp(mod, "auto6c", 6) ||
		    !strncmp(mod, "auto8c", 6);

	p->frequency = hz;
	if (!strncmp(map, "us-", 3) && strncmp(mod, "auto6t", 6)) {
		p->delsys = TSTUB_DELSYS_ATSC;
		p->bandwidth = 6000000;
	} else if (cable) {
		p->delsys = TSTUB_DELSYS_DVBC_A;
		p->bandwidth = 8000000;
		p->symbol_rate = 6900000;
	} else {
		p->delsys = TSTUB_DELSYS_DVBT;
		p->bandwidth = bw_of_map(map, hz);
		if (mod[4] >= '6' && mod[4] <= '8')
			p->bandwidth = (uint32_t)(mod[4] - '0') * 1000000u;
	}
}

/* "t8bw8", "t7dvbt", "a8qam256-6900", "8vsb", "qam256". */
static int explicit_params(const char *mod, uint32_t hz, struct tstub_params *p)
{
	const char *dash;

	p->frequency = hz;
	if (mod[0] == 't' && mod[1] >= '6' && mod[1] <= '8') {
		p->delsys = strstr(mod, "dvbt2") ? TSTUB_DELSYS_DVBT2
						 : TSTUB_DELSYS_DVBT;
		p->bandwidth = (uint32_t)(mod[1] - '0') * 1000000u;
		return 0;
	}
	if (mod[0] == 'a' && mod[1] >= '6' && mod[1] <= '8') {
		p->delsys = TSTUB_DELSYS_DVBC_A;
		p->bandwidth = (uint32_t)(mod[1] - '0') * 1000000u;
		dash = strchr(mod, '-');
		p->symbol_rate =
		    dash ? (uint32_t)atoi(dash + 1) * 1000u : 6900000u;
		return p->symbol_rate ? 0 : -EINVAL;
	}
	if (!strcmp(mod, "8vsb") || !strncmp(mod, "qam", 3)) {
		p->delsys = TSTUB_DELSYS_ATSC;
		p->bandwidth = 6000000;
		return 0;
	}
	return -EINVAL;
}

static int number_params(const char *value, const char *map,
			 struct tstub_params *p)
{
	struct hdhomerun_channel_list_t *list;
	char *end;
	unsigned long n = strtoul(value, &end, 10);
	uint32_t hz;

	if (*end || !*value || n > 65535)
		return -EINVAL;
	list = hdhomerun_channel_list_create(map);
	if (!list)
		return -EINVAL;
	hz = hdhomerun_channel_number_to_frequency(list, (uint16_t)n);
	hdhomerun_channel_list_destroy(list);
	if (!hz)
		return -EINVAL;
	auto_params("auto", map, hz, p);
	return 0;
}

int hdhr_channel_params(const char *value, const char *channelmap,
			struct tstub_params *p, const char **why)
{
	const char *colon = strchr(value, ':');
	char mod[24], *end;
	unsigned long hz;

	memset(p, 0, sizeof(*p));
	*why = "ERROR: invalid channel";
	if (!colon)
		return number_params(value, channelmap, p);
	if ((size_t)(colon - value) >= sizeof(mod))
		return -EINVAL;
	memcpy(mod, value, (size_t)(colon - value));
	mod[colon - value] = '\0';
	hz = strtoul(colon + 1, &end, 10);
	if (*end || !colon[1] || hz > 0xFFFFFFFFul)
		return -EINVAL;
	if (hz < 1000000)
		hz *= 1000; /* kHz, as older clients send */
	if (!strncmp(mod, "auto", 4)) {
		auto_params(mod, channelmap, (uint32_t)hz, p);
		return 0;
	}
	return explicit_params(mod, (uint32_t)hz, p);
}

static unsigned int clamp100(long v)
{
	return v < 0 ? 0 : v > 100 ? 100 : (unsigned int)v;
}

static const char *lock_name(const struct tstub_params *p)
{
	switch (p->delsys) {
	case TSTUB_DELSYS_DVBT:
		return p->bandwidth == 6000000   ? "t6dvbt"
		       : p->bandwidth == 7000000 ? "t7dvbt"
						 : "t8dvbt";
	case TSTUB_DELSYS_DVBT2:
		return p->bandwidth == 7000000 ? "t7dvbt2" : "t8dvbt2";
	case TSTUB_DELSYS_DVBC_A:
		return "a8qam256";
	case TSTUB_DELSYS_ATSC:
		return "8vsb";
	default:
		return "none";
	}
}

void hdhr_status_line(const struct tstub_status *st,
		      const struct tstub_params *params, const char *channel,
		      uint64_t bps, char *buf, size_t len)
{
	int locked = st && params && api_status_locked(st);
	unsigned int ss = 0, snq = 0;

	if (st && st->valid & TSTUB_ST_STRENGTH_DBM)
		ss = clamp100((st->strength_mdbm + 100000) / 700);
	else if (st && st->valid & TSTUB_ST_STRENGTH_REL)
		ss = clamp100((long)st->strength_rel * 100 / 65535);
	if (st && st->valid & TSTUB_ST_CNR_DB)
		snq = clamp100(st->cnr_mdb / 300);
	else if (st && st->valid & TSTUB_ST_CNR_REL)
		snq = clamp100((long)st->cnr_rel * 100 / 65535);
	if (!strcmp(channel, "none"))
		ss = snq = 0;
	snprintf(buf, len,
		 "ch=%s lock=%s ss=%u snq=%u seq=%u bps=%llu pps=%llu", channel,
		 locked ? lock_name(params) : "none", ss, snq,
		 locked ? 100u : 0u, (unsigned long long)bps,
		 (unsigned long long)(bps / (8 * TS_PACKET)));
}

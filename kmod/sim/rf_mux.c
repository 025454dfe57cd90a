// SPDX-License-Identifier: MIT
/*
 * rf_mux.c - what a digital carrier of the RF environment carries: its
 * multiplex parameters (MUX line), its services (SERVICE lines) and the
 * transport stream bitrate they give.
 *
 *   MUX key=value ...
 *     tsid, onid, nid   transport stream id, original network id, network
 *                       id (0..65535)
 *     modulation        QPSK, QAM16, QAM64, QAM256
 *     fec               inner code rate: 1/2, 2/3, 3/4, 5/6, 7/8, 3/5, 4/5
 *     guard             guard interval 1/N: 1/4, 1/8, 1/16, 1/32, 1/128
 *     fft               2k, 8k (DVB-T); 1k .. 32k (DVB-T2)
 *     symbol_rate       Bd (DVB-C, DVB-S)
 *     bitrate           TS bit/s; overrides the computed rate
 *     network           the NIT's network name (no spaces)
 *   SERVICE sid lcn type pmt_pid video_pid audio_pid "name"
 *     type tv, hd or radio; a radio service has video_pid '-'.
 *
 * Bitrates: DVB-T is exact (EN 300 744: 6.75 Mcells/s in 8 MHz, scaled
 * by bandwidth, times bits, code rate, RS 188/204 and 1/(1 + guard)).
 * DVB-T2 is an approximation: 7.597 Mcells/s of data in 8 MHz (32K,
 * extended carriers, PP7: 40.2 Mbit/s at 256-QAM 2/3 GI 1/128, the UK HD
 * multiplex), whatever the FFT size and pilot pattern.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rf_env.h"

#define MUX_PID_MIN 0x20
#define MUX_PID_MAX 0x1ffe
#define MUX_LCN_MAX 1023

bool sim_mux_defaults(uint32_t delsys, struct sim_mux_params *m)
{
	memset(m, 0, sizeof(*m));
	m->onid = m->nid = 1;
	m->fec_num = 2;
	m->fec_den = 3;
	switch (delsys) {
	case TSTUB_DELSYS_DVBT:
		m->bits = 6;
		m->guard_den = 32;
		m->fft_k = 8;
		return true;
	case TSTUB_DELSYS_DVBT2:
		m->bits = 8;
		m->guard_den = 128;
		m->fft_k = 32;
		return true;
	case TSTUB_DELSYS_DVBC_A:
		m->bits = 8;
		m->symbol_rate = 6900000;
		return true;
	case TSTUB_DELSYS_DVBS:
	case TSTUB_DELSYS_DVBS2:
		m->bits = 2;
		m->fec_num = 3;
		m->fec_den = 4;
		m->symbol_rate = 27500000;
		return true;
	case TSTUB_DELSYS_ATSC:
		m->bitrate = 19392658; /* 8-VSB, A/53 */
		return true;
	}
	return false;
}

uint32_t sim_mux_bitrate(uint32_t delsys, uint32_t bandwidth,
			 const struct sim_mux_params *m)
{
	double fec = m->fec_den ? (double)m->fec_num / m->fec_den : 1.0;
	double guard = m->guard_den ? 1.0 / m->guard_den : 0.0;
	double bw = bandwidth ? bandwidth / 8e6 : 1.0;
	double rate = 0.0;

	if (m->bitrate)
		return m->bitrate;
	switch (delsys) {
	case TSTUB_DELSYS_DVBT:
		rate =
		    6.75e6 * bw * m->bits * fec * 188.0 / 204.0 / (1.0 + guard);
		break;
	case TSTUB_DELSYS_DVBT2:
		rate = 7.597e6 * bw * m->bits * fec / (1.0 + guard);
		break;
	case TSTUB_DELSYS_DVBC_A:
		rate = m->symbol_rate * (double)m->bits * 188.0 / 204.0;
		break;
	case TSTUB_DELSYS_DVBS:
		rate = m->symbol_rate * 2.0 * fec * 188.0 / 204.0;
		break;
	case TSTUB_DELSYS_DVBS2:
		rate = m->symbol_rate * (double)m->bits * fec * 0.97;
		break;
	}
	return rate > 0 && rate < 4e9 ? (uint32_t)(rate + 0.5) : 0;
}

static char *mux_token(char **cursor)
{
	char *s = *cursor, *start;

	while (*s && isspace((unsigned char)*s))
		s++;
	if (!*s || *s == '#') {
		*cursor = s;
		return NULL;
	}
	start = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	if (*s)
		*s++ = '\0';
	*cursor = s;
	return start;
}

static int mux_number(const char *tok, unsigned long max, unsigned long *out)
{
	char *end;

	if (!isdigit((unsigned char)tok[0]))
		return -EINVAL;
	errno = 0;
	*out = strtoul(tok, &end, 0);
	return errno || *end || *out > max ? -EINVAL : 0;
}

static int mux_fraction(const char *tok, uint8_t *num, uint16_t *den)
{
	unsigned int n, d;
	char tail;

	if (sscanf(tok, "%u/%u%c", &n, &d, &tail) != 2 || !n || d < n ||
	    d > 1024)
		return -EINVAL;
	*num = (uint8_t)n;
	*den = (uint16_t)d;
	return 0;
}

static int mux_modulation(const char *v, uint8_t *bits)
{
	static const struct {
		const char *name;
		uint8_t bits;
	} mods[] = {{"QPSK", 2}, {"QAM16", 4}, {"QAM64", 6}, {"QAM256", 8}};

	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		if (!strcmp(v, mods[i].name)) {
			*bits = mods[i].bits;
			return 0;
		}
	return -EINVAL;
}

static int mux_field(const char *key, const char *v, struct sim_mux_params *m)
{
	unsigned long n;
	uint8_t one;
	uint16_t den;

	if (!strcmp(key, "modulation"))
		return mux_modulation(v, &m->bits);
	if (!strcmp(key, "fec")) {
		if (mux_fraction(v, &m->fec_num, &den) || den > 255)
			return -EINVAL;
		m->fec_den = (uint8_t)den;
		return 0;
	}
	if (!strcmp(key, "guard"))
		return mux_fraction(v, &one, &m->guard_den) || one != 1
			   ? -EINVAL
			   : 0;
	if (!strcmp(key, "network"))
		return snprintf(m->network, sizeof(m->network), "%s", v) >=
			       (int)sizeof(m->network)
			   ? -EINVAL
			   : 0;
	if (!strcmp(key, "fft")) {
		if (sscanf(v, "%lu", &n) != 1 ||
		    strcmp(v + strspn(v, "0123456789"), "k") || (n & (n - 1)) ||
		    n < 1 || n > 32)
			return -EINVAL;
		m->fft_k = (uint8_t)n;
		return 0;
	}
	if (mux_number(v, UINT32_MAX, &n))
		return -EINVAL;
	if (!strcmp(key, "tsid") && n <= 0xffff)
		m->tsid = (uint16_t)n;
	else if (!strcmp(key, "onid") && n <= 0xffff)
		m->onid = (uint16_t)n;
	else if (!strcmp(key, "nid") && n <= 0xffff)
		m->nid = (uint16_t)n;
	else if (!strcmp(key, "symbol_rate") && n >= 1000)
		m->symbol_rate = (uint32_t)n;
	else if (!strcmp(key, "bitrate") && n >= 100000)
		m->bitrate = (uint32_t)n;
	else
		return -EINVAL;
	return 0;
}

int sim_mux_parse(char *fields, struct sim_carrier *c, char *why, size_t whylen)
{
	struct sim_mux_params m = c->mux;
	char *tok;

	m.bitrate = 0; /* computed below unless given */
	while ((tok = mux_token(&fields))) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok || !eq[1]) {
			snprintf(why, whylen, "MUX: '%s' is not key=value",
				 tok);
			return -EINVAL;
		}
		*eq = '\0';
		if (mux_field(tok, eq + 1, &m)) {
			snprintf(why, whylen, "MUX: bad %s '%s'", tok, eq + 1);
			return -EINVAL;
		}
	}
	m.bitrate = sim_mux_bitrate(c->delsys, c->bandwidth, &m);
	if (!m.bitrate) {
		snprintf(why, whylen, "MUX: no bitrate (give bitrate=)");
		return -EINVAL;
	}
	c->mux = m;
	return 0;
}

/* The quoted name ending the line; only a comment may follow it. */
static int service_name(char *s, char *name, size_t len)
{
	char *end;

	while (*s && isspace((unsigned char)*s))
		s++;
	if (*s != '"' || !(end = strchr(s + 1, '"')))
		return -EINVAL;
	for (char *t = end + 1; *t && *t != '#'; t++)
		if (!isspace((unsigned char)*t))
			return -EINVAL;
	if (end == s + 1 || (size_t)(end - s - 1) >= len)
		return -EINVAL;
	memcpy(name, s + 1, (size_t)(end - s - 1));
	name[end - s - 1] = '\0';
	return 0;
}

static int service_type(const char *t, uint8_t *type)
{
	if (!strcmp(t, "tv"))
		*type = SIM_SERVICE_TV;
	else if (!strcmp(t, "hd"))
		*type = SIM_SERVICE_HD;
	else if (!strcmp(t, "radio"))
		*type = SIM_SERVICE_RADIO;
	else
		return -EINVAL;
	return 0;
}

static int service_pid(const char *tok, bool optional, uint16_t *pid)
{
	unsigned long n;

	if (optional && !strcmp(tok, "-")) {
		*pid = 0;
		return 0;
	}
	if (mux_number(tok, MUX_PID_MAX, &n) || n < MUX_PID_MIN)
		return -EINVAL;
	*pid = (uint16_t)n;
	return 0;
}

/* Service ids and PIDs are unique within the multiplex. */
static const char *service_clash(const struct sim_rf_env *env,
				 const struct sim_carrier *c,
				 const struct sim_service *s)
{
	uint16_t mine[3] = {s->pmt_pid, s->video_pid, s->audio_pid};

	if (mine[0] == mine[2] || mine[0] == mine[1] || mine[1] == mine[2])
		return "PIDs of the service clash";
	for (uint32_t i = 0; i < c->nservices; i++) {
		const struct sim_service *o =
		    &env->services[c->first_service + i];
		uint16_t theirs[3] = {o->pmt_pid, o->video_pid, o->audio_pid};

		if (o->sid == s->sid)
			return "service id used twice in the multiplex";
		for (int a = 0; a < 3; a++)
			for (int b = 0; b < 3; b++)
				if (mine[a] && mine[a] == theirs[b])
					return "PID used twice in the "
					       "multiplex";
	}
	return NULL;
}

static int service_fields(char **cursor, struct sim_service *s)
{
	const char *tok[6];
	unsigned long sid, lcn;

	for (int i = 0; i < 6; i++)
		if (!(tok[i] = mux_token(cursor)))
			return -EINVAL;
	if (mux_number(tok[0], 0xffff, &sid) || !sid ||
	    mux_number(tok[1], MUX_LCN_MAX, &lcn) ||
	    service_type(tok[2], &s->type) ||
	    service_pid(tok[3], false, &s->pmt_pid) ||
	    service_pid(tok[4], s->type == SIM_SERVICE_RADIO, &s->video_pid) ||
	    service_pid(tok[5], false, &s->audio_pid))
		return -EINVAL;
	if (s->type != SIM_SERVICE_RADIO && !s->video_pid)
		return -EINVAL;
	s->sid = (uint16_t)sid;
	s->lcn = (uint16_t)lcn;
	return service_name(*cursor, s->name, sizeof(s->name));
}

int sim_service_parse(char *fields, struct sim_rf_env *env,
		      struct sim_carrier *c, char *why, size_t whylen)
{
	struct sim_service s = {0};
	const char *clash;

	if (service_fields(&fields, &s)) {
		snprintf(why, whylen,
			 "SERVICE: want sid lcn tv|hd|radio pmt_pid "
			 "video_pid|- audio_pid \"name\" (PIDs 0x20..0x1ffe, "
			 "LCN 0..1023)");
		return -EINVAL;
	}
	if ((clash = service_clash(env, c, &s))) {
		snprintf(why, whylen, "SERVICE %u: %s", s.sid, clash);
		return -EINVAL;
	}
	if (env->nservices >= SIM_RF_MAX_SERVICES ||
	    c->nservices >= SIM_RF_MUX_MAX_SERVICES) {
		snprintf(why, whylen,
			 "too many services (%d a multiplex, %d "
			 "in all)",
			 SIM_RF_MUX_MAX_SERVICES, SIM_RF_MAX_SERVICES);
		return -EINVAL;
	}
	env->services[env->nservices++] = s;
	c->nservices++;
	return 0;
}

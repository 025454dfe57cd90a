// SPDX-License-Identifier: MIT
/*
 * ts_mux.c - one simulated multiplex as a constant-rate transport stream.
 *
 * Each packet slot goes to the first of: a table being sent or due (PAT,
 * PMTs, SDT, NIT, TDT, in that order), a PCR due on a service's PCR PID
 * (an adaptation-field-only packet, so the interval holds whatever the
 * clip carries), the service whose next ES packet is most overdue, and
 * otherwise a null packet.  Clip packets get the service's PIDs, the
 * PID's continuity counter, timestamps moved onto the stream's time base
 * (a new loop adds the clip's length), and PCRs restamped with the time
 * the slot really leaves.
 */
#include "ts_mux.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ts_pkt.h"
#include "ts_psi.h"

#define MUX_MS          (TS_CLOCK / 1000)
#define MUX_PACKET_27M  (TS_CLOCK * TS_PACKET * 8) /* ticks x bit/s */
#define MUX_MAX_LAG     (TS_CLOCK / 2)
#define MUX_EMPTY_VIDEO (40 * MUX_MS) /* 25 Hz */
#define MUX_EMPTY_AUDIO (24 * MUX_MS) /* MP2 frames at 48 kHz */
#define MUX_PTS_DELAY   (400 * MUX_MS)

struct mux_table {
	struct ts_psi_table t;
	uint64_t period, next_due; /* 27 MHz */
	size_t pos;                /* next packet; t.npackets: idle */
	uint8_t cc;
};

struct mux_service {
	const struct sim_service *svc;
	size_t env_index;
	const struct ts_card *card; /* NULL: empty PES */
	size_t card_pos;
	uint64_t loop_base; /* stream time of the clip's due 0, this loop */
	uint64_t next_video, next_audio, next_pcr;
	uint16_t pcr_pid;
	uint8_t cc_video, cc_audio;
};

struct ts_mux {
	const struct sim_rf_env *env;
	const struct sim_carrier *carrier;
	int carrier_index;
	struct ts_cards *cards;
	uint32_t bitrate;
	uint64_t clock;     /* stream time of the next packet, 27 MHz */
	uint64_t step, rem; /* per packet: whole ticks, remainder / bitrate */
	uint64_t acc;
	uint64_t pcr_base; /* PCR at stream time 0 */
	size_t ntables;
	struct mux_table *tables; /* PAT, PMTs, SDT, NIT, TDT */
	size_t nservices;
	struct mux_service *services;
	double per; /* packet error rate */
	uint32_t rng;
	struct ts_mux_stats stats;
};

static uint32_t mux_rand(struct ts_mux *m)
{
	uint32_t x = m->rng ? m->rng : 0x9E3779B9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	m->rng = x;
	return x;
}

static int mux_tables(struct ts_mux *m)
{
	const struct sim_carrier *c = m->carrier;
	const struct sim_service *svcs = &m->env->services[c->first_service];
	size_t n = 0;
	int rc = 0;

	m->ntables = c->nservices + 4;
	m->tables = calloc(m->ntables, sizeof(*m->tables));
	if (!m->tables)
		return -1;
	rc |= ts_psi_pat(c, svcs, &m->tables[n].t);
	m->tables[n++].period = TS_MUX_PAT_MS * MUX_MS;
	for (uint32_t i = 0; i < c->nservices; i++) {
		rc |= ts_psi_pmt(c, &svcs[i], &m->tables[n].t);
		m->tables[n++].period = TS_MUX_PMT_MS * MUX_MS;
	}
	rc |= ts_psi_sdt(c, svcs, &m->tables[n].t);
	m->tables[n++].period = TS_MUX_SDT_MS * MUX_MS;
	rc |= ts_psi_nit(c, svcs, &m->tables[n].t);
	m->tables[n++].period = TS_MUX_NIT_MS * MUX_MS;
	m->tables[n].t.pid = TS_PID_TDT; /* made when due */
	m->tables[n++].period = TS_MUX_TDT_MS * MUX_MS;
	for (size_t i = 0; i < n; i++)
		m->tables[i].pos = m->tables[i].t.npackets;
	return rc ? -1 : 0;
}

struct ts_mux *ts_mux_new(const struct sim_rf_env *env, int carrier,
			  struct ts_cards *cards, uint32_t seed)
{
	struct ts_mux *m;

	if (carrier < 0 || (size_t)carrier >= env->count ||
	    !env->carriers[carrier].digital ||
	    !env->carriers[carrier].mux.bitrate)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->env = env;
	m->carrier = &env->carriers[carrier];
	m->carrier_index = carrier;
	m->cards = cards;
	m->bitrate = m->carrier->mux.bitrate;
	m->step = MUX_PACKET_27M / m->bitrate;
	m->rem = MUX_PACKET_27M % m->bitrate;
	m->rng = seed * 2654435761u + 1;
	m->pcr_base = (uint64_t)mux_rand(m) * 300;
	m->nservices = m->carrier->nservices;
	m->services =
	    calloc(m->nservices ? m->nservices : 1, sizeof(*m->services));
	if (!m->services || mux_tables(m)) {
		ts_mux_free(m);
		return NULL;
	}
	for (size_t i = 0; i < m->nservices; i++) {
		struct mux_service *s = &m->services[i];

		s->env_index = m->carrier->first_service + i;
		s->svc = &env->services[s->env_index];
		s->pcr_pid =
		    s->svc->video_pid ? s->svc->video_pid : s->svc->audio_pid;
		s->next_audio = MUX_EMPTY_AUDIO / 2;
		s->card = ts_cards_get(cards, s->env_index);
	}
	return m;
}

void ts_mux_free(struct ts_mux *m)
{
	if (!m)
		return;
	for (size_t i = 0; m->tables && i < m->ntables; i++)
		ts_psi_table_free(&m->tables[i].t);
	free(m->tables);
	free(m->services);
	free(m);
}

int ts_mux_carrier(const struct ts_mux *m)
{
	return m->carrier_index;
}

uint32_t ts_mux_bitrate(const struct ts_mux *m)
{
	return m->bitrate;
}

void ts_mux_set_margin(struct ts_mux *m, double margin_db)
{
	if (margin_db < 0.0)
		margin_db = 0.0;
	m->per = margin_db < 6.0 ? 0.1 * pow(10.0, -margin_db / 1.5) : 0.0;
}

void ts_mux_get_stats(const struct ts_mux *m, struct ts_mux_stats *st)
{
	*st = m->stats;
}

/* ---- tables ---- */

static void mux_table_send(struct mux_table *t, uint8_t *p)
{
	memcpy(p, t->t.packets + t->pos++ * TS_PACKET, TS_PACKET);
	ts_set_cc(p, t->cc++);
}

static bool mux_table_packet(struct ts_mux *m, uint8_t *p, time_t utc)
{
	for (size_t i = 0; i < m->ntables; i++) {
		struct mux_table *t = &m->tables[i];

		if (t->pos < t->t.npackets) {
			mux_table_send(t, p);
			return true;
		}
		if (m->clock < t->next_due)
			continue;
		t->next_due += t->period;
		if (t->next_due <= m->clock)
			t->next_due = m->clock + t->period;
		if (t->t.pid == TS_PID_TDT) {
			ts_psi_table_free(&t->t);
			if (ts_psi_tdt(utc, &t->t))
				continue;
		}
		t->pos = 0;
		if (t->t.npackets) {
			mux_table_send(t, p);
			return true;
		}
	}
	return false;
}

/* ---- PCR ---- */

static bool mux_pcr_packet(struct ts_mux *m, uint8_t *p)
{
	for (size_t i = 0; i < m->nservices; i++) {
		struct mux_service *s = &m->services[i];
		uint8_t cc = s->svc->video_pid ? s->cc_video : s->cc_audio;

		if (m->clock < s->next_pcr)
			continue;
		/* no payload: the counter keeps the last packet's value */
		ts_make_pcr_packet(p, s->pcr_pid, (uint8_t)(cc - 1),
				   (m->pcr_base + m->clock) % TS_PCR_MODULUS);
		s->next_pcr = m->clock + TS_MUX_PCR_MS * MUX_MS;
		return true;
	}
	return false;
}

/* ---- ES: the test card, or empty PES ---- */

static uint64_t mux_es_due(const struct mux_service *s)
{
	if (s->card)
		return s->loop_base + s->card->due[s->card_pos];
	if (!s->svc->video_pid || s->next_audio < s->next_video)
		return s->next_audio;
	return s->next_video;
}

/* A PES header with no data: the timestamps, stuffing before it. */
static void mux_empty_pes(struct ts_mux *m, struct mux_service *s, uint8_t *p)
{
	bool video = s->svc->video_pid && s->next_video <= s->next_audio;
	uint64_t due = video ? s->next_video : s->next_audio;
	uint64_t pts = (m->pcr_base + due + MUX_PTS_DELAY) / 300;
	uint8_t pes[19] = {0,
			   0,
			   1,
			   video ? 0xe0 : 0xc0,
			   0,
			   video ? 13 : 8,
			   0x80,
			   video ? 0xc0 : 0x80,
			   video ? 10 : 5};
	size_t len = video ? 19 : 14;
	uint16_t pid = video ? s->svc->video_pid : s->svc->audio_pid;

	ts_put_timestamp(pes + 9, video ? 3 : 2, pts);
	if (video)
		ts_put_timestamp(pes + 14, 1, pts - MUX_EMPTY_VIDEO / 300);
	memset(p, 0xff, TS_PACKET);
	p[0] = TS_SYNC;
	p[1] = (uint8_t)(0x40 | (pid >> 8));
	p[2] = (uint8_t)pid;
	p[3] = (uint8_t)(0x30 | ((video ? s->cc_video++ : s->cc_audio++) & 15));
	p[4] = (uint8_t)(TS_PACKET - 5 - len);
	p[5] = 0x00;
	memcpy(p + TS_PACKET - len, pes, len);
	if (video)
		s->next_video += MUX_EMPTY_VIDEO;
	else
		s->next_audio += MUX_EMPTY_AUDIO;
	/* the clip may be ready now: it starts from this moment */
	if ((s->card = ts_cards_get(m->cards, s->env_index))) {
		s->card_pos = 0;
		s->loop_base = m->clock;
	}
}

static void mux_card_packet(struct ts_mux *m, struct mux_service *s, uint8_t *p)
{
	const uint8_t *src = s->card->packets + s->card_pos * TS_PACKET;
	bool video = ts_pid(src) == TS_CARD_VIDEO_PID;
	uint64_t shift = (m->pcr_base + s->loop_base) / 300;
	int off;

	memcpy(p, src, TS_PACKET);
	ts_set_pid(p, video ? s->svc->video_pid : s->svc->audio_pid);
	if (ts_has_payload(p))
		ts_set_cc(p, video ? s->cc_video++ : s->cc_audio++);
	else
		ts_set_cc(p,
			  (uint8_t)((video ? s->cc_video : s->cc_audio) - 1));
	if (ts_has_pcr(p)) {
		ts_put_pcr(p, (m->pcr_base + m->clock) % TS_PCR_MODULUS);
		s->next_pcr = m->clock + TS_MUX_PCR_MS * MUX_MS;
	}
	off = ts_payload_offset(p);
	if (off >= 0 && ts_payload_start(p) && off + 19 <= TS_PACKET &&
	    !p[off] && !p[off + 1] && p[off + 2] == 1) {
		uint8_t *pes = p + off;

		if (pes[7] & 0x80)
			ts_put_timestamp(pes + 9, (pes[7] & 0x40) ? 3 : 2,
					 ts_get_timestamp(pes + 9) + shift);
		if ((pes[7] & 0xc0) == 0xc0)
			ts_put_timestamp(pes + 14, 1,
					 ts_get_timestamp(pes + 14) + shift);
	}
	if (++s->card_pos == s->card->npackets) {
		s->card_pos = 0;
		s->loop_base += TS_CARD_DURATION_27M;
	}
}

static bool mux_es_packet(struct ts_mux *m, uint8_t *p)
{
	struct mux_service *best = NULL;
	uint64_t best_due = 0;

	for (size_t i = 0; i < m->nservices; i++) {
		uint64_t due = mux_es_due(&m->services[i]);

		if (due <= m->clock && (!best || due < best_due)) {
			best = &m->services[i];
			best_due = due;
		}
	}
	if (!best)
		return false;
	/* Overloaded (clips above the multiplex's rate): skip ahead rather
	 * than fall ever further behind. */
	if (best->card && best_due + MUX_MAX_LAG < m->clock)
		best->loop_base += m->clock - best_due;
	if (best->card)
		mux_card_packet(m, best, p);
	else
		mux_empty_pes(m, best, p);
	m->stats.es_packets++;
	return true;
}

/* ---- errors and the packet loop ---- */

static void mux_errors(struct ts_mux *m, uint8_t *p)
{
	double r;

	if (!(m->per > 0.0))
		return;
	r = (double)mux_rand(m) / 4294967296.0;
	if (r >= m->per)
		return;
	if (r < m->per / 2) {
		p[1] |= 0x80;
		m->stats.tei_packets++;
		return;
	}
	if (ts_pid(p) == TS_PID_NULL)
		return;
	if (ts_has_payload(p))
		m->stats.cc_errors++;
	ts_make_null_packet(p);
}

void ts_mux_generate(struct ts_mux *m, uint8_t *out, size_t n, time_t utc)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = out + i * TS_PACKET;

		if (!mux_table_packet(m, p, utc) && !mux_pcr_packet(m, p) &&
		    !mux_es_packet(m, p)) {
			ts_make_null_packet(p);
			m->stats.null_packets++;
		}
		mux_errors(m, p);
		m->stats.packets++;
		m->clock += m->step;
		m->acc += m->rem;
		if (m->acc >= m->bitrate) {
			m->acc -= m->bitrate;
			m->clock++;
		}
	}
}

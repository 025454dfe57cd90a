/* SPDX-License-Identifier: MIT */
/*
 * ts_mux.h - the transport stream of one simulated multiplex: tables on
 * their schedules, PCR, each service's test card (or empty PES), null
 * packets up to the multiplex's bitrate, and the packet errors a
 * demodulator lets through at a low CNR.
 *
 * The generator has no clock of its own: packet n leaves at n * 1504 /
 * bitrate seconds of stream time, and every PCR and timestamp follows
 * from that.  Its caller paces the calls to real time.
 */
#ifndef SIM_TS_MUX_H
#define SIM_TS_MUX_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "rf_env.h"
#include "ts_card.h"

/* Repetition periods, ms: EN 300 468 asks SDT and NIT at least every 2 s
 * and 10 s, TDT every 30 s; decoders like PAT/PMT every 100 ms and a PCR
 * every 40 ms at most (ISO/IEC 13818-1 2.7.2 says 100 ms). */
#define TS_MUX_PAT_MS 100
#define TS_MUX_PMT_MS 100
#define TS_MUX_SDT_MS 1000
#define TS_MUX_NIT_MS 2000
#define TS_MUX_TDT_MS 5000
#define TS_MUX_PCR_MS 30

struct ts_mux;

struct ts_mux_stats {
	uint64_t packets;      /* generated, all kinds */
	uint64_t null_packets; /* padding */
	uint64_t es_packets;   /* video and audio payload */
	uint64_t cc_errors;    /* packets lost on purpose (a CC gap follows) */
	uint64_t tei_packets;  /* transport_error_indicator set */
};

/*
 * The multiplex of env's carrier.  cards may be NULL (empty PES only).
 * The env and cards outlive the mux.  NULL on allocation failure or for a
 * carrier without a transport stream.
 */
struct ts_mux *ts_mux_new(const struct sim_rf_env *env, int carrier,
			  struct ts_cards *cards, uint32_t seed);
void ts_mux_free(struct ts_mux *mux);
int ts_mux_carrier(const struct ts_mux *mux);
uint32_t ts_mux_bitrate(const struct ts_mux *mux);
/*
 * The demodulator's margin over its lock threshold, dB: above 6 dB the
 * stream is quasi error free; below, a packet is errored with probability
 * 0.1 * 10^(-margin / 1.5) (half TEI-marked, half lost).
 */
void ts_mux_set_margin(struct ts_mux *mux, double margin_db);
/* The next n packets (n * 188 bytes) into out; utc stamps the TDT. */
void ts_mux_generate(struct ts_mux *mux, uint8_t *out, size_t n, time_t utc);
void ts_mux_get_stats(const struct ts_mux *mux, struct ts_mux_stats *st);

#endif /* SIM_TS_MUX_H */

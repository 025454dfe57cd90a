/* SPDX-License-Identifier: MIT */
/*
 * ts_card.h - the test card of each service: a short loopable MPEG-2 +
 * MP2 clip with the service's name in the picture, made once by ffmpeg
 * (lavfi testsrc2 + drawtext, sine tone; radio: the tone only) into a
 * cache directory, then loaded as the ES packets the multiplexer plays in
 * a loop.
 */
#ifndef SIM_TS_CARD_H
#define SIM_TS_CARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rf_env.h"

/* Every clip lasts this long: 60 video frames at 25 Hz and 100 MP2 frames
 * of 1152 samples at 48 kHz, so audio and video both loop seamlessly. */
#define TS_CARD_DURATION_27M (27000000ull * 12 / 5)
/* The PIDs the clip's muxer is told to use (ffmpeg -streamid). */
#define TS_CARD_VIDEO_PID 0x100
#define TS_CARD_AUDIO_PID 0x101

/* A loaded clip: its video and audio packets, in muxing order. */
struct ts_card {
	size_t npackets;
	uint8_t *packets; /* PIDs TS_CARD_*_PID; PTS/DTS relative to due 0 */
	uint64_t *due;    /* 27 MHz, when the clip's muxer sent the packet */
};

/* Parse a clip file.  0, -errno, or -EINVAL for a file that is not a
 * clip (no PCR, no packets). */
int ts_card_load(const char *path, struct ts_card **out);
void ts_card_free(struct ts_card *card);

/* The clips of every service of an environment, made on demand. */
struct ts_cards;

/* dir is created if missing.  NULL on allocation failure. */
struct ts_cards *ts_cards_new(const char *dir, const struct sim_rf_env *env,
			      int verbosity);
void ts_cards_free(struct ts_cards *cards);
/* The clip of the env's service index, or NULL while it is being made or
 * if it cannot be (no ffmpeg): then it is asked for. */
const struct ts_card *ts_cards_get(struct ts_cards *cards, size_t service);
/* Reap a finished ffmpeg and start the next one.  Returns true while
 * clips are being made (call again a little later). */
bool ts_cards_poll(struct ts_cards *cards);

#endif /* SIM_TS_CARD_H */

/* SPDX-License-Identifier: MIT */
/*
 * hdhr.h - the box's libhdhomerun face: discovery on UDP, the GETSET
 * control channel on TCP and the tuners' stream targets (UDP, RTP).
 *
 * Off unless the configuration's "hdhomerun" section enables it; it then
 * answers only peers in its allow list.  Loop thread only.
 */
#ifndef TUNERD_HDHR_H
#define TUNERD_HDHR_H

#include <stddef.h>
#include <stdint.h>

#include "tuner_stub.h"

struct daemon;
struct hdhr;

/*
 * Start the face on d's loop (after api_start()).  *out is NULL when the
 * configuration leaves it off.  0, or a negative errno (a port that
 * cannot be bound, -ENOMEM) after logging why.
 */
int hdhr_start(struct daemon *d, struct hdhr **out);
/* Close every connection and stream target (before api_stop()). */
void hdhr_stop(struct hdhr *h);

/*
 * Helpers the HTTP face shares.
 *
 * The tunerd tuner id of HDHomeRun tuner index (tuner0 is the first
 * tuner by id): 0, or -ENOENT.
 */
int hdhr_tuner_id(struct daemon *d, unsigned int index, uint32_t *id);
/* A free tuner: hdhr_tuner_pick() (hdhr_http.h), which the HTTP face and
 * any other "any tuner" request share. */
/* How many tuners the box answers for (TUNER_COUNT, discover.json). */
unsigned int hdhr_tuner_count(struct daemon *d);
/*
 * A /tunerN/channel value ("auto:474000000", "t8bw8:474000000",
 * "a8qam256-6900:346000000", "8vsb:..." or a number of channelmap) as
 * tstub params.  0, or -EINVAL with a sentence in *why.
 */
int hdhr_channel_params(const char *value, const char *channelmap,
			struct tstub_params *p, const char **why);

#endif /* TUNERD_HDHR_H */

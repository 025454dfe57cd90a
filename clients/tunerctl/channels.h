/* SPDX-License-Identifier: MIT */
/*
 * channels.h - the channel table of `tunerctl channels` and `tunerctl
 * scan`.
 */
#ifndef TUNERCTL_CHANNELS_H
#define TUNERCTL_CHANNELS_H

#include <jansson.h>

/*
 * A channel list ([{"name","lcn","service_id","type","params"}]) as a
 * table on stdout: LCN, NAME, SID, TYPE, MULTIPLEX.
 */
void ctl_print_channels(json_t *channels);

#endif

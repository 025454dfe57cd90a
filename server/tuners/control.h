/* SPDX-License-Identifier: MIT */
/*
 * control.h - the daemon's control channel to the stub: the INIT
 * handshake, LOAD_PLUGIN, ATTACH, DETACH, and reconnecting when the stub
 * goes away.  Loop thread only.
 */
#ifndef TUNERD_CONTROL_H
#define TUNERD_CONTROL_H

struct daemon;

#define CONTROL_RETRY_MS 500

/* Capabilities the daemon accepts from the stub's offer. */
#define CONTROL_ACCEPTED_CAPS                                                  \
	(TSTUB_CAP_RESEND | TSTUB_CAP_INTERRUPT | TSTUB_CAP_DEMOD_STATUS |     \
	 TSTUB_CAP_DVB_ADAPTER | TSTUB_CAP_CMD_BRACKET)

/* Open the control channel now, or keep retrying every 500 ms. */
int control_start(struct daemon *d);
/* Close it (shutdown); the tuners are the caller's. */
void control_stop(struct daemon *d);

#endif /* TUNERD_CONTROL_H */

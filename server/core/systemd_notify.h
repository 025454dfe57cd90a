/* SPDX-License-Identifier: MIT */
/*
 * systemd_notify.h - the daemon's side of systemd's Type=notify
 * protocol (sd_notify(3)):
 *   READY=1      once the stub is connected and the API listens,
 *   STATUS=...   what the daemon waits for or serves,
 *   WATCHDOG=1   from a loop timer at half of $WATCHDOG_USEC, so a loop
 *                that stops turning stops the pings and systemd
 *                restarts the daemon (WatchdogSec=),
 *   RELOADING=1  around a SIGHUP reload, then READY=1 again,
 *   STOPPING=1   at the shutdown.
 * Without $NOTIFY_SOCKET every call costs a getenv and sends nothing.
 * One daemon per process: the state is this file's.  Loop thread only.
 */
#ifndef TUNERD_SYSTEMD_NOTIFY_H
#define TUNERD_SYSTEMD_NOTIFY_H

struct daemon;

/*
 * After api_start() and before the loop runs: api names where the API
 * listens ("127.0.0.1:8080"), or is NULL when it does not.  READY=1 is
 * sent at once if the stub is already connected, else at its
 * "stub.connected" event.  Returns 0 or a negative errno.
 */
int systemd_notify_start(struct daemon *d, const char *api);
/* Before and after re-reading the configuration (err: its result). */
void systemd_notify_reloading(void);
void systemd_notify_reloaded(int err);
/* The loop is about to end: STOPPING=1. */
void systemd_notify_stopping(void);
/* Stop the pings and the subscription; before daemon_fini(). */
void systemd_notify_stop(void);

#endif /* TUNERD_SYSTEMD_NOTIFY_H */

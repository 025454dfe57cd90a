/* SPDX-License-Identifier: MIT */
/*
 * hdhr_device.h - the box's HDHomeRun identity: a device id that clients
 * accept (libhdhomerun checks its check digit) and that stays the same
 * across restarts, kept in the state directory's hdhomerun.json.
 */
#ifndef TUNERD_HDHR_DEVICE_H
#define TUNERD_HDHR_DEVICE_H

#include <stddef.h>
#include <stdint.h>

struct state_dir;

#define HDHR_DEVICE_DOC "hdhomerun"

/*
 * The model the box answers as, on every face (control /sys variables, HTTP
 * discover.json): a DVB-T HDHomeRun of the fourth generation.  Clients
 * pick channel maps and features by these names, so they are a real
 * device's; the version is the libhdhomerun release Debian 12 ships.
 */
#define HDHR_MODEL            "hdhomerun4_dvbt" /* /sys/model, FirmwareName */
#define HDHR_HWMODEL          "HDHR4-2DT"       /* /sys/hwmodel, ModelNumber */
#define HDHR_FIRMWARE_VERSION "20220303"

/*
 * The device id kept in sd, or a new random valid one written there
 * first (sd NULL: a new one, kept nowhere).  A stored id that fails the
 * check digit is replaced, with a log line.  0, or -errno of the write
 * (*out is valid even then: the box answers, under an id that will
 * change at the next start).
 */
int hdhr_device_id_load(struct state_dir *sd, uint32_t *out);
/* "1234ABCD": the form clients print and the HTTP face's "DeviceID". */
void hdhr_device_id_text(uint32_t id, char *buf, size_t len);

#endif /* TUNERD_HDHR_DEVICE_H */

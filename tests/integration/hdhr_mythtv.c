// SPDX-License-Identifier: MIT
/*
 * hdhr_mythtv - MythTV's HDHomeRun recorder sequence on libhdhomerun's
 * device API, for tests/integration/test_hdhr_device.py:
 *
 *   hdhr_mythtv DEVICE lock            take the lockkey, release it:
 *                                      "LOCK OK" or "LOCK REFUSED: why"
 *   hdhr_mythtv DEVICE record CHANNEL BYTES [hold]
 *        lockkey request, channel, filter, stream start to its own UDP
 *        port (the library's video socket), status polled until lock,
 *        BYTES of TS received ("RECEIVED n"), then stream stop and
 *        lockkey release ("RELEASED"); with hold it prints "HOLDING" and
 *        keeps lock and stream until killed (a client that vanishes).
 *
 * DEVICE is libhdhomerun's device string ("10.0.0.1-0": IP and tuner).
 * The output lines are the test's protocol; exit 0 on success.
 */
#include <libhdhomerun/hdhomerun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct hdhomerun_device_t *open_device(const char *str)
{
	struct hdhomerun_device_t *hd =
	    hdhomerun_device_create_from_str(str, NULL);

	if (!hd) {
		printf("BAD DEVICE %s\n", str);
		exit(2);
	}
	return hd;
}

static int lock_only(struct hdhomerun_device_t *hd)
{
	char *err = NULL;

	if (hdhomerun_device_tuner_lockkey_request(hd, &err) <= 0) {
		printf("LOCK REFUSED: %s\n", err ? err : "no answer");
		return 1;
	}
	printf("LOCK OK\n");
	hdhomerun_device_tuner_lockkey_release(hd);
	return 0;
}

/* Poll the status as MythTV does until lock (at most ~10 s). */
static int wait_lock(struct hdhomerun_device_t *hd)
{
	struct hdhomerun_tuner_status_t st;

	for (int i = 0; i < 100; i++) {
		if (hdhomerun_device_get_tuner_status(hd, NULL, &st) <= 0)
			return -1;
		if (st.lock_supported) {
			printf("LOCKED %s ss=%u snq=%u seq=%u\n", st.lock_str,
			       st.signal_strength, st.signal_to_noise_quality,
			       st.symbol_error_quality);
			return 0;
		}
		usleep(100000);
	}
	return -1;
}

static size_t receive(struct hdhomerun_device_t *hd, size_t want)
{
	size_t got = 0, n;

	/* At most ~30 s without data: the test's own bound. */
	for (int idle = 0; got < want && idle < 600;) {
		uint8_t *p = hdhomerun_device_stream_recv(hd, 1 << 20, &n);

		if (!p) {
			idle++;
			usleep(50000);
			continue;
		}
		idle = 0;
		got += n;
	}
	return got;
}

static int record(struct hdhomerun_device_t *hd, const char *channel,
		  size_t bytes, int hold)
{
	char *err = NULL;
	size_t got;

	if (hdhomerun_device_tuner_lockkey_request(hd, &err) <= 0) {
		printf("LOCK REFUSED: %s\n", err ? err : "no answer");
		return 1;
	}
	if (hdhomerun_device_set_tuner_channel(hd, channel) <= 0 ||
	    hdhomerun_device_set_tuner_filter(hd, "0x0000-0x1fff") <= 0) {
		printf("TUNE FAILED\n");
		return 1;
	}
	if (wait_lock(hd)) {
		printf("NO LOCK\n");
		return 1;
	}
	if (hdhomerun_device_stream_start(hd) <= 0) {
		printf("STREAM FAILED\n");
		return 1;
	}
	got = receive(hd, bytes);
	printf("RECEIVED %zu\n", got);
	fflush(stdout);
	if (got < bytes)
		return 1;
	if (hold) {
		printf("HOLDING\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	hdhomerun_device_stream_stop(hd);
	hdhomerun_device_tuner_lockkey_release(hd);
	printf("RELEASED\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct hdhomerun_device_t *hd;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: hdhr_mythtv DEVICE lock | record "
				"CHANNEL BYTES [hold]\n");
		return 2;
	}
	hd = open_device(argv[1]);
	if (!strcmp(argv[2], "lock"))
		ret = lock_only(hd);
	else if (!strcmp(argv[2], "record") && argc >= 5)
		ret = record(hd, argv[3], strtoul(argv[4], NULL, 10),
			     argc > 5 && !strcmp(argv[5], "hold"));
	else
		ret = 2;
	hdhomerun_device_destroy(hd);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * DVB frontend commands, as an application would use the frontend:
 *   ktest fe tune A F FREQ_HZ [BW_HZ] [WAIT_MS]
 *       FE_SET_PROPERTY (DVB-T), then FE_READ_STATUS until FE_HAS_LOCK;
 *       exit 0 on lock
 *   ktest fe status A F [GO_FILE]
 *       open the frontend (and create GO_FILE.open), wait for GO_FILE
 *       to exist, then one FE_READ_STATUS; prints its errno and time.
 *       SIGUSR1 interrupts it (no SA_RESTART).
 *   ktest fe nolock A F FREQ_HZ [WAIT_MS]
 *       tune, and exit 0 when no lock was reported within WAIT_MS
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/dvb/frontend.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ktest.h"

static int fe_open(const char *adapter, const char *frontend)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/dev/dvb/adapter%s/frontend%s", adapter,
		 frontend);
	fd = open(path, O_RDWR);
	if (fd < 0)
		fprintf(stderr, "ktest fe: %s: %s\n", path, strerror(errno));
	return fd;
}

static int fe_set_dvbt(int fd, uint32_t freq, uint32_t bw)
{
	struct dtv_property p[] = {
	    {.cmd = DTV_CLEAR},
	    {.cmd = DTV_DELIVERY_SYSTEM, .u.data = SYS_DVBT},
	    {.cmd = DTV_FREQUENCY, .u.data = freq},
	    {.cmd = DTV_BANDWIDTH_HZ, .u.data = bw},
	    {.cmd = DTV_MODULATION, .u.data = QAM_AUTO},
	    {.cmd = DTV_INVERSION, .u.data = INVERSION_AUTO},
	    {.cmd = DTV_TUNE},
	};
	struct dtv_properties props = {.num = sizeof(p) / sizeof(p[0]),
				       .props = p};

	if (ioctl(fd, FE_SET_PROPERTY, &props) < 0) {
		fprintf(stderr, "ktest fe: FE_SET_PROPERTY: %s\n",
			strerror(errno));
		return -errno;
	}
	return 0;
}

/* Poll FE_READ_STATUS until lock or wait_ms.  Returns 1 locked, 0 not,
 * and the last errno of FE_READ_STATUS in *last_err. */
static int fe_wait_lock(int fd, unsigned int wait_ms, int *last_err)
{
	uint64_t until = ktest_now_ms() + wait_ms;
	fe_status_t st = 0;

	*last_err = 0;
	do {
		if (ioctl(fd, FE_READ_STATUS, &st) < 0)
			*last_err = errno;
		else if (st & FE_HAS_LOCK)
			return 1;
		usleep(50000);
	} while (ktest_now_ms() < until);
	return 0;
}

static int fe_tune(char **argv, int argc, int want_lock)
{
	uint32_t freq = (uint32_t)strtoul(argv[2], NULL, 0);
	uint32_t bw = argc > 3 && want_lock
			  ? (uint32_t)strtoul(argv[3], NULL, 0)
			  : 8000000;
	const char *w = want_lock ? (argc > 4 ? argv[4] : NULL)
				  : (argc > 3 ? argv[3] : NULL);
	unsigned int wait_ms = w ? (unsigned int)strtoul(w, NULL, 0) : 5000;
	uint64_t t0 = ktest_now_ms();
	int fd, locked, err;

	fd = fe_open(argv[0], argv[1]);
	if (fd < 0)
		return 1;
	if (fe_set_dvbt(fd, freq, bw)) {
		close(fd);
		return 1;
	}
	locked = fe_wait_lock(fd, wait_ms, &err);
	printf("ktest fe: %u Hz: lock=%d after %llu ms (last error: %s)\n",
	       freq, locked, (unsigned long long)(ktest_now_ms() - t0),
	       err ? strerror(err) : "none");
	close(fd);
	return locked == want_lock ? 0 : 1;
}

static void fe_wait_file(const char *go)
{
	char opened[256];
	int fd;

	snprintf(opened, sizeof(opened), "%s.open", go);
	fd = open(opened, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	while (access(go, F_OK) != 0)
		usleep(20000);
}

static const char *errname(int err)
{
	switch (err) {
	case 0:
		return "OK";
	case ETIMEDOUT:
		return "ETIMEDOUT";
	case ECONNABORTED:
		return "ECONNABORTED";
	case ENOTCONN:
		return "ENOTCONN";
	case EINTR:
		return "EINTR";
	case ENODEV:
		return "ENODEV";
	case ENOENT:
		return "ENOENT";
	}
	return "other";
}

static void fe_on_signal(int sig)
{
	(void)sig;
}

static int fe_status(char **argv, int argc)
{
	struct sigaction sa = {.sa_handler = fe_on_signal};
	fe_status_t st = 0;
	uint64_t t0;
	int fd, r, err = 0;

	sigaction(SIGUSR1, &sa, NULL);
	fd = fe_open(argv[0], argv[1]);
	if (fd < 0)
		return 1;
	if (argc > 2)
		fe_wait_file(argv[2]);
	t0 = ktest_now_ms();
	r = ioctl(fd, FE_READ_STATUS, &st);
	if (r < 0)
		err = errno;
	printf(
	    "ktest fe: FE_READ_STATUS -> %s (%d) status 0x%x after %llu ms\n",
	    errname(err), err, (unsigned int)st,
	    (unsigned long long)(ktest_now_ms() - t0));
	close(fd);
	return 0;
}

int ktest_fe_main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "tune"))
		return fe_tune(argv + 2, argc - 2, 1);
	if (argc >= 5 && !strcmp(argv[1], "nolock"))
		return fe_tune(argv + 2, argc - 2, 0);
	if (argc >= 4 && !strcmp(argv[1], "status"))
		return fe_status(argv + 2, argc - 2);
	fprintf(stderr, "usage: ktest fe tune A F FREQ [BW] [WAIT_MS]\n"
			"       ktest fe nolock A F FREQ [WAIT_MS]\n"
			"       ktest fe status A F [GO_FILE]\n");
	return 2;
}

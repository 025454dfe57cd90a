// SPDX-License-Identifier: MIT
/*
 * tunerd-simbox - the simulated box: plays the kernel module's part for a
 * tunerd daemon, with simulated bridges, chips and an RF environment.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "box.h"
#include "tunerd_version.h"
#include "xc3028_fwgen.h"

#define SIMBOX_DEFAULT_TUNERS "mt2060,qt1010,xc3028,mt2060"

struct simbox_opts {
	struct sim_box_config cfg;
	struct sim_box_bridge bridges[SIM_BOX_TUNERS_MAX];
	char names[SIM_BOX_TUNERS_MAX][32];
	char stub_path[PATH_MAX];
	char app_path[PATH_MAX];
	char fw_path[PATH_MAX];
	const char *tuners;
};

static void usage(FILE *f, const char *prog)
{
	fprintf(
	    f,
	    "usage: %s [options]\n"
	    "  --socket PATH       stub socket for the daemon (default\n"
	    "                      $XDG_RUNTIME_DIR/tunerd/sim.sock or "
	    "/run/tunerd/sim.sock)\n"
	    "  --app-socket PATH   JSON-lines socket for applications "
	    "(default: app.sock\n"
	    "                      beside the stub socket)\n"
	    "  --tuners LIST       chip models, comma-separated; NAME:ID "
	    "announces chip id ID\n"
	    "                      (default %s)\n"
	    "  --env FILE          RF environment (default: empty "
	    "spectrum)\n"
	    "  --firmware FILE     XC3028 firmware (default: a synthetic "
	    "one beside the socket)\n"
	    "  --i2c-khz N         I2C bus clock, 0 = instant (default "
	    "400)\n"
	    "  --settle-scale X    chip settle times vs hardware (default "
	    "1.0)\n"
	    "  --deadline-ms N     request deadline (default %d)\n"
	    "  --trace FILE        log every I2C segment\n"
	    "  --nak-rate X        NAK probability per I2C segment, 0..1\n"
	    "  --seed N            randomness seed (default 1)\n"
	    "  --card-dir DIR      test card clips made by ffmpeg (default: "
	    "tscard/ beside\n"
	    "                      the socket)\n"
	    "  --no-card           streams carry empty PES, no test card\n"
	    "  -v                  more logging (repeat for every "
	    "message)\n"
	    "  -h, --help          this text\n"
	    "  --version           the version\n"
	    "Tuner N streams its multiplex on PATH.tsN (PATH: the stub "
	    "socket) while it locks.\n",
	    prog, SIMBOX_DEFAULT_TUNERS, SIM_BOX_DEADLINE_MS_DEFAULT);
}

static int parse_num(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

/* "mt2060,qt1010:0xF001,...": bridge N has adapter N, client id N + 1.
 * A refused list is named with its reason in why. */
static int parse_tuners(struct simbox_opts *o, char *why, size_t whylen)
{
	const char *s = o->tuners;
	size_t n = 0;

	while (*s) {
		size_t len = strcspn(s, ",");
		char *colon, *end;

		if (n == SIM_BOX_TUNERS_MAX) {
			snprintf(why, whylen,
				 "more than %d tuners (the box's "
				 "limit)",
				 SIM_BOX_TUNERS_MAX);
			return -E2BIG;
		}
		if (!len || len >= sizeof(o->names[0])) {
			snprintf(why, whylen, "tuner %zu: %s", n + 1,
				 len ? "name longer than 31 characters"
				     : "empty name");
			return -EINVAL;
		}
		memcpy(o->names[n], s, len);
		o->names[n][len] = '\0';
		colon = strchr(o->names[n], ':');
		if (colon) {
			*colon = '\0';
			errno = 0;
			o->bridges[n].chip_id =
			    (uint32_t)strtoul(colon + 1, &end, 0);
			if (errno || end == colon + 1 || *end) {
				snprintf(why, whylen,
					 "tuner %zu: bad chip id "
					 "'%s'",
					 n + 1, colon + 1);
				return -EINVAL;
			}
		}
		o->bridges[n].chip = o->names[n];
		o->bridges[n].adapter = (uint32_t)n;
		n++;
		s += len;
		if (*s == ',')
			s++;
	}
	o->cfg.bridges = o->bridges;
	o->cfg.nbridges = n;
	if (!n)
		snprintf(why, whylen, "no tuners");
	return n ? 0 : -EINVAL;
}

static int parse_option(struct simbox_opts *o, int opt, const char *arg)
{
	double v;

	switch (opt) {
	case 's':
		snprintf(o->stub_path, sizeof(o->stub_path), "%s", arg);
		return 0;
	case 'a':
		snprintf(o->app_path, sizeof(o->app_path), "%s", arg);
		return 0;
	case 't':
		o->tuners = arg;
		return 0;
	case 'e':
		o->cfg.env_path = arg;
		return 0;
	case 'f':
		o->cfg.firmware_path = arg;
		return 0;
	case 'T':
		o->cfg.trace_path = arg;
		return 0;
	case 'k':
		if (parse_num(arg, 0, 100000, &v))
			return -EINVAL;
		o->cfg.i2c_khz = (unsigned int)v;
		return 0;
	case 'S':
		return parse_num(arg, 0, 1000, &o->cfg.settle_scale);
	case 'd':
		if (parse_num(arg, 1, 3600000, &v))
			return -EINVAL;
		o->cfg.deadline_ms = (unsigned int)v;
		return 0;
	case 'n':
		return parse_num(arg, 0, 1, &o->cfg.nak_rate);
	case 'r':
		if (parse_num(arg, 0, UINT32_MAX, &v))
			return -EINVAL;
		o->cfg.seed = (uint32_t)v;
		return 0;
	case 'v':
		o->cfg.verbosity++;
		return 0;
	case 'C':
		o->cfg.card_dir = arg;
		return 0;
	case 'N':
		o->cfg.no_card = true;
		return 0;
	}
	return -EINVAL;
}

static int parse_args(struct simbox_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"app-socket", required_argument, NULL, 'a'},
	    {"tuners", required_argument, NULL, 't'},
	    {"env", required_argument, NULL, 'e'},
	    {"firmware", required_argument, NULL, 'f'},
	    {"i2c-khz", required_argument, NULL, 'k'},
	    {"settle-scale", required_argument, NULL, 'S'},
	    {"deadline-ms", required_argument, NULL, 'd'},
	    {"trace", required_argument, NULL, 'T'},
	    {"nak-rate", required_argument, NULL, 'n'},
	    {"seed", required_argument, NULL, 'r'},
	    {"card-dir", required_argument, NULL, 'C'},
	    {"no-card", no_argument, NULL, 'N'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {0},
	};
	char why[128];
	int opt;

	while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout, argv[0]);
			exit(0);
		}
		if (opt == 'V') {
			fputs(TUNERD_VERSION_LINE("tunerd-simbox"), stdout);
			exit(0);
		}
		if (opt == '?' || parse_option(o, opt, optarg)) {
			if (opt != '?')
				fprintf(stderr, "%s: bad value for %s\n",
					argv[0], argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0],
			argv[optind]);
		return -EINVAL;
	}
	if (parse_tuners(o, why, sizeof(why))) {
		fprintf(stderr, "%s: --tuners: %s\n", argv[0], why);
		return -EINVAL;
	}
	return 0;
}

/* The directory of path, created if missing (the default run dir). */
static void dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, len, ".");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
	if (!dir[0])
		snprintf(dir, len, "/");
}

static void path_join(char *out, size_t len, const char *dir, const char *name)
{
	if (snprintf(out, len, "%s/%s", dir, name) >= (int)len)
		out[0] = '\0'; /* too long: refused when used */
}

static void default_paths(struct simbox_opts *o)
{
	const char *run = getenv("XDG_RUNTIME_DIR");
	char dir[PATH_MAX];

	if (!o->stub_path[0]) {
		if (run && *run)
			snprintf(dir, sizeof(dir), "%s/tunerd", run);
		else
			snprintf(dir, sizeof(dir), "/run/tunerd");
		mkdir(dir, 0755);
		path_join(o->stub_path, sizeof(o->stub_path), dir, "sim.sock");
	}
	dir_of(o->stub_path, dir, sizeof(dir));
	if (!o->app_path[0])
		path_join(o->app_path, sizeof(o->app_path), dir, "app.sock");
	o->cfg.stub_path = o->stub_path;
	o->cfg.app_path = o->app_path;
}

/* An XC3028 without --firmware gets a synthetic file beside the socket. */
static int ensure_firmware(struct simbox_opts *o, const char *prog)
{
	char dir[PATH_MAX], err[256];
	bool need = false;

	for (size_t i = 0; i < o->cfg.nbridges; i++)
		need |= strcasecmp(o->bridges[i].chip, "xc3028") == 0;
	if (!need || o->cfg.firmware_path)
		return 0;
	dir_of(o->stub_path, dir, sizeof(dir));
	path_join(o->fw_path, sizeof(o->fw_path), dir, "xc3028-v27.fw");
	if (xc3028_fwgen_write(o->fw_path, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return -EIO;
	}
	fprintf(stderr, "simbox: synthetic XC3028 firmware written to %s\n",
		o->fw_path);
	o->cfg.firmware_path = o->fw_path;
	return 0;
}

/*
 * Self-pipe: a handler works whichever thread the signal lands on (a
 * sanitizer runtime may have started threads that do not block it).
 */
static int signal_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
	unsigned char c = (unsigned char)sig;
	int saved = errno;

	if (write(signal_pipe[1], &c, 1) < 0) {
		/* full: a signal is pending already */
	}
	errno = saved;
}

static int signals_init(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* Each tuner holds a stub channel and a stream socket, each stream reader
 * one more: take the hard open-file limit, and say when even that is
 * short of what the tuners need at rest. */
static void raise_nofile(size_t ntuners, const char *prog)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)ntuners * 2 + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < need)
		fprintf(stderr,
			"%s: open file limit %llu is short of the %llu that "
			"%zu tuners need\n",
			prog, (unsigned long long)rl.rlim_cur,
			(unsigned long long)need, ntuners);
}

static void on_signal_pipe(void *arg)
{
	int *stop = arg;
	unsigned char sig = 0;

	if (read(signal_pipe[0], &sig, 1) == 1)
		fprintf(stderr, "simbox: signal %u, exiting\n", sig);
	*stop = 1;
}

/* The box's own wait is the only one: the signal pipe is in it, so a
 * wake-up (a transfer's request, its bus time's end) costs one system
 * call rather than a poll() and then the box's epoll_wait(). */
static int serve(struct sim_box *box)
{
	int stop = 0;

	if (sim_box_watch_fd(box, signal_pipe[0], on_signal_pipe, &stop))
		return -EIO;
	while (!stop)
		if (sim_box_run(box, -1) < 0)
			return -EIO;
	return 0;
}

int main(int argc, char **argv)
{
	static struct simbox_opts o = {
	    .cfg = {.i2c_khz = 400,
		    .settle_scale = 1.0,
		    .seed = 1,
		    .verbosity = 1},
	    .tuners = SIMBOX_DEFAULT_TUNERS,
	};
	struct sim_box *box;
	char err[512];
	int rc;

	if (parse_args(&o, argc, argv)) {
		usage(stderr, argv[0]);
		return 2;
	}
	default_paths(&o);
	raise_nofile(o.cfg.nbridges, argv[0]);
	if (ensure_firmware(&o, argv[0]))
		return 1;
	if (signals_init()) {
		perror("pipe");
		return 1;
	}
	box = sim_box_new(&o.cfg, err, sizeof(err));
	if (!box) {
		fprintf(stderr, "%s: %s\n", argv[0], err);
		return 1;
	}
	rc = serve(box);
	sim_box_free(box);
	return rc ? 1 : 0;
}

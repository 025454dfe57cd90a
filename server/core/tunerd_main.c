// SPDX-License-Identifier: MIT
/*
 * tunerd - the network tuner daemon: talks to the tuner stub (the kernel's
 * /dev/tuner or the simulated box), runs one worker process per tuner with
 * the chip's plugin, and serves the network API.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "eventbus.h"
#include "hdhr.h"
#include "log.h"
#include "loop.h"
#include "systemd_notify.h"
#include "tuner.h"
#include "tunerd_version.h"
#include "worker_zygote.h"

#ifndef TUNERD_PLUGIN_DIR
#define TUNERD_PLUGIN_DIR "/usr/local/lib/tunerd/plugins"
#endif
#ifndef TUNERD_FIRMWARE_DIR
#define TUNERD_FIRMWARE_DIR "/lib/firmware"
#endif
/* The installed dashboard (share/tunerd/web), served when present. */
#ifndef TUNERD_WEB_ROOT
#define TUNERD_WEB_ROOT "/usr/local/share/tunerd/web"
#endif

#define MAX_PLUGIN_DIRS 16
#define MAX_API_ARGS    32
#define OPT_API_BASE    1000

struct options {
	struct daemon_config cfg;
	const char *dirs[MAX_PLUGIN_DIRS + 1];
	int ndirs;
	int log_level;
	const char *state_dir; /* --state-dir */
	struct {
		const char *name, *value;
	} api[MAX_API_ARGS];
	int napi;
};

static const struct option core_opts[] = {
    {"stub", required_argument, NULL, 's'},
    {"plugin-dir", required_argument, NULL, 'p'},
    {"firmware-dir", required_argument, NULL, 'f'},
    {"deadline-ms", required_argument, NULL, 'd'},
    {"event-ring", required_argument, NULL, 'e'},
    {"event-ring-mib", required_argument, NULL, 'M'},
    {"event-ring-hours", required_argument, NULL, 'H'},
    {"name", required_argument, NULL, 'n'},
    {"state-dir", required_argument, NULL, 'S'},
    {"log-level", required_argument, NULL, 'l'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
};
#define CORE_OPTS ((int)(sizeof(core_opts) / sizeof(core_opts[0])))

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: tunerd [OPTION]...\n"
		"  --stub sim:PATH | kernel[:DEV]  the tuner stub (default "
		"kernel:/dev/tuner)\n"
		"  --plugin-dir DIR    chip plugins (repeatable; default %s)\n"
		"  --firmware-dir DIR  firmware files (default %s)\n"
		"  --deadline-ms MS    per-request deadline (default %d)\n"
		"  --event-ring N      events kept for catching up at most "
		"(default %u)\n"
		"  --event-ring-mib M  ... in M MiB at most (default 64)\n"
		"  --event-ring-hours H ... for H hours at most (default 24)\n"
		"  --name NAME         this box's name (default: host name)\n"
		"  --state-dir DIR     leases and params kept across restarts "
		"(default\n"
		"                      $STATE_DIRECTORY, else %s)\n"
		"  -v, --verbose       more log (repeatable)\n"
		"  --log-level LEVEL   err, warn, info or debug\n"
		"  -h, --help          this text\n"
		"  --version           the version\n"
		"The dashboard is served from %s when it is there\n"
		"and no --web-root is given (--web-root '' for none).\n",
		TUNERD_PLUGIN_DIR, TUNERD_FIRMWARE_DIR,
		DAEMON_DEFAULT_DEADLINE_MS, EVENTBUS_DEFAULT_RING,
		DAEMON_STATE_DIR, TUNERD_WEB_ROOT);
	for (const struct api_option *o = api_options; o->name; o++) {
		char left[64];

		snprintf(left, sizeof(left), "--%s%s%s", o->name,
			 o->has_arg ? " " : "",
			 o->has_arg && o->arg_name ? o->arg_name : "");
		fprintf(out, "  %-19s %s\n", left, o->help);
	}
}

static int parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_core(struct options *o, int c, const char *arg)
{
	unsigned long v;

	switch (c) {
	case 's':
		return stub_parse(arg, &o->cfg.stub) ? -1 : 0;
	case 'p':
		if (o->ndirs == MAX_PLUGIN_DIRS)
			return -1;
		o->dirs[o->ndirs++] = arg;
		return 0;
	case 'f':
		o->cfg.firmware_dir = arg;
		return 0;
	case 'd':
		if (parse_uint(arg, 10, 600000, &v))
			return -1;
		o->cfg.deadline_ms = (unsigned int)v;
		return 0;
	case 'e':
		if (parse_uint(arg, 16, 1 << 22, &v))
			return -1;
		o->cfg.event_ring = v;
		return 0;
	case 'M':
		if (parse_uint(arg, 1, 4096, &v))
			return -1;
		o->cfg.event_ring_bytes = (size_t)v << 20;
		return 0;
	case 'H':
		if (parse_uint(arg, 1, 24 * 365, &v))
			return -1;
		o->cfg.event_ring_keep_ms = (int64_t)v * 3600 * 1000;
		return 0;
	case 'n':
		o->cfg.name = arg;
		return 0;
	case 'S':
		o->state_dir = arg;
		return 0;
	case 'l':
		o->log_level = log_parse_level(arg);
		return o->log_level < 0 ? -1 : 0;
	case 'v':
		o->log_level = o->log_level < LL_INFO ? LL_INFO : LL_DEBUG;
		return 0;
	}
	return -1;
}

/* getopt_long over the core options and the network layer's. */
static int parse_args(int argc, char **argv, struct options *o)
{
	struct option opts[CORE_OPTS + 64 + 1];
	int n = CORE_OPTS, c, idx;

	memcpy(opts, core_opts, sizeof(core_opts));
	for (int i = 0; api_options[i].name && n < CORE_OPTS + 64; i++)
		opts[n++] = (struct option){
		    api_options[i].name,
		    api_options[i].has_arg ? required_argument : no_argument,
		    NULL, OPT_API_BASE + i};
	opts[n] = (struct option){0};
	while ((c = getopt_long(argc, argv, "vh", opts, &idx)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == 'V') {
			fputs(TUNERD_VERSION_LINE("tunerd"), stdout);
			exit(0);
		}
		if (c >= OPT_API_BASE && o->napi < MAX_API_ARGS) {
			o->api[o->napi].name =
			    api_options[c - OPT_API_BASE].name;
			o->api[o->napi++].value = optarg;
			continue;
		}
		if (c == '?' || parse_core(o, c, optarg)) {
			if (c != '?')
				fprintf(stderr,
					"tunerd: bad value for --%s: "
					"%s\n",
					opts[idx].name, optarg ? optarg : "");
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tunerd: unexpected argument %s\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

/* The value of a network option given on the command line, or NULL. */
static const char *api_arg(const struct options *o, const char *name)
{
	const char *value = NULL;

	for (int i = 0; i < o->napi; i++)
		if (!strcmp(o->api[i].name, name))
			value = o->api[i].value; /* the last one wins */
	return value;
}

/*
 * An installed daemon serves the installed dashboard without being told
 * where it is; "--web-root ''" serves none.  Only the default may be
 * missing quietly (a build tree's daemon has none).
 */
static void default_web_root(struct options *o)
{
	const char *given = api_arg(o, "web-root");
	struct stat st;
	int n = 0;

	if (given && *given)
		return;
	for (int i = 0; i < o->napi; i++)
		if (strcmp(o->api[i].name, "web-root"))
			o->api[n++] = o->api[i];
	o->napi = n;
	if (!given && n < MAX_API_ARGS && stat(TUNERD_WEB_ROOT, &st) == 0 &&
	    S_ISDIR(st.st_mode)) {
		o->api[o->napi].name = "web-root";
		o->api[o->napi++].value = TUNERD_WEB_ROOT;
	}
}

static void on_signal(struct loop *l, int fd, unsigned int ev, void *arg)
{
	struct daemon *d = arg;
	struct signalfd_siginfo si;

	(void)ev;
	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return;
	if (si.ssi_signo == SIGCHLD) {
		tuners_reap(d);
		return;
	}
	if (si.ssi_signo == SIGHUP) {
		/* logrotate and "systemctl reload": never a stop. */
		log_info("%s: reloading the configuration",
			 strsignal((int)si.ssi_signo));
		systemd_notify_reloading();
		systemd_notify_reloaded(api_reload(d));
		return;
	}
	log_info("%s: shutting down", strsignal((int)si.ssi_signo));
	systemd_notify_stopping();
	d->stopping = 1;
	loop_stop(l);
}

/* Signals arrive through the loop (signalfd), so they are blocked first:
 * none is ever delivered to a handler. */
static int setup_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGHUP);
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, set, NULL) < 0)
		return -errno;
	return 0;
}

/*
 * Where the state is kept: --state-dir, else the config file's
 * "state_dir", else $STATE_DIRECTORY (systemd's StateDirectory=; the
 * first of a colon-separated list), else DAEMON_STATE_DIR.  Only that
 * last one may fail quietly (daemon_open_state()).
 */
static int open_state(struct daemon *d, const struct options *o)
{
	const char *env = getenv("STATE_DIRECTORY");
	char first[PATH_MAX];

	if (o->state_dir)
		return daemon_open_state(d, o->state_dir, "--state-dir");
	if (d->state_dir_config[0])
		return daemon_open_state(d, d->state_dir_config,
					 "the config file's state_dir");
	if (env && *env) {
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(env, ":"),
			 env);
		return daemon_open_state(d, first, "$STATE_DIRECTORY");
	}
	return daemon_open_state(d, DAEMON_STATE_DIR, NULL);
}

static int run(struct options *o, const sigset_t *sigs)
{
	struct daemon d;
	struct hdhr *hdhr = NULL;
	int sfd, ret = 1, err;

	err = daemon_init(&d, &o->cfg);
	if (err) {
		log_err("cannot initialise the daemon: %s", strerror(-err));
		return 1;
	}
	for (int i = 0; i < o->napi; i++)
		if (api_option(&d, o->api[i].name, o->api[i].value))
			goto out;
	if (open_state(&d, o)) {
		api_stop(&d); /* the options' state: nothing was started */
		goto out;
	}
	sfd = signalfd(-1, sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		log_err("signalfd: %s", strerror(errno));
		goto out;
	}
	if (loop_add_fd(d.loop, sfd, LOOP_READ, on_signal, &d)) {
		log_err("cannot watch signals");
		close(sfd);
		goto out;
	}
	log_info("tunerd " TUNERD_VERSION " %s starting (deadline %u ms, "
		 "%zu plugin dir(s))",
		 d.name, d.deadline_ms, (size_t)o->ndirs);
	err = daemon_start(&d);
	if (!err)
		err = api_start(&d);
	if (!err)
		err = hdhr_start(&d, &hdhr);
	if (err) {
		log_err("cannot start: %s", strerror(-err));
		api_stop(&d);
		goto out_sig;
	}
	err = systemd_notify_start(&d, api_arg(o, "listen"));
	if (err)
		log_err("systemd: cannot notify: %s", strerror(-err));
	else
		ret = loop_run(d.loop) ? 1 : 0;
	hdhr_stop(hdhr); /* its readers and leases first */
	systemd_notify_stop();
	api_stop(&d);
out_sig:
	loop_del_fd(d.loop, sfd);
	close(sfd);
out:
	daemon_fini(&d);
	log_info("stopped");
	return ret;
}

int main(int argc, char **argv)
{
	struct options o = {.log_level = LL_INFO};
	sigset_t sigs;
	int err, ret;

	stub_parse("kernel", &o.cfg.stub);
	if (parse_args(argc, argv, &o))
		return 2;
	if (!o.ndirs)
		o.dirs[o.ndirs++] = TUNERD_PLUGIN_DIR;
	o.dirs[o.ndirs] = NULL;
	o.cfg.plugin_dirs = o.dirs;
	if (!o.cfg.firmware_dir)
		o.cfg.firmware_dir = TUNERD_FIRMWARE_DIR;
	default_web_root(&o);
	log_set_level(o.log_level);
	log_detect_journal();
	if (setup_signals(&sigs)) {
		log_err("cannot block signals");
		return 1;
	}
	/* Before the daemon grows: workers are forked from this small copy. */
	err = worker_zygote_start();
	if (err)
		log_warn("no worker zygote (%s): workers are forked from the "
			 "daemon",
			 strerror(-err));
	ret = run(&o, &sigs);
	worker_zygote_stop();
	return ret;
}

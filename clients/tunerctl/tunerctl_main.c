// SPDX-License-Identifier: MIT
/*
 * tunerctl_main.c - tunerctl: the command line of one or many tunerd boxes.
 */
#include "tunerctl.h"
#include "util.h"

#include <curl/curl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tunerd_version.h"

#define DEFAULT_TIMEOUT_MS 10000L

static const char usage_text[] =
    "usage: tunerctl [--box URL]... [--config FILE] [--token TOKEN] "
    "[--json]\n"
    "                [--timeout S] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  ls                              every tuner of every box\n"
    "  status [BOX:]ID                 a tuner's fresh status\n"
    "  tune [BOX:]ID SYSTEM FREQ [--bandwidth HZ] [--symbol-rate SR]\n"
    "       [--standard STD] [--lease ID] [--wait-lock MS]\n"
    "                                  tune; FREQ in Hz or 474M, 88.8M, "
    "200k\n"
    "  tune [BOX:]ID --channel NAME | --lcn N [--lease ID] "
    "[--wait-lock MS]\n"
    "                                  tune to a channel of the box's "
    "list\n"
    "  sleep [BOX:]ID [--lease ID]     put a tuner to sleep\n"
    "  init [BOX:]ID [--lease ID]      wake and initialise a tuner\n"
    "  lease [BOX:]ID [--ttl S] [--priority N] [--holder NAME]\n"
    "                                  take a lease; prints its id\n"
    "  lease [BOX:]ID --renew ID [--ttl S]\n"
    "                                  renew a lease\n"
    "  release [BOX:]ID LEASE_ID       give a lease back\n"
    "  watch [--types T,...] [--tuner ID,...] [--count N] [--status]\n"
    "                                  live events of all boxes until "
    "Ctrl-C;\n"
    "                                  tuner.status only with --status "
    "or\n"
    "                                  when --types names it\n"
    "  stream [BOX:]ID [--pids P,... | --service SID] [--lease ID]\n"
    "         [--duration S] [--progress] > FILE.ts\n"
    "                                  the tuner's MPEG transport stream "
    "to\n"
    "                                  stdout until Ctrl-C; a rate line "
    "on\n"
    "                                  stderr when it is a terminal (or "
    "with\n"
    "                                  --progress): Mbit/s, bytes, "
    "elapsed\n"
    "  channels [BOX] [--dvbv5]        the box's channel list (--dvbv5: "
    "as a\n"
    "                                  dvbv5 channel file)\n"
    "  scan [BOX:]ID --band uhf --region eu | --freq HZ,... [--system "
    "SYS]\n"
    "       [--bandwidth HZ] [--lease ID]\n"
    "                                  scan for channels: progress on "
    "stderr,\n"
    "                                  the channels found on stdout; "
    "Ctrl-C\n"
    "                                  cancels the scan\n"
    "\n"
    "boxes: --box http://host:port (or NAME=URL, or a NAME from the "
    "config),\n"
    "  or --discover: the boxes on the LAN (DNS-SD _tunerd._tcp through "
    "avahi-daemon;\n"
    "  --timeout bounds the browse, default 3 s),\n"
    "  else $TUNERD_BOX (URLs, comma-separated), else the config file\n"
    "  (--config, default $XDG_CONFIG_HOME/tunerd/boxes.json or\n"
    "  ~/.config/tunerd/boxes.json: {\"boxes\":[{\"name\":..,\"url\":..,"
    "\"token\":..}]}).\n"
    "  BOX in BOX:ID is a box's name (host:port for a bare URL); it may be\n"
    "  left out when there is one box.\n"
    "token: --token, else the box's token in the config, else "
    "$TUNERD_TOKEN.\n"
    "--timeout S: per request (default 10; for tune plus --wait-lock; for\n"
    "  stream and scan until the box answers).\n"
    "--json: the JSON answers (ls: one array, each tuner with \"box\"; "
    "watch:\n"
    "  one event object per line, with \"box\"; scan: the finished "
    "scan).\n"
    "\n"
    "exit status:\n"
    "  0  ok (stream: stopped by Ctrl-C, --duration or a closed stdout)\n"
    "  1  the box answered with an error (tunerctl: BOX: CODE: MESSAGE)\n"
    "  2  usage error (command line, config file)\n"
    "  3  connection failed or timed out (stream: the box ended it)\n"
    "  4  lease conflict (409): the tuner is leased by someone else\n"
    "  5  not found (404): no such tuner, lease or channel\n"
    "  With several boxes, the first box that failed decides.\n";

enum opt_id {
	OPT_BOX = 'b',
	OPT_CONFIG = 'c',
	OPT_HELP = 'h',
	OPT_JSON = 'j',
	OPT_TOKEN = 't',
	OPT_TIMEOUT = 'T',
	OPT_DISCOVER = 'D', /* long only */
	OPT_BANDWIDTH = 256,
	OPT_SYMBOL_RATE,
	OPT_STANDARD,
	OPT_LEASE,
	OPT_WAIT_LOCK,
	OPT_TTL,
	OPT_PRIORITY,
	OPT_HOLDER,
	OPT_RENEW,
	OPT_TYPES,
	OPT_TUNER,
	OPT_COUNT,
	OPT_PIDS,
	OPT_SERVICE,
	OPT_PROGRESS,
	OPT_DURATION,
	OPT_DVBV5,
	OPT_BAND,
	OPT_REGION,
	OPT_FREQ,
	OPT_SYSTEM,
	OPT_CHANNEL,
	OPT_LCN,
	OPT_STATUS,
	OPT_VERSION,
};

static const struct option long_opts[] = {
    {"box", required_argument, NULL, OPT_BOX},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"token", required_argument, NULL, OPT_TOKEN},
    {"json", no_argument, NULL, OPT_JSON},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"discover", no_argument, NULL, OPT_DISCOVER},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {"bandwidth", required_argument, NULL, OPT_BANDWIDTH},
    {"symbol-rate", required_argument, NULL, OPT_SYMBOL_RATE},
    {"standard", required_argument, NULL, OPT_STANDARD},
    {"lease", required_argument, NULL, OPT_LEASE},
    {"wait-lock", required_argument, NULL, OPT_WAIT_LOCK},
    {"ttl", required_argument, NULL, OPT_TTL},
    {"priority", required_argument, NULL, OPT_PRIORITY},
    {"holder", required_argument, NULL, OPT_HOLDER},
    {"renew", required_argument, NULL, OPT_RENEW},
    {"types", required_argument, NULL, OPT_TYPES},
    {"tuner", required_argument, NULL, OPT_TUNER},
    {"count", required_argument, NULL, OPT_COUNT},
    {"pids", required_argument, NULL, OPT_PIDS},
    {"service", required_argument, NULL, OPT_SERVICE},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"dvbv5", no_argument, NULL, OPT_DVBV5},
    {"band", required_argument, NULL, OPT_BAND},
    {"region", required_argument, NULL, OPT_REGION},
    {"freq", required_argument, NULL, OPT_FREQ},
    {"system", required_argument, NULL, OPT_SYSTEM},
    {"channel", required_argument, NULL, OPT_CHANNEL},
    {"lcn", required_argument, NULL, OPT_LCN},
    {"status", no_argument, NULL, OPT_STATUS},
    {NULL, 0, NULL, 0},
};

/* Command options in the order of enum opt_id from OPT_BANDWIDTH. */
#define CMD_OPT_BIT(id) (1u << ((id)-OPT_BANDWIDTH))

struct command {
	const char *name;
	int min_args;
	int max_args;
	const char *synopsis; /* the arguments, for a usage error */
	unsigned int opts;    /* CMD_OPT_BITs allowed */
};

static const struct command commands[] = {
    {"ls", 0, 0, "no arguments", 0},
    {"status", 1, 1, "[BOX:]ID", 0},
    {"tune", 1, 3, "[BOX:]ID SYSTEM FREQ, or [BOX:]ID --channel NAME",
     CMD_OPT_BIT(OPT_BANDWIDTH) | CMD_OPT_BIT(OPT_SYMBOL_RATE) |
	 CMD_OPT_BIT(OPT_STANDARD) | CMD_OPT_BIT(OPT_LEASE) |
	 CMD_OPT_BIT(OPT_WAIT_LOCK) | CMD_OPT_BIT(OPT_CHANNEL) |
	 CMD_OPT_BIT(OPT_LCN)},
    {"sleep", 1, 1, "[BOX:]ID", CMD_OPT_BIT(OPT_LEASE)},
    {"init", 1, 1, "[BOX:]ID", CMD_OPT_BIT(OPT_LEASE)},
    {"lease", 1, 1, "[BOX:]ID",
     CMD_OPT_BIT(OPT_TTL) | CMD_OPT_BIT(OPT_PRIORITY) |
	 CMD_OPT_BIT(OPT_HOLDER) | CMD_OPT_BIT(OPT_RENEW)},
    {"release", 2, 2, "[BOX:]ID LEASE_ID", 0},
    {"watch", 0, 0, "no arguments",
     CMD_OPT_BIT(OPT_TYPES) | CMD_OPT_BIT(OPT_TUNER) | CMD_OPT_BIT(OPT_COUNT) |
	 CMD_OPT_BIT(OPT_STATUS)},
    {"stream", 1, 1, "[BOX:]ID",
     CMD_OPT_BIT(OPT_PIDS) | CMD_OPT_BIT(OPT_SERVICE) | CMD_OPT_BIT(OPT_LEASE) |
	 CMD_OPT_BIT(OPT_PROGRESS) | CMD_OPT_BIT(OPT_DURATION)},
    {"channels", 0, 1, "[BOX]", CMD_OPT_BIT(OPT_DVBV5)},
    {"scan", 1, 1, "[BOX:]ID",
     CMD_OPT_BIT(OPT_BAND) | CMD_OPT_BIT(OPT_REGION) | CMD_OPT_BIT(OPT_FREQ) |
	 CMD_OPT_BIT(OPT_SYSTEM) | CMD_OPT_BIT(OPT_BANDWIDTH) |
	 CMD_OPT_BIT(OPT_LEASE)},
};

void ctl_err(const char *fmt, ...)
{
	va_list ap;

	fputs("tunerctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("tunerctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'tunerctl --help'.\n", stderr);
	return CTL_EXIT_USAGE;
}

struct cmdline {
	struct ctl_opts o;
	char **box_args;
	size_t nbox_args;
	unsigned int cmd_opts_seen;
	bool help;
	bool version;
};

static int add_box_arg(struct cmdline *c, char *arg)
{
	char **v = realloc(c->box_args, (c->nbox_args + 1) * sizeof(*v));

	if (!v)
		return -1;
	c->box_args = v;
	v[c->nbox_args++] = arg;
	return 0;
}

static bool id_list_ok(const char *s)
{
	long v;
	char *copy = strdup(s), *save = NULL, *tok;
	bool ok = copy && *s;

	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && ok;
	     tok = strtok_r(NULL, ",", &save))
		ok = !ctl_parse_long(tok, 0, INT_MAX, &v);
	free(copy);
	return ok;
}

/* Options taking a number; returns 0 or a usage error. */
static int number_opt(struct ctl_opts *o, int id, const char *arg)
{
	static const struct {
		int id;
		const char *name;
		long min;
	} spec[] = {
	    {OPT_WAIT_LOCK, "--wait-lock", 0}, {OPT_TTL, "--ttl", 0},
	    {OPT_PRIORITY, "--priority", 0},   {OPT_COUNT, "--count", 1},
	    {OPT_SERVICE, "--service", 1},     {OPT_LCN, "--lcn", 0},
	};
	long *dest[] = {&o->wait_lock_ms, &o->ttl_s,   &o->priority,
			&o->count,        &o->service, &o->lcn};
	size_t i;

	for (i = 0; i < sizeof(spec) / sizeof(spec[0]); i++) {
		if (spec[i].id != id)
			continue;
		if (ctl_parse_long(arg, spec[i].min,
				   id == OPT_SERVICE ? 65535 : INT_MAX,
				   dest[i]))
			return usage_error(
			    "bad %s '%s' (a whole number >= %ld)", spec[i].name,
			    arg, spec[i].min);
		return 0;
	}
	return usage_error("internal: unknown option %d", id);
}

/* Options of stream, channels and scan. */
static int stream_scan_opt(struct ctl_opts *o, int id, const char *arg)
{
	switch (id) {
	case OPT_PIDS:
		/* the box checks the list and says what is wrong with it */
		if (!*arg)
			return usage_error("--pids needs PIDs: 0,16,0x100");
		o->pids = arg;
		return 0;
	case OPT_PROGRESS:
		o->progress = true;
		return 0;
	case OPT_DVBV5:
		o->dvbv5 = true;
		return 0;
	case OPT_STATUS:
		o->status_events = true;
		return 0;
	case OPT_DURATION:
		if (ctl_parse_seconds_ms(arg, &o->duration_ms))
			return usage_error("bad --duration '%s' (seconds > 0)",
					   arg);
		return 0;
	case OPT_BAND:
		o->band = arg;
		return 0;
	case OPT_REGION:
		o->region = arg;
		return 0;
	case OPT_FREQ:
		o->freqs = arg;
		return 0;
	case OPT_SYSTEM:
		o->system = arg;
		return 0;
	case OPT_CHANNEL:
		if (!*arg)
			return usage_error("--channel needs a name");
		o->channel = arg;
		return 0;
	default:
		return number_opt(o, id, arg);
	}
}

static int string_opt(struct ctl_opts *o, int id, const char *arg)
{
	switch (id) {
	case OPT_BANDWIDTH:
		o->bandwidth = arg;
		break;
	case OPT_SYMBOL_RATE:
		o->symbol_rate = arg;
		break;
	case OPT_STANDARD:
		o->standard = arg;
		break;
	case OPT_LEASE:
		o->lease = arg;
		break;
	case OPT_HOLDER:
		o->holder = arg;
		break;
	case OPT_RENEW:
		o->renew = arg;
		break;
	case OPT_TYPES:
		o->types = arg;
		break;
	case OPT_TUNER:
		if (!id_list_ok(arg))
			return usage_error("bad --tuner '%s' (IDs: 1,2)", arg);
		o->tuners = arg;
		break;
	default:
		return stream_scan_opt(o, id, arg);
	}
	return 0;
}

static int one_opt(struct cmdline *c, int id, char *arg)
{
	struct ctl_opts *o = &c->o;

	switch (id) {
	case OPT_BOX:
		return add_box_arg(c, arg) ? usage_error("out of memory") : 0;
	case OPT_CONFIG:
		o->config = arg;
		return 0;
	case OPT_TOKEN:
		o->token = arg;
		return 0;
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_DISCOVER:
		o->discover = true;
		return 0;
	case OPT_TIMEOUT:
		if (ctl_parse_seconds_ms(arg, &o->timeout_ms))
			return usage_error("bad --timeout '%s' (seconds > 0)",
					   arg);
		o->timeout_given = true;
		return 0;
	case OPT_HELP:
		c->help = true;
		return 0;
	case OPT_VERSION:
		c->version = true;
		return 0;
	default:
		if (id < OPT_BANDWIDTH || id >= OPT_VERSION)
			return CTL_EXIT_USAGE; /* getopt said why */
		c->cmd_opts_seen |= CMD_OPT_BIT(id);
		return string_opt(o, id, arg);
	}
}

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	}
	return NULL;
}

/* Options and arguments that exclude or need each other. */
static int check_choices(const struct cmdline *c, const struct command *cmd)
{
	const struct ctl_opts *o = &c->o;
	bool by_channel = o->channel || o->lcn >= 0;

	if (!strcmp(cmd->name, "tune")) {
		if (o->channel && o->lcn >= 0)
			return usage_error("give --channel or --lcn, not both");
		if (by_channel && (o->nargs != 1 || o->bandwidth ||
				   o->symbol_rate || o->standard))
			return usage_error(
			    "tune --channel/--lcn takes [BOX:]ID "
			    "and no params");
		if (!by_channel && o->nargs != 3)
			return usage_error("tune takes %s", cmd->synopsis);
	}
	if (!strcmp(cmd->name, "stream") && o->pids && o->service >= 0)
		return usage_error("give --pids or --service, not both");
	if (!strcmp(cmd->name, "scan")) {
		if (!o->freqs == !o->band)
			return usage_error("scan needs --band (with --region) "
					   "or --freq");
		if (o->band && (o->system || o->bandwidth))
			return usage_error("--system and --bandwidth go with "
					   "--freq; a band has its own");
		if (o->region && !o->band)
			return usage_error("--region goes with --band");
	}
	return 0;
}

static int check_command(const struct cmdline *c, const struct command *cmd)
{
	const struct option *lo;

	if (c->o.nargs < cmd->min_args || c->o.nargs > cmd->max_args)
		return usage_error("%s takes %s", cmd->name, cmd->synopsis);
	for (lo = long_opts; lo->name; lo++) {
		if (lo->val < OPT_BANDWIDTH || lo->val >= OPT_VERSION)
			continue;
		if ((c->cmd_opts_seen & CMD_OPT_BIT(lo->val)) &&
		    !(cmd->opts & CMD_OPT_BIT(lo->val)))
			return usage_error("--%s does not apply to %s",
					   lo->name, cmd->name);
	}
	return check_choices(c, cmd);
}

static int parse_cmdline(struct cmdline *c, int argc, char **argv)
{
	int id, ret;

	c->o.timeout_ms = DEFAULT_TIMEOUT_MS;
	c->o.wait_lock_ms = -1;
	c->o.ttl_s = -1;
	c->o.priority = -1;
	c->o.service = -1;
	c->o.lcn = -1;
	opterr = 0;
	while ((id = getopt_long(argc, argv, ":b:c:t:jT:h", long_opts, NULL)) !=
	       -1) {
		if (id == ':')
			return usage_error("%s needs a value",
					   argv[optind - 1]);
		if (id == '?')
			return usage_error("unknown option '%s'",
					   argv[optind - 1]);
		ret = one_opt(c, id, optarg);
		if (ret)
			return ret;
	}
	if (optind < argc) {
		c->o.args = argv + optind + 1;
		c->o.nargs = argc - optind - 1;
	}
	return 0;
}

static int run(const struct command *cmd, const struct ctl_boxes *boxes,
	       const struct ctl_opts *o)
{
	if (!strcmp(cmd->name, "ls"))
		return ctl_cmd_ls(boxes, o);
	if (!strcmp(cmd->name, "status"))
		return ctl_cmd_status(boxes, o);
	if (!strcmp(cmd->name, "tune"))
		return ctl_cmd_tune(boxes, o);
	if (!strcmp(cmd->name, "sleep") || !strcmp(cmd->name, "init"))
		return ctl_cmd_power(boxes, o, cmd->name);
	if (!strcmp(cmd->name, "lease"))
		return ctl_cmd_lease(boxes, o);
	if (!strcmp(cmd->name, "release"))
		return ctl_cmd_release(boxes, o);
	if (!strcmp(cmd->name, "stream"))
		return ctl_cmd_stream(boxes, o);
	if (!strcmp(cmd->name, "channels"))
		return ctl_cmd_channels(boxes, o);
	if (!strcmp(cmd->name, "scan"))
		return ctl_cmd_scan(boxes, o);
	return ctl_cmd_watch(boxes, o);
}

int main(int argc, char **argv)
{
	struct cmdline c = {0};
	struct ctl_boxes boxes = {0};
	const struct command *cmd = NULL;
	int ret;

	ret = parse_cmdline(&c, argc, argv);
	if (ret || c.help || c.version) {
		if (!ret)
			fputs(c.help ? usage_text
				     : TUNERD_VERSION_LINE("tunerctl"),
			      stdout);
		goto out;
	}
	if (!c.o.args) {
		ret = usage_error("no command");
		goto out;
	}
	cmd = find_command(c.o.args[-1]);
	if (!cmd) {
		ret = usage_error("unknown command '%s'", c.o.args[-1]);
		goto out;
	}
	ret = check_command(&c, cmd);
	if (ret)
		goto out;
	if (c.o.discover && c.nbox_args)
		ret = usage_error("--discover and --box exclude each other");
	else if (c.o.discover)
		ret = ctl_boxes_discover(&boxes,
					 c.o.timeout_given ? c.o.timeout_ms
							   : CTL_DISCOVER_MS,
					 c.o.token);
	else
		ret = ctl_boxes_load(&boxes, c.box_args, c.nbox_args,
				     c.o.config, c.o.token);
	if (ret)
		goto out;
	/* a box going away mid-write must be an error, not a silent exit */
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	ret = run(cmd, &boxes, &c.o);
	curl_global_cleanup();
out:
	ctl_boxes_free(&boxes);
	free(c.box_args);
	return ret;
}

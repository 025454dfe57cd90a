// SPDX-License-Identifier: MIT
/*
 * tunerd-simctl - drive the simulated box's app socket from the shell:
 * the tunes, status reads and faults a DVB or V4L application on the box
 * would cause.
 *
 * Exit status: 0 the box answered ok, 1 it answered an error, 2 usage or
 * connection error.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "tstub_codec.h"
#include "tunerd_version.h"

#define SIMCTL_REPLY_MAX (1024 * 1024)
#define SIMCTL_TIMEOUT_S 120

static const char *prog = "tunerd-simctl";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-s APP_SOCKET] [--json] COMMAND\n"
		"       %s --help | --version\n"
		"commands:\n"
		"  list\n"
		"  tune CLIENT SYSTEM FREQ_HZ [BANDWIDTH_HZ|SYMBOL_RATE|STD]\n"
		"  status CLIENT | freq CLIENT | init CLIENT | sleep CLIENT\n"
		"  fault CLIENT key=value...  (nak_rate=X|global, hang=, "
		"never_lock=, no_firmware= on|off)\n"
		"  stats\n"
		"  raw 'JSON'\n"
		"SYSTEM: DVBT DVBT2 DVBC_ANNEX_A DVBS DVBS2 ATSC ANALOG_TV "
		"RADIO\n",
		prog, prog);
}

static int parse_u64(const char *s, uint64_t max, json_int_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v > max)
		return -EINVAL;
	*out = (json_int_t)v;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"1", "on", "true", "yes"};
	static const char *const no[] = {"0", "off", "false", "no"};

	for (size_t i = 0; i < 4; i++) {
		if (strcmp(s, yes[i]) == 0 || strcmp(s, no[i]) == 0) {
			*out = strcmp(s, yes[i]) == 0;
			return 0;
		}
	}
	return -EINVAL;
}

static json_t *req_client(const char *op, int argc, char **argv)
{
	json_int_t client;

	if (argc != 2 || parse_u64(argv[1], UINT32_MAX, &client))
		return NULL;
	return json_pack("{s:s, s:I}", "op", op, "client", client);
}

static json_t *req_tune(int argc, char **argv)
{
	json_int_t client, freq, extra = 0;
	uint32_t sys = argc >= 4 ? tstub_delsys_parse(argv[2]) : 0;
	const char *key = "bandwidth";

	if (argc < 4 || argc > 5 || parse_u64(argv[1], UINT32_MAX, &client) ||
	    sys == TSTUB_DELSYS_NONE || parse_u64(argv[3], UINT32_MAX, &freq))
		return NULL;
	if (sys == TSTUB_DELSYS_DVBC_A || sys == TSTUB_DELSYS_DVBS ||
	    sys == TSTUB_DELSYS_DVBS2)
		key = "symbol_rate";
	else if (sys == TSTUB_DELSYS_ANALOG_TV)
		key = "std";
	if (argc == 5 &&
	    parse_u64(argv[4], strcmp(key, "std") ? UINT32_MAX : INT64_MAX,
		      &extra))
		return NULL;
	return json_pack("{s:s, s:I, s:s, s:I, s:I}", "op", "set_params",
			 "client", client, "delivery_system",
			 tstub_delsys_name(sys), "frequency", freq, key, extra);
}

static int fault_field(json_t *req, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char key[32];
	bool b;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(key))
		return -EINVAL;
	snprintf(key, sizeof(key), "%.*s", (int)(eq - arg), arg);
	if (strcmp(key, "nak_rate") == 0) {
		char *end;
		double v = strtod(eq + 1, &end);

		if (strcmp(eq + 1, "global") == 0)
			return json_object_set_new(req, key, json_null());
		if (end == eq + 1 || *end || v < 0.0 || v > 1.0)
			return -EINVAL;
		return json_object_set_new(req, key, json_real(v));
	}
	if (strcmp(key, "hang") && strcmp(key, "never_lock") &&
	    strcmp(key, "no_firmware"))
		return -EINVAL;
	if (parse_bool(eq + 1, &b))
		return -EINVAL;
	return json_object_set_new(req, key, json_boolean(b));
}

static json_t *req_fault(int argc, char **argv)
{
	json_t *req = req_client("fault", argc < 2 ? argc : 2, argv);

	for (int i = 2; req && i < argc; i++) {
		if (fault_field(req, argv[i])) {
			json_decref(req);
			return NULL;
		}
	}
	return req;
}

/* The request line for a command, or NULL on a usage error.  raw is sent
 * as typed, so that the box judges it. */
static json_t *build_request(int argc, char **argv, const char **raw)
{
	const char *cmd = argv[0];

	*raw = NULL;
	if (strcmp(cmd, "list") == 0 || strcmp(cmd, "stats") == 0)
		return argc == 1 ? json_pack("{s:s}", "op", cmd) : NULL;
	if (strcmp(cmd, "tune") == 0)
		return req_tune(argc, argv);
	if (strcmp(cmd, "status") == 0)
		return req_client("get_status", argc, argv);
	if (strcmp(cmd, "freq") == 0)
		return req_client("get_frequency", argc, argv);
	if (strcmp(cmd, "init") == 0 || strcmp(cmd, "sleep") == 0)
		return req_client(cmd, argc, argv);
	if (strcmp(cmd, "fault") == 0)
		return req_fault(argc, argv);
	if (strcmp(cmd, "raw") == 0 && argc == 2) {
		*raw = argv[1];
		return json_object();
	}
	return NULL;
}

static int app_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = SIMCTL_TIMEOUT_S};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static int send_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = send(fd, s, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -errno;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One line; the newline is replaced by NUL.  malloc'ed or NULL. */
static char *recv_line(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	while (buf) {
		ssize_t n = recv(fd, buf + len, cap - len - 1, 0);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		buf[len + (size_t)n] = '\0';
		nl = strchr(buf + len, '\n');
		len += (size_t)n;
		if (nl) {
			*nl = '\0';
			return buf;
		}
		if (len + 1 == cap) {
			char *p = cap < SIMCTL_REPLY_MAX ? realloc(buf, cap * 2)
							 : NULL;

			if (!p)
				break;
			buf = p;
			cap *= 2;
		}
	}
	free(buf);
	return NULL;
}

static char *exchange(const char *path, const char *line)
{
	int fd = app_connect(path);
	char *reply = NULL;

	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(-fd));
		return NULL;
	}
	if (send_all(fd, line, strlen(line)) == 0 && send_all(fd, "\n", 1) == 0)
		reply = recv_line(fd);
	if (!reply)
		fprintf(stderr, "%s: no reply from %s\n", prog, path);
	close(fd);
	return reply;
}

static long long jint(json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static const char *yesno(json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key)) ? "yes" : "no";
}

static void print_tuner(json_t *t)
{
	json_t *p = json_object_get(t, "params");
	json_t *tu = json_object_get(t, "tuned");
	char params[64] = "-", tuned[64] = "-";

	if (json_is_object(p))
		snprintf(
		    params, sizeof(params), "%s %lld Hz",
		    json_string_value(json_object_get(p, "delivery_system")),
		    jint(p, "frequency"));
	if (json_is_true(json_object_get(tu, "valid")))
		snprintf(
		    tuned, sizeof(tuned), "%lld Hz%s", jint(tu, "frequency"),
		    json_is_true(json_object_get(tu, "pll_locked")) ? " locked"
								    : "");
	printf("%-6lld %-8s %-7lld 0x%02llx %-12s %-5s %-24s %s\n",
	       jint(t, "client"), json_string_value(json_object_get(t, "chip")),
	       jint(t, "adapter"), jint(t, "addr"),
	       json_string_value(json_object_get(t, "bridge")),
	       yesno(t, "bound"), params, tuned);
}

static void print_status(json_t *st)
{
	static const char *const bits[] = {"signal", "carrier", "viterbi",
					   "sync", "lock"};
	json_t *v;

	printf("status:");
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (json_is_true(json_object_get(st, bits[i])))
			printf(" %s", bits[i]);
	printf("\n");
	if ((v = json_object_get(st, "strength_dbm")))
		printf("strength: %.1f dBm\n", json_number_value(v));
	if ((v = json_object_get(st, "cnr_db")))
		printf("cnr: %.1f dB\n", json_number_value(v));
	if ((v = json_object_get(st, "afc_hz")))
		printf("afc: %lld Hz\n", (long long)json_integer_value(v));
	if ((v = json_object_get(st, "pll_locked")))
		printf("pll: %s\n", json_is_true(v) ? "locked" : "unlocked");
	if ((v = json_object_get(st, "frequency")))
		printf("frequency: %lld Hz\n",
		       (long long)json_integer_value(v));
}

static void print_object(json_t *o)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v)
	{
		char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

		printf("%s: %s\n", key, s ? s : "?");
		free(s);
	}
}

static void simctl_print(const char *cmd, json_t *r)
{
	size_t i;
	json_t *t;

	if (!json_is_true(json_object_get(r, "ok"))) {
		fprintf(stderr, "error: %s (%lld): %s\n",
			json_string_value(json_object_get(r, "errname")),
			jint(r, "error"),
			json_string_value(json_object_get(r, "message")));
		return;
	}
	if (strcmp(cmd, "list") == 0) {
		printf("daemon: %s\n",
		       json_is_true(json_object_get(r, "daemon"))
			   ? "connected"
			   : "not connected");
		printf("CLIENT CHIP     ADAPTER ADDR BRIDGE       BOUND "
		       "PARAMS                   TUNED\n");
		json_array_foreach(json_object_get(r, "tuners"), i, t)
		    print_tuner(t);
	} else if (strcmp(cmd, "status") == 0) {
		print_status(json_object_get(r, "status"));
	} else if (strcmp(cmd, "freq") == 0) {
		printf("frequency %lld Hz, bandwidth %lld Hz, IF %lld Hz\n",
		       jint(r, "frequency"), jint(r, "bandwidth"),
		       jint(r, "if_frequency"));
	} else if (strcmp(cmd, "stats") == 0) {
		print_object(json_object_get(r, "stats"));
	} else if (strcmp(cmd, "fault") == 0) {
		print_object(json_object_get(r, "fault"));
	} else {
		printf("ok (%lld us)\n", jint(r, "elapsed_us"));
	}
}

static void default_socket(char *buf, size_t len)
{
	const char *run = getenv("XDG_RUNTIME_DIR");

	if (run && *run)
		snprintf(buf, len, "%s/tunerd/app.sock", run);
	else
		snprintf(buf, len, "/run/tunerd/app.sock");
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	const char *raw;
	bool as_json = false;
	char *line, *reply;
	json_t *req, *rep;
	int i = 1, ok;

	default_socket(path, sizeof(path));
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			snprintf(path, sizeof(path), "%s", argv[++i]);
		else if (strcmp(argv[i], "--json") == 0)
			as_json = true;
		else if (strcmp(argv[i], "-h") == 0 ||
			 strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--version") == 0) {
			fputs(TUNERD_VERSION_LINE("tunerd-simctl"), stdout);
			return 0;
		} else
			break;
	}
	req = i < argc ? build_request(argc - i, argv + i, &raw) : NULL;
	if (!req) {
		usage(stderr);
		return 2;
	}
	line = raw ? strdup(raw) : json_dumps(req, JSON_COMPACT);
	json_decref(req);
	for (char *p = line; p && *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	reply = line ? exchange(path, line) : NULL;
	free(line);
	if (!reply)
		return 2;
	rep = json_loads(reply, 0, NULL);
	if (!json_is_object(rep)) {
		fprintf(stderr, "%s: unreadable reply: %s\n", prog, reply);
		free(reply);
		json_decref(rep);
		return 2;
	}
	ok = json_is_true(json_object_get(rep, "ok"));
	if (as_json || raw)
		printf("%s\n", reply);
	else
		simctl_print(argv[i], rep);
	free(reply);
	json_decref(rep);
	return ok ? 0 : 1;
}

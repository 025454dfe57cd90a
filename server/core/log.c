// SPDX-License-Identifier: MIT
/*
 * One write(2) per line and no lock: lines from the daemon and its forked
 * workers never interleave, and a plugin's thread (if one ever starts
 * one) cannot leave a held lock to a forked worker.
 */
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static int log_level = LL_INFO;
static char log_tag[32] = "tunerd";
static int log_to_journal;

void log_set_level(int level)
{
	log_level = level;
}

int log_get_level(void)
{
	return log_level;
}

int log_parse_level(const char *name)
{
	static const struct {
		const char *name;
		int level;
	} names[] = {
	    {"err", LL_ERR},      {"error", LL_ERR}, {"warn", LL_WARN},
	    {"warning", LL_WARN}, {"info", LL_INFO}, {"debug", LL_DEBUG},
	};
	char *end;
	long n;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i].name) == 0)
			return names[i].level;
	n = strtol(name, &end, 10);
	if (*name && !*end && n >= LL_ERR && n <= LL_DEBUG)
		return (int)n;
	return -1;
}

void log_set_tag(const char *tag)
{
	snprintf(log_tag, sizeof(log_tag), "%s", tag);
}

int log_detect_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int end = 0;

	log_to_journal = 0;
	if (!env || sscanf(env, "%llu:%llu%n", &dev, &ino, &end) != 2 ||
	    env[end] || fstat(STDERR_FILENO, &st) < 0)
		return 0;
	/* stderr may have been redirected since systemd started us (a
	 * shell wrapper, 2>file): then the variable is about stdout or a
	 * parent, not about these lines. */
	log_to_journal = (unsigned long long)st.st_dev == dev &&
			 (unsigned long long)st.st_ino == ino;
	return log_to_journal;
}

static const char *level_name(int level)
{
	switch (level) {
	case LL_ERR:
		return "error";
	case LL_WARN:
		return "warn";
	case LL_INFO:
		return "info";
	default:
		return "debug";
	}
}

void log_vmsg(int level, const char *fmt, va_list ap)
{
	char line[1024];
	struct timespec ts;
	struct tm tm;
	int n, m;

	if (level > log_level)
		return;
	if (log_to_journal) {
		/* The levels are syslog's, as the "<N>" prefix wants. */
		n = snprintf(line, sizeof(line), "<%d>%s[%d] %s: ",
			     level < 0   ? 0
			     : level > 7 ? 7
					 : level,
			     log_tag, (int)getpid(), level_name(level));
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		n = snprintf(line, sizeof(line),
			     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%d] %s: ",
			     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			     tm.tm_hour, tm.tm_min, tm.tm_sec,
			     ts.tv_nsec / 1000000, log_tag, (int)getpid(),
			     level_name(level));
	}
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* Nowhere left to report it. */
	}
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

void log_limited(struct log_budget *b, uint64_t now_ms, int level,
		 const char *fmt, ...)
{
	char line[768];
	va_list ap;

	if (!b->window_start || now_ms - b->window_start >= b->window_ms) {
		if (b->unlogged)
			log_msg(level, "%lu more %s not logged", b->unlogged,
				b->what);
		b->window_start = now_ms ? now_ms : 1;
		b->logged = 0;
		b->unlogged = 0;
	}
	if (b->logged >= b->max) {
		b->unlogged++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (++b->logged == b->max)
		log_msg(level, "%s (further %s for %u s are only counted)",
			line, b->what, b->window_ms / 1000);
	else
		log_msg(level, "%s", line);
}

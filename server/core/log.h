/* SPDX-License-Identifier: MIT */
/*
 * log.h - the daemon's and the workers' log: one line per call, to stderr,
 * with a timestamp, the process tag and the level.
 */
#ifndef TUNERD_LOG_H
#define TUNERD_LOG_H

#include <stdarg.h>
#include <stdint.h>

/* Same values as TUNERD_LOG_* in tunerd_plugin.h and syslog's levels. */
enum log_level {
	LL_ERR = 3,
	LL_WARN = 4,
	LL_INFO = 6,
	LL_DEBUG = 7,
};

void log_set_level(int level);
int log_get_level(void);
/* "err", "warn", "info", "debug" or a number 3..7; -1 if unknown. */
int log_parse_level(const char *name);
/* The tag each line carries, e.g. "tunerd" or "worker 3"; copied. */
void log_set_tag(const char *tag);
/*
 * When stderr is the journal's stream (systemd sets $JOURNAL_STREAM to
 * its "device:inode", and stderr still is that file), lines carry a
 * "<N>" syslog priority prefix (sd-daemon.h's SD_ERR, ...) instead of a
 * timestamp, which the journal adds itself.  Called once by main(),
 * before any fork: workers inherit the choice.  Returns 1 when it did.
 */
int log_detect_journal(void);

void log_msg(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void log_vmsg(int level, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/*
 * A budget for log lines anyone can cause (a refused request: no token is
 * needed to be refused), so that an outsider cannot fill the disk or
 * drown the lines that matter: at most max lines per window_ms.  The
 * window's last allowed line says the rest are only counted; their count
 * is told in one line by the first line asked for after the window
 * (no timer is kept for it, so that count waits for the next one).
 * Declare one per kind of line, e.g.
 *   struct log_budget refusals = LOG_BUDGET_INIT("refused streams", 20,
 *                                                10000);
 */
struct log_budget {
	const char *what; /* names the lines in the count's line */
	unsigned int max, window_ms;
	uint64_t window_start;
	unsigned int logged;
	unsigned long unlogged;
};
#define LOG_BUDGET_INIT(what, max, window_ms)                                  \
	{                                                                      \
		(what), (max), (window_ms), 0, 0, 0                            \
	}

/* Log the line within b's budget at now_ms (any monotonic clock in ms),
 * or count it. */
void log_limited(struct log_budget *b, uint64_t now_ms, int level,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define log_err(...)   log_msg(LL_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LL_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LL_DEBUG, __VA_ARGS__)

#endif /* TUNERD_LOG_H */

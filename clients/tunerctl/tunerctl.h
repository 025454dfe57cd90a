/* SPDX-License-Identifier: MIT */
/*
 * tunerctl.h - shared state of tunerctl, the command-line client of one or
 * many tunerd boxes (network API v1).
 */
#ifndef TUNERCTL_H
#define TUNERCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes scripts rely on (documented in --help and README.md). */
enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_API = 1,      /* the box answered with an error */
	CTL_EXIT_USAGE = 2,    /* bad command line or configuration */
	CTL_EXIT_CONN = 3,     /* connection failed or timed out */
	CTL_EXIT_CONFLICT = 4, /* 409: leased by someone else */
	CTL_EXIT_NOTFOUND = 5, /* 404: no such tuner (or lease) */
};

struct ctl_box {
	char *name;  /* label in output and in BOX:ID */
	char *url;   /* http://host:port, no trailing slash */
	char *token; /* sent as a bearer token; never printed */
};

struct ctl_boxes {
	struct ctl_box *v;
	size_t n;
};

/* Options of the command line; -1 / NULL mean "not given". */
struct ctl_opts {
	bool json;
	long timeout_ms;
	bool timeout_given;
	bool discover; /* --discover: the boxes DNS-SD finds */
	const char *token;
	const char *config;

	const char *bandwidth;
	const char *symbol_rate;
	const char *standard;
	const char *lease;
	long wait_lock_ms;
	long ttl_s;
	long priority;
	const char *holder;
	const char *renew;
	const char *types;
	bool status_events; /* watch --status: show tuner.status */
	const char *tuners;
	long count;

	const char *pids;
	long service;
	bool progress;
	long duration_ms; /* 0: until stopped */
	bool dvbv5;
	const char *band;
	const char *region;
	const char *freqs;
	const char *system;
	const char *channel;
	long lcn;

	char **args; /* positional arguments after the command */
	int nargs;
};

/* A tuner addressed as [BOX:]ID. */
struct ctl_target {
	const struct ctl_box *box;
	unsigned int id;
};

/* boxes.c */
int ctl_boxes_load(struct ctl_boxes *boxes, char *const *box_args,
		   size_t nbox_args, const char *config, const char *token);
void ctl_boxes_free(struct ctl_boxes *boxes);
/* Append a box (its URL without a trailing slash); -1 out of memory. */
int ctl_boxes_add(struct ctl_boxes *boxes, const char *name, const char *url,
		  const char *token);

/* discover.c: the boxes DNS-SD finds within timeout_ms, each with token
 * (NULL: none).  An exit code; none found is CTL_EXIT_CONN. */
#define CTL_DISCOVER_TYPE "_tunerd._tcp"
#define CTL_DISCOVER_MS   3000
int ctl_boxes_discover(struct ctl_boxes *out, long timeout_ms,
		       const char *token);
int ctl_target_parse(const struct ctl_boxes *boxes, const char *arg,
		     struct ctl_target *t);
int ctl_box_label_width(const struct ctl_boxes *boxes);
/* A box by name, or the only box when name is NULL; NULL with an error
 * printed. */
const struct ctl_box *ctl_box_pick(const struct ctl_boxes *boxes,
				   const char *name);

/* Commands; each returns an exit code. */
int ctl_cmd_ls(const struct ctl_boxes *boxes, const struct ctl_opts *o);
int ctl_cmd_tune(const struct ctl_boxes *boxes, const struct ctl_opts *o);
int ctl_cmd_status(const struct ctl_boxes *boxes, const struct ctl_opts *o);
int ctl_cmd_power(const struct ctl_boxes *boxes, const struct ctl_opts *o,
		  const char *op);
int ctl_cmd_lease(const struct ctl_boxes *boxes, const struct ctl_opts *o);
int ctl_cmd_release(const struct ctl_boxes *boxes, const struct ctl_opts *o);
int ctl_cmd_watch(const struct ctl_boxes *boxes, const struct ctl_opts *o);
int ctl_cmd_stream(const struct ctl_boxes *boxes, const struct ctl_opts *o);
int ctl_cmd_channels(const struct ctl_boxes *boxes, const struct ctl_opts *o);
int ctl_cmd_scan(const struct ctl_boxes *boxes, const struct ctl_opts *o);

/* Prints "tunerctl: " and the message to stderr. */
void ctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

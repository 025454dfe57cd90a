// SPDX-License-Identifier: MIT
/*
 * The control variables: /sys/... from the daemon, /tunerN/... from the
 * tuner's state (hdhr_tuner.c, hdhr_target.c).  Answers and error texts
 * follow what the clients print and parse (libhdhomerun: "ERROR: ..."
 * messages, the status line's keys, streaminfo's lines).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_config.h"
#include "daemon.h"
#include "hdhr_device.h"
#include "hdhr_priv.h"

static const char features[] =
    "channelmap: eu-bcast eu-cable au-bcast au-cable us-bcast us-cable\n"
    "modulation: t8dvbt t7dvbt t6dvbt a8qam64 a8qam256 8vsb\n"
    "auto-modulation: auto auto6t auto7t auto8t auto6c auto8c\n";

static void sys_get(struct hdhr *h, struct hdhr_conn *c, const char *var,
		    int set)
{
	char buf[256];
	const char *v = NULL;

	if (!strcmp(var, "model"))
		v = h->model;
	else if (!strcmp(var, "hwmodel"))
		v = HDHR_HWMODEL;
	else if (!strcmp(var, "version"))
		v = HDHR_FIRMWARE_VERSION;
	else if (!strcmp(var, "features"))
		v = features;
	else if (!strcmp(var, "copyright"))
		v = "tunerd (MIT); protocol by SiliconDust";
	else if (!strcmp(var, "debug")) {
		snprintf(buf, sizeof(buf),
			 "box: %s\ntuners: %u\nconnections: %u\n", h->d->name,
			 h->ntuners, h->nconns);
		v = buf;
	}
	if (!v)
		hdhr_conn_answer(c, NULL, "ERROR: unknown getset variable");
	else if (set)
		hdhr_conn_answer(c, NULL, "ERROR: permission denied");
	else
		hdhr_conn_answer(c, v, NULL);
}

static void tuner_get(struct hdhr_tuner *t, struct hdhr_conn *c,
		      const char *var)
{
	char buf[HDHR_VALUE_MAX];
	const char *v = buf;

	buf[0] = '\0';
	if (!strcmp(var, "status")) {
		hdhr_tuner_status_get(t, c);
		return;
	}
	if (!strcmp(var, "streaminfo"))
		hdhr_tuner_streaminfo(t, buf, sizeof(buf));
	else if (!strcmp(var, "debug"))
		hdhr_tuner_debug(t, buf, sizeof(buf));
	else if (!strcmp(var, "lockkey"))
		hdhr_tuner_lockkey_get(t, buf, sizeof(buf));
	else if (!strcmp(var, "channel"))
		v = t->channel;
	else if (!strcmp(var, "channelmap"))
		v = t->channelmap;
	else if (!strcmp(var, "vchannel"))
		v = t->vchannel;
	else if (!strcmp(var, "filter"))
		v = t->filter;
	else if (!strcmp(var, "target"))
		v = t->target ? t->target_text : "none";
	else if (!strcmp(var, "program"))
		snprintf(buf, sizeof(buf), "%u", t->program);
	else
		v = NULL;
	if (v)
		hdhr_conn_answer(c, v, NULL);
	else
		hdhr_conn_answer(c, NULL, "ERROR: unknown getset variable");
}

static int known_map(const char *m)
{
	static const char *const maps[] = {"eu-bcast", "eu-cable", "au-bcast",
					   "au-cable", "us-bcast", "us-cable",
					   "us-hrc",   "us-irc",   NULL};

	for (int i = 0; maps[i]; i++)
		if (!strcmp(m, maps[i]))
			return 1;
	return 0;
}

static void vchannel_set(struct hdhr_tuner *t, struct hdhr_conn *c,
			 const char *value)
{
	/* A GuideNumber is a channel of the list: the tune looks it up. */
	char ch[48];

	if (!strcmp(value, "none")) {
		snprintf(t->vchannel, sizeof(t->vchannel), "none");
		hdhr_conn_answer(c, "none", NULL);
		return;
	}
	snprintf(ch, sizeof(ch), "v:%s", value);
	hdhr_tuner_channel_set(t, c, ch);
}

static void tuner_set(struct hdhr_tuner *t, struct hdhr_conn *c,
		      const char *var, const char *value)
{
	const char *why = NULL;

	if (!strcmp(var, "channel")) {
		hdhr_tuner_channel_set(t, c, value);
		return;
	}
	if (!strcmp(var, "vchannel")) {
		vchannel_set(t, c, value);
		return;
	}
	if (!strcmp(var, "channelmap")) {
		if (!known_map(value)) {
			hdhr_conn_answer(c, NULL, "ERROR: invalid channelmap");
			return;
		}
		snprintf(t->channelmap, sizeof(t->channelmap), "%s", value);
	} else if (!strcmp(var, "filter")) {
		hdhr_tuner_filter_set(t, value, &why);
	} else if (!strcmp(var, "program")) {
		hdhr_tuner_program_set(t, value, &why);
	} else if (!strcmp(var, "target")) {
		hdhr_target_set(t, value, &why);
	} else {
		why = "ERROR: unknown getset variable";
	}
	if (why)
		hdhr_conn_answer(c, NULL, why);
	else
		tuner_get(t, c, var);
}

/* "/tuner3/channel" -> tuner 3, "channel"; NULL when not a tuner path. */
static struct hdhr_tuner *tuner_of(struct hdhr *h, const char *name,
				   const char **var)
{
	char *end;
	unsigned long n;

	if (strncmp(name, "/tuner", 6) || name[6] < '0' || name[6] > '9')
		return NULL;
	n = strtoul(name + 6, &end, 10);
	if (*end != '/' || n >= h->ntuners)
		return NULL;
	*var = end + 1;
	return &h->tuners[n];
}

void hdhr_vars_getset(struct hdhr *h, struct hdhr_conn *c,
		      const struct hdhr_req *req)
{
	const struct sockaddr_in *peer = hdhr_conn_peer(c);
	struct hdhr_tuner *t;
	const char *var;
	char err[160];

	hdhr_tuners_refresh(h);
	if (!strncmp(req->name, "/sys/", 5)) {
		sys_get(h, c, req->name + 5, req->value != NULL);
		return;
	}
	t = tuner_of(h, req->name, &var);
	if (!t) {
		hdhr_conn_answer(c, NULL, "ERROR: unknown getset variable");
		return;
	}
	hdhr_tuner_touch(t, peer);
	if (!req->value) {
		tuner_get(t, c, var);
		return;
	}
	/* A viewer face reads only: no lock, tune or stream. */
	if (h->cfg->hdhomerun.role < ROLE_OPERATOR) {
		hdhr_conn_answer(c, NULL, "ERROR: permission denied");
		return;
	}
	if (!strcmp(var, "lockkey")) {
		if (hdhr_tuner_lockkey_set(t, req, peer, err, sizeof(err)))
			hdhr_conn_answer(c, NULL, err);
		else
			hdhr_conn_answer(c, req->value, NULL);
		return;
	}
	if (hdhr_tuner_may_set(t, req, peer, err, sizeof(err))) {
		hdhr_conn_answer(c, NULL, err);
		return;
	}
	tuner_set(t, c, var, req->value);
}

// SPDX-License-Identifier: MIT
/*
 * A tuner's channel, status, streaminfo and filters.  A channel set tunes
 * through the command service (role, lease and params checks, events)
 * and is answered when the tune is done (HDHR_TUNE_WAIT_MS: the client
 * polls the status for lock).  streaminfo comes from the
 * multiplex's PAT, SDT and NIT read off the tuner's stream once tuned.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "hdhr_priv.h"
#include "log.h"
#include "loop.h"
#include "net_api.h"
#include "scan_tables.h"
#include "tuner.h"

/* The tables' reader: PAT, NIT, SDT. */
static void on_tables(void *owner)
{
	struct hdhr_tuner *t = owner;
	uint8_t buf[TS_PACKET * 64];
	size_t n;

	while (t->tables &&
	       (n = stream_reader_read(t->tables, buf, sizeof(buf))) > 0)
		if (scan_tables_feed(t->st, buf, n - n % TS_PACKET)) {
			stream_reader_close(t->tables, STREAM_END_CLIENT);
			t->tables = NULL;
			return;
		}
	if (t->tables && stream_reader_ended(t->tables)) {
		stream_reader_close(t->tables, STREAM_END_NONE);
		t->tables = NULL;
	}
}

static void tables_open(struct hdhr_tuner *t)
{
	struct stream_filter_spec spec = {
	    .mode = STREAM_FILTER_PIDS, .pids = {0x00, 0x10, 0x11}, .npids = 3};
	int err;

	if (t->tables)
		stream_reader_close(t->tables, STREAM_END_CLIENT);
	t->tables = NULL;
	scan_tables_free(t->st);
	t->st = scan_tables_new();
	if (!t->st)
		return;
	t->tables_since_ms = loop_now_ms();
	t->tables =
	    stream_reader_open(net_api_of(t->h->d)->streams, t->id, &spec,
			       "hdhomerun:streaminfo", on_tables, t, &err);
}

static void tune_done(struct command_result *res, void *arg)
{
	struct hdhr_conn *c = arg;
	struct hdhr_conn_tune *tn = hdhr_conn_tune(c);

	if (res->err) {
		log_debug("hdhomerun: tune: %s", strerror(-res->err));
		hdhr_conn_answer(c, NULL, "ERROR: tune failed");
	} else {
		snprintf(tn->t->channel, sizeof(tn->t->channel), "%s",
			 tn->channel);
		tables_open(tn->t);
		hdhr_conn_answer(c, tn->channel, NULL);
	}
	json_decref(res->body);
}

static json_t *vchannel_args(struct hdhr_tuner *t, const char *guide)
{
	char *end;
	long n = strtol(guide, &end, 10);

	snprintf(t->vchannel, sizeof(t->vchannel), "%s", guide);
	if (*end || n < 0 || n > 65535)
		return json_pack("{s:s}", "channel", guide);
	return json_pack("{s:I}", "lcn", (json_int_t)n);
}

void hdhr_tuner_channel_set(struct hdhr_tuner *t, struct hdhr_conn *c,
			    const char *value)
{
	struct command_request req = {.tuner = t->id, .op = TUNER_OP_TUNE};
	struct hdhr_conn_tune *tn = hdhr_conn_tune(c);
	struct command_result now = {0};
	struct tstub_params p;
	const char *why;
	int ret;

	if (!strcmp(value, "none")) {
		snprintf(t->channel, sizeof(t->channel), "none");
		hdhr_target_stop(t, "channel none");
		hdhr_tuner_tables_close(t);
		hdhr_conn_answer(c, "none", NULL);
		return;
	}
	if (!strncmp(value, "v:", 2)) {
		req.args = vchannel_args(t, value + 2);
	} else if (hdhr_channel_params(value, t->channelmap, &p, &why)) {
		hdhr_conn_answer(c, NULL, why);
		return;
	} else {
		req.params = &p;
	}
	req.lease_id = t->lockkey ? json_string(t->lease_id) : NULL;
	req.wait_lock_ms = HDHR_TUNE_WAIT_MS;
	tn->t = t;
	snprintf(tn->channel, sizeof(tn->channel), "%s", value);
	ret = command_submit(hdhr_conn_client(c), &req, tune_done, c, &now);
	json_decref(req.args);
	json_decref(req.lease_id);
	if (ret) {
		hdhr_conn_answer(c, NULL,
				 ret == -EBUSY    ? "ERROR: resource locked"
				 : ret == -EACCES ? "ERROR: permission denied"
				 : ret == -ENOENT ? "ERROR: no such channel"
						  : "ERROR: invalid channel");
		json_decref(now.body);
	}
}

/* The line of the last status the daemon read (debug's). */
void hdhr_tuner_status(struct hdhr_tuner *t, char *buf, size_t len)
{
	struct tuner *tu = tuner_find(t->h->d, t->id);
	struct tuner_snapshot s;
	struct stream_stats st = {0};

	if (!tu) {
		hdhr_status_line(NULL, NULL, "none", 0, buf, len);
		return;
	}
	tuner_snapshot(tu, &s);
	stream_hub_stats(net_api_of(t->h->d)->streams, t->id, &st);
	hdhr_status_line(s.have_status ? &s.status : NULL,
			 s.have_params ? &s.params : NULL, t->channel,
			 st.bitrate_bps, buf, len);
}

static void status_done(int err, const struct tstub_status *status, void *arg)
{
	struct hdhr_conn *c = arg;
	struct hdhr_tuner *t = hdhr_conn_tune(c)->t;
	struct tuner *tu = tuner_find(t->h->d, t->id);
	struct tuner_snapshot s = {0};
	struct stream_stats st = {0};
	char line[200];

	if (err || !tu) {
		hdhr_tuner_status(t, line, sizeof(line));
	} else {
		tuner_snapshot(tu, &s);
		stream_hub_stats(net_api_of(t->h->d)->streams, t->id, &st);
		hdhr_status_line(status, s.have_params ? &s.params : NULL,
				 t->channel, st.bitrate_bps, line,
				 sizeof(line));
	}
	hdhr_conn_answer(c, line, NULL);
}

/* A status read through the tuner's queue: the line shows the chip now,
 * as a client polling for lock after a tune needs. */
void hdhr_tuner_status_get(struct hdhr_tuner *t, struct hdhr_conn *c)
{
	struct tuner *tu = tuner_find(t->h->d, t->id);
	char line[200];

	hdhr_conn_tune(c)->t = t;
	if (!tu || tuner_submit(tu, TUNER_OP_STATUS, NULL,
				hdhr_conn_client(c)->label, status_done, c)) {
		hdhr_tuner_status(t, line, sizeof(line));
		hdhr_conn_answer(c, line, NULL);
	}
}

void hdhr_tuner_streaminfo(struct hdhr_tuner *t, char *buf, size_t len)
{
	const struct scan_mux *m = t->st ? scan_tables_result(t->st) : NULL;
	size_t off = 0;

	buf[0] = '\0';
	if (!m || !m->have_pat || !strcmp(t->channel, "none")) {
		snprintf(buf, len, "none\n");
		return;
	}
	for (unsigned int i = 0; i < m->nservices && off + 80 < len; i++) {
		const struct scan_service *s = &m->services[i];

		if (!s->in_pat)
			continue;
		off +=
		    (size_t)snprintf(buf + off, len - off, "%u: %d %s\n",
				     s->sid, s->lcn > 0 ? s->lcn : 0, s->name);
	}
	off += (size_t)snprintf(buf + off, len - off, "tsid=0x%04X\n", m->tsid);
	if (m->have_sdt || m->have_nit)
		snprintf(buf + off, len - off, "onid=0x%04X\n", m->onid);
}

void hdhr_tuner_debug(struct hdhr_tuner *t, char *buf, size_t len)
{
	struct stream_stats st = {0};
	char status[160];

	stream_hub_stats(net_api_of(t->h->d)->streams, t->id, &st);
	hdhr_tuner_status(t, status, sizeof(status));
	snprintf(buf, len,
		 "tun: %s\ndev: tunerd tuner %u\nts: bps=%llu cc=%llu "
		 "te=%llu\nnet: pps=%llu sent=%llu drop=%llu\n",
		 status, t->id, (unsigned long long)st.bitrate_bps,
		 (unsigned long long)st.cc_errors,
		 (unsigned long long)st.tei_errors,
		 (unsigned long long)(st.bitrate_bps / (8 * TS_PACKET * 7)),
		 (unsigned long long)(t->target ? t->target->datagrams : 0),
		 (unsigned long long)(t->target ? t->target->dropped : 0));
}

/* "0x0000-0x1fff 0x0100" -> PIDs; the whole range is no filter. */
int hdhr_tuner_filter_set(struct hdhr_tuner *t, const char *value,
			  const char **why)
{
	struct stream_filter_spec spec = {.mode = STREAM_FILTER_PIDS};
	const char *s = value;
	char *end;

	*why = "ERROR: invalid pid filter";
	while (*s) {
		unsigned long a = strtoul(s, &end, 0), b = a;

		if (end == s || a > 0x1FFF)
			return -EINVAL;
		if (*end == '-') {
			s = end + 1;
			b = strtoul(s, &end, 0);
			if (end == s || b > 0x1FFF || b < a)
				return -EINVAL;
		}
		if (a == 0 && b == 0x1FFF) {
			spec.mode = STREAM_FILTER_ALL;
		} else {
			for (unsigned long p = a; p <= b; p++) {
				if (spec.npids == STREAM_FILTER_PIDS_MAX)
					return -EINVAL;
				spec.pids[spec.npids++] = (uint16_t)p;
			}
		}
		s = end + strspn(end, " ");
	}
	if (spec.mode == STREAM_FILTER_ALL)
		spec.npids = 0;
	t->spec = spec;
	t->program = 0;
	snprintf(t->filter, sizeof(t->filter), "%s", value);
	*why = NULL;
	return hdhr_target_refilter(t);
}

int hdhr_tuner_program_set(struct hdhr_tuner *t, const char *value,
			   const char **why)
{
	char *end;
	unsigned long n = strtoul(value, &end, 10);

	*why = "ERROR: invalid program";
	if (*end || !*value || n > 65535)
		return -EINVAL;
	t->program = (unsigned int)n;
	memset(&t->spec, 0, sizeof(t->spec));
	if (n) {
		t->spec.mode = STREAM_FILTER_SERVICE;
		t->spec.service = (uint16_t)n;
	}
	*why = NULL;
	return hdhr_target_refilter(t);
}

// SPDX-License-Identifier: MIT
/*
 * Running a scan: per frequency a tune (through the command service),
 * its status polled until lock (SCAN_LOCK_MS at most, SCAN_SIGNAL_MS
 * without any signal), then the multiplex's tables read
 * for at most SCAN_TABLES_MS from the tuner's stream, then its services
 * into the channel list.  Everything is a callback on the loop: the
 * tune's answer, the stream reader's wake, the tables' deadline.
 *
 * A DVB-T frequency that shows a signal but does not lock is tried once
 * more as DVB-T2, as a T2 frontend's scan does: European DTT mixes both on one raster.  A
 * tune the chip refuses (422: a frequency off its range) counts as no
 * lock; a tune refused for any other reason (the lease went, the tuner
 * is gone) ends the job as failed, with the refusal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel_list.h"
#include "daemon.h"
#include "eventbus.h"
#include "loop.h"
#include "scan_job_priv.h"
#include "stream.h"

static const char *const state_names[] = {"running", "done", "failed",
					  "cancelled"};

json_t *scan_job_json(const struct scan_job *j)
{
	json_t *o = json_pack("{s:s, s:I, s:s, s:I, s:I, s:I, s:I}", "id",
			      j->id, "tuner", (json_int_t)j->tuner, "state",
			      state_names[j->state], "total",
			      (json_int_t)j->total, "done", (json_int_t)j->done,
			      "found", (json_int_t)json_array_size(j->found),
			      "multiplexes", (json_int_t)j->multiplexes);

	if (o && j->state != SCAN_RUNNING)
		json_object_set_new(o, "channels",
				    channel_list_sorted(json_incref(j->found)));
	if (o && j->error)
		json_object_set(o, "error", j->error);
	return o;
}

static void job_end(struct scan_job *j, enum scan_state state)
{
	j->state = state;
	eventbus_publish(j->h->d->events, "scan.done", (long)j->tuner,
			 json_pack("{s:s, s:s, s:I, s:I}", "scan", j->id,
				   "state", state_names[state], "multiplexes",
				   (json_int_t)j->multiplexes, "channels",
				   (json_int_t)json_array_size(j->found)));
}

/* Stop reading tables (reader, deadline). */
static void tables_stop(struct scan_job *j)
{
	if (j->reader)
		stream_reader_close(j->reader, STREAM_END_CLIENT);
	j->reader = NULL;
	loop_del_timer(j->h->d->loop, j->timer);
	j->timer = 0;
	scan_tables_free(j->tables);
	j->tables = NULL;
	j->ncarry = 0;
}

static json_t *entry_of(const struct scan_job *j, const struct scan_mux *m,
			const struct scan_service *s)
{
	char generated[32];
	const char *name = s->name;
	enum scan_service_kind kind = scan_service_kind_of(s->service_type);

	if (!*name) { /* no SDT, or no name in it */
		snprintf(generated, sizeof(generated), "Service %u", s->sid);
		name = generated;
	}
	return json_pack("{s:s, s:o, s:i, s:i, s:i, s:s, s:O}", "name", name,
			 "lcn",
			 s->lcn >= 0 ? json_integer(s->lcn) : json_null(),
			 "service_id", s->sid, "transport_stream_id", m->tsid,
			 "network_id", m->have_nit ? m->nid : m->onid, "type",
			 scan_service_kind_name(kind), "params", j->params);
}

/* The channels of the multiplex just read: the PAT's services. */
static json_t *mux_entries(const struct scan_job *j)
{
	const struct scan_mux *m =
	    j->tables ? scan_tables_result(j->tables) : NULL;
	json_t *arr = json_array();

	for (unsigned int i = 0; m && m->have_pat && i < m->nservices; i++)
		if (m->services[i].in_pat)
			json_array_append_new(arr,
					      entry_of(j, m, &m->services[i]));
	return arr;
}

static void job_next(struct scan_job *j);

/* The frequency is done (locked: it was, and its tables were read). */
static void mux_done(struct scan_job *j, int locked)
{
	json_t *entries = locked ? mux_entries(j) : NULL;
	size_t n = json_array_size(entries), i;
	json_t *v;

	tables_stop(j);
	if (locked) {
		j->multiplexes++;
		json_array_foreach(entries, i, v)
		    json_array_append(j->found, v);
		channel_list_replace_mux(j->h->channels, j->freqs[j->done],
					 entries);
	}
	eventbus_publish(
	    j->h->d->events, "scan.progress", (long)j->tuner,
	    json_pack("{s:s, s:I, s:I, s:I, s:b, s:I}", "scan", j->id,
		      "frequency", (json_int_t)j->freqs[j->done], "index",
		      (json_int_t)j->done, "total", (json_int_t)j->total,
		      "locked", locked, "services", (json_int_t)n));
	j->done++;
	j->trying_t2 = j->signal = 0;
	json_decref(j->params);
	j->params = NULL;
	job_next(j);
}

static void reader_wake(void *owner)
{
	struct scan_job *j = owner;
	uint8_t buf[188 * 64];
	size_t n, whole;
	int complete = 0;

	while (!complete && j->reader) {
		memcpy(buf, j->carry, j->ncarry);
		n = j->ncarry + stream_reader_read(j->reader, buf + j->ncarry,
						   sizeof(buf) - j->ncarry);
		if (n == j->ncarry)
			break;
		whole = n / 188 * 188;
		j->ncarry = n - whole;
		memcpy(j->carry, buf + whole, j->ncarry);
		complete = scan_tables_feed(j->tables, buf, whole);
	}
	if (complete || (j->reader && stream_reader_ended(j->reader)))
		mux_done(j, 1);
}

static long tables_deadline(struct loop *l, uint64_t id, void *arg)
{
	struct scan_job *j = arg;

	(void)l;
	(void)id;
	j->timer = 0;
	mux_done(j, 1);
	return LOOP_TIMER_DONE;
}

/* Locked: read the tables from the tuner's stream. */
static void tables_start(struct scan_job *j)
{
	struct stream_filter_spec spec = {
	    .mode = STREAM_FILTER_PIDS, .pids = {0x00, 0x10, 0x11}, .npids = 3};
	int err = 0;

	j->tables = scan_tables_new();
	if (j->tables)
		j->reader = stream_reader_open(j->h->streams, j->tuner, &spec,
					       j->id, reader_wake, j, &err);
	if (j->reader)
		j->timer = loop_add_timer(j->h->d->loop, SCAN_TABLES_MS,
					  tables_deadline, j);
	if (!j->timer) /* no stream to read: a locked multiplex, no tables */
		mux_done(j, 1);
}

static void tune(struct scan_job *j, const char *delsys);
static void lock_poll_later(struct scan_job *j);

/* This try did not lock: as DVB-T2 next when a DVB-T try saw a signal. */
static void no_lock(struct scan_job *j)
{
	if (!j->trying_t2 && j->signal && !strcmp(j->delsys, "DVBT")) {
		j->trying_t2 = 1;
		tune(j, "DVBT2");
	} else {
		mux_done(j, 0);
	}
}

static void fail(struct scan_job *j, json_t *body)
{
	j->error = json_incref(json_object_get(body, "error"));
	job_end(j, SCAN_FAILED);
}

/* A status of the tuned frequency (a tune's, or a poll's). */
static void status_seen(struct scan_job *j, json_t *status)
{
	json_t *fe = json_object_get(status, "fe_status");
	uint64_t waited = loop_now_ms() - j->tune_ms;

	if (json_is_true(json_object_get(fe, "lock"))) {
		tables_start(j);
		return;
	}
	if (json_is_true(json_object_get(fe, "signal")) ||
	    json_is_true(json_object_get(fe, "carrier")))
		j->signal = 1;
	if (waited >= SCAN_LOCK_MS || (!j->signal && waited >= SCAN_SIGNAL_MS))
		no_lock(j);
	else
		lock_poll_later(j);
}

static void poll_done(struct command_result *res, void *arg)
{
	struct scan_job *j = arg;

	if (res->status == 200)
		status_seen(j, res->body);
	else
		fail(j, res->body);
	json_decref(res->body);
}

static long lock_poll(struct loop *l, uint64_t id, void *arg)
{
	struct scan_job *j = arg;
	struct command_request req = {.tuner = j->tuner, .op = TUNER_OP_STATUS};
	struct command_result now = {0};

	(void)l;
	(void)id;
	j->timer = 0;
	if (command_submit(&j->client, &req, poll_done, j, &now))
		poll_done(&now, j);
	return LOOP_TIMER_DONE;
}

static void lock_poll_later(struct scan_job *j)
{
	j->timer = loop_add_timer(j->h->d->loop, SCAN_POLL_MS, lock_poll, j);
	if (!j->timer)
		no_lock(j);
}

static void tune_answer(struct scan_job *j, struct command_result *res)
{
	json_t *body = res->body;

	if (res->status == 200) {
		j->params = json_incref(json_object_get(body, "params"));
		j->tune_ms = loop_now_ms();
		status_seen(j, json_object_get(body, "status"));
	} else if (res->status == 422) { /* the chip cannot go there */
		no_lock(j);
	} else {
		fail(j, body);
	}
	json_decref(body);
}

static void tune_done(struct command_result *res, void *arg)
{
	tune_answer(arg, res);
}

static void tune(struct scan_job *j, const char *delsys)
{
	json_t *args = json_pack("{s:s, s:I, s:I}", "delivery_system", delsys,
				 "frequency", (json_int_t)j->freqs[j->done],
				 "bandwidth", (json_int_t)j->bandwidth);
	json_t *lease = j->lease_id ? json_string(j->lease_id) : NULL;
	struct command_request req = {.tuner = j->tuner,
				      .op = TUNER_OP_TUNE,
				      .args = args,
				      .lease_id = lease};
	struct command_result now = {0};

	json_decref(j->params);
	j->params = NULL;
	if (command_submit(&j->client, &req, tune_done, j, &now))
		tune_answer(j, &now);
	json_decref(args);
	json_decref(lease);
}

static void job_next(struct scan_job *j)
{
	if (j->state != SCAN_RUNNING)
		return;
	if (j->done == j->total)
		job_end(j, SCAN_DONE);
	else
		tune(j, j->delsys);
}

void scan_job_run(struct scan_job *j)
{
	command_client_init(&j->client, j->h->cs, ROLE_OPERATOR, j->name, 1);
	job_next(j);
}

void scan_job_cancel(struct scan_job *j)
{
	if (j->state != SCAN_RUNNING)
		return;
	command_client_cancel(&j->client);
	tables_stop(j);
	job_end(j, SCAN_CANCELLED);
}

void scan_job_free(struct scan_job *j)
{
	if (!j)
		return;
	scan_job_cancel(j);
	json_decref(j->params);
	json_decref(j->found);
	json_decref(j->error);
	free(j->freqs);
	free(j->name);
	free(j->lease_id);
	free(j);
}

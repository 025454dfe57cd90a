// SPDX-License-Identifier: MIT
/*
 * The daemon's core end to end against a fake box: the INIT handshake,
 * LOAD_PLUGIN, ATTACH with real worker processes (the fixture plugin),
 * API requests, a crashing and a hanging worker restarted with their
 * params restored and their queued requests replayed, a stopped worker
 * (SIGSTOP) found by its liveness watch, every tune_started closed by a
 * tuner.tune, the queue bound,
 * DETACH, and the stub going away and coming back.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "daemon.h"
#include "eventbus.h"
#include "fake_box.h"
#include "log.h"
#include "loop.h"
#include "tuner.h"

#define CHIP        0xF0F0
#define CRASH_HZ    666000000
#define HANG_HZ     777000000
#define DEADLINE_MS 400

static struct daemon d;
static struct box box;

/* ---- waiting: the loop turns until a condition holds ---- */

typedef int (*cond_fn)(void *arg);

static int until(cond_fn cond, void *arg, int ms)
{
	return box_run_until(d.loop, cond, arg, ms);
}

static int box_field_set(void *arg)
{
	return box_get(&box, arg) > 0;
}

static int box_field_two(void *arg)
{
	return box_get(&box, arg) >= 2;
}

/* The snapshot of tuner id: 0, or -ENOENT when there is none. */
static int snapshot_of(uint32_t id, struct tuner_snapshot *s)
{
	struct tuner *t = tuner_find(&d, id);

	if (!t)
		return -ENOENT;
	tuner_snapshot(t, s);
	return 0;
}

static int state_is(uint32_t id, enum tuner_state s)
{
	struct tuner_snapshot snap;

	return snapshot_of(id, &snap) == 0 && snap.state == s;
}

static int tuner1_ready(void *arg)
{
	(void)arg;
	return state_is(1, TUNER_READY);
}

static int tuner1_offline(void *arg)
{
	(void)arg;
	return state_is(1, TUNER_OFFLINE);
}

/* ---- events ---- */

struct seen_events {
	char types[512][32];
	char *json[512];
	int n;
};
static struct seen_events seen;

static void on_event(const struct event *ev, void *arg)
{
	(void)arg;
	if (seen.n < 512) {
		seen.json[seen.n] = strdup(ev->json);
		snprintf(seen.types[seen.n++], 32, "%s", ev->type);
	}
}

static void forget_events(void)
{
	for (int i = 0; i < seen.n; i++)
		free(seen.json[i]);
	seen.n = 0;
}

/* The newest event of this type as JSON (NULL if none). */
static json_t *last_event(const char *type)
{
	for (int i = seen.n - 1; i >= 0; i--)
		if (!strcmp(seen.types[i], type))
			return json_loads(seen.json[i], 0, NULL);
	return NULL;
}

/* Index of the newest event of this type, -1 if none. */
static int last_index(const char *type)
{
	for (int i = seen.n - 1; i >= 0; i--)
		if (!strcmp(seen.types[i], type))
			return i;
	return -1;
}

static const char *str_of(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "";
}

static int count_type(const char *type)
{
	int n = 0;

	for (int i = 0; i < seen.n; i++)
		n += strcmp(seen.types[i], type) == 0;
	return n;
}

static int has_event(void *type)
{
	return count_type(type) > 0;
}

/* ---- requests ---- */

struct result {
	int done, err;
	struct tstub_status status;
	int have_status;
};

static void on_done(int err, const struct tstub_status *st, void *arg)
{
	struct result *r = arg;

	r->done++;
	r->err = err;
	r->have_status = st != NULL;
	if (st)
		r->status = *st;
}

static int result_done(void *arg)
{
	return ((struct result *)arg)->done > 0;
}

static int submit(uint32_t id, enum tuner_op op, uint32_t hz, struct result *r)
{
	struct tstub_params p = {
	    .delsys = TSTUB_DELSYS_DVBT, .frequency = hz, .bandwidth = 8000000};
	struct tuner *t = tuner_find(&d, id);

	memset(r, 0, sizeof(*r));
	return t ? tuner_submit(t, op, &p, "api:test", on_done, r) : -ENOENT;
}

/* Submit and wait for the completion; returns its err. */
static int call(uint32_t id, enum tuner_op op, uint32_t hz, struct result *r)
{
	int err = submit(id, op, hz, r);

	if (err)
		return err;
	CHECK(until(result_done, r, 3000));
	return r->err;
}

static void test_handshake(void)
{
	CHECK(until(box_field_set, &box.init_replies, 2000));
	CHECK_EQ_INT(box_get(&box, &box.init_err), 0);
	box_cmd(&box, BOX_LOAD, CHIP);
	CHECK(until(box_field_set, &box.load_replies, 2000));
	CHECK_EQ_INT(box_get(&box, &box.load_err), 0);
	CHECK(strcmp(box.load_info.name, "GOODCHIP") == 0);
	/* The answer waits for the trials of every plugin file. */
	box_cmd(&box, BOX_LOAD, 0xBEEF);
	CHECK(until(box_field_two, &box.load_replies, 3000));
	CHECK_EQ_INT(box_get(&box, &box.load_err), -ENOENT);
	pthread_mutex_lock(&box.lock);
	box.chip = CHIP;
	pthread_mutex_unlock(&box.lock);

	box_cmd(&box, BOX_ATTACH, 1);
	box_cmd(&box, BOX_ATTACH, 2);
	CHECK(until(box_field_set, &box.attach_replies[1], 3000));
	CHECK(until(box_field_set, &box.attach_replies[2], 3000));
	CHECK_EQ_INT(box_get(&box, &box.attach_err[1]), 0);
	CHECK_EQ_INT(box_get(&box, &box.attach_err[2]), 0);
	CHECK(state_is(1, TUNER_READY) && state_is(2, TUNER_READY));
	CHECK_EQ_INT(box_get(&box, &box.binds[1]), 1);
	CHECK(count_type("stub.connected") == 1 &&
	      count_type("plugin.load") == 1);
}

/* The API's tune, as events: tune_started then tuner.tune with the REST
 * shapes, then tuner.lock. */
static void check_tune_events(void)
{
	json_t *ev = last_event("tuner.tune"), *p, *st;

	CHECK(ev != NULL);
	CHECK(!strcmp(str_of(ev, "box"), "testbox"));
	CHECK_EQ_INT(json_integer_value(json_object_get(ev, "tuner")), 1);
	CHECK(!strcmp(str_of(ev, "origin"), "api"));
	CHECK(!strcmp(str_of(ev, "by"), "api:test"));
	CHECK(!strcmp(str_of(ev, "result"), "ok"));
	CHECK(!json_object_get(ev, "message") && !json_object_get(ev, "ok"));
	CHECK(json_is_integer(json_object_get(ev, "elapsed_ms")));
	p = json_object_get(ev, "params");
	CHECK(!strcmp(str_of(p, "delivery_system"), "DVBT"));
	CHECK_EQ_INT(json_integer_value(json_object_get(p, "frequency")),
		     474000000);
	CHECK_EQ_INT(json_integer_value(json_object_get(p, "bandwidth")),
		     8000000);
	CHECK_EQ_INT(json_object_size(p), 3);
	st = json_object_get(ev, "status");
	CHECK(json_is_object(json_object_get(st, "fe_status")));
	CHECK(json_is_true(json_object_get(st, "pll_locked")));
	CHECK(json_is_string(json_object_get(st, "changed_at")));
	CHECK(json_object_get(st, "signal_strength") != NULL);
	CHECK(json_is_boolean(json_object_get(ev, "locked")));
	json_decref(ev);

	ev = last_event("tuner.tune_started");
	CHECK(ev && !strcmp(str_of(ev, "origin"), "api"));
	CHECK(ev &&
	      !strcmp(str_of(json_object_get(ev, "params"), "delivery_system"),
		      "DVBT"));
	CHECK(last_index("tuner.tune_started") < last_index("tuner.tune"));
	json_decref(ev);

	ev = last_event("tuner.lock");
	CHECK(ev && json_is_true(json_object_get(ev, "locked")));
	CHECK(ev && json_is_object(json_object_get(
			json_object_get(ev, "status"), "fe_status")));
	json_decref(ev);
}

static void test_tune(void)
{
	struct tuner_snapshot s;
	struct result r;

	CHECK_EQ_INT(call(1, TUNER_OP_TUNE, 474000000, &r), 0);
	CHECK(r.have_status && r.status.pll_locked == 1);
	CHECK_EQ_INT(snapshot_of(1, &s), 0);
	CHECK_EQ_INT(s.params.frequency, 474000000);
	CHECK(strcmp(s.changed_by, "api:test") == 0);
	CHECK_EQ_INT(s.changed_origin, TUNER_ORIGIN_API);
	CHECK_EQ_INT(s.locked, 1);
	CHECK(count_type("tuner.tune") >= 1 && count_type("tuner.lock") == 1);
	check_tune_events();
	/* The stub learnt the API's tune (a notification: it may land just
	 * after the tune's answer). */
	CHECK(until(box_field_set, &box.params_changed[1], 2000));
	CHECK_EQ_INT(box_get(&box, &box.params_changed[1]), 1);
	CHECK_EQ_INT(box.cached[1].frequency, 474000000);

	CHECK_EQ_INT(submit(1, TUNER_OP_FREQUENCY, 0, &r), -EINVAL);
	CHECK_EQ_INT(submit(1, TUNER_OP_TUNE, 10000000, &r), -EINVAL);
	CHECK_EQ_INT(call(2, TUNER_OP_STATUS, 0, &r), 0);
}

/* The tune the worker died in, then the restore. */
static void check_crash_events(void)
{
	json_t *ev;
	int lost = -1;

	for (int i = 0; i < seen.n; i++) {
		if (strcmp(seen.types[i], "tuner.tune"))
			continue;
		ev = json_loads(seen.json[i], 0, NULL);
		if (json_integer_value(json_object_get(
			json_object_get(ev, "params"), "frequency")) ==
		    CRASH_HZ) {
			CHECK(!strcmp(str_of(ev, "result"), "unavailable"));
			CHECK(str_of(ev, "message")[0] != '\0');
			CHECK(json_is_null(json_object_get(ev, "status")));
			CHECK(
			    json_is_integer(json_object_get(ev, "elapsed_ms")));
			lost = i;
		}
		json_decref(ev);
	}
	CHECK(lost >= 0);
	ev = last_event("tuner.tune");
	CHECK(ev && !strcmp(str_of(ev, "origin"), "restore"));
	CHECK(ev && !strcmp(str_of(ev, "result"), "ok"));
	CHECK(last_index("tuner.tune") > lost);
	json_decref(ev);
}

static void test_crash(void)
{
	struct result crash, replay, other;
	struct tuner_snapshot s;
	int restores = count_type("tuner.tune");

	CHECK_EQ_INT(submit(1, TUNER_OP_TUNE, CRASH_HZ, &crash), 0);
	CHECK_EQ_INT(submit(1, TUNER_OP_STATUS, 0, &replay), 0);
	CHECK(until(result_done, &crash, 3000));
	CHECK_EQ_INT(crash.err, -ECONNABORTED);
	/* The other tuner never notices. */
	CHECK_EQ_INT(call(2, TUNER_OP_STATUS, 0, &other), 0);
	/* The queued request went to the new worker. */
	CHECK(until(result_done, &replay, 3000));
	CHECK_EQ_INT(replay.err, 0);
	CHECK(until(tuner1_ready, NULL, 3000));
	CHECK_EQ_INT(snapshot_of(1, &s), 0);
	CHECK_EQ_INT(s.counters.crashes, 1);
	CHECK_EQ_INT(s.counters.restarts, 1);
	CHECK_EQ_INT(s.params.frequency, 474000000);
	CHECK_EQ_INT(s.changed_origin, TUNER_ORIGIN_RESTORE);
	CHECK(count_type("worker.crash") == 1 &&
	      count_type("worker.restart") == 1);
	/* crash (failed tune) + restore */
	CHECK(count_type("tuner.tune") >= restores + 2);
	check_crash_events();
	CHECK_EQ_INT(box_get(&box, &box.binds[1]), 2);
}

static long long freq_of(int i)
{
	json_t *ev = json_loads(seen.json[i], 0, NULL);
	long long hz = json_integer_value(
	    json_object_get(json_object_get(ev, "params"), "frequency"));

	json_decref(ev);
	return hz;
}

/* The newest tune_started at hz is followed by a tuner.tune at hz with
 * this result. */
static int tune_closed(long long hz, const char *result)
{
	int started = -1;

	for (int i = 0; i < seen.n; i++)
		if (!strcmp(seen.types[i], "tuner.tune_started") &&
		    freq_of(i) == hz)
			started = i;
	for (int i = started + 1; started >= 0 && i < seen.n; i++) {
		json_t *ev;
		int ok;

		if (strcmp(seen.types[i], "tuner.tune") || freq_of(i) != hz)
			continue;
		ev = json_loads(seen.json[i], 0, NULL);
		ok = !strcmp(str_of(ev, "result"), result) &&
		     str_of(ev, "message")[0] != '\0';
		json_decref(ev);
		return ok;
	}
	return 0;
}

static void test_hang(void)
{
	struct result hang, other;
	struct tuner_snapshot s;

	CHECK_EQ_INT(submit(1, TUNER_OP_TUNE, HANG_HZ, &hang), 0);
	CHECK(until(result_done, &hang, 3000));
	CHECK_EQ_INT(hang.err, -ETIMEDOUT);
	/* The request ends at its deadline; the worker gets its grace
	 * before it is called hung, and the other tuner serves meanwhile. */
	CHECK(!has_event("worker.hang"));
	CHECK_EQ_INT(call(2, TUNER_OP_STATUS, 0, &other), 0);
	CHECK(!has_event("worker.hang"));
	CHECK(until(has_event, "worker.hang", 3000));
	CHECK(until(tuner1_ready, NULL, 3000));
	CHECK_EQ_INT(snapshot_of(1, &s), 0);
	CHECK_EQ_INT(s.counters.hangs, 1);
	CHECK_EQ_INT(s.counters.timeouts, 1);
	CHECK_EQ_INT(s.params.frequency, 474000000);
	/* The killed tune is closed by its tuner.tune. */
	CHECK(tune_closed(HANG_HZ, "unavailable"));
}

static int has_two(void *type)
{
	return count_type(type) == 2;
}

/* A worker that stops taking commands (SIGSTOP): nothing begins, the
 * liveness watch calls it hung, kills it, and a new worker serves. */
static void test_stopped(void)
{
	struct result sent, queued, after;
	struct tuner_snapshot s;
	pid_t pid;
	json_t *ev;

	CHECK_EQ_INT(snapshot_of(1, &s), 0);
	pid = s.worker_pid;
	CHECK(pid > 0 && kill(pid, SIGSTOP) == 0);
	CHECK_EQ_INT(submit(1, TUNER_OP_TUNE, 490000000, &sent), 0);
	CHECK(until(result_done, &sent, 3000));
	CHECK_EQ_INT(sent.err, -ETIMEDOUT);
	CHECK_EQ_INT(count_type("worker.hang"), 1);
	/* Queued behind the stuck command: answered with an error, never
	 * run late by the next worker. */
	CHECK_EQ_INT(submit(1, TUNER_OP_TUNE, 498000000, &queued), 0);
	CHECK(until(result_done, &queued, 3000));
	CHECK(queued.err == -ETIMEDOUT || queued.err == -ECONNABORTED);
	CHECK(until(has_two, "worker.hang", 3000));
	CHECK(until(tuner1_ready, NULL, 3000));
	ev = last_event("worker.hang");
	CHECK(ev && !strcmp(str_of(ev, "op"), "tune"));
	CHECK(ev && json_integer_value(json_object_get(ev, "pid")) == pid);
	json_decref(ev);
	CHECK_EQ_INT(snapshot_of(1, &s), 0);
	CHECK(s.worker_pid > 0 && s.worker_pid != pid);
	CHECK_EQ_INT(s.counters.hangs, 2);
	/* Neither stale tune was applied. */
	CHECK_EQ_INT(s.params.frequency, 474000000);
	CHECK_EQ_INT(call(1, TUNER_OP_TUNE, 474000000, &after), 0);
}

static void test_queue_bound(void)
{
	static struct result r[TUNER_QUEUE_MAX + 2];
	int accepted = 0, err = 0;

	while (accepted < TUNER_QUEUE_MAX + 2 &&
	       !(err = submit(1, TUNER_OP_STATUS, 0, &r[accepted])))
		accepted++;
	CHECK_EQ_INT(err, -EBUSY);
	/* One in flight, the queue full behind it. */
	CHECK_EQ_INT(accepted, TUNER_QUEUE_MAX + 1);
	CHECK(until(result_done, &r[accepted - 1], 3000));
	for (int i = 0; i < accepted; i++)
		CHECK(r[i].done == 1 && r[i].err == 0);
}

static void test_detach(void)
{
	box_cmd(&box, BOX_DETACH, 2);
	CHECK(until(box_field_set, &box.detach_replies, 2000));
	CHECK_EQ_INT(box_get(&box, &box.detach_err), 0);
	CHECK(tuner_find(&d, 2) == NULL);
	CHECK(count_type("tuner.detach") == 1);
}

static int started_more(void *before)
{
	return count_type("tuner.tune_started") > *(int *)before;
}

static void test_stub_gone(void)
{
	struct tuner_snapshot s;
	struct result r;

	struct result hung;
	int started = count_type("tuner.tune_started");

	/* A tune the stub's departure interrupts is closed too. */
	CHECK_EQ_INT(submit(1, TUNER_OP_TUNE, HANG_HZ, &hung), 0);
	CHECK(until(started_more, &started, 2000));
	box_cmd(&box, BOX_DROP_CONTROL, 0);
	CHECK(until(tuner1_offline, NULL, 2000));
	CHECK(hung.done == 1 && hung.err != 0);
	CHECK(tune_closed(HANG_HZ, "unavailable"));
	CHECK(count_type("stub.disconnected") == 1);
	CHECK_EQ_INT(submit(1, TUNER_OP_STATUS, 0, &r), -ENOTCONN);
	/* The daemon reconnects; the box re-sends LOAD and ATTACH. */
	CHECK(until(tuner1_ready, NULL, 3000));
	CHECK(count_type("stub.connected") == 2);
	CHECK_EQ_INT(snapshot_of(1, &s), 0);
	CHECK_EQ_INT(s.params.frequency, 474000000);
	CHECK_EQ_INT(call(1, TUNER_OP_STATUS, 0, &r), 0);
}

int main(int argc, char **argv)
{
	const char *dirs[] = {argc > 1 ? argv[1] : ".", NULL};
	struct daemon_config cfg = {.plugin_dirs = dirs,
				    .deadline_ms = DEADLINE_MS,
				    .event_ring = 256,
				    .name = "testbox"};
	char path[108], spec[128];
	int st;

	log_set_level(argc > 2 ? LL_DEBUG : LL_WARN);
	snprintf(path, sizeof(path), "/tmp/tunerd-tt-%d.sock", (int)getpid());
	snprintf(spec, sizeof(spec), "sim:%s", path);
	CHECK_EQ_INT(box_start(&box, path), 0);
	CHECK_EQ_INT(stub_parse(spec, &cfg.stub), 0);
	CHECK_EQ_INT(daemon_init(&d, &cfg), 0);
	eventbus_subscribe(d.events, on_event, NULL);
	CHECK_EQ_INT(daemon_start(&d), 0);

	test_handshake();
	test_tune();
	test_crash();
	test_hang();
	test_stopped();
	test_queue_bound();
	test_detach();
	test_stub_gone();

	daemon_fini(&d);
	forget_events();
	/* Every worker was reaped. */
	CHECK(waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD);
	box_stop(&box);
	return check_done("test_tuner");
}

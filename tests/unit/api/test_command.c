// SPDX-License-Identifier: MIT
/*
 * The command service end to end against the fake box and real worker
 * processes (the fixture plugin): answers that always come later than
 * the submit, the checks in their order (tuner, queue limit, role,
 * params, lease), the lock wait, leases taken, enforced and released,
 * shared status reads, a worker's errno shaped into the API's error, and
 * a cancelled client that is never answered.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "command.h"
#include "daemon.h"
#include "eventbus.h"
#include "fake_box.h"
#include "lease.h"
#include "log.h"
#include "loop.h"
#include "tuner.h"

#define CHIP 0xF0F0

static struct daemon d;
static struct box box;
static struct lease_table *leases;
static struct command_service *cs;

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

static struct tuner_snapshot snap(uint32_t id)
{
	struct tuner *t = tuner_find(&d, id);
	struct tuner_snapshot s = {0};

	if (t)
		tuner_snapshot(t, &s);
	return s;
}

static int tuner_idle(void *arg)
{
	return snap(*(uint32_t *)arg).queued == 0;
}

static int tuners_ready(void *arg)
{
	(void)arg;
	return snap(1).state == TUNER_READY && snap(2).state == TUNER_READY;
}

/* ---- events: their types in order ---- */

#define SEEN_MAX 256
static char seen[SEEN_MAX][32];
static int nseen;

static void on_event(const struct event *ev, void *arg)
{
	(void)arg;
	if (nseen < SEEN_MAX)
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", ev->type);
}

/* Index of the first event of this type from index from on, -1: none. */
static int seen_at(const char *type, int from)
{
	for (int i = from; i < nseen; i++)
		if (!strcmp(seen[i], type))
			return i;
	return -1;
}

/* ---- answers ---- */

struct answer {
	int calls;
	int events_before; /* events the subscriber had at the answer */
	int events_read;   /* and after a read of the ring there */
	struct command_result res;
};

static void on_answer(struct command_result *res, void *arg)
{
	struct answer *a = arg;

	if (a->calls++)
		json_decref(a->res.body);
	a->res = *res;
	a->events_before = nseen;
	/* A reader at the answer finds the events published before it (the
	 * read flushes those published soon, to the subscriber too). */
	eventbus_last_seq(d.events);
	a->events_read = nseen;
}

static int answered(void *arg)
{
	return ((struct answer *)arg)->calls > 0;
}

static void answer_free(struct answer *a)
{
	json_decref(a->res.body);
	memset(a, 0, sizeof(*a));
}

static const char *error_code(json_t *body)
{
	return json_string_value(
	    json_object_get(json_object_get(body, "error"), "code"));
}

static json_t *error_details(json_t *body)
{
	return json_object_get(json_object_get(body, "error"), "details");
}

/* Submit; 0 (then the answer comes from the loop) or the errno of the
 * answer at once, which is then in a->res. */
static int submit(struct command_client *cl, uint32_t tuner, enum tuner_op op,
		  const char *args, const char *lease_id, struct answer *a)
{
	struct command_request req = {
	    .tuner = tuner, .op = op, .args_inline = 1};
	int ret;

	memset(a, 0, sizeof(*a));
	req.args = args ? json_loads(args, 0, NULL) : NULL;
	req.lease_id = lease_id ? json_string(lease_id) : NULL;
	ret = command_submit(cl, &req, on_answer, a, &a->res);
	json_decref(req.args);
	json_decref(req.lease_id);
	return ret;
}

/* Submit and wait for the answer; returns its HTTP status. */
static unsigned int call(struct command_client *cl, uint32_t tuner,
			 enum tuner_op op, const char *args,
			 const char *lease_id, struct answer *a)
{
	if (submit(cl, tuner, op, args, lease_id, a))
		return a->res.status;
	CHECK_EQ_INT(a->calls, 0); /* never from inside the submit */
	CHECK(until(answered, a, 3000));
	CHECK_EQ_INT(a->calls, 1);
	return a->res.status;
}

#define TUNE_474 "{\"delivery_system\":\"DVBT\",\"frequency\":474000000"

static void setup(void)
{
	CHECK(until(box_field_set, &box.init_replies, 2000));
	box_cmd(&box, BOX_LOAD, CHIP);
	CHECK(until(box_field_set, &box.load_replies, 2000));
	pthread_mutex_lock(&box.lock);
	box.chip = CHIP;
	pthread_mutex_unlock(&box.lock);
	box_cmd(&box, BOX_ATTACH, 1);
	box_cmd(&box, BOX_ATTACH, 2);
	CHECK(until(tuners_ready, NULL, 3000));
}

static void test_checks(void)
{
	struct command_client viewer, op1;
	struct answer a;

	command_client_init(&viewer, cs, ROLE_VIEWER, "vic", 0);
	command_client_init(&op1, cs, ROLE_OPERATOR, "olga", 1);
	CHECK_EQ_INT(submit(&op1, 9, TUNER_OP_STATUS, NULL, NULL, &a), -ENOENT);
	CHECK_EQ_INT(a.res.status, 404);
	CHECK(!strcmp(error_code(a.res.body), "not_found"));
	answer_free(&a);

	CHECK_EQ_INT(submit(&viewer, 1, TUNER_OP_TUNE, TUNE_474 "}", NULL, &a),
		     -EACCES);
	CHECK_EQ_INT(a.res.status, 403);
	CHECK(!strcmp(json_string_value(json_object_get(
			  error_details(a.res.body), "required_role")),
		      "operator"));
	answer_free(&a);

	CHECK_EQ_INT(submit(&op1, 1, TUNER_OP_TUNE, NULL, NULL, &a), -EINVAL);
	CHECK_EQ_INT(a.res.status, 400);
	answer_free(&a);
	CHECK_EQ_INT(submit(&op1, 1, TUNER_OP_TUNE,
			    "{\"delivery_system\":\"DVBT\",\"frequency\":"
			    "900000000}",
			    NULL, &a),
		     -EINVAL);
	CHECK_EQ_INT(a.res.status, 422);
	CHECK(!strcmp(error_code(a.res.body), "unsupported_params"));
	CHECK_EQ_INT(json_integer_value(json_object_get(
			 error_details(a.res.body), "frequency_max")),
		     860000000);
	answer_free(&a);
	CHECK_EQ_INT(submit(&op1, 1, TUNER_OP_TUNE,
			    TUNE_474 ",\"wait_lock_ms\":20000}", NULL, &a),
		     -EINVAL);
	CHECK(!strcmp(json_string_value(
			  json_object_get(error_details(a.res.body), "field")),
		      "wait_lock_ms"));
	answer_free(&a);
	CHECK_EQ_INT(submit(&op1, 1, TUNER_OP_SLEEP, "{\"now\":1}", NULL, &a),
		     -EINVAL);
	answer_free(&a);
}

/* A WebSocket request's params object, and params parsed by the
 * transport itself (as an HDHomeRun channel would be). */
static void test_request_forms(void)
{
	struct tstub_params p = {.delsys = TSTUB_DELSYS_DVBT,
				 .frequency = 474000000};
	struct command_request req = {
	    .tuner = 1, .op = TUNER_OP_TUNE, .args_field = "params"};
	struct command_client cl;
	struct answer a = {0};

	/* A transport without the service (a bench) is refused. */
	command_client_init(&cl, NULL, ROLE_ADMIN, NULL, 0);
	CHECK_EQ_INT(command_submit(&cl, &req, on_answer, &a, &a.res),
		     -EOPNOTSUPP);
	CHECK_EQ_INT(a.res.status, 503);
	answer_free(&a);
	command_client_cancel(&cl);

	command_client_init(&cl, cs, ROLE_OPERATOR, NULL, 0);
	CHECK_EQ_INT(command_submit(&cl, &req, on_answer, &a, &a.res), -EINVAL);
	CHECK(!strcmp(json_string_value(
			  json_object_get(error_details(a.res.body), "field")),
		      "params"));
	answer_free(&a);
	req.args = json_pack("{s:s,s:i,s:s}", "delivery_system", "DVBT",
			     "frequency", 474000000, "lease_id", "x");
	CHECK_EQ_INT(command_submit(&cl, &req, on_answer, &a, &a.res), -EINVAL);
	CHECK(!strcmp(json_string_value(
			  json_object_get(error_details(a.res.body), "field")),
		      "lease_id"));
	answer_free(&a);
	json_decref(req.args);
	req.args = NULL;
	req.params = &p;
	cl.label = "hdhr:192.0.2.7";
	CHECK_EQ_INT(command_submit(&cl, &req, on_answer, &a, &a.res), 0);
	CHECK_EQ_INT(a.calls, 0);
	CHECK(until(answered, &a, 3000));
	CHECK_EQ_INT(a.res.status, 200);
	answer_free(&a);
	CHECK(!strcmp(snap(1).changed_by, "hdhr:192.0.2.7"));
}

/* The queue limit: one waiting command for this client. */
static void test_queue_limit(void)
{
	struct command_client op1;
	struct answer a, b;

	command_client_init(&op1, cs, ROLE_OPERATOR, "olga", 1);
	CHECK_EQ_INT(submit(&op1, 1, TUNER_OP_INIT, NULL, NULL, &a), 0);
	CHECK_EQ_INT(submit(&op1, 1, TUNER_OP_STATUS, NULL, NULL, &b), -EAGAIN);
	CHECK_EQ_INT(b.res.status, 429);
	answer_free(&b);
	CHECK(until(answered, &a, 3000));
	CHECK_EQ_INT(a.res.status, 200);
	CHECK(!strcmp(json_string_value(json_object_get(a.res.body, "state")),
		      "ready"));
	answer_free(&a);
}

static void test_tune(void)
{
	struct command_client cl;
	struct tuner_snapshot s;
	struct answer a;

	command_client_init(&cl, cs, ROLE_OPERATOR, "olga", 0);
	CHECK_EQ_INT(call(&cl, 1, TUNER_OP_TUNE,
			  TUNE_474 ",\"wait_lock_ms\":500}", NULL, &a),
		     200);
	CHECK_EQ_INT(json_integer_value(json_object_get(a.res.body, "tuner")),
		     1);
	CHECK(json_is_true(json_object_get(a.res.body, "locked")));
	CHECK_EQ_INT(json_integer_value(json_object_get(
			 json_object_get(a.res.body, "params"), "frequency")),
		     474000000);
	CHECK(json_is_object(json_object_get(a.res.body, "status")));
	answer_free(&a);
	s = snap(1);
	CHECK(!strcmp(s.changed_by, "api:olga"));

	/* The worker's errno reaches the answer: its crash is a 503. */
	CHECK_EQ_INT(
	    call(&cl, 2, TUNER_OP_TUNE,
		 "{\"delivery_system\":\"DVBT\",\"frequency\":666000000}", NULL,
		 &a),
	    503);
	CHECK_EQ_INT(a.res.err, -ECONNABORTED);
	CHECK(!strcmp(error_code(a.res.body), "unavailable"));
	answer_free(&a);
}

/* A lock that comes after the tune (the fixture's chip shows it from its
 * fourth status read on) answers the wait the moment the worker's lock
 * watch reports it: tuner.tune (unlocked), then tuner.lock, both in the
 * ring for a reader at the answer but sent to subscribers after it (the
 * answer goes first), and the daemon sent no status command of its own.
 * A poll would need status commands and answer after its tick. */
static void test_lock_wait(void)
{
	struct command_client cl;
	struct answer a;
	uint64_t before;
	uint32_t id = 2;
	int tune, lock;

	command_client_init(&cl, cs, ROLE_OPERATOR, "olga", 0);
	CHECK(until(tuner_idle, &id, 3000));
	before = snap(2).counters.api_commands;
	nseen = 0;
	CHECK_EQ_INT(call(&cl, 2, TUNER_OP_TUNE,
			  "{\"delivery_system\":\"DVBT\",\"frequency\":"
			  "555000000,\"wait_lock_ms\":10000}",
			  NULL, &a),
		     200);
	CHECK(json_is_true(json_object_get(a.res.body, "locked")));
	CHECK(json_is_true(json_object_get(
	    json_object_get(a.res.body, "status"), "pll_locked")));
	tune = seen_at("tuner.tune", 0);
	lock = tune < 0 ? -1 : seen_at("tuner.lock", tune);
	CHECK(tune >= 0 && lock > tune && lock < a.events_read);
	CHECK(lock >= a.events_before);
	CHECK_EQ_INT(snap(2).counters.api_commands - before, 1);
	CHECK_EQ_INT(snap(2).locked, 1);
	answer_free(&a);

	/* A chip that never locks: answered at the wait's end, unlocked,
	 * still without a status command. */
	before = snap(2).counters.api_commands;
	CHECK_EQ_INT(call(&cl, 2, TUNER_OP_TUNE,
			  "{\"delivery_system\":\"DVBT\",\"frequency\":"
			  "444000000,\"wait_lock_ms\":30}",
			  NULL, &a),
		     200);
	CHECK(json_is_false(json_object_get(a.res.body, "locked")));
	CHECK_EQ_INT(snap(2).counters.api_commands - before, 1);
	answer_free(&a);

	/* A client gone while its tune waits for lock is never answered. */
	CHECK_EQ_INT(submit(&cl, 2, TUNER_OP_TUNE,
			    "{\"delivery_system\":\"DVBT\",\"frequency\":"
			    "444000000,\"wait_lock_ms\":10000}",
			    NULL, &a),
		     0);
	CHECK(until(tuner_idle, &id, 3000));
	command_client_cancel(&cl);
	CHECK_EQ_INT(a.calls, 0);
	CHECK_EQ_INT(call(&cl, 2, TUNER_OP_TUNE, TUNE_474 "}", NULL, &a), 200);
	answer_free(&a);
}

static void test_leases(void)
{
	struct command_client cl;
	struct command_result res;
	struct answer a;
	json_t *body = json_pack("{s:s,s:i}", "holder", "alice", "ttl_s", 60);
	char id[LEASE_ID_LEN + 1];

	command_client_init(&cl, cs, ROLE_OPERATOR, NULL, 0);
	/* Without a state directory a change is answered at once. */
	CHECK_EQ_INT(command_lease_post(&cl, 1, body, NULL, NULL, &res), 1);
	json_decref(body);
	CHECK_EQ_INT(res.status, 201);
	snprintf(id, sizeof(id), "%s",
		 json_string_value(json_object_get(res.body, "lease_id")));
	json_decref(res.body);

	CHECK_EQ_INT(submit(&cl, 1, TUNER_OP_TUNE, TUNE_474 "}", NULL, &a),
		     -EBUSY);
	CHECK_EQ_INT(a.res.status, 409);
	CHECK(!strcmp(json_string_value(
			  json_object_get(error_details(a.res.body), "holder")),
		      "alice"));
	answer_free(&a);
	/* A status needs no lease; the lease id beside the args opens it. */
	CHECK_EQ_INT(call(&cl, 1, TUNER_OP_STATUS, NULL, NULL, &a), 200);
	answer_free(&a);
	CHECK_EQ_INT(call(&cl, 1, TUNER_OP_TUNE, TUNE_474 "}", id, &a), 200);
	answer_free(&a);
	CHECK(!strcmp(snap(1).changed_by, "api:alice"));
	CHECK_EQ_INT(submit(&cl, 1, TUNER_OP_SLEEP, "{\"lease_id\":7}", id, &a),
		     -EINVAL);
	answer_free(&a);

	CHECK_EQ_INT(command_lease_delete(&cl, 1, "nope", NULL, NULL, &res),
		     -EBUSY);
	CHECK_EQ_INT(res.status, 409);
	json_decref(res.body);
	CHECK_EQ_INT(command_lease_delete(&cl, 1, id, NULL, NULL, &res), 1);
	CHECK_EQ_INT(res.status, 204);
	CHECK_EQ_INT(command_lease_delete(&cl, 1, id, NULL, NULL, &res),
		     -ENOENT);
	CHECK_EQ_INT(res.status, 404);
	json_decref(res.body);
}

/* Three clients ask at once: one read in flight, one shared by the two
 * that came during it. */
static void test_shared_status(void)
{
	struct command_client cl[3];
	struct answer a[3];
	uint64_t before;
	uint32_t id = 2;

	CHECK(until(tuner_idle, &id, 3000));
	before = snap(2).counters.api_commands;
	for (int i = 0; i < 3; i++) {
		command_client_init(&cl[i], cs, ROLE_VIEWER, NULL, 0);
		CHECK_EQ_INT(
		    submit(&cl[i], 2, TUNER_OP_STATUS, NULL, NULL, &a[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		CHECK(until(answered, &a[i], 3000));
		CHECK_EQ_INT(a[i].res.status, 200);
		CHECK(json_is_object(
		    json_object_get(a[i].res.body, "fe_status")));
		answer_free(&a[i]);
	}
	CHECK_EQ_INT(snap(2).counters.api_commands - before, 2);
}

/* A client that goes away is never answered, and its tuner's queue
 * drains. */
static void test_cancel(void)
{
	struct command_client cl;
	struct answer a, b;
	uint32_t id = 1;

	command_client_init(&cl, cs, ROLE_OPERATOR, NULL, 0);
	CHECK_EQ_INT(submit(&cl, 1, TUNER_OP_TUNE, TUNE_474 "}", NULL, &a), 0);
	CHECK_EQ_INT(submit(&cl, 1, TUNER_OP_STATUS, NULL, NULL, &b), 0);
	CHECK_EQ_INT(cl.pending, 2);
	command_client_cancel(&cl);
	CHECK_EQ_INT(cl.pending, 0);
	CHECK(until(tuner_idle, &id, 3000));
	CHECK_EQ_INT(a.calls + b.calls, 0);
}

int main(int argc, char **argv)
{
	const char *dirs[] = {argc > 1 ? argv[1] : ".", NULL};
	struct daemon_config cfg = {.plugin_dirs = dirs,
				    .deadline_ms = 2000,
				    .event_ring = 256,
				    .name = "testbox"};
	char path[108], spec[128];
	int st;

	log_set_level(argc > 2 ? LL_DEBUG : LL_WARN);
	snprintf(path, sizeof(path), "/tmp/tunerd-tc-%d.sock", (int)getpid());
	snprintf(spec, sizeof(spec), "sim:%s", path);
	CHECK_EQ_INT(box_start(&box, path), 0);
	CHECK_EQ_INT(stub_parse(spec, &cfg.stub), 0);
	CHECK_EQ_INT(daemon_init(&d, &cfg), 0);
	leases = lease_table_new(d.loop, d.events);
	cs = command_service_new(&d, leases);
	CHECK(leases && cs);
	eventbus_subscribe(d.events, on_event, NULL);
	CHECK_EQ_INT(daemon_start(&d), 0);

	setup();
	test_checks();
	test_queue_limit();
	test_request_forms();
	test_tune();
	test_lock_wait();
	test_leases();
	test_shared_status();
	test_cancel();

	command_service_free(cs);
	lease_table_free(leases);
	daemon_fini(&d);
	while (waitpid(-1, &st, 0) > 0)
		;
	box_stop(&box);
	return check_done("test_command");
}

// SPDX-License-Identifier: MIT
/*
 * The command service's leases: the check every command goes through and
 * the lease operations (take, renew, release) with their answers.  The
 * lease table itself (ids, expiry, pre-emption, events) is lease.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "command_priv.h"
#include "daemon.h"
#include "lease.h"

struct lease_body {
	const char *lease_id;
	const char *holder;
	unsigned int ttl_s; /* 0: not given */
	int priority;       /* -1: not given */
};

static int bad(struct api_error *e, const char *field, const char *why)
{
	api_error_set(e, 400, "bad_request", json_pack("{s:s}", "field", field),
		      "%s: %s", field, why);
	return -EINVAL;
}

/* Characters in s: jansson strings are valid UTF-8, so every byte that
 * is not a continuation byte (10xxxxxx) starts one. */
static size_t utf8_chars(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xC0) != 0x80;
	return n;
}

/* The longest prefix of s of at most max bytes that ends on a character
 * boundary, so a cut label is still valid UTF-8 for the events. */
static int utf8_prefix(const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);

	if (n > max) {
		n = max;
		while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	return (int)n;
}

/* A change waiting for its write, with its answer. */
struct lease_op {
	struct command_client *cl;
	struct lease_op *prev, *next; /* cl->lease_ops */
	struct lease_waiter w;
	command_done_fn done;
	void *arg;
	unsigned int status;
	json_t *body;
};

/* A good answer (takes body). */
static void command_answer(struct command_result *res, unsigned int status,
			   json_t *body)
{
	*res = (struct command_result){.status = status, .body = body};
}

static int not_saved(struct command_result *res, int err);

static void op_unlink(struct lease_op *op)
{
	if (op->prev)
		op->prev->next = op->next;
	else
		op->cl->lease_ops = op->next;
	if (op->next)
		op->next->prev = op->prev;
}

static void op_saved(int err, void *arg)
{
	struct lease_op *op = arg;
	struct command_result res;
	command_done_fn done = op->done;
	void *done_arg = op->arg;

	op_unlink(op);
	if (err) {
		json_decref(op->body);
		not_saved(&res, err);
	} else {
		command_answer(&res, op->status, op->body);
	}
	free(op);
	done(&res, done_arg);
}

/* An op for cl's next change (NULL: out of memory, *now filled). */
static struct lease_op *op_new(struct command_client *cl, command_done_fn done,
			       void *arg, struct command_result *now)
{
	struct lease_op *op = calloc(1, sizeof(*op));
	struct api_error e = {0};

	if (!op) {
		api_error_set(&e, 500, "internal", NULL, "out of memory");
		command_fail(now, -ENOMEM, &e);
		return NULL;
	}
	*op = (struct lease_op){.cl = cl, .done = done, .arg = arg};
	op->w = (struct lease_waiter){.fn = op_saved, .arg = op};
	return op;
}

/* The change is made: its answer now (1) when it is final already,
 * else kept for op_saved() (0).  op is taken. */
static int op_answer(struct lease_op *op, unsigned int status, json_t *body,
		     struct command_result *now)
{
	struct command_client *cl = op->cl;

	if (!lease_waiting(&op->w)) {
		free(op);
		command_answer(now, status, body);
		return 1;
	}
	op->status = status;
	op->body = body;
	op->next = cl->lease_ops;
	if (op->next)
		op->next->prev = op;
	cl->lease_ops = op;
	return 0;
}

void command_lease_cancel(struct command_client *cl)
{
	struct lease_op *op;

	while ((op = cl->lease_ops)) {
		lease_waiter_cancel(&op->w);
		op_unlink(op);
		json_decref(op->body);
		free(op);
	}
}

/* 409 lease_conflict: who holds the tuner.  Returns -EBUSY. */
static int conflict(struct command_result *res, uint32_t tuner,
		    const struct lease *l)
{
	struct api_error e = {0};

	api_error_set(&e, 409, "lease_conflict",
		      json_pack("{s:s, s:i, s:o}", "holder", l->holder,
				"priority", l->priority, "expires",
				api_time_json(l->expires_wall)),
		      "tuner %u is leased by \"%s\" (priority %d)", tuner,
		      l->holder, l->priority);
	return command_fail(res, -EBUSY, &e);
}

int command_lease_check(struct command_service *cs, uint32_t tuner,
			const char *id, char *label, size_t len,
			struct command_result *res)
{
	struct lease l;

	if (!cs->leases)
		return 0;
	if (!lease_allows(cs->leases, tuner, id, &l))
		return conflict(res, tuner, &l);
	/* The HDHomeRun face names its clients "hdhomerun:<IP>", as it
	 * names their leases: that label stays. */
	if (id && lease_get(cs->leases, tuner, &l) &&
	    strncmp(label, TUNER_LABEL_HDHOMERUN,
		    strlen(TUNER_LABEL_HDHOMERUN)))
		snprintf(label, len, "api:%.*s", utf8_prefix(l.holder, len - 5),
			 l.holder);
	return 0;
}

static int int_field(json_t *v, const char *field, long lo, long hi, long *out,
		     struct api_error *e)
{
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi) {
		char why[64];

		snprintf(why, sizeof(why), "an integer %ld..%ld", lo, hi);
		return bad(e, field, why);
	}
	*out = (long)json_integer_value(v);
	return 0;
}

static int parse_field(const char *key, json_t *v, struct lease_body *b,
		       struct api_error *e)
{
	long n;

	if (!strcmp(key, "lease_id")) {
		if (!json_is_string(v))
			return bad(e, key, "must be a string");
		b->lease_id = json_string_value(v);
	} else if (!strcmp(key, "holder")) {
		if (!json_is_string(v) || !json_string_length(v) ||
		    utf8_chars(json_string_value(v), json_string_length(v)) >
			LEASE_HOLDER_MAX)
			return bad(e, key, "a string of 1..64 characters");
		b->holder = json_string_value(v);
	} else if (!strcmp(key, "ttl_s")) {
		if (int_field(v, key, LEASE_TTL_MIN, LEASE_TTL_MAX, &n, e))
			return -EINVAL;
		b->ttl_s = (unsigned int)n;
	} else if (!strcmp(key, "priority")) {
		if (int_field(v, key, 0, LEASE_PRIO_MAX, &n, e))
			return -EINVAL;
		b->priority = (int)n;
	} else {
		return bad(e, key, "unknown field");
	}
	return 0;
}

static int parse_body(json_t *body, struct lease_body *b, struct api_error *e)
{
	const char *key;
	json_t *v;

	b->priority = -1;
	if (!json_is_object(body)) {
		api_error_set(e, 400, "bad_request", NULL,
			      "the body must be a JSON object with \"holder\" "
			      "or \"lease_id\"");
		return -EINVAL;
	}
	json_object_foreach(body, key, v)
	{
		if (parse_field(key, v, b, e))
			return -EINVAL;
	}
	if (b->lease_id && (b->holder || b->priority >= 0))
		return bad(e, b->holder ? "holder" : "priority",
			   "a renewal takes only lease_id and ttl_s");
	if (!b->lease_id && !b->holder)
		return bad(e, "holder", "missing");
	return 0;
}

static json_t *lease_answer(const struct lease *l)
{
	return json_pack(
	    "{s:s, s:I, s:s, s:i, s:o, s:i}", "lease_id", l->id, "tuner",
	    (json_int_t)l->tuner, "holder", l->holder, "priority", l->priority,
	    "expires", api_time_json(l->expires_wall), "ttl_s", (int)l->ttl_s);
}

static int not_leased(struct command_result *res, uint32_t tuner)
{
	struct api_error e = {0};

	api_error_set(&e, 404, "not_found",
		      json_pack("{s:I}", "tuner", (json_int_t)tuner),
		      "tuner %u has no lease", tuner);
	return command_fail(res, -ENOENT, &e);
}

/* 503: the change could not be written to the state directory, so it
 * was not made (lease.h): the client may retry. */
static int not_saved(struct command_result *res, int err)
{
	struct api_error e = {0};

	api_error_set(&e, 503, "unavailable", NULL,
		      "the lease could not be saved: %s", strerror(-err));
	return command_fail(res, err, &e);
}

int command_lease_target(struct command_service *cs, uint32_t tuner)
{
	struct lease l;

	return tuner_find(cs->d, tuner) ||
	       (cs->leases && lease_get(cs->leases, tuner, &l));
}

/*
 * A take needs the tuner.  A renew or release needs the tuner or its
 * lease: after a daemon restart the leases are back before the stub has
 * attached the tuners again, and their holders must keep them alive.
 */
static int check_tuner(struct command_service *cs, uint32_t tuner,
		       int lease_will_do, struct command_result *res)
{
	struct api_error e = {0};
	struct lease l;

	if (!cs) {
		api_error_set(&e, 503, "unavailable", NULL,
			      "no command service here");
		return command_fail(res, -EOPNOTSUPP, &e);
	}
	if (lease_will_do && cs->leases && lease_get(cs->leases, tuner, &l))
		return 0;
	if (!tuner_find(cs->d, tuner)) {
		api_error_set(&e, 404, "not_found",
			      json_pack("{s:I}", "tuner", (json_int_t)tuner),
			      "no tuner %u", tuner);
		return command_fail(res, -ENOENT, &e);
	}
	if (!cs->leases) {
		api_error_set(&e, 503, "unavailable", NULL,
			      "leases are not served here");
		return command_fail(res, -EOPNOTSUPP, &e);
	}
	return 0;
}

static int lease_take(struct command_service *cs, uint32_t tuner,
		      const struct lease_body *b, struct lease_op *op,
		      struct command_result *now)
{
	struct api_error e = {0};
	struct lease l, other;
	int ret;

	ret = lease_acquire(cs->leases, tuner, b->holder,
			    b->priority >= 0 ? b->priority : LEASE_PRIO_DEFAULT,
			    b->ttl_s ? b->ttl_s : LEASE_TTL_DEFAULT, &l, &other,
			    &op->w);
	if (ret >= 0)
		return op_answer(op, 201, lease_answer(&l), now);
	free(op);
	if (ret == -EBUSY)
		return conflict(now, tuner, &other);
	api_error_set(&e, 503, "unavailable", NULL, "cannot create a lease: %s",
		      strerror(-ret));
	return command_fail(now, ret, &e);
}

static int lease_renew_op(struct command_service *cs, uint32_t tuner,
			  const struct lease_body *b, struct lease_op *op,
			  struct command_result *now)
{
	struct lease l, other;
	int ret = lease_renew(cs->leases, tuner, b->lease_id, b->ttl_s, &l,
			      &other, &op->w);

	if (!ret)
		return op_answer(op, 200, lease_answer(&l), now);
	free(op);
	if (ret == -ENOENT)
		return not_leased(now, tuner);
	if (ret == -EPERM)
		return conflict(now, tuner, &other);
	return not_saved(now, ret);
}

int command_lease_post(struct command_client *cl, uint32_t tuner, json_t *body,
		       command_done_fn done, void *arg,
		       struct command_result *now)
{
	struct command_service *cs = cl->cs;
	struct lease_body b = {0};
	struct api_error e = {0};
	struct lease_op *op;
	int bad_body = parse_body(body, &b, &e), ret;

	/* The tuner first: a body for a tuner that is not there is a 404. */
	ret = check_tuner(cs, tuner, !bad_body && b.lease_id, now);
	if (ret) {
		api_error_clear(&e);
		return ret;
	}
	if (bad_body)
		return command_fail(now, bad_body, &e);
	op = op_new(cl, done, arg, now);
	if (!op)
		return -ENOMEM;
	if (!b.lease_id)
		return lease_take(cs, tuner, &b, op, now);
	return lease_renew_op(cs, tuner, &b, op, now);
}

int command_lease_delete(struct command_client *cl, uint32_t tuner,
			 const char *lease_id, command_done_fn done, void *arg,
			 struct command_result *now)
{
	struct command_service *cs = cl->cs;
	struct lease_op *op;
	struct lease other;
	int ret = check_tuner(cs, tuner, 1, now);

	if (ret)
		return ret;
	op = op_new(cl, done, arg, now);
	if (!op)
		return -ENOMEM;
	ret = lease_release(cs->leases, tuner, lease_id, &other, &op->w);
	if (!ret)
		return op_answer(op, 204, NULL, now);
	free(op);
	if (ret == -ENOENT)
		return not_leased(now, tuner);
	if (ret == -EPERM)
		return conflict(now, tuner, &other);
	return not_saved(now, ret);
}

/* A stream start: who may read the tuner, as a status read (viewer), and
 * the lease rule of a tune, so that a leased tuner's programme is its
 * holder's.  Checked once, when the stream starts. */
int command_stream_check(const struct command_client *cl, uint32_t tuner,
			 const char *lease_id, char *label, size_t len,
			 struct command_result *res)
{
	struct api_error e = {0};

	if (!cl->cs) {
		api_error_set(&e, 503, "unavailable", NULL,
			      "no command service here");
		return command_fail(res, -EOPNOTSUPP, &e);
	}
	if (!tuner_find(cl->cs->d, tuner)) {
		api_error_set(&e, 404, "not_found",
			      json_pack("{s:I}", "tuner", (json_int_t)tuner),
			      "no tuner %u", tuner);
		return command_fail(res, -ENOENT, &e);
	}
	if (cl->role < ROLE_VIEWER) {
		api_error_set(&e, 403, "forbidden",
			      json_pack("{s:s,s:s}", "required_role",
					role_name(ROLE_VIEWER), "role",
					role_name(cl->role)),
			      "a stream needs the viewer role");
		return command_fail(res, -EACCES, &e);
	}
	if (cl->label)
		snprintf(label, len, "%s", cl->label);
	else
		snprintf(label, len, "api%s%s", cl->name ? ":" : "",
			 cl->name ? cl->name : "");
	return command_lease_check(cl->cs, tuner, lease_id, label, len, res);
}

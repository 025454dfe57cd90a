/* SPDX-License-Identifier: MIT */
/*
 * command.h - the command service: what every transport calls to act on
 * a tuner (REST and WebSocket today; MQTT commands, the HDHomeRun face
 * and stream starts next).
 *
 * For a tuner command (tune, status, sleep, init) it checks that the
 * tuner exists, the caller's queue limit and role, parses and validates
 * the params against the chip's limits, checks the tuner's lease, submits
 * to the tuner and shapes the answer or the error exactly as the API
 * speaks them (protocol/API.md: HTTP status, code, message, details).
 * The lease operations (take, renew, release) live here too, so leases
 * are enforced in one place.  A transport only translates its request
 * into a struct command_request and the struct command_result into its
 * framing.
 *
 * Everything runs on the daemon's one loop thread.
 */
#ifndef TUNERD_COMMAND_H
#define TUNERD_COMMAND_H

#include <jansson.h>
#include <stdint.h>

#include "auth.h"
#include "tuner.h"

struct daemon;
struct lease;
struct lease_table;
struct command;
struct command_service;

/* wait_lock_ms: a tune may wait this long for lock; the status is read
 * again every COMMAND_LOCK_POLL_MS meanwhile. */
#define COMMAND_WAIT_LOCK_MAX_MS 10000
#define COMMAND_LOCK_POLL_MS     50

/* leases may be NULL: then no tuner is ever leased. */
struct command_service *command_service_new(struct daemon *d,
					    struct lease_table *leases);
/* Drops every waiting command's completion: cancel the clients first to
 * answer them. */
void command_service_free(struct command_service *cs);

/*
 * Who asks: a REST request, a WebSocket connection, an MQTT session.
 * The transport owns it (usually embedded in its own state) and cancels
 * it when the client goes away.
 */
struct command_client {
	struct command_service *cs; /* NULL: every submit is refused (503) */
	enum role role;
	const char *name; /* token name (outlives the client), or NULL */
	/* Who the tuner's events and changed_by name ("mqtt:kitchen"); NULL:
	 * "api:<name>", or "api" without a name.  A lease id that opens a
	 * leased tuner makes it "api:<holder>". */
	const char *label;
	unsigned int max_pending; /* commands waiting at once; 0: no limit */
	unsigned int pending;
	struct command *commands; /* the waiting ones */
};

void command_client_init(struct command_client *cl, struct command_service *cs,
			 enum role role, const char *name,
			 unsigned int max_pending);
/* The client went away: its waiting commands end without an answer
 * (their tuner requests are forgotten, lock polls stop). */
void command_client_cancel(struct command_client *cl);

struct command_request {
	uint32_t tuner;
	enum tuner_op op; /* TUNER_OP_TUNE, _STATUS, _SLEEP or _INIT */
	/*
	 * The op's JSON arguments (borrowed): a tune's params object; for
	 * sleep and init NULL or an object without fields.  With
	 * args_inline they may also carry "lease_id" and (a tune)
	 * "wait_lock_ms", as a REST body does.  args_field names where
	 * args came from in the client's message ("params"), NULL when
	 * they are the whole body.
	 */
	json_t *args;
	int args_inline;
	const char *args_field;
	/* A tune whose params the transport parsed itself (NULL: args). */
	const struct tstub_params *params;
	/* The lease id carried beside args (header, query, envelope): a
	 * JSON string, or NULL.  A "lease_id" in inline args wins. */
	json_t *lease_id;
	/* Without inline args: how long a tune waits for lock. */
	unsigned int wait_lock_ms;
};

struct command_result {
	int err;             /* 0, or the negative errno behind the error */
	unsigned int status; /* HTTP status: 200 (201, 204) or the error's */
	json_t *body;        /* the answer, or {"error":{...}}; NULL for 204.
			      * The callback owns the reference. */
};

typedef void (*command_done_fn)(struct command_result *res, void *arg);

/*
 * Run req for cl.  Returns 0: done(res, arg) follows exactly once, from
 * the loop and never from inside command_submit(), unless
 * command_client_cancel() came first.  Otherwise returns a negative errno
 * (-ENOENT no tuner, -EAGAIN too many waiting, -EACCES role, -EINVAL bad
 * args, -EBUSY leased or queue full, the tuner's refusal, -ENOMEM) with
 * the answer in *now; done is never called then.
 */
int command_submit(struct command_client *cl, const struct command_request *req,
		   command_done_fn done, void *arg, struct command_result *now);

/* POST .../lease: take (holder, priority, ttl_s) or renew (lease_id,
 * ttl_s) per the JSON body.  Synchronous: fills *res, returns res->err. */
int command_lease_post(struct command_service *cs, uint32_t tuner, json_t *body,
		       struct command_result *res);
/* DELETE .../lease with lease_id (NULL: none).  Same. */
int command_lease_delete(struct command_service *cs, uint32_t tuner,
			 const char *lease_id, struct command_result *res);
/* 1 when .../lease of tuner is a path that exists: the tuner is there,
 * or a lease on it is (read back after a restart, before the stub has
 * attached the tuner again). */
int command_lease_target(struct command_service *cs, uint32_t tuner);

/* The lease check every command goes through (command_lease.c): 0 when
 * a request carrying id (NULL: none) may act on tuner, filling label with
 * the holder's name when id is the lease's; else -EBUSY with the 409
 * lease_conflict answer in *res. */
int command_lease_check(struct command_service *cs, uint32_t tuner,
			const char *id, char *label, size_t len,
			struct command_result *res);

/* May cl stream tuner (GET .../stream)?  0, with label set to who reads
 * ("api:<token name>", "api:<lease holder>"), or a negative errno with
 * the answer in *res: 404 no tuner, 403 role (viewer), 409 leased by
 * another (lease_id: the request's, NULL if none), 503 no service. */
int command_stream_check(const struct command_client *cl, uint32_t tuner,
			 const char *lease_id, char *label, size_t len,
			 struct command_result *res);

#endif /* TUNERD_COMMAND_H */

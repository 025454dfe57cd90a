// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the requests a WebSocket client sends as text frames
 * (ws_request_handle() in server/net/events/ws_request.c), on a client
 * made as ws_handshake.c and ws.c make one, minus the socket: its
 * command-service client and its subscription to the daemon's event bus,
 * where the replies are queued as they would be for the writer
 * (ws_write.c) to hand to wslay.
 *
 * The daemon behind it is real but has no stub and no workers: tuner 1
 * is offline (a refusal straight from the tuner), tuner 2 is starting (a
 * tune or status waits in its queue) and leased, tuner 3 failed before it
 * knew its chip.  Every message must get a reply, shaped
 * {"type":"reply","id":..,"ok":..,"result"|"error":..}, or wait for its
 * tuner; a client that goes away leaves nothing behind.
 *
 * Input: an optional first byte 'v', 'o' or 'a' picks the client's role
 * (viewer, operator, admin; operator without it), then up to
 * WS_PENDING_MAX + 2 messages separated by NUL bytes (a NUL can never be
 * part of a JSON text), each cut at WS_MSG_MAX as ws.c refuses bigger.
 * An input that starts with '?' holds the handshake's query values
 * instead, types, tuner and since separated by NUL bytes, parsed as
 * ws_handshake() (and the Server-Sent Events) parse the values
 * libmicrohttpd took from the query string (whole, unescaped).
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "event_stream.h"
#include "json_api.h"
#include "lease.h"
#include "log.h"
#include "loop.h"
#include "tuner_priv.h"
#include "ws_priv.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A query value: what libmicrohttpd's 32 KiB of connection memory
 * could hold, about. */
#define FZ_ARG_MAX (16 * 1024)

static struct daemon fz_daemon;
static struct command_service *fz_commands;

static const struct tstub_chip_info fz_digital = {
    .name = "DIGITAL",
    .delsys_mask = 1u << TSTUB_DELSYS_DVBT | 1u << TSTUB_DELSYS_DVBC_A,
    .bandwidth_mask = TSTUB_BW_7MHZ | TSTUB_BW_8MHZ,
    .freq_min = 48000000,
    .freq_max = 870000000,
};

static const struct tstub_chip_info fz_hybrid = {
    .name = "HYBRID",
    .delsys_mask = 1u << TSTUB_DELSYS_DVBT | 1u << TSTUB_DELSYS_ATSC |
		   1u << TSTUB_DELSYS_ANALOG_TV | 1u << TSTUB_DELSYS_RADIO,
    .bandwidth_mask = TSTUB_BW_6MHZ | TSTUB_BW_8MHZ,
    .freq_min = 42000000,
    .freq_max = 864000000,
};

/* A tuner as tuner.c keeps one, without a worker. */
static void fz_add_tuner(uint32_t id, enum tuner_state state,
			 const struct tstub_chip_info *chip)
{
	struct tuner *t = calloc(1, sizeof(*t)), **pp;

	if (!t)
		abort();
	t->d = &fz_daemon;
	t->id = id;
	t->sock = -1;
	t->locked = -1;
	t->state = state;
	if (chip) {
		t->info = *chip;
		t->have_info = 1;
	}
	for (pp = &fz_daemon.tuners; *pp; pp = &(*pp)->next)
		;
	*pp = t;
}

static void fz_setup(void)
{
	/* A short event ring: full early, it frees as much as it keeps, so
	 * libFuzzer sees no growth to check for leaks after each input. */
	struct daemon_config cfg = {.name = "fuzz", .event_ring = 16};
	struct lease_table *leases;
	struct lease mine, other;

	log_set_level(0); /* the refusals' log lines cost more than the work */
	cfg.stub.transport = STUB_TRANSPORT_SIM;
	if (daemon_init(&fz_daemon, &cfg))
		abort();
	leases = lease_table_new(fz_daemon.loop, fz_daemon.events);
	fz_commands = command_service_new(&fz_daemon, leases);
	if (!leases || !fz_commands)
		abort();
	fz_add_tuner(1, TUNER_OFFLINE, &fz_digital);
	fz_add_tuner(2, TUNER_STARTING, &fz_hybrid);
	fz_add_tuner(3, TUNER_FAILED, NULL);
	if (lease_acquire(leases, 2, "recorder", 500, LEASE_TTL_MAX, &mine,
			  &other, NULL) < 0)
		abort();
}

static void fz_wake(void *owner)
{
	(void)owner;
}

/* One reply per message, each of the shape events.md gives. */
static unsigned int fz_drain(struct event_sub *sub)
{
	const struct stream_item *it;
	unsigned int replies = 0;

	while ((it = event_sub_peek(sub))) {
		size_t len;
		const char *text = event_sub_text(it, &len);
		json_error_t jerr;
		json_t *j = json_loadb(text, len, 0, &jerr), *ok;

		if (it->kind == STREAM_REPLY) {
			ok = json_object_get(j, "ok");
			if (!j || !json_is_string(json_object_get(j, "type")) ||
			    strcmp(
				json_string_value(json_object_get(j, "type")),
				"reply") ||
			    !json_is_boolean(ok) ||
			    !json_object_get(j, json_is_true(ok) ? "result"
								 : "error"))
				abort();
			replies++;
		}
		json_decref(j);
		event_sub_pop(sub);
	}
	return replies;
}

/* The filters of the stream's URL: a refusal names its field, and a type
 * or tuner that was asked for passes its own filter. */
static void fz_query(const char *p, size_t size)
{
	static char buf[3][FZ_ARG_MAX];
	const char *arg[3] = {NULL, NULL, NULL};
	struct event_filter f;
	struct api_error e = {0};
	uint64_t since;

	for (int i = 0; i < 3 && size; i++) {
		const char *nul = memchr(p, '\0', size);
		size_t n = (size_t)((nul ? nul : p + size) - p);

		snprintf(buf[i], sizeof(buf[i]), "%.*s", (int)n, p);
		arg[i] = buf[i];
		n = nul ? n + 1 : n;
		p += n;
		size -= n;
	}
	if (event_filter_parse(&f, arg[0], arg[1], &e)) {
		if (e.status != 400 || !json_object_get(e.details, "field"))
			abort();
		api_error_clear(&e);
	} else if (f.ntypes > EVENT_STREAM_TYPES_MAX ||
		   f.ntuners > EVENT_STREAM_TUNERS_MAX) {
		abort();
	} else if (f.ntypes && f.ntuners &&
		   !event_filter_match(&f, f.types[0], f.tuners[0])) {
		abort();
	}
	if (arg[2] && !event_since_parse(arg[2], &since) && !isdigit(*arg[2]))
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_setup();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct event_filter all;
	struct ws_conn c = {.d = &fz_daemon, .fd = -1, .role = ROLE_OPERATOR};
	const char *p = (const char *)data, *end = p + size;
	unsigned int messages = 0, replies;

	if (size && *p == '?') {
		fz_query(p + 1, size - 1);
		return 0;
	}
	if (size && (*p == 'v' || *p == 'o' || *p == 'a')) {
		c.role = *p == 'v'   ? ROLE_VIEWER
			 : *p == 'o' ? ROLE_OPERATOR
				     : ROLE_ADMIN;
		p++;
	}
	command_client_init(&c.client, fz_commands, c.role, "fuzz",
			    WS_PENDING_MAX);
	c.sub = event_sub_new(&fz_daemon, &all, 0, 0, fz_wake, &c);
	if (!c.sub)
		abort();
	while (p < end && messages < WS_PENDING_MAX + 2) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		size_t len = (size_t)((nul ? nul : end) - p);

		ws_request_handle(&c, p, len < WS_MSG_MAX ? len : WS_MSG_MAX);
		messages++;
		p += len + 1;
	}
	replies = fz_drain(c.sub);
	/* Each waiting message holds one command of the client. */
	if (replies + c.client.pending != messages ||
	    c.client.pending > WS_PENDING_MAX)
		abort();
	/* The client goes: what waits is forgotten, never answered. */
	ws_requests_forget(&c);
	if (fz_drain(c.sub) || c.pending || c.client.commands)
		abort();
	event_sub_free(c.sub);
	/* The queue of tuner 2 empties for the next input. */
	for (struct tuner *t = fz_daemon.tuners; t; t = t->next)
		tuner_fail_requests(t, -ECANCELED, -ECANCELED);
	/* libuv frees deleted timers from its loop. */
	loop_run_once(fz_daemon.loop, 0);
	return 0;
}

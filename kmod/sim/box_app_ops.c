// SPDX-License-Identifier: MIT
/*
 * box_app_ops.c - the operations of the app socket and their JSON.
 * Values carry their unit in the key (strength_dbm, cnr_db, afc_hz);
 * a status shows only the fields the tuner reported.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "box_app_i.h"

json_t *app_error(int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:b, s:i, s:s, s:s}", "ok", 0, "error", err,
			 "errname", box_errname(err), "message", msg);
}

static json_t *app_bad_field(const char *key)
{
	return app_error(-EINVAL, "missing or bad field \"%s\"", key);
}

/* An absent or null field leaves *out alone and is fine unless required. */
static bool app_get_uint(json_t *req, const char *key, uint64_t max,
			 bool required, uint64_t *out)
{
	json_t *v = json_object_get(req, key);

	if (!v || json_is_null(v))
		return !required;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

static bool app_get_bool(json_t *req, const char *key, bool *out)
{
	json_t *v = json_object_get(req, key);

	if (!v)
		return true;
	if (!json_is_boolean(v))
		return false;
	*out = json_is_true(v);
	return true;
}

static json_t *app_params_json(const struct tstub_params *p)
{
	if (!(p->flags & TSTUB_PARAMS_VALID))
		return json_null();
	return json_pack("{s:s, s:I, s:I, s:I, s:I}", "delivery_system",
			 tstub_delsys_name(p->delsys), "frequency",
			 (json_int_t)p->frequency, "bandwidth",
			 (json_int_t)p->bandwidth, "symbol_rate",
			 (json_int_t)p->symbol_rate, "std", (json_int_t)p->std);
}

static json_t *app_tuner_json(const struct sim_box_client_info *ci)
{
	json_t *info = json_null();

	if (ci->attached)
		info = json_pack("{s:s, s:s, s:s, s:I}", "name", ci->info.name,
				 "vendor", ci->info.vendor, "plugin",
				 ci->info.plugin, "plugin_version",
				 (json_int_t)ci->info.plugin_version);
	return json_pack(
	    "{s:I, s:s, s:I, s:I, s:I, s:s, s:b, s:b, s:o, s:o, "
	    "s:{s:b, s:I, s:I, s:b, s:s}}",
	    "client", (json_int_t)ci->client, "chip", ci->chip, "chip_id",
	    (json_int_t)ci->chip_id, "adapter", (json_int_t)ci->adapter, "addr",
	    (json_int_t)ci->i2c_addr, "bridge", ci->bridge, "bound", ci->bound,
	    "attached", ci->attached, "info", info, "params",
	    app_params_json(&ci->params), "tuned", "valid", ci->tuned.valid,
	    "frequency", (json_int_t)ci->tuned.frequency, "bandwidth",
	    (json_int_t)ci->tuned.bandwidth, "pll_locked", ci->tuned.pll_locked,
	    "firmware", ci->tuned.firmware);
}

static json_t *app_stream_json(const struct sim_box *box, uint32_t id)
{
	struct sim_box_stream_stats st;

	if (sim_box_stream_stats(box, id, &st))
		return json_null();
	return json_pack(
	    "{s:I, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
	    "connections", (json_int_t)st.connections, "locked", st.locked,
	    "carrier", (json_int_t)st.carrier, "bitrate",
	    (json_int_t)st.bitrate, "packets", (json_int_t)st.packets,
	    "null_packets", (json_int_t)st.null_packets, "cc_errors",
	    (json_int_t)st.cc_errors, "tei_packets", (json_int_t)st.tei_packets,
	    "dropped", (json_int_t)st.dropped, "lock_checks",
	    (json_int_t)st.lock_checks, "skipped", (json_int_t)st.skipped);
}

static json_t *op_list(struct app_conn *conn, struct sim_box *box, json_t *req,
		       uint16_t opcode)
{
	json_t *tuners = json_array();

	(void)conn;
	(void)req;
	(void)opcode;
	for (uint32_t id = 1; id <= sim_box_client_count(box); id++) {
		struct sim_box_client_info ci;

		sim_box_client_info(box, id, &ci);
		ci.tuned.firmware[sizeof(ci.tuned.firmware) - 1] = '\0';
		json_t *t = app_tuner_json(&ci);

		json_object_set_new(t, "stream", app_stream_json(box, id));
		json_array_append_new(tuners, t);
	}
	return json_pack("{s:b, s:o, s:b}", "ok", 1, "tuners", tuners, "daemon",
			 sim_box_daemon_ready(box));
}

static json_t *app_start_error(int err, uint16_t opcode, uint32_t client)
{
	const char *why = err == -ENOENT     ? "no such tuner"
			  : err == -ENOTCONN ? "no daemon is connected"
			  : err == -EBUSY    ? "too many requests queued"
					     : strerror(-err);
	json_t *r = app_error(err, "%s on client %u: %s",
			      tstub_opcode_name(opcode), client, why);

	json_object_set_new(r, "elapsed_us", json_integer(0));
	return r;
}

static json_t *app_start(struct app_conn *conn, uint32_t client,
			 uint16_t opcode, const struct tstub_params *p)
{
	int err = app_call_start(conn, client, opcode, p);

	return err ? app_start_error(err, opcode, client) : NULL;
}

static json_t *op_set_params(struct app_conn *conn, struct sim_box *box,
			     json_t *req, uint16_t opcode)
{
	struct tstub_params p = {0};
	uint64_t client = 0, freq = 0, bw = 0, sr = 0, std = 0;
	const char *sys =
	    json_string_value(json_object_get(req, "delivery_system"));

	(void)box;
	if (!app_get_uint(req, "client", UINT32_MAX, true, &client))
		return app_bad_field("client");
	p.delsys = tstub_delsys_parse(sys);
	if (p.delsys == TSTUB_DELSYS_NONE)
		return app_bad_field("delivery_system");
	if (!app_get_uint(req, "frequency", UINT32_MAX, true, &freq) || !freq)
		return app_bad_field("frequency");
	if (!app_get_uint(req, "bandwidth", UINT32_MAX, false, &bw))
		return app_bad_field("bandwidth");
	if (!app_get_uint(req, "symbol_rate", UINT32_MAX, false, &sr))
		return app_bad_field("symbol_rate");
	if (!app_get_uint(req, "std", INT64_MAX, false, &std))
		return app_bad_field("std");
	p.frequency = (uint32_t)freq;
	p.bandwidth = (uint32_t)bw;
	p.symbol_rate = (uint32_t)sr;
	p.std = std;
	return app_start(conn, (uint32_t)client, opcode, &p);
}

static json_t *op_request(struct app_conn *conn, struct sim_box *box,
			  json_t *req, uint16_t opcode)
{
	uint64_t client = 0;

	(void)box;
	if (!app_get_uint(req, "client", UINT32_MAX, true, &client))
		return app_bad_field("client");
	return app_start(conn, (uint32_t)client, opcode, NULL);
}

/* Only the fields present change. */
static json_t *app_fault_update(json_t *req, struct sim_box_fault *f)
{
	json_t *rate = json_object_get(req, "nak_rate");

	if (rate && json_is_null(rate)) {
		f->nak_rate = -1.0;
	} else if (rate) {
		if (!json_is_number(rate) || json_number_value(rate) > 1.0)
			return app_bad_field("nak_rate");
		f->nak_rate = json_number_value(rate);
	}
	if (!app_get_bool(req, "hang", &f->hang))
		return app_bad_field("hang");
	if (!app_get_bool(req, "never_lock", &f->never_lock))
		return app_bad_field("never_lock");
	if (!app_get_bool(req, "no_firmware", &f->no_firmware))
		return app_bad_field("no_firmware");
	return NULL;
}

static json_t *app_fault_json(const struct sim_box_fault *f)
{
	return json_pack("{s:f, s:b, s:b, s:b}", "nak_rate", f->nak_rate,
			 "hang", f->hang, "never_lock", f->never_lock,
			 "no_firmware", f->no_firmware);
}

static json_t *op_fault(struct app_conn *conn, struct sim_box *box, json_t *req,
			uint16_t opcode)
{
	uint64_t client = 0;
	uint32_t first, last;
	struct sim_box_fault f;
	json_t *err;

	(void)conn;
	(void)opcode;
	if (!app_get_uint(req, "client", UINT32_MAX, true, &client))
		return app_bad_field("client");
	/* client 0: every tuner, each keeping the knobs not given. */
	first = client ? (uint32_t)client : 1;
	last = client ? (uint32_t)client : (uint32_t)sim_box_client_count(box);
	if (sim_box_get_fault(box, first, &f))
		return app_error(-ENOENT, "client %u: no such tuner", first);
	for (uint32_t id = first; id <= last; id++) {
		sim_box_get_fault(box, id, &f);
		err = app_fault_update(req, &f);
		if (err)
			return err;
		sim_box_set_fault(box, id, &f);
	}
	return json_pack("{s:b, s:o}", "ok", 1, "fault", app_fault_json(&f));
}

static json_t *op_stats(struct app_conn *conn, struct sim_box *box, json_t *req,
			uint16_t opcode)
{
	struct sim_box_stats st;

	(void)conn;
	(void)req;
	(void)opcode;
	sim_box_get_stats(box, &st);
	return json_pack(
	    "{s:b, s:b, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
	    "s:I, s:I, s:I, s:I}}",
	    "ok", 1, "daemon", sim_box_daemon_ready(box), "stats", "requests",
	    (json_int_t)st.requests, "completed", (json_int_t)st.completed,
	    "timeouts", (json_int_t)st.timeouts, "aborted",
	    (json_int_t)st.aborted, "refused", (json_int_t)st.refused,
	    "i2c_transfers", (json_int_t)st.i2c_transfers, "i2c_segments",
	    (json_int_t)st.i2c_segments, "i2c_bytes", (json_int_t)st.i2c_bytes,
	    "i2c_naks", (json_int_t)st.i2c_naks, "i2c_hung",
	    (json_int_t)st.i2c_hung, "bad_messages",
	    (json_int_t)st.bad_messages, "unknown_uniques",
	    (json_int_t)st.unknown_uniques, "daemon_sessions",
	    (json_int_t)st.daemon_sessions);
}

static const struct {
	const char *name;
	json_t *(*fn)(struct app_conn *conn, struct sim_box *box, json_t *req,
		      uint16_t opcode);
	uint16_t opcode;
} app_ops[] = {
    {"list", op_list, 0},
    {"set_params", op_set_params, TSTUB_SET_PARAMS},
    {"init", op_request, TSTUB_TUNER_INIT},
    {"sleep", op_request, TSTUB_TUNER_SLEEP},
    {"get_status", op_request, TSTUB_GET_STATUS},
    {"get_frequency", op_request, TSTUB_GET_FREQUENCY},
    {"fault", op_fault, 0},
    {"stats", op_stats, 0},
};

json_t *app_op(struct app_conn *conn, struct sim_box *box, json_t *req)
{
	const char *op = json_string_value(json_object_get(req, "op"));

	if (!op)
		return app_bad_field("op");
	for (size_t i = 0; i < sizeof(app_ops) / sizeof(app_ops[0]); i++)
		if (strcmp(op, app_ops[i].name) == 0)
			return app_ops[i].fn(conn, box, req, app_ops[i].opcode);
	return app_error(-EINVAL, "unknown op \"%.64s\"", op);
}

static json_t *app_status_json(const struct tstub_status *st)
{
	json_t *o = json_object();

	if (st->valid & TSTUB_ST_FE_STATUS) {
		static const struct {
			const char *key;
			uint32_t bit;
		} bits[] = {
		    {"signal", TSTUB_FE_HAS_SIGNAL},
		    {"carrier", TSTUB_FE_HAS_CARRIER},
		    {"viterbi", TSTUB_FE_HAS_VITERBI},
		    {"sync", TSTUB_FE_HAS_SYNC},
		    {"lock", TSTUB_FE_HAS_LOCK},
		    {"timedout", TSTUB_FE_TIMEDOUT},
		};

		for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
			json_object_set_new(
			    o, bits[i].key,
			    json_boolean(st->fe_status & bits[i].bit));
	}
	if (st->valid & TSTUB_ST_STRENGTH_DBM)
		json_object_set_new(o, "strength_dbm",
				    json_real(st->strength_mdbm / 1000.0));
	if (st->valid & TSTUB_ST_STRENGTH_REL)
		json_object_set_new(o, "strength_rel",
				    json_integer(st->strength_rel));
	if (st->valid & TSTUB_ST_CNR_DB)
		json_object_set_new(o, "cnr_db",
				    json_real(st->cnr_mdb / 1000.0));
	if (st->valid & TSTUB_ST_CNR_REL)
		json_object_set_new(o, "cnr_rel", json_integer(st->cnr_rel));
	if (st->valid & TSTUB_ST_AFC)
		json_object_set_new(o, "afc_hz", json_integer(st->afc_hz));
	if (st->valid & TSTUB_ST_PLL_LOCK)
		json_object_set_new(o, "pll_locked",
				    json_boolean(st->pll_locked));
	if (st->frequency)
		json_object_set_new(o, "frequency",
				    json_integer(st->frequency));
	if (st->bandwidth)
		json_object_set_new(o, "bandwidth",
				    json_integer(st->bandwidth));
	return o;
}

json_t *app_call_reply(uint16_t opcode, uint32_t client, int err,
		       const void *body, size_t len, uint64_t elapsed_us)
{
	json_t *r;

	if (err) {
		r = app_error(err, "%s on client %u: %s",
			      tstub_opcode_name(opcode), client,
			      strerror(-err));
		json_object_set_new(r, "elapsed_us", json_integer(elapsed_us));
		return r;
	}
	r = json_pack("{s:b, s:I}", "ok", 1, "elapsed_us",
		      (json_int_t)elapsed_us);
	if (opcode == TSTUB_GET_STATUS && len == sizeof(struct tstub_status))
		json_object_set_new(r, "status", app_status_json(body));
	if (opcode == TSTUB_GET_FREQUENCY && len == sizeof(struct tstub_freq)) {
		const struct tstub_freq *f = body;

		json_object_set_new(r, "frequency", json_integer(f->frequency));
		json_object_set_new(r, "bandwidth", json_integer(f->bandwidth));
		json_object_set_new(r, "if_frequency",
				    json_integer(f->if_frequency));
	}
	return r;
}

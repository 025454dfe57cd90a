// SPDX-License-Identifier: MIT
/*
 * The Tuner shape of the network API, from a consistent snapshot of the
 * daemon's tuner.
 */
#include <string.h>

#include "json_api.h"
#include "lease.h"
#include "tuner.h"

const char *api_changed_by(const struct tuner_snapshot *s)
{
	const char *by = s->changed_by;

	if (s->changed_origin != TUNER_ORIGIN_API)
		return NULL;
	if (!strncmp(by, "api:", 4))
		by += 4;
	else if (!strcmp(by, "api"))
		by = "";
	return *by ? by : NULL;
}

static json_t *lease_json(const struct lease *l)
{
	if (!l)
		return json_null();
	return json_pack("{s:s, s:i, s:o}", "holder", l->holder, "priority",
			 l->priority, "expires",
			 api_time_json(l->expires_wall));
}

static json_t *last_change_json(const struct tuner_snapshot *s)
{
	const char *by = api_changed_by(s);

	if (!s->changed_at_ms)
		return json_null();
	return json_pack("{s:o, s:s, s:o}", "time",
			 api_time_json((uint64_t)s->changed_at_ms), "origin",
			 tuner_event_origin(s->changed_origin, s->changed_by),
			 "by", by ? json_string(by) : json_null());
}

static json_t *bridge_json(const struct tstub_attach *a)
{
	return json_pack("{s:s%, s:I, s:i}", "name", a->bridge,
			 strnlen(a->bridge, TSTUB_NAME_LEN), "adapter",
			 (json_int_t)a->adapter, "i2c_addr", (int)a->i2c_addr);
}

json_t *tuner_to_json(const struct tuner_snapshot *s, const struct lease *l)
{
	json_t *o = json_pack("{s:I, s:s}", "id", (json_int_t)s->id, "state",
			      tuner_state_name(s->state));

	if (!o)
		return NULL;
	if (s->have_info) {
		chip_to_json(o, &s->info);
	} else {
		json_object_set_new(o, "chip", json_null());
		json_object_set_new(o, "delivery_systems", json_array());
		json_object_set_new(o, "frequency", json_null());
		json_object_set_new(o, "bandwidths", json_array());
	}
	json_object_set_new(o, "bridge", bridge_json(&s->attach));
	json_object_set_new(o, "params",
			    s->have_params ? params_to_json(&s->params)
					   : json_null());
	json_object_set_new(
	    o, "status",
	    s->have_status
		? status_to_json(&s->status, (uint64_t)s->changed_at_ms)
		: json_null());
	json_object_set_new(o, "lease", lease_json(l));
	json_object_set_new(o, "last_change", last_change_json(s));
	return o;
}

// SPDX-License-Identifier: MIT
/*
 * The scan API's requests: a scan's body checked and turned into a job
 * (frequencies given explicitly, or a band's raster from scan_bands.c),
 * one running job per tuner, the job of a tuner read back or cancelled.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command_priv.h"
#include "daemon.h"
#include "json_api.h"
#include "scan_job_priv.h"
#include "tuner.h"

struct scan_hub *scan_hub_new(struct daemon *d, struct command_service *cs,
			      struct stream_hub *streams,
			      struct channel_list *channels)
{
	struct scan_hub *h = calloc(1, sizeof(*h));

	if (h)
		*h = (struct scan_hub){
		    .d = d, .cs = cs, .streams = streams, .channels = channels};
	return h;
}

void scan_hub_stop(struct scan_hub *h)
{
	for (struct scan_job *j = h ? h->jobs : NULL; j; j = j->next)
		scan_job_cancel(j);
}

void scan_hub_free(struct scan_hub *h)
{
	struct scan_job *j;

	while (h && (j = h->jobs)) {
		h->jobs = j->next;
		scan_job_free(j);
	}
	free(h);
}

static struct scan_job *job_of(struct scan_hub *h, uint32_t tuner)
{
	for (struct scan_job *j = h->jobs; j; j = j->next)
		if (j->tuner == tuner)
			return j;
	return NULL;
}

static int bad(struct api_error *e, const char *field, const char *why)
{
	api_error_set(e, 400, "bad_request", json_pack("{s:s}", "field", field),
		      "%s: %s", field, why);
	return -EINVAL;
}

static int known_keys(json_t *body, struct api_error *e)
{
	static const char *const keys[] = {"frequencies", "delivery_system",
					   "bandwidth",   "band",
					   "region",      "lease_id"};
	const char *key;
	json_t *v;
	int ok;

	json_object_foreach(body, key, v)
	{
		ok = 0;
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			ok |= !strcmp(key, keys[i]);
		if (!ok)
			return bad(e, key, "unknown field");
	}
	return 0;
}

/* The frequencies (explicit, or the band's) and bandwidth of body. */
static int frequencies_of(json_t *body, struct scan_job *j, struct api_error *e)
{
	json_t *f = json_object_get(body, "frequencies"), *v, *band = NULL;
	const char *b = json_string_value(json_object_get(body, "band"));
	const char *rg = json_string_value(json_object_get(body, "region"));
	size_t i;

	j->bandwidth = 8000000;
	if (!f && !json_object_get(body, "band"))
		return bad(e, "frequencies", "give frequencies or a band");
	if (!f) {
		if (!b || (json_object_get(body, "region") && !rg))
			return bad(e, b ? "region" : "band",
				   "must be a string");
		if (scan_band(b, rg ? rg : "eu", &band, &j->bandwidth))
			return bad(e, "band",
				   "uhf or vhf, region eu (the known plans)");
		f = band;
	}
	if (!json_is_array(f) || !json_array_size(f) ||
	    json_array_size(f) > SCAN_FREQUENCIES_MAX) {
		json_decref(band);
		return bad(e, "frequencies", "an array of 1..200 frequencies");
	}
	j->freqs = calloc(json_array_size(f), sizeof(*j->freqs));
	json_array_foreach(f, i, v)
	{
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > UINT32_MAX) {
			json_decref(band);
			return bad(e, "frequencies", "integers in Hz");
		}
		if (j->freqs)
			j->freqs[i] = (uint32_t)json_integer_value(v);
	}
	j->total = json_array_size(f);
	json_decref(band);
	return j->freqs ? 0 : -ENOMEM;
}

/* delivery_system ("DVBT", also spelt "DVB-T") and bandwidth, checked
 * against the chip with the first frequency. */
static int system_of(json_t *body, struct scan_job *j, struct tuner *t,
		     struct api_error *e)
{
	json_t *ds = json_object_get(body, "delivery_system");
	json_t *bw = json_object_get(body, "bandwidth"), *args;
	struct tuner_snapshot s;
	struct tstub_params p;
	const char *in = ds ? json_string_value(ds) : "DVBT";
	size_t n = 0;
	int err;

	if (!in || strlen(in) >= sizeof(j->delsys))
		return bad(e, "delivery_system", "a delivery system name");
	for (; *in; in++)
		if (*in != '-')
			j->delsys[n++] = *in;
	if (bw && (!json_is_integer(bw) || json_integer_value(bw) < 0 ||
		   json_integer_value(bw) > 100000000))
		return bad(e, "bandwidth", "an integer in Hz");
	if (bw)
		j->bandwidth = (uint32_t)json_integer_value(bw);
	tuner_snapshot(t, &s);
	args = json_pack("{s:s, s:I, s:I}", "delivery_system", j->delsys,
			 "frequency", (json_int_t)j->freqs[0], "bandwidth",
			 (json_int_t)j->bandwidth);
	err = params_from_json(args, s.have_info ? &s.info : NULL, &p, e);
	json_decref(args);
	return err ? -EINVAL : 0;
}

static struct scan_job *job_new(struct scan_hub *h, uint32_t tuner,
				const struct scan_caller *who)
{
	struct scan_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->h = h;
	j->tuner = tuner;
	j->found = json_array();
	j->name = who->name ? strdup(who->name) : NULL;
	j->lease_id = who->lease_id ? strdup(who->lease_id) : NULL;
	return j;
}

static int checks(struct scan_hub *h, uint32_t tuner,
		  const struct scan_caller *who, struct api_error *e)
{
	struct scan_job *old = job_of(h, tuner);

	if (!tuner_find(h->d, tuner)) {
		api_error_set(e, 404, "not_found",
			      json_pack("{s:I}", "tuner", (json_int_t)tuner),
			      "no tuner %u", tuner);
		return -ENOENT;
	}
	if (who->role < ROLE_OPERATOR) {
		api_error_set(e, 403, "forbidden",
			      json_pack("{s:s,s:s}", "required_role",
					"operator", "role",
					role_name(who->role)),
			      "a scan needs the operator role");
		return -EACCES;
	}
	if (old && old->state == SCAN_RUNNING) {
		api_error_set(
		    e, 409, "busy", json_pack("{s:s}", "scan", old->id),
		    "tuner %u is scanning already (%s)", tuner, old->id);
		return -EBUSY;
	}
	return 0;
}

static void job_replace(struct scan_hub *h, struct scan_job *j)
{
	struct scan_job **pp = &h->jobs, *old;

	while (*pp && (*pp)->tuner != j->tuner)
		pp = &(*pp)->next;
	old = *pp;
	if (old) {
		*pp = old->next;
		scan_job_free(old);
	}
	j->next = h->jobs;
	h->jobs = j;
}

int scan_start(struct scan_hub *h, uint32_t tuner, json_t *body,
	       const struct scan_caller *who, struct command_result *res)
{
	struct api_error e = {0};
	struct scan_caller w = *who;
	struct scan_job *j = NULL;
	char label[64];
	int err = checks(h, tuner, who, &e);

	if (!err && !json_is_object(body))
		err = bad(&e, "body", "a JSON object");
	if (!err)
		err = known_keys(body, &e);
	if (!err && json_object_get(body, "lease_id")) {
		w.lease_id =
		    json_string_value(json_object_get(body, "lease_id"));
		if (!w.lease_id)
			err = bad(&e, "lease_id", "must be a string");
	}
	if (!err && !(j = job_new(h, tuner, &w)))
		err = -ENOMEM;
	if (!err)
		err = frequencies_of(body, j, &e);
	if (!err)
		err = system_of(body, j, tuner_find(h->d, tuner), &e);
	if (err == -ENOMEM)
		api_error_set(&e, 500, "internal", NULL, "out of memory");
	if (err) {
		scan_job_free(j);
		return command_fail(res, err, &e);
	}
	err = command_lease_check(h->cs, tuner, w.lease_id, label,
				  sizeof(label), res);
	if (err) {
		scan_job_free(j);
		return err;
	}
	snprintf(j->id, sizeof(j->id), "scan-%u", ++h->next_id);
	job_replace(h, j);
	scan_job_run(j);
	*res = (struct command_result){
	    .status = 202,
	    .body = json_pack("{s:o}", "scan", scan_job_json(j))};
	return 0;
}

static int no_scan(struct command_result *res, uint32_t tuner)
{
	struct api_error e = {0};

	api_error_set(&e, 404, "not_found",
		      json_pack("{s:I}", "tuner", (json_int_t)tuner),
		      "tuner %u has no scan", tuner);
	return command_fail(res, -ENOENT, &e);
}

int scan_get(struct scan_hub *h, uint32_t tuner, struct command_result *res)
{
	struct scan_job *j = job_of(h, tuner);

	if (!j)
		return no_scan(res, tuner);
	*res = (struct command_result){
	    .status = 200,
	    .body = json_pack("{s:o}", "scan", scan_job_json(j))};
	return 0;
}

int scan_cancel(struct scan_hub *h, uint32_t tuner,
		const struct scan_caller *who, struct command_result *res)
{
	struct scan_job *j = job_of(h, tuner);
	struct api_error e = {0};
	char label[64];

	if (who->role < ROLE_OPERATOR) {
		api_error_set(&e, 403, "forbidden",
			      json_pack("{s:s,s:s}", "required_role",
					"operator", "role",
					role_name(who->role)),
			      "cancelling a scan needs the operator role");
		return command_fail(res, -EACCES, &e);
	}
	if (!j || j->state != SCAN_RUNNING)
		return no_scan(res, tuner);
	if (command_lease_check(h->cs, tuner, who->lease_id, label,
				sizeof(label), res))
		return res->err;
	scan_job_cancel(j);
	return scan_get(h, tuner, res);
}

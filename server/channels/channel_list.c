// SPDX-License-Identifier: MIT
/*
 * The channel list in memory and in the state directory's `channels`
 * document.  The list is small (a country's multiplexes hold a few
 * hundred services), so every change sorts and writes it whole: simple,
 * and the document is always the list the API showed last.
 */
#include "channel_list.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json_api.h"
#include "log.h"
#include "state_file.h"

struct channel_list {
	struct state_dir *sd;
	json_t *entries; /* array of channel objects, sorted */
};

static int int_in(json_t *v, json_int_t lo, json_int_t hi)
{
	return json_is_integer(v) && json_integer_value(v) >= lo &&
	       json_integer_value(v) <= hi;
}

int channel_entry_check(json_t *entry, const char **field)
{
	static const char *const types[] = {"tv", "radio", "hd", "other"};
	struct tstub_params p;
	struct api_error e = {0};
	const char *name, *type;
	json_t *lcn;
	int ok = 0;

	*field = "channels";
	if (!json_is_object(entry))
		return -EINVAL;
	name = json_string_value(json_object_get(entry, "name"));
	*field = "name";
	if (!name || !*name || strlen(name) > CHANNEL_NAME_MAX)
		return -EINVAL;
	lcn = json_object_get(entry, "lcn");
	*field = "lcn";
	if (lcn && !json_is_null(lcn) && !int_in(lcn, 0, 65535))
		return -EINVAL;
	*field = "service_id";
	if (!int_in(json_object_get(entry, "service_id"), 1, 65535))
		return -EINVAL;
	*field = "type";
	type = json_string_value(json_object_get(entry, "type"));
	for (size_t i = 0; type && i < sizeof(types) / sizeof(types[0]); i++)
		ok |= !strcmp(type, types[i]);
	if (type && !ok)
		return -EINVAL;
	*field = "params";
	if (params_from_json(json_object_get(entry, "params"), NULL, &p, &e)) {
		api_error_clear(&e);
		return -EINVAL;
	}
	return 0;
}

/* LCN ascending, channels without one last, then name. */
static int entry_cmp(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_t *lx = json_object_get(x, "lcn"), *ly = json_object_get(y, "lcn");
	json_int_t nx = json_is_integer(lx) ? json_integer_value(lx) : 1 << 20;
	json_int_t ny = json_is_integer(ly) ? json_integer_value(ly) : 1 << 20;

	if (nx != ny)
		return nx < ny ? -1 : 1;
	return strcasecmp(json_string_value(json_object_get(x, "name")),
			  json_string_value(json_object_get(y, "name")));
}

json_t *channel_list_sorted(json_t *arr)
{
	size_t n = json_array_size(arr);
	json_t **v = calloc(n ? n : 1, sizeof(*v)), *out = json_array();

	for (size_t i = 0; v && i < n; i++)
		v[i] = json_array_get(arr, i);
	if (v && n)
		qsort(v, n, sizeof(*v), entry_cmp);
	for (size_t i = 0; v && out && i < n; i++)
		json_array_append(out, v[i]);
	free(v);
	json_decref(arr);
	return out;
}

static int save(struct channel_list *cl)
{
	json_t *doc;
	int err;

	if (!cl->sd)
		return 0;
	doc = json_pack("{s:O}", "channels", cl->entries);
	err = doc ? state_file_write(cl->sd, CHANNEL_LIST_DOC, doc) : -ENOMEM;
	json_decref(doc);
	if (err)
		log_warn("channels: cannot write the channel list: %s",
			 strerror(-err));
	return err;
}

static void load(struct channel_list *cl)
{
	json_t *doc = NULL, *arr, *v;
	const char *field;
	size_t i;

	if (!cl->sd || state_file_read(cl->sd, CHANNEL_LIST_DOC, &doc))
		return;
	arr = json_object_get(doc, "channels");
	json_array_foreach(arr, i, v)
	{
		if (json_array_size(cl->entries) >= CHANNELS_MAX)
			break;
		if (channel_entry_check(v, &field))
			log_warn("channels: entry %zu dropped (bad %s)", i,
				 field);
		else
			json_array_append(cl->entries, v);
	}
	json_decref(doc);
	cl->entries = channel_list_sorted(cl->entries);
}

struct channel_list *channel_list_new(struct state_dir *sd)
{
	struct channel_list *cl = calloc(1, sizeof(*cl));

	if (!cl)
		return NULL;
	cl->sd = sd;
	cl->entries = json_array();
	if (!cl->entries) {
		free(cl);
		return NULL;
	}
	load(cl);
	return cl;
}

void channel_list_free(struct channel_list *cl)
{
	if (!cl)
		return;
	json_decref(cl->entries);
	free(cl);
}

json_t *channel_list_entries(const struct channel_list *cl)
{
	return cl->entries;
}

json_t *channel_list_find(const struct channel_list *cl, const char *name,
			  long lcn)
{
	size_t i;
	json_t *v, *n;

	json_array_foreach(cl->entries, i, v)
	{
		n = json_object_get(v, name ? "name" : "lcn");
		if (name ? !strcasecmp(json_string_value(n), name)
			 : json_is_integer(n) && json_integer_value(n) == lcn)
			return v;
	}
	return NULL;
}

static json_int_t frequency_of(json_t *entry)
{
	return json_integer_value(
	    json_object_get(json_object_get(entry, "params"), "frequency"));
}

int channel_list_replace_mux(struct channel_list *cl, uint32_t frequency,
			     json_t *entries)
{
	json_t *kept = json_array(), *v;
	size_t i;

	if (!kept) {
		json_decref(entries);
		return -ENOMEM;
	}
	json_array_foreach(cl->entries, i, v)
	{
		if (frequency_of(v) != (json_int_t)frequency)
			json_array_append(kept, v);
	}
	json_array_foreach(entries, i, v)
	{
		if (json_array_size(kept) < CHANNELS_MAX)
			json_array_append(kept, v);
	}
	json_decref(entries);
	json_decref(cl->entries);
	cl->entries = channel_list_sorted(kept);
	return save(cl);
}

int channel_list_set(struct channel_list *cl, json_t *channels,
		     struct api_error *e)
{
	const char *field;
	json_t *v;
	size_t i;

	if (!json_is_array(channels) ||
	    json_array_size(channels) > CHANNELS_MAX) {
		api_error_set(e, 400, "bad_request",
			      json_pack("{s:s}", "field", "channels"),
			      "channels: an array of at most %d channels",
			      CHANNELS_MAX);
		return -EINVAL;
	}
	json_array_foreach(channels, i, v)
	{
		if (channel_entry_check(v, &field)) {
			api_error_set(e, 400, "bad_request",
				      json_pack("{s:s, s:I}", "field", field,
						"index", (json_int_t)i),
				      "channels[%zu]: bad %s", i, field);
			return -EINVAL;
		}
	}
	json_decref(cl->entries);
	cl->entries = channel_list_sorted(json_deep_copy(channels));
	return save(cl);
}

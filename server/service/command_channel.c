// SPDX-License-Identifier: MIT
/*
 * Tunes by channel: {"channel":"BBC ONE Lon"} (exact name, any case) or
 * {"lcn":1} instead of the params, for every transport (REST's body,
 * WebSocket's "params").  The channel's params are checked against the
 * chip like any tune's, and the answer names the channel.
 */
#include <errno.h>
#include <string.h>

#include "channel_list.h"
#include "command_priv.h"

void command_service_set_channels(struct command_service *cs,
				  struct channel_list *channels)
{
	cs->channels = channels;
}

static int bad(struct api_error *e, const char *field, const char *why)
{
	api_error_set(e, 400, "bad_request", json_pack("{s:s}", "field", field),
		      "%s: %s", field, why);
	return -EINVAL;
}

static int other_keys(json_t *args, int args_inline, struct api_error *e)
{
	const char *key;
	json_t *v;

	json_object_foreach(args, key, v)
	{
		if (!strcmp(key, "channel") || !strcmp(key, "lcn"))
			continue;
		if (args_inline &&
		    (!strcmp(key, "lease_id") || !strcmp(key, "wait_lock_ms")))
			continue;
		return bad(e, key, "not with a channel");
	}
	return 0;
}

static json_t *lookup(struct command_service *cs, json_t *name, json_t *lcn,
		      struct api_error *e)
{
	json_t *ch = NULL;

	if (name && (!json_is_string(name) || !json_string_length(name))) {
		bad(e, "channel", "a channel name");
		return NULL;
	}
	if (!name && (!json_is_integer(lcn) || json_integer_value(lcn) < 0 ||
		      json_integer_value(lcn) > 65535)) {
		bad(e, "lcn", "a logical channel number 0..65535");
		return NULL;
	}
	if (cs->channels)
		ch = channel_list_find(cs->channels, json_string_value(name),
				       (long)json_integer_value(lcn));
	if (!ch && name)
		api_error_set(e, 404, "not_found",
			      json_pack("{s:O}", "channel", name),
			      "no channel \"%s\"", json_string_value(name));
	else if (!ch)
		api_error_set(
		    e, 404, "not_found", json_pack("{s:O}", "lcn", lcn),
		    "no channel with LCN %d", (int)json_integer_value(lcn));
	return ch;
}

int command_channel_params(struct command_service *cs, json_t *args,
			   int args_inline, const struct tstub_chip_info *chip,
			   struct tstub_params *out, json_t **channel,
			   struct api_error *e)
{
	json_t *name = json_object_get(args, "channel");
	json_t *lcn = json_object_get(args, "lcn"), *ch;

	if (!name && !lcn)
		return 0;
	if (name && lcn)
		return bad(e, "lcn", "give a channel or an lcn, not both");
	if (other_keys(args, args_inline, e))
		return -EINVAL;
	ch = lookup(cs, name, lcn, e);
	if (!ch)
		return e->status == 404 ? -ENOENT : -EINVAL;
	if (params_from_json(json_object_get(ch, "params"), chip, out, e))
		return -EINVAL;
	*channel = json_incref(ch);
	return 1;
}

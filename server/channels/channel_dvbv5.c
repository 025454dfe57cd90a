// SPDX-License-Identifier: MIT
/*
 * dvbv5 channel files (the format dvbv5-scan writes and dvbv5-zap reads)
 * through libdvbv5's dvb-file API.  libdvbv5 reads and writes these files
 * by name only, so both directions go through a private temporary file
 * (mkstemp, removed at once after use): the file is small (about 200
 * bytes a channel) and the round trip costs a few hundred microseconds.
 *
 * Mapping: [name] = the channel's name, SERVICE_ID, VCHANNEL = the LCN
 * (as dvbv5-scan writes the logical channel number), NETWORK_ID and
 * TRANSPORT_ID, and the params as DELIVERY_SYSTEM, FREQUENCY,
 * BANDWIDTH_HZ, SYMBOL_RATE.  A file says nothing of a service's kind:
 * an imported channel is "other" unless the file lists a video PID (tv)
 * or only audio PIDs (radio).
 */
#include <errno.h>
#include <libdvbv5/dvb-file.h>
#include <linux/dvb/frontend.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel_list.h"
#include "json_api.h"

#define DVBV5_FILE_MAX (256 * 1024) /* bytes an export may have */

/* The API's delivery system names and libdvbv5's (linux/dvb) codes of
 * the systems a dvbv5 file describes. */
static const struct {
	const char *api;
	uint32_t sys;
} systems[] = {
    {"DVBT", SYS_DVBT},
    {"DVBT2", SYS_DVBT2},
    {"DVBC_ANNEX_A", SYS_DVBC_ANNEX_A},
    {"DVBS", SYS_DVBS},
    {"DVBS2", SYS_DVBS2},
    {"ATSC", SYS_ATSC},
};

static int sys_of(const char *api, uint32_t *sys)
{
	for (size_t i = 0; api && i < sizeof(systems) / sizeof(systems[0]); i++)
		if (!strcmp(api, systems[i].api)) {
			*sys = systems[i].sys;
			return 0;
		}
	return -1;
}

static const char *api_of(uint32_t sys)
{
	for (size_t i = 0; i < sizeof(systems) / sizeof(systems[0]); i++)
		if (systems[i].sys == sys)
			return systems[i].api;
	return NULL;
}

static uint32_t uint_of(json_t *obj, const char *key)
{
	return (uint32_t)json_integer_value(json_object_get(obj, key));
}

/* One channel as a dvb_entry; NULL when its system has no dvbv5 form. */
static struct dvb_entry *entry_of(json_t *ch)
{
	json_t *p = json_object_get(ch, "params"), *lcn;
	struct dvb_entry *e;
	uint32_t sys;
	char num[16];

	if (sys_of(json_string_value(json_object_get(p, "delivery_system")),
		   &sys))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->channel = strdup(json_string_value(json_object_get(ch, "name")));
	lcn = json_object_get(ch, "lcn");
	if (json_is_integer(lcn)) {
		snprintf(num, sizeof(num), "%d", (int)json_integer_value(lcn));
		e->vchannel = strdup(num);
	}
	e->service_id = (uint16_t)uint_of(ch, "service_id");
	e->network_id = (uint16_t)uint_of(ch, "network_id");
	e->transport_id = (uint16_t)uint_of(ch, "transport_stream_id");
	e->sat_number = -1;
	dvb_store_entry_prop(e, DTV_DELIVERY_SYSTEM, sys);
	dvb_store_entry_prop(e, DTV_FREQUENCY, uint_of(p, "frequency"));
	if (uint_of(p, "bandwidth"))
		dvb_store_entry_prop(e, DTV_BANDWIDTH_HZ,
				     uint_of(p, "bandwidth"));
	if (uint_of(p, "symbol_rate"))
		dvb_store_entry_prop(e, DTV_SYMBOL_RATE,
				     uint_of(p, "symbol_rate"));
	return e;
}

static int read_all(int fd, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1), *grown;
	ssize_t r;

	while (buf && (r = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap && cap < DVBV5_FILE_MAX) {
			cap *= 2;
			grown = realloc(buf, cap + 1);
			if (!grown)
				break;
			buf = grown;
		} else if (n == cap) {
			break;
		}
	}
	if (!buf)
		return -ENOMEM;
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static int temp_file(char *path, size_t len)
{
	const char *dir = getenv("TMPDIR");

	snprintf(path, len, "%s/tunerd-dvbv5-XXXXXX",
		 dir && *dir ? dir : "/tmp");
	return mkstemp(path);
}

int channel_dvbv5_export(const struct channel_list *cl, char **out, size_t *len)
{
	struct dvb_file *f = calloc(1, sizeof(*f));
	struct dvb_entry **tail;
	char path[256];
	json_t *v;
	size_t i;
	int fd, err;

	if (!f)
		return -ENOMEM;
	tail = &f->first_entry;
	json_array_foreach(channel_list_entries(cl), i, v)
	{
		*tail = entry_of(v);
		if (*tail) {
			tail = &(*tail)->next;
			f->n_entries++;
		}
	}
	fd = temp_file(path, sizeof(path));
	if (fd < 0) {
		dvb_file_free(f);
		return -errno;
	}
	err = dvb_write_file(path, f) ? -EIO : 0;
	unlink(path);
	dvb_file_free(f);
	if (!err)
		err = read_all(fd, out, len);
	close(fd);
	return err;
}

static json_t *channel_of(struct dvb_entry *e)
{
	uint32_t sys = 0, freq = 0, bw = 0, sr = 0;
	const char *api;
	json_t *params;
	char *end = NULL;
	long lcn = e->vchannel ? strtol(e->vchannel, &end, 10) : -1;

	dvb_retrieve_entry_prop(e, DTV_DELIVERY_SYSTEM, &sys);
	dvb_retrieve_entry_prop(e, DTV_FREQUENCY, &freq);
	dvb_retrieve_entry_prop(e, DTV_BANDWIDTH_HZ, &bw);
	dvb_retrieve_entry_prop(e, DTV_SYMBOL_RATE, &sr);
	api = api_of(sys);
	if (!api || !e->channel)
		return NULL;
	params = json_pack("{s:s, s:I}", "delivery_system", api, "frequency",
			   (json_int_t)freq);
	if (bw)
		json_object_set_new(params, "bandwidth", json_integer(bw));
	if (sr)
		json_object_set_new(params, "symbol_rate", json_integer(sr));
	return json_pack("{s:s, s:o, s:i, s:i, s:i, s:s, s:o}", "name",
			 e->channel, "lcn",
			 end && end != e->vchannel && lcn >= 0 && lcn <= 65535
			     ? json_integer(lcn)
			     : json_null(),
			 "service_id", e->service_id, "transport_stream_id",
			 e->transport_id, "network_id", e->network_id, "type",
			 e->video_pid_len   ? "tv"
			 : e->audio_pid_len ? "radio"
					    : "other",
			 "params", params);
}

static int bad_file(struct api_error *e, const char *why)
{
	api_error_set(e, 400, "bad_request",
		      json_pack("{s:s}", "field", "body"),
		      "not a dvbv5 channel file: %s", why);
	return -EINVAL;
}

int channel_dvbv5_import(const char *text, size_t len, json_t **out,
			 struct api_error *e)
{
	struct dvb_file *f;
	json_t *arr, *ch;
	char path[256];
	int fd = temp_file(path, sizeof(path));
	int ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	f = ok ? dvb_read_file_format(path, SYS_UNDEFINED, FILE_DVBV5) : NULL;
	if (fd >= 0)
		unlink(path);
	if (!ok) {
		api_error_set(e, 500, "internal", NULL,
			      "cannot write a temporary file");
		return -EIO;
	}
	if (!f)
		return bad_file(e, "libdvbv5 cannot parse it");
	arr = json_array();
	for (struct dvb_entry *d = f->first_entry; d && arr; d = d->next) {
		ch = channel_of(d);
		if (!ch) {
			json_decref(arr);
			dvb_file_free(f);
			return bad_file(e, "an entry without a name or with "
					   "an unknown DELIVERY_SYSTEM");
		}
		json_array_append_new(arr, ch);
	}
	dvb_file_free(f);
	*out = arr;
	return arr ? 0 : -ENOMEM;
}

// SPDX-License-Identifier: MIT
/*
 * The HDHomeRun device id.  A random id is drawn until libhdhomerun's own
 * validator accepts it (one draw in sixteen passes), so the check digit
 * is whatever the clients compute, with no copy of their rule here.
 */
#include "hdhr_device.h"

#include <errno.h>
#include <jansson.h>
#include <libhdhomerun/hdhomerun.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>

#include "log.h"
#include "state_file.h"

static uint32_t draw_valid_id(void)
{
	uint32_t id;

	do {
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = (uint32_t)random();
	} while (id == 0 || id == 0xFFFFFFFFu ||
		 !hdhomerun_discover_validate_device_id(id));
	return id;
}

static int stored_id(struct state_dir *sd, uint32_t *out)
{
	json_t *doc = NULL;
	const char *text;
	char *end;
	unsigned long v;

	if (state_file_read(sd, HDHR_DEVICE_DOC, &doc))
		return -1;
	text = json_string_value(json_object_get(doc, "device_id"));
	v = text ? strtoul(text, &end, 16) : 0;
	if (!text || *end || v == 0 || v > 0xFFFFFFFEul ||
	    !hdhomerun_discover_validate_device_id((uint32_t)v)) {
		log_warn("hdhomerun: state %s.json holds no valid device_id; "
			 "making a new one",
			 HDHR_DEVICE_DOC);
		json_decref(doc);
		return -1;
	}
	json_decref(doc);
	*out = (uint32_t)v;
	return 0;
}

int hdhr_device_id_load(struct state_dir *sd, uint32_t *out)
{
	char text[16];
	json_t *doc;
	int ret;

	if (sd && !stored_id(sd, out))
		return 0;
	*out = draw_valid_id();
	if (!sd)
		return 0;
	hdhr_device_id_text(*out, text, sizeof(text));
	doc = json_pack("{s:s}", "device_id", text);
	if (!doc)
		return -ENOMEM;
	ret = state_file_write(sd, HDHR_DEVICE_DOC, doc);
	json_decref(doc);
	return ret;
}

void hdhr_device_id_text(uint32_t id, char *buf, size_t len)
{
	snprintf(buf, len, "%08X", (unsigned)id);
}

// SPDX-License-Identifier: MIT
/*
 * The lease table's document in the state directory:
 *   {"version":1,"leases":[{"tuner":1,"id":"<32 hex>","holder":"...",
 *     "priority":100,"ttl_s":30,"expires_ms":<realtime ms>}]}
 * Read back with the same bounds the API puts on a lease, so a file
 * edited by hand cannot give the daemon a lease the API would refuse.
 */
#include "lease_store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state_file.h"

#define LEASE_STORE_VERSION 1
/* More leases than a stub has clients: one per tuner at most. */
#define LEASE_STORE_MAX 4096

json_t *lease_store_entry(const struct lease *l)
{
	return json_pack("{s:I, s:s, s:s, s:i, s:i, s:I}", "tuner",
			 (json_int_t)l->tuner, "id", l->id, "holder", l->holder,
			 "priority", l->priority, "ttl_s", (int)l->ttl_s,
			 "expires_ms", (json_int_t)l->expires_wall);
}

int lease_store_write(struct state_dir *sd, json_t *entries)
{
	json_t *doc;
	int err;

	if (!entries)
		return -ENOMEM;
	doc = json_pack("{s:i, s:o}", "version", LEASE_STORE_VERSION, "leases",
			entries);
	if (!doc)
		return -ENOMEM;
	err = state_file_write(sd, LEASE_STORE_DOC, doc);
	json_decref(doc);
	return err;
}

static int hex_id(const char *id)
{
	if (strlen(id) != LEASE_ID_LEN)
		return 0;
	for (const char *p = id; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}

/* 1..LEASE_HOLDER_MAX characters (jansson strings are valid UTF-8). */
static int holder_ok(const char *s)
{
	size_t chars = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		chars += (*p & 0xC0) != 0x80;
	return chars >= 1 && chars <= LEASE_HOLDER_MAX;
}

static int entry_parse(json_t *j, struct lease *l)
{
	json_int_t tuner, prio, ttl, expires;
	const char *id, *holder;

	if (json_unpack(j, "{s:I, s:s, s:s, s:I, s:I, s:I}", "tuner", &tuner,
			"id", &id, "holder", &holder, "priority", &prio,
			"ttl_s", &ttl, "expires_ms", &expires))
		return -EINVAL;
	if (tuner < 1 || tuner > (json_int_t)UINT32_MAX || !hex_id(id) ||
	    !holder_ok(holder) || strlen(holder) >= sizeof(l->holder) ||
	    prio < 0 || prio > LEASE_PRIO_MAX || ttl < LEASE_TTL_MIN ||
	    ttl > LEASE_TTL_MAX || expires < 0)
		return -EINVAL;
	*l = (struct lease){.tuner = (long)tuner,
			    .priority = (int)prio,
			    .ttl_s = (unsigned int)ttl,
			    .expires_wall = (uint64_t)expires};
	memcpy(l->id, id, LEASE_ID_LEN + 1);
	memcpy(l->holder, holder, strlen(holder) + 1);
	return 0;
}

/* Every entry valid, one per tuner: 0, or -EINVAL. */
static int entries_check(json_t *arr, struct lease *all)
{
	json_t *j;
	size_t i;

	json_array_foreach(arr, i, j)
	{
		if (entry_parse(j, &all[i]))
			return -EINVAL;
		for (size_t k = 0; k < i; k++)
			if (all[k].tuner == all[i].tuner)
				return -EINVAL;
	}
	return 0;
}

int lease_store_read(struct state_dir *sd,
		     void (*fn)(const struct lease *l, void *arg), void *arg)
{
	struct lease *all = NULL;
	json_t *doc, *arr;
	int n = 0, err;

	if (state_file_read(sd, LEASE_STORE_DOC, &doc))
		return 0; /* none, or corrupt and set aside (logged) */
	arr = json_object_get(doc, "leases");
	err = -EINVAL;
	if (json_integer_value(json_object_get(doc, "version")) ==
		LEASE_STORE_VERSION &&
	    json_is_array(arr) && json_array_size(arr) <= LEASE_STORE_MAX) {
		all = calloc(json_array_size(arr) + 1, sizeof(*all));
		err = all ? entries_check(arr, all) : -ENOMEM;
	}
	if (!err) {
		n = (int)json_array_size(arr);
		for (int i = 0; i < n; i++)
			fn(&all[i], arg);
	} else if (err == -EINVAL) {
		state_file_set_aside(sd, LEASE_STORE_DOC,
				     "not a valid list of leases");
	}
	if (all)
		explicit_bzero(all, (json_array_size(arr) + 1) * sizeof(*all));
	free(all);
	json_decref(doc);
	return err == -ENOMEM ? err : n;
}

/* SPDX-License-Identifier: MIT */
/*
 * channel_list.h - the box's channels: what scans found (or an operator
 * imported), each a JSON object as the API shows it
 * ({"name","lcn","service_id","transport_stream_id","network_id","type",
 * "params"}), kept sorted by LCN (channels without one last) then name,
 * and written whole to the state directory's document `channels` after
 * every change, before the change is answered.
 *
 * Loop thread only.
 */
#ifndef TUNERD_CHANNEL_LIST_H
#define TUNERD_CHANNEL_LIST_H

#include <jansson.h>
#include <stdint.h>

struct state_dir;
struct api_error;
struct channel_list;

#define CHANNEL_LIST_DOC "channels"
#define CHANNELS_MAX     2000 /* entries in a list (the document's bound) */
#define CHANNEL_NAME_MAX 64   /* bytes of a name */

/* The list, read back from sd (NULL: kept in memory only).  An entry
 * that does not pass channel_entry_check() is dropped with a log line. */
struct channel_list *channel_list_new(struct state_dir *sd);
void channel_list_free(struct channel_list *cl);

/* arr in the list's order, LCN then name (takes arr's reference, returns
 * a new array: the scan's answer lists its channels as the list does). */
json_t *channel_list_sorted(json_t *arr);

/* The entries (borrowed: valid until the next change). */
json_t *channel_list_entries(const struct channel_list *cl);
/* A channel by name (exact, case-insensitive) when name is not NULL,
 * else by lcn; NULL when there is none (borrowed). */
json_t *channel_list_find(const struct channel_list *cl, const char *name,
			  long lcn);

/*
 * Replace the entries of the multiplex at frequency (Hz) with entries
 * (an array, stolen).  0, or -errno when the state directory could not
 * take it (the list then still changed in memory, and says so in the
 * log).
 */
int channel_list_replace_mux(struct channel_list *cl, uint32_t frequency,
			     json_t *entries);
/* Replace the whole list with channels (an array, checked: 400 in e
 * naming the first bad entry).  0, -EINVAL, or -errno of the write. */
int channel_list_set(struct channel_list *cl, json_t *channels,
		     struct api_error *e);

/* 0 when entry is a valid channel object, else -EINVAL with the field
 * that is wrong in *field (static). */
int channel_entry_check(json_t *entry, const char **field);

/* dvbv5 channel files (channel_dvbv5.c, libdvbv5's dvb-file API). */
/* The list as a dvbv5 channel file: malloc'd text in *out (length *len),
 * or -errno. */
int channel_dvbv5_export(const struct channel_list *cl, char **out,
			 size_t *len);
/* A dvbv5 channel file (len bytes) as a channels array in *out, or
 * -EINVAL with the why in e. */
int channel_dvbv5_import(const char *text, size_t len, json_t **out,
			 struct api_error *e);

#endif /* TUNERD_CHANNEL_LIST_H */

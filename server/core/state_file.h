/* SPDX-License-Identifier: MIT */
/*
 * state_file.h - what the daemon keeps across its restarts: named JSON
 * documents in one state directory (--state-dir), each written whole and
 * atomically, so a crash at any instant leaves either the old or the new
 * document and never a mix.
 *
 * A document NAME lives in DIR/NAME.json (mode 0600: lease ids are
 * secrets).  A write goes to DIR/.NAME.json.tmp, is fsync()ed, renamed
 * over NAME.json and the directory is fsync()ed: once state_file_write()
 * returns 0 the document survives a power cut.  A document that cannot
 * be read back (bad JSON, not an object, over STATE_FILE_MAX) is renamed
 * NAME.json.corrupt-<unix seconds> with a log line, and the caller starts
 * without it: a damaged file never stops the daemon.
 *
 * Names are 1..STATE_NAME_MAX of [a-z0-9_-].  Loop thread only (the
 * calls block for the fsync()s: about a millisecond on an SSD).
 */
#ifndef TUNERD_STATE_FILE_H
#define TUNERD_STATE_FILE_H

#include <jansson.h>

#define STATE_FILE_MAX (1u << 20) /* bytes a document may have */
#define STATE_NAME_MAX 32

struct state_dir;

/*
 * Open path (creating its last component, mode 0700, when missing) and
 * prove it writable by creating and removing a file there.  Returns 0
 * with *out, or the negative errno of the step that failed (-EINVAL for
 * an empty or relative path).
 */
int state_dir_open(const char *path, struct state_dir **out);
void state_dir_close(struct state_dir *sd);
const char *state_dir_path(const struct state_dir *sd);

/* Replace document name with doc (an object or array).  0 or -errno;
 * on failure the previous document is still there, whole. */
int state_file_write(struct state_dir *sd, const char *name, const json_t *doc);
/*
 * Read document name.  Returns 0 with *doc (the caller's reference),
 * -ENOENT when there is none, -EBADMSG when it was corrupt and has been
 * moved aside, or another -errno (unreadable: left in place, logged).
 */
int state_file_read(struct state_dir *sd, const char *name, json_t **doc);
/* Move document name aside as corrupt (a caller found its content
 * wrong), logging why.  0 or -errno. */
int state_file_set_aside(struct state_dir *sd, const char *name,
			 const char *why);

#endif /* TUNERD_STATE_FILE_H */

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
 * Names are 1..STATE_NAME_MAX of [a-z0-9_-].  state_file_write() blocks
 * for the fsync()s (a millisecond on an idle SSD, tens to a hundred under
 * load): the daemon uses it only at its start and stop, and writes while
 * it runs through a struct state_doc, which does the same write on
 * libuv's threadpool.  Everything else is loop-thread only.
 */
#ifndef TUNERD_STATE_FILE_H
#define TUNERD_STATE_FILE_H

#include <jansson.h>
#include <stdint.h>

#define STATE_FILE_MAX (1u << 20) /* bytes a document may have */
#define STATE_NAME_MAX 32

struct state_dir;
struct state_doc;
struct loop;

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
/* The write itself: text (a whole document) made durable as name, by
 * the steps above.  Safe from any thread: it touches nothing but the
 * directory's descriptor.  0 or -errno. */
int state_file_write_text(struct state_dir *sd, const char *name,
			  const char *text);
/* What writes the documents (NULL: state_file_write_text), called off
 * the loop thread by state_doc.  Tests put a writer here that blocks or
 * fails when they say so. */
typedef int (*state_writer_fn)(struct state_dir *sd, const char *name,
			       const char *text, void *arg);
void state_dir_set_writer(struct state_dir *sd, state_writer_fn fn, void *arg);
/* Move document name aside as corrupt (a caller found its content
 * wrong), logging why.  0 or -errno. */
int state_file_set_aside(struct state_dir *sd, const char *name,
			 const char *why);

/*
 * A document written without stalling the loop (group commit).  Its
 * owner marks it due after each change; at the end of that loop turn
 * build() makes the document from the owner's state as it is then, and
 * the write (state_file_write_text) runs on libuv's threadpool; done()
 * comes back on the loop with its result.  One write is in flight at a
 * time: changes made meanwhile are gathered into the next one, which
 * starts as soon as it ends, with the latest state.  So N changes in a
 * turn, or during one write, cost one write, and an owner that answers
 * its clients in done() answers each after a write that includes it.
 */
/* The document (a new reference), or NULL: the write fails -ENOMEM. */
typedef json_t *(*state_doc_build_fn)(void *arg);
/* The write that build()'s document went into ended: 0 or -errno. */
typedef void (*state_doc_done_fn)(int err, void *arg);

/* sd and loop outlive the document.  NULL when out of memory or name
 * is bad. */
struct state_doc *state_doc_new(struct state_dir *sd, struct loop *loop,
				const char *name, state_doc_build_fn build,
				state_doc_done_fn done, void *arg);
/* A write is due: at the end of this turn, or after the one in flight.
 * Never calls build() or done() from inside. */
void state_doc_due(struct state_doc *doc);
/* Nothing is due after all (the one in flight, if any, goes on). */
void state_doc_drop_due(struct state_doc *doc);
/*
 * At a stop: wait (running the loop) for the write in flight, at most
 * max_ms, then write what is due at once on this thread.  done() is
 * called for each.  0, or -ETIMEDOUT when the write in flight did not
 * end in time (its done() may still come, from the loop).
 */
int state_doc_flush(struct state_doc *doc, unsigned int max_ms);
/* Free doc; one still in flight is freed when its write ends, without
 * its done().  Flush first to keep what is due. */
void state_doc_free(struct state_doc *doc);

#endif /* TUNERD_STATE_FILE_H */

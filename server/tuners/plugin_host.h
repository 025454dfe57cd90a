/* SPDX-License-Identifier: MIT */
/*
 * plugin_host.h - the chip plugins (*.so in the plugin directories) per
 * tunerd_plugin.h, as the daemon knows them: by their descriptions.
 *
 * The daemon never opens a plugin.  Each file's description (or why it is
 * refused: dlopen fails, a symbol is missing, an ABI version the host did
 * not offer, an inconsistent description, a crash or hang while loading)
 * is learnt by a trial child (plugin_trial.h) and cached by path, size
 * and mtime.  Trials start in the background, from the loop: when a
 * directory is added, and when a load or a listing finds a file the cache
 * does not know as it is now (new, or a new size or mtime).  Each refusal
 * is logged and published once per version of the file.  A tuner's worker opens its plugin itself
 * (plugin_open.h).
 *
 * Loop thread only.
 */
#ifndef TUNERD_PLUGIN_HOST_H
#define TUNERD_PLUGIN_HOST_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "tunerd_plugin.h"

struct eventbus;
struct loop;
struct plugin_host;

/* A plugin in use: by tuners, or named by a LOAD_PLUGIN. */
struct plugin {
	char path[PATH_MAX];
	const char *file; /* the base name inside path */
	int abi;
	struct tstub_chip_info info;
	unsigned int users; /* tuners using it */
	struct plugin *next;
};

/* One *.so found in the plugin directories, as plugin_host_list() knows
 * it. */
struct plugin_entry {
	char path[PATH_MAX];
	char file[128];
	int error; /* 0 usable, else why refused (-EPROTO, -ENOEXEC), or
		      -EINPROGRESS while its first trial runs */
	char reason[192];
	int loaded;
	int abi;
	struct tstub_chip_info info; /* when error == 0 */
};

/* How long a trial child may take before it is killed and its plugin
 * refused as hanging. */
#define PLUGIN_TRIAL_TIMEOUT_MS 2000

/* events may be NULL (no events published). */
struct plugin_host *plugin_host_new(struct loop *loop, struct eventbus *events);
/* Cancels what plugin_host_stop() cancels, kills the trials, frees. */
void plugin_host_free(struct plugin_host *ph);
/* Answers every waiting load with -ECANCELED and kills the trials; later
 * loads fail with -ECANCELED.  For shutdown, while the waiters' callers
 * are still there to take the answer. */
void plugin_host_stop(struct plugin_host *ph);
/* For tests: the trial deadline (default PLUGIN_TRIAL_TIMEOUT_MS). */
void plugin_host_set_trial_timeout(struct plugin_host *ph, unsigned int ms);

/* Directories are searched in the order added; adding one schedules a
 * scan of it (trials in the background).  Returns 0 or -ENOMEM. */
int plugin_host_add_dir(struct plugin_host *ph, const char *dir);
size_t plugin_host_dir_count(const struct plugin_host *ph);
const char *plugin_host_dir(const struct plugin_host *ph, size_t i);

/* err 0 and p, -ENOENT when no usable plugin claims the chip, -EPROTO
 * when the first that claims it was refused, -ECANCELED at shutdown. */
typedef void (*plugin_load_fn)(int err, struct plugin *p, void *arg);

/*
 * The plugin for chip_id: the first usable one in directory order, then
 * by file name.  fn runs from the loop, never from inside this call,
 * once every file before the answer is known as it is now.  Returns 0
 * (fn will run) or -ENOMEM / -ECANCELED (fn never runs).
 */
int plugin_host_load(struct plugin_host *ph, uint32_t chip_id,
		     plugin_load_fn fn, void *arg);
/* The plugin in use for chip_id, or NULL. */
struct plugin *plugin_host_find(struct plugin_host *ph, uint32_t chip_id);

/* A tuner starts or stops using p; the last user drops it. */
void plugin_host_use(struct plugin *p);
void plugin_host_unuse(struct plugin_host *ph, struct plugin *p);

/* Iterate the plugins in use. */
struct plugin *plugin_host_first(struct plugin_host *ph);

/* Every *.so of the last scan with what the cache knows of it; never
 * runs a trial.  *out is malloc'ed (free it).  Returns 0 or -ENOMEM. */
int plugin_host_list(struct plugin_host *ph, struct plugin_entry **out,
		     size_t *count);

#endif /* TUNERD_PLUGIN_HOST_H */

/* SPDX-License-Identifier: MIT */
/*
 * plugin_host.h - finding, checking and loading chip plugins (*.so in the
 * plugin directories) per tunerd_plugin.h.
 *
 * A plugin is refused, with one log line naming the file and the reason,
 * when dlopen fails, a symbol is missing, it picks an ABI version the host
 * did not offer, or its description is inconsistent (abi, sizes, missing
 * ops).  A refused plugin never takes the daemon down.
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
struct plugin_host;

/* A loaded plugin.  The ops are the host's copy: fields beyond the
 * plugin's ops size are NULL. */
struct plugin {
	char path[PATH_MAX];
	const char *file; /* the base name inside path */
	int abi;
	struct tstub_chip_info info;
	struct tunerd_plugin_ops ops;
	unsigned int users; /* tuners using it */
	void *handle;
	struct plugin *next;
};

/* One *.so found by plugin_host_list(). */
struct plugin_entry {
	char path[PATH_MAX];
	char file[128];
	int error; /* 0 usable, else why refused (-EPROTO, -ENOEXEC) */
	char reason[192];
	int loaded;
	int abi;
	struct tstub_chip_info info; /* when error == 0 */
};

/* events may be NULL (no events published). */
struct plugin_host *plugin_host_new(struct eventbus *events);
/* dlcloses every plugin: only once no worker will be forked again. */
void plugin_host_free(struct plugin_host *ph);

/* Directories are searched in the order added.  Returns 0 or -ENOMEM. */
int plugin_host_add_dir(struct plugin_host *ph, const char *dir);
size_t plugin_host_dir_count(const struct plugin_host *ph);
const char *plugin_host_dir(const struct plugin_host *ph, size_t i);

/*
 * The plugin for chip_id, loading it if needed.  Returns 0 and *out,
 * -ENOENT when no usable plugin claims the chip, -EPROTO when the one
 * that claims it has a broken description.
 */
int plugin_host_load(struct plugin_host *ph, uint32_t chip_id,
		     struct plugin **out);
/* The loaded plugin for chip_id, or NULL. */
struct plugin *plugin_host_find(struct plugin_host *ph, uint32_t chip_id);

/* A tuner starts or stops using p; the last user unloads it. */
void plugin_host_use(struct plugin *p);
void plugin_host_unuse(struct plugin_host *ph, struct plugin *p);

/* Iterate the loaded plugins. */
struct plugin *plugin_host_first(struct plugin_host *ph);

/* Scan every directory: each *.so with its info or why it is refused.
 * *out is malloc'ed (free it).  Returns 0 or -ENOMEM. */
int plugin_host_list(struct plugin_host *ph, struct plugin_entry **out,
		     size_t *count);

#endif /* TUNERD_PLUGIN_HOST_H */

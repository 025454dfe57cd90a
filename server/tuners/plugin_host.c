// SPDX-License-Identifier: MIT
/*
 * The plugin cache: every *.so of the plugin directories with the version
 * (size, mtime) it was last seen as, and the description a trial child
 * gave for the version it tried.  A file is fresh when the two versions
 * match.  Scans only stat(); trials start from a loop timer, at most
 * PLUGIN_TRIALS_MAX at once, so neither a load nor a listing ever forks.
 */
#include "plugin_host.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eventbus.h"
#include "log.h"
#include "loop.h"
#include "plugin_open.h"
#include "plugin_trial.h"

/* Trial children at once: they mostly wait on the dynamic loader's I/O,
 * and a hanging one must not hold up the others. */
#define PLUGIN_TRIALS_MAX 4

struct file_version {
	off_t size;
	struct timespec mtime;
};

/* One *.so: as seen, as described, as being tried. */
struct plugin_file {
	struct plugin_host *ph;
	char path[PATH_MAX];
	struct file_version seen;
	struct file_version described; /* of desc, when known */
	int known;
	int retry; /* the trial could not start: try again on the next scan */
	struct plugin_desc desc;
	struct plugin_trial *trial; /* running, for trying */
	struct file_version trying;
	int queued; /* to be tried as seen */
	int gone;   /* no longer found; freed when its trial ends */
	struct plugin_file *next;
};

/* A load waiting for the files before its answer to be known. */
struct plugin_wait {
	uint32_t chip_id;
	plugin_load_fn fn;
	void *arg;
	struct plugin_wait *next;
};

struct plugin_host {
	struct loop *loop;
	struct eventbus *events;
	char **dirs;
	size_t ndirs;
	struct plugin_file *files; /* scan order: directories, then names */
	struct plugin *used;
	struct plugin_wait *waiters; /* in arrival order */
	uint64_t kick_timer;
	int scan_pending; /* a directory was added */
	unsigned int trials_running;
	unsigned int trial_timeout_ms;
	int stopped;
};

struct plugin_host *plugin_host_new(struct loop *loop, struct eventbus *events)
{
	struct plugin_host *ph = calloc(1, sizeof(*ph));

	if (!ph)
		return NULL;
	ph->loop = loop;
	ph->events = events;
	ph->trial_timeout_ms = PLUGIN_TRIAL_TIMEOUT_MS;
	return ph;
}

void plugin_host_set_trial_timeout(struct plugin_host *ph, unsigned int ms)
{
	ph->trial_timeout_ms = ms;
}

static int same_version(const struct file_version *a,
			const struct file_version *b)
{
	return a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec;
}

static int file_fresh(const struct plugin_file *f)
{
	return f->known && !f->retry && same_version(&f->described, &f->seen);
}

/* ---- scanning: stat only ---- */

static int is_plugin_file(const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	return de->d_name[0] != '.' && n > 3 &&
	       strcmp(de->d_name + n - 3, ".so") == 0;
}

/* Unlink and return the entry for path, or a new one. */
static struct plugin_file *file_take(struct plugin_host *ph, const char *path)
{
	struct plugin_file **pp, *f;

	for (pp = &ph->files; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->path, path) == 0) {
			f = *pp;
			*pp = f->next;
			f->next = NULL;
			return f;
		}
	f = calloc(1, sizeof(*f));
	if (f) {
		f->ph = ph;
		snprintf(f->path, sizeof(f->path), "%s", path);
	}
	return f;
}

/* Append the *.so of dir, in name order, from ph->files to *tail. */
static struct plugin_file **scan_dir(struct plugin_host *ph, const char *dir,
				     struct plugin_file **tail)
{
	char path[PATH_MAX];
	struct dirent **names;
	int n = scandir(dir, &names, is_plugin_file, alphasort);

	if (n < 0) {
		log_debug("plugin dir %s: %s", dir, strerror(errno));
		return tail;
	}
	for (int i = 0; i < n; i++) {
		struct plugin_file *f;
		struct stat st;
		int len = snprintf(path, sizeof(path), "%s/%s", dir,
				   names[i]->d_name);

		free(names[i]);
		if (len >= (int)sizeof(path) || stat(path, &st) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		f = file_take(ph, path);
		if (!f)
			continue;
		f->seen = (struct file_version){st.st_size, st.st_mtim};
		f->gone = 0;
		*tail = f;
		tail = &f->next;
	}
	free(names);
	return tail;
}

/* Rebuild the file list from the directories; queue what is not fresh.
 * Files no longer found are dropped (kept as gone while tried). */
static void plugin_host_scan(struct plugin_host *ph)
{
	struct plugin_file *order = NULL, **tail = &order, *f, *next;

	for (size_t d = 0; d < ph->ndirs; d++)
		tail = scan_dir(ph, ph->dirs[d], tail);
	for (f = ph->files; f; f = next) {
		next = f->next;
		f->next = NULL;
		if (f->trial) {
			f->gone = 1;
			*tail = f;
			tail = &f->next;
		} else {
			free(f);
		}
	}
	ph->files = order;
	for (f = ph->files; f; f = f->next)
		if (!f->gone && !f->trial && !file_fresh(f))
			f->queued = 1;
}

static void plugin_host_kick(struct plugin_host *ph);

/* ---- trials ---- */

static void plugin_publish_refused(struct plugin_host *ph,
				   const struct plugin_file *f)
{
	log_warn("%s", f->desc.reason);
	if (ph->events)
		eventbus_publish(
		    ph->events, "plugin.refused", EVENTBUS_NO_TUNER,
		    json_pack("{s:s,s:s,s:i}", "file",
			      plugin_base_name(f->path), "reason",
			      f->desc.reason, "error", -f->desc.error));
}

static void file_unlink_free(struct plugin_host *ph, struct plugin_file *f)
{
	for (struct plugin_file **pp = &ph->files; *pp; pp = &(*pp)->next)
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	free(f);
}

static void plugin_waiters_resolve(struct plugin_host *ph);
static void plugin_trials_pump(struct plugin_host *ph);

static void plugin_tried(const struct plugin_desc *d, void *arg)
{
	struct plugin_file *f = arg;
	struct plugin_host *ph = f->ph;

	f->trial = NULL;
	ph->trials_running--;
	if (f->gone) {
		file_unlink_free(ph, f);
	} else {
		f->desc = *d;
		f->described = f->trying;
		f->known = 1;
		f->retry = 0;
		if (d->error)
			plugin_publish_refused(ph, f);
		else
			log_debug("plugin %s: describes %s (chip %u, ABI %d)",
				  plugin_base_name(f->path), d->info.name,
				  d->info.chip_id, d->abi);
		if (!file_fresh(f))
			f->queued = 1; /* changed while tried */
	}
	plugin_trials_pump(ph);
	plugin_waiters_resolve(ph);
}

static void plugin_trial_failed(struct plugin_file *f, int err)
{
	memset(&f->desc, 0, sizeof(f->desc));
	plugin_desc_refuse(&f->desc, -ENOEXEC, f->path,
			   "cannot try it in a child: %s", strerror(err));
	f->described = f->trying;
	f->known = 1;
	f->retry = 1;
	log_warn("%s", f->desc.reason);
}

static void plugin_trials_pump(struct plugin_host *ph)
{
	for (struct plugin_file *f = ph->files;
	     f && ph->trials_running < PLUGIN_TRIALS_MAX && !ph->stopped;
	     f = f->next) {
		if (!f->queued || f->trial || f->gone)
			continue;
		f->queued = 0;
		f->trying = f->seen;
		f->trial = plugin_trial_start(
		    ph->loop, f->path, ph->trial_timeout_ms, plugin_tried, f);
		if (f->trial)
			ph->trials_running++;
		else
			plugin_trial_failed(f, errno);
	}
}

static long plugin_host_kicked(struct loop *l, uint64_t id, void *arg)
{
	struct plugin_host *ph = arg;

	(void)l;
	(void)id;
	ph->kick_timer = 0;
	if (ph->scan_pending) {
		ph->scan_pending = 0;
		plugin_host_scan(ph);
	}
	plugin_trials_pump(ph);
	plugin_waiters_resolve(ph);
	return LOOP_TIMER_DONE;
}

/* Start trials and answer loads from the loop, soon. */
static void plugin_host_kick(struct plugin_host *ph)
{
	if (!ph->kick_timer && !ph->stopped)
		ph->kick_timer =
		    loop_add_timer(ph->loop, 0, plugin_host_kicked, ph);
}

/* ---- directories ---- */

int plugin_host_add_dir(struct plugin_host *ph, const char *dir)
{
	char **dirs = realloc(ph->dirs, (ph->ndirs + 1) * sizeof(*dirs));

	if (!dirs)
		return -ENOMEM;
	ph->dirs = dirs;
	dirs[ph->ndirs] = strdup(dir);
	if (!dirs[ph->ndirs])
		return -ENOMEM;
	ph->ndirs++;
	ph->scan_pending = 1;
	plugin_host_kick(ph);
	return 0;
}

size_t plugin_host_dir_count(const struct plugin_host *ph)
{
	return ph->ndirs;
}

const char *plugin_host_dir(const struct plugin_host *ph, size_t i)
{
	return i < ph->ndirs ? ph->dirs[i] : NULL;
}

/* ---- plugins in use ---- */

struct plugin *plugin_host_find(struct plugin_host *ph, uint32_t chip_id)
{
	for (struct plugin *p = ph->used; p; p = p->next)
		if (p->info.chip_id == chip_id)
			return p;
	return NULL;
}

struct plugin *plugin_host_first(struct plugin_host *ph)
{
	return ph->used;
}

static struct plugin *plugin_by_path(struct plugin_host *ph, const char *path)
{
	for (struct plugin *p = ph->used; p; p = p->next)
		if (strcmp(p->path, path) == 0)
			return p;
	return NULL;
}

static int plugin_keep(struct plugin_host *ph, const struct plugin_file *f,
		       struct plugin **out)
{
	struct plugin *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	snprintf(p->path, sizeof(p->path), "%s", f->path);
	p->file = plugin_base_name(p->path);
	p->abi = f->desc.abi;
	p->info = f->desc.info;
	p->next = ph->used;
	ph->used = p;
	*out = p;
	log_info("plugin %s: loaded %s %s (chip %u, ABI %d)", p->file,
		 p->info.vendor, p->info.name, p->info.chip_id, p->abi);
	if (ph->events)
		eventbus_publish(ph->events, "plugin.load", EVENTBUS_NO_TUNER,
				 json_pack("{s:s,s:i,s:s,s:s,s:i,s:i}", "file",
					   p->file, "chip_id", p->info.chip_id,
					   "name", p->info.name, "vendor",
					   p->info.vendor, "abi", p->abi,
					   "version", p->info.plugin_version));
	return 0;
}

static void plugin_drop(struct plugin_host *ph, struct plugin *p, int publish)
{
	if (publish && ph->events)
		eventbus_publish(ph->events, "plugin.unload", EVENTBUS_NO_TUNER,
				 json_pack("{s:s,s:i,s:s}", "file", p->file,
					   "chip_id", p->info.chip_id, "name",
					   p->info.name));
	log_info("plugin %s: unloaded (%s)", p->file, p->info.name);
	free(p);
}

void plugin_host_use(struct plugin *p)
{
	p->users++;
}

void plugin_host_unuse(struct plugin_host *ph, struct plugin *p)
{
	struct plugin **pp;

	if (!p || !p->users || --p->users)
		return;
	for (pp = &ph->used; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			plugin_drop(ph, p, 1);
			return;
		}
}

/* ---- loads ---- */

/* The answer for chip_id, or -EINPROGRESS while a file before it is not
 * known as it is now. */
static int plugin_resolve(struct plugin_host *ph, uint32_t chip_id,
			  struct plugin **out)
{
	int refused = 0;

	*out = plugin_host_find(ph, chip_id);
	if (*out)
		return 0;
	for (const struct plugin_file *f = ph->files; f; f = f->next) {
		const struct plugin_desc *d = &f->desc;

		if (f->gone)
			continue;
		if (!file_fresh(f) && !f->retry)
			return -EINPROGRESS;
		if (!d->error && d->info.chip_id == chip_id)
			return plugin_keep(ph, f, out);
		if (d->error && d->info_valid && d->info.chip_id == chip_id)
			refused = 1;
	}
	log_warn("no usable plugin for chip %u (%s)", chip_id,
		 refused ? "its plugin was refused" : "none found");
	return refused ? -EPROTO : -ENOENT;
}

static void plugin_waiters_resolve(struct plugin_host *ph)
{
	struct plugin_wait *w = ph->waiters, *keep = NULL, **tail = &keep;

	/* Callbacks may add waiters: they queue on ph->waiters meanwhile. */
	ph->waiters = NULL;
	while (w) {
		struct plugin_wait *next = w->next;
		struct plugin *p = NULL;
		int err = ph->stopped ? -ECANCELED
				      : plugin_resolve(ph, w->chip_id, &p);

		if (err == -EINPROGRESS) {
			w->next = NULL;
			*tail = w;
			tail = &w->next;
		} else {
			w->fn(err, err ? NULL : p, w->arg);
			free(w);
		}
		w = next;
	}
	*tail = ph->waiters;
	ph->waiters = keep;
}

int plugin_host_load(struct plugin_host *ph, uint32_t chip_id,
		     plugin_load_fn fn, void *arg)
{
	struct plugin_wait *w, **pp;

	if (ph->stopped)
		return -ECANCELED;
	plugin_host_kick(ph);
	if (!ph->kick_timer)
		return -ENOMEM;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->chip_id = chip_id;
	w->fn = fn;
	w->arg = arg;
	for (pp = &ph->waiters; *pp; pp = &(*pp)->next)
		;
	*pp = w;
	/* Cheap (stat only) and catches a file changed since: its trial
	 * then starts from the loop and the answer waits for it. */
	if (!plugin_host_find(ph, chip_id))
		plugin_host_scan(ph);
	return 0;
}

/* ---- listing ---- */

static void plugin_entry_fill(struct plugin_host *ph,
			      const struct plugin_file *f,
			      struct plugin_entry *e)
{
	const struct plugin *p = plugin_by_path(ph, f->path);

	memset(e, 0, sizeof(*e));
	snprintf(e->path, sizeof(e->path), "%s", f->path);
	snprintf(e->file, sizeof(e->file), "%s", plugin_base_name(f->path));
	if (p) {
		e->loaded = 1;
		e->abi = p->abi;
		e->info = p->info;
	} else if (f->known) {
		e->error = f->desc.error;
		e->abi = f->desc.abi;
		snprintf(e->reason, sizeof(e->reason), "%s", f->desc.reason);
		if (f->desc.info_valid)
			e->info = f->desc.info;
	} else {
		e->error = -EINPROGRESS;
		snprintf(e->reason, sizeof(e->reason), "plugin %s: being tried",
			 e->file);
	}
}

int plugin_host_list(struct plugin_host *ph, struct plugin_entry **out,
		     size_t *count)
{
	struct plugin_entry *v;
	size_t n = 0, i = 0;

	/* New and changed files show up now; their trials run from the
	 * loop, and this listing answers with what is known. */
	plugin_host_scan(ph);
	plugin_host_kick(ph);
	for (const struct plugin_file *f = ph->files; f; f = f->next)
		n += !f->gone;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (const struct plugin_file *f = ph->files; f; f = f->next)
		if (!f->gone)
			plugin_entry_fill(ph, f, &v[i++]);
	*out = v;
	*count = n;
	return 0;
}

/* ---- shutdown ---- */

void plugin_host_stop(struct plugin_host *ph)
{
	struct plugin_file *f, *next;

	if (!ph || ph->stopped)
		return;
	ph->stopped = 1;
	loop_del_timer(ph->loop, ph->kick_timer);
	ph->kick_timer = 0;
	for (f = ph->files; f; f = next) {
		next = f->next;
		f->queued = 0;
		if (!f->trial)
			continue;
		plugin_trial_cancel(f->trial);
		f->trial = NULL;
		ph->trials_running--;
		if (f->gone)
			file_unlink_free(ph, f);
	}
	while (ph->waiters)
		plugin_waiters_resolve(ph);
}

void plugin_host_free(struct plugin_host *ph)
{
	if (!ph)
		return;
	plugin_host_stop(ph);
	while (ph->used) {
		struct plugin *p = ph->used;

		ph->used = p->next;
		plugin_drop(ph, p, 0);
	}
	while (ph->files) {
		struct plugin_file *f = ph->files;

		ph->files = f->next;
		free(f);
	}
	for (size_t i = 0; i < ph->ndirs; i++)
		free(ph->dirs[i]);
	free(ph->dirs);
	free(ph);
}

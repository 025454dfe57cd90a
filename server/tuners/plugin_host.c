// SPDX-License-Identifier: MIT
#include "plugin_host.h"
#include "plugin_trial.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "eventbus.h"
#include "log.h"

/* The plugin ABI versions this host speaks, newest first. */
static const int host_abis[] = {TUNERD_PLUGIN_ABI};
#define HOST_ABI_COUNT ((int)(sizeof(host_abis) / sizeof(host_abis[0])))

/* A plugin's ops must reach at least up to get_status. */
#define OPS_MIN_SIZE                                                           \
	(offsetof(struct tunerd_plugin_ops, get_status) +                      \
	 sizeof(((struct tunerd_plugin_ops *)0)->get_status))
#define DESC_MIN_SIZE (offsetof(struct tunerd_plugin, ops) + sizeof(void *))

/* A file refused once: said again only when it changes. */
struct refused {
	char *path;
	struct timespec mtime;
	off_t size;
	struct refused *next;
};

struct plugin_host {
	char **dirs;
	size_t ndirs;
	struct plugin *loaded;
	struct refused *refused;
	struct eventbus *events;
};

/* What checking one file found. */
struct plugin_check {
	int error;
	char reason[192];
	int abi;
	struct tstub_chip_info info;
	int info_valid; /* describe() gave an identity, even if refused */
	struct tunerd_plugin_ops ops;
	void *handle;
};

struct plugin_host *plugin_host_new(struct eventbus *events)
{
	struct plugin_host *ph = calloc(1, sizeof(*ph));

	if (ph)
		ph->events = events;
	return ph;
}

static void plugin_unload(struct plugin_host *ph, struct plugin *p, int publish)
{
	if (publish && ph->events)
		eventbus_publish(ph->events, "plugin.unload", EVENTBUS_NO_TUNER,
				 json_pack("{s:s,s:i,s:s}", "file", p->file,
					   "chip_id", p->info.chip_id, "name",
					   p->info.name));
	log_info("plugin %s: unloaded (%s)", p->file, p->info.name);
	dlclose(p->handle);
	free(p);
}

void plugin_host_free(struct plugin_host *ph)
{
	struct plugin *p, *next;

	if (!ph)
		return;
	for (p = ph->loaded; p; p = next) {
		next = p->next;
		plugin_unload(ph, p, 0);
	}
	while (ph->refused) {
		struct refused *r = ph->refused;

		ph->refused = r->next;
		free(r->path);
		free(r);
	}
	for (size_t i = 0; i < ph->ndirs; i++)
		free(ph->dirs[i]);
	free(ph->dirs);
	free(ph);
}

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

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int refuse(struct plugin_check *c, int error, const char *file,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int refuse(struct plugin_check *c, int error, const char *file,
		  const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(c->reason, sizeof(c->reason), "plugin %s: ", file);
	va_start(ap, fmt);
	vsnprintf(c->reason + n, sizeof(c->reason) - (size_t)n, fmt, ap);
	va_end(ap);
	c->error = error;
	return error;
}

static int host_speaks(int abi)
{
	for (int i = 0; i < HOST_ABI_COUNT; i++)
		if (host_abis[i] == abi)
			return 1;
	return 0;
}

static int terminated(const char *s, size_t len)
{
	return memchr(s, '\0', len) != NULL;
}

/* The description the plugin gave: consistent, and what the host needs. */
static int plugin_check_desc(struct plugin_check *c, const char *file,
			     const struct tunerd_plugin *desc)
{
	const struct tunerd_plugin_ops *ops;

	if (!desc)
		return refuse(c, -EPROTO, file, "describe(%d) returned NULL",
			      c->abi);
	if (desc->size < DESC_MIN_SIZE)
		return refuse(c, -EPROTO, file, "description size %u too small",
			      desc->size);
	if (terminated(desc->info.name, sizeof(desc->info.name))) {
		c->info = desc->info;
		c->info_valid = 1;
	}
	if (desc->abi != (uint32_t)c->abi)
		return refuse(c, -EPROTO, file,
			      "describe(%d) answered for ABI version %u",
			      c->abi, desc->abi);
	if (!c->info_valid || !terminated(desc->info.vendor, TSTUB_NAME_LEN) ||
	    !terminated(desc->info.plugin, TSTUB_NAME_LEN))
		return refuse(c, -EPROTO, file, "chip names not terminated");
	if (desc->info.freq_min > desc->info.freq_max)
		return refuse(c, -EPROTO, file, "freq_min above freq_max");
	ops = desc->ops;
	if (!ops || ops->size < OPS_MIN_SIZE)
		return refuse(c, -EPROTO, file,
			      "ops table missing or size %u "
			      "too small",
			      ops ? ops->size : 0);
	memset(&c->ops, 0, sizeof(c->ops));
	memcpy(&c->ops, ops,
	       ops->size < sizeof(c->ops) ? ops->size : sizeof(c->ops));
	c->ops.size = sizeof(c->ops);
	if (!c->ops.probe || !c->ops.release || !c->ops.init || !c->ops.sleep ||
	    !c->ops.set_params || !c->ops.get_status)
		return refuse(c, -EPROTO, file, "a mandatory op is NULL");
	return 0;
}

/* Open and check one file; on success c->handle stays open. */
static int plugin_check_file(const char *path, struct plugin_check *c)
{
	const char *file = base_name(path);
	tunerd_plugin_version_fn version;
	tunerd_plugin_describe_fn describe;
	const char *missing = NULL;

	char why[128];

	memset(c, 0, sizeof(*c));
	if (plugin_trial(path, why, sizeof(why)) < 0)
		return refuse(c, -ENOEXEC, file, "%s", why);
	c->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!c->handle)
		return refuse(c, -ENOEXEC, file, "dlopen failed: %s",
			      dlerror());
	version = (tunerd_plugin_version_fn)dlsym(c->handle,
						  TUNERD_PLUGIN_VERSION_SYM);
	describe = (tunerd_plugin_describe_fn)dlsym(c->handle,
						    TUNERD_PLUGIN_DESCRIBE_SYM);
	if (!version)
		missing = TUNERD_PLUGIN_VERSION_SYM;
	else if (!describe)
		missing = TUNERD_PLUGIN_DESCRIBE_SYM;
	if (missing) {
		refuse(c, -EPROTO, file, "missing symbol %s", missing);
		goto err;
	}
	c->abi = version(HOST_ABI_COUNT, host_abis);
	if (!host_speaks(c->abi)) {
		refuse(c, -EPROTO, file,
		       "ABI version %d not supported, host speaks %d", c->abi,
		       TUNERD_PLUGIN_ABI);
		goto err;
	}
	if (plugin_check_desc(c, file, describe(c->abi)))
		goto err;
	return 0;
err:
	dlclose(c->handle);
	c->handle = NULL;
	return c->error;
}

static int is_plugin_file(const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	return de->d_name[0] != '.' && n > 3 &&
	       strcmp(de->d_name + n - 3, ".so") == 0;
}

static struct plugin *plugin_by_path(struct plugin_host *ph, const char *path)
{
	for (struct plugin *p = ph->loaded; p; p = p->next)
		if (strcmp(p->path, path) == 0)
			return p;
	return NULL;
}

struct plugin *plugin_host_find(struct plugin_host *ph, uint32_t chip_id)
{
	for (struct plugin *p = ph->loaded; p; p = p->next)
		if (p->info.chip_id == chip_id)
			return p;
	return NULL;
}

struct plugin *plugin_host_first(struct plugin_host *ph)
{
	return ph->loaded;
}

typedef int (*plugin_visit_fn)(const char *path, void *arg);

/* Every *.so of every directory, in directory order then by name.  Stops
 * when fn returns non-zero and returns that. */
static int plugin_host_walk(struct plugin_host *ph, plugin_visit_fn fn,
			    void *arg)
{
	char path[PATH_MAX];
	int ret = 0;

	for (size_t d = 0; d < ph->ndirs && !ret; d++) {
		struct dirent **names;
		int n = scandir(ph->dirs[d], &names, is_plugin_file, alphasort);

		if (n < 0) {
			log_debug("plugin dir %s: %s", ph->dirs[d],
				  strerror(errno));
			continue;
		}
		for (int i = 0; i < n; i++) {
			int len = snprintf(path, sizeof(path), "%s/%s",
					   ph->dirs[d], names[i]->d_name);

			if (!ret && len < (int)sizeof(path))
				ret = fn(path, arg);
			free(names[i]);
		}
		free(names);
	}
	return ret;
}

struct load_search {
	struct plugin_host *ph;
	uint32_t chip_id;
	int refused_for_chip; /* the chip's plugin exists but is broken */
	struct plugin *found;
};

/* 1 if path was refused before as it is now; else remembers it. */
static int plugin_refused_before(struct plugin_host *ph, const char *path)
{
	struct refused *r;
	struct stat st;

	if (stat(path, &st) < 0)
		return 0;
	for (r = ph->refused; r; r = r->next)
		if (strcmp(r->path, path) == 0)
			break;
	if (r && r->size == st.st_size &&
	    r->mtime.tv_sec == st.st_mtim.tv_sec &&
	    r->mtime.tv_nsec == st.st_mtim.tv_nsec)
		return 1;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return 0;
		r->path = strdup(path);
		if (!r->path) {
			free(r);
			return 0;
		}
		r->next = ph->refused;
		ph->refused = r;
	}
	r->size = st.st_size;
	r->mtime = st.st_mtim;
	return 0;
}

static void plugin_publish_refused(struct plugin_host *ph, const char *path,
				   const struct plugin_check *c)
{
	if (plugin_refused_before(ph, path)) {
		log_debug("%s", c->reason);
		return;
	}
	log_warn("%s", c->reason);
	if (ph->events)
		eventbus_publish(
		    ph->events, "plugin.refused", EVENTBUS_NO_TUNER,
		    json_pack("{s:s,s:s,s:i}", "file", base_name(path),
			      "reason", c->reason, "error", -c->error));
}

static int plugin_keep(struct load_search *s, const char *path,
		       struct plugin_check *c)
{
	struct plugin *p = calloc(1, sizeof(*p));

	if (!p) {
		dlclose(c->handle);
		return -ENOMEM;
	}
	snprintf(p->path, sizeof(p->path), "%s", path);
	p->file = base_name(p->path);
	p->abi = c->abi;
	p->info = c->info;
	p->ops = c->ops;
	p->handle = c->handle;
	p->next = s->ph->loaded;
	s->ph->loaded = p;
	s->found = p;
	log_info("plugin %s: loaded %s %s (chip %u, ABI %d)", p->file,
		 p->info.vendor, p->info.name, p->info.chip_id, p->abi);
	if (s->ph->events)
		eventbus_publish(
		    s->ph->events, "plugin.load", EVENTBUS_NO_TUNER,
		    json_pack("{s:s,s:i,s:s,s:s,s:i,s:i}", "file", p->file,
			      "chip_id", p->info.chip_id, "name", p->info.name,
			      "vendor", p->info.vendor, "abi", p->abi,
			      "version", p->info.plugin_version));
	return 1;
}

static int load_visit(const char *path, void *arg)
{
	struct load_search *s = arg;
	struct plugin_check c;

	if (plugin_by_path(s->ph, path))
		return 0; /* loaded already, for another chip */
	if (plugin_check_file(path, &c)) {
		plugin_publish_refused(s->ph, path, &c);
		if (c.info_valid && c.info.chip_id == s->chip_id)
			s->refused_for_chip = 1;
		return 0;
	}
	if (c.info.chip_id != s->chip_id) {
		dlclose(c.handle);
		return 0;
	}
	return plugin_keep(s, path, &c);
}

int plugin_host_load(struct plugin_host *ph, uint32_t chip_id,
		     struct plugin **out)
{
	struct load_search s = {.ph = ph, .chip_id = chip_id};
	int ret;

	*out = plugin_host_find(ph, chip_id);
	if (*out)
		return 0;
	ret = plugin_host_walk(ph, load_visit, &s);
	if (ret < 0)
		return ret;
	if (s.found) {
		*out = s.found;
		return 0;
	}
	log_warn("no usable plugin for chip %u (%s)", chip_id,
		 s.refused_for_chip ? "its plugin was refused" : "none found");
	return s.refused_for_chip ? -EPROTO : -ENOENT;
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
	for (pp = &ph->loaded; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			plugin_unload(ph, p, 1);
			return;
		}
}

struct list_state {
	struct plugin_host *ph;
	struct plugin_entry *v;
	size_t n, cap;
};

static int list_visit(const char *path, void *arg)
{
	struct list_state *ls = arg;
	struct plugin *p = plugin_by_path(ls->ph, path);
	struct plugin_entry *e;
	struct plugin_check c;

	if (ls->n == ls->cap) {
		size_t cap = ls->cap ? ls->cap * 2 : 8;
		struct plugin_entry *v = realloc(ls->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ls->v = v;
		ls->cap = cap;
	}
	e = &ls->v[ls->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->path, sizeof(e->path), "%s", path);
	snprintf(e->file, sizeof(e->file), "%s", base_name(path));
	if (p) {
		e->loaded = 1;
		e->abi = p->abi;
		e->info = p->info;
		return 0;
	}
	e->error = plugin_check_file(path, &c);
	e->abi = c.abi;
	snprintf(e->reason, sizeof(e->reason), "%s", c.reason);
	if (c.info_valid)
		e->info = c.info;
	if (c.handle)
		dlclose(c.handle);
	return 0;
}

int plugin_host_list(struct plugin_host *ph, struct plugin_entry **out,
		     size_t *count)
{
	struct list_state ls = {.ph = ph};
	int ret = plugin_host_walk(ph, list_visit, &ls);

	if (ret < 0) {
		free(ls.v);
		return ret;
	}
	*out = ls.v;
	*count = ls.n;
	return 0;
}

// SPDX-License-Identifier: MIT
#include "plugin_open.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The plugin ABI versions this host speaks, newest first. */
static const int host_abis[] = {TUNERD_PLUGIN_ABI};
#define HOST_ABI_COUNT ((int)(sizeof(host_abis) / sizeof(host_abis[0])))

/* A plugin's ops must reach at least up to get_status. */
#define OPS_MIN_SIZE                                                           \
	(offsetof(struct tunerd_plugin_ops, get_status) +                      \
	 sizeof(((struct tunerd_plugin_ops *)0)->get_status))
#define DESC_MIN_SIZE (offsetof(struct tunerd_plugin, ops) + sizeof(void *))

const char *plugin_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int plugin_desc_refuse(struct plugin_desc *d, int error, const char *path,
		       const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(d->reason, sizeof(d->reason),
		     "plugin %s: ", plugin_base_name(path));
	if (n < 0 || n >= (int)sizeof(d->reason))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(d->reason + n, sizeof(d->reason) - (size_t)n, fmt, ap);
	va_end(ap);
	d->error = error;
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
static int plugin_check_desc(struct plugin_desc *d, const char *path,
			     const struct tunerd_plugin *desc,
			     struct tunerd_plugin_ops *out)
{
	const struct tunerd_plugin_ops *ops;

	if (!desc)
		return plugin_desc_refuse(d, -EPROTO, path,
					  "describe(%d) returned NULL", d->abi);
	if (desc->size < DESC_MIN_SIZE)
		return plugin_desc_refuse(d, -EPROTO, path,
					  "description size %u too small",
					  desc->size);
	if (terminated(desc->info.name, sizeof(desc->info.name))) {
		d->info = desc->info;
		d->info_valid = 1;
	}
	if (desc->abi != (uint32_t)d->abi)
		return plugin_desc_refuse(
		    d, -EPROTO, path,
		    "describe(%d) answered for ABI version %u", d->abi,
		    desc->abi);
	if (!d->info_valid || !terminated(desc->info.vendor, TSTUB_NAME_LEN) ||
	    !terminated(desc->info.plugin, TSTUB_NAME_LEN))
		return plugin_desc_refuse(d, -EPROTO, path,
					  "chip names not terminated");
	if (desc->info.freq_min > desc->info.freq_max)
		return plugin_desc_refuse(d, -EPROTO, path,
					  "freq_min above freq_max");
	ops = desc->ops;
	if (!ops || ops->size < OPS_MIN_SIZE)
		return plugin_desc_refuse(
		    d, -EPROTO, path, "ops table missing or size %u too small",
		    ops ? ops->size : 0);
	memset(out, 0, sizeof(*out));
	memcpy(out, ops, ops->size < sizeof(*out) ? ops->size : sizeof(*out));
	out->size = sizeof(*out);
	if (!out->probe || !out->release || !out->init || !out->sleep ||
	    !out->set_params || !out->get_status)
		return plugin_desc_refuse(d, -EPROTO, path,
					  "a mandatory op is NULL");
	return 0;
}

int plugin_open(const char *path, struct plugin_desc *d,
		struct tunerd_plugin_ops *ops, void **handle)
{
	tunerd_plugin_version_fn version;
	tunerd_plugin_describe_fn describe;
	const char *missing = NULL;
	void *h;

	memset(d, 0, sizeof(*d));
	*handle = NULL;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return plugin_desc_refuse(d, -ENOEXEC, path,
					  "dlopen failed: %s", dlerror());
	version = (tunerd_plugin_version_fn)dlsym(h, TUNERD_PLUGIN_VERSION_SYM);
	describe =
	    (tunerd_plugin_describe_fn)dlsym(h, TUNERD_PLUGIN_DESCRIBE_SYM);
	if (!version)
		missing = TUNERD_PLUGIN_VERSION_SYM;
	else if (!describe)
		missing = TUNERD_PLUGIN_DESCRIBE_SYM;
	if (missing) {
		plugin_desc_refuse(d, -EPROTO, path, "missing symbol %s",
				   missing);
		goto err;
	}
	d->abi = version(HOST_ABI_COUNT, host_abis);
	if (!host_speaks(d->abi)) {
		plugin_desc_refuse(
		    d, -EPROTO, path,
		    "ABI version %d not supported, host speaks %d", d->abi,
		    TUNERD_PLUGIN_ABI);
		goto err;
	}
	if (plugin_check_desc(d, path, describe(d->abi), ops))
		goto err;
	*handle = h;
	return 0;
err:
	dlclose(h);
	return d->error;
}

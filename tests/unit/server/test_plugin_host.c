// SPDX-License-Identifier: MIT
/*
 * The plugin host against real shared objects: the fixture plugins built
 * beside this test (argv[1]) and, when built, the chip plugins (argv[2])
 * and the project's test plugins (argv[3]).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "eventbus.h"
#include "log.h"
#include "plugin_host.h"

struct counter {
	const char *type;
	int n;
};

static void count_one(const struct event *ev, void *arg)
{
	struct counter *c = arg;

	if (strcmp(ev->type, c->type) == 0)
		c->n++;
}

static int count_events(struct eventbus *eb, const char *type)
{
	struct counter c = {type, 0};

	eventbus_read(eb, 0, 0, count_one, &c, NULL);
	return c.n;
}

static const struct plugin_entry *entry(const struct plugin_entry *v, size_t n,
					const char *file)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].file, file) == 0)
			return &v[i];
	return NULL;
}

static void test_fixtures(const char *dir)
{
	struct eventbus *eb = eventbus_new(64);
	struct plugin_host *ph = plugin_host_new(eb);
	const struct plugin_entry *e;
	struct plugin_entry *list;
	struct plugin *p, *again;
	size_t n;

	CHECK_EQ_INT(plugin_host_add_dir(ph, dir), 0);
	CHECK_EQ_INT(plugin_host_load(ph, 0xF0F0, &p), 0);
	CHECK(p && strcmp(p->info.name, "GOODCHIP") == 0);
	CHECK(p && strcmp(p->file, "goodchip.so") == 0);
	CHECK(p && p->abi == TUNERD_PLUGIN_ABI);
	CHECK(p && p->ops.probe && p->ops.get_status);
	/* Beyond the plugin's ops size the host sees nothing. */
	CHECK(p && p->ops.get_frequency == NULL);
	CHECK_EQ_INT(count_events(eb, "plugin.load"), 1);
	/* Loaded once: a second load finds it. */
	CHECK_EQ_INT(plugin_host_load(ph, 0xF0F0, &again), 0);
	CHECK(again == p);
	CHECK_EQ_INT(count_events(eb, "plugin.load"), 1);

	/* The bad ones were refused on the way, each with a log line and
	 * an event; the host goes on. */
	CHECK(count_events(eb, "plugin.refused") >= 2);
	CHECK_EQ_INT(plugin_host_load(ph, 0xBEEF, &again), -ENOENT);
	CHECK_EQ_INT(plugin_host_load(ph, 0xF0F1, &again), -EPROTO);

	CHECK_EQ_INT(plugin_host_list(ph, &list, &n), 0);
	CHECK_EQ_INT(n, 4);
	e = entry(list, n, "badabi.so");
	CHECK(e && e->error == -EPROTO);
	CHECK(e && strstr(e->reason, "plugin badabi.so: ABI version 999 not "
				     "supported, host speaks 1"));
	e = entry(list, n, "nosym.so");
	CHECK(e && e->error == -EPROTO &&
	      strstr(e->reason, "missing symbol tunerd_plugin_describe"));
	e = entry(list, n, "baddesc.so");
	CHECK(e && e->error == -EPROTO && e->info.chip_id == 0xF0F1);
	e = entry(list, n, "goodchip.so");
	CHECK(e && e->error == 0 && e->loaded && e->info.chip_id == 0xF0F0);
	free(list);

	/* The last user gone, the plugin is unloaded. */
	plugin_host_use(p);
	plugin_host_unuse(ph, p);
	CHECK(plugin_host_find(ph, 0xF0F0) == NULL);
	CHECK_EQ_INT(count_events(eb, "plugin.unload"), 1);
	CHECK_EQ_INT(plugin_host_load(ph, 0xF0F0, &p), 0);
	plugin_host_free(ph);
	eventbus_free(eb);
}

static int exists(const char *dir, const char *file)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return access(path, R_OK) == 0;
}

/* The chip plugins and the project's test plugins, when built. */
static void test_project_plugins(const char *fixtures, const char *plugins,
				 const char *test_plugins)
{
	struct plugin_host *ph = plugin_host_new(NULL);
	struct plugin_entry *list;
	struct plugin *p;
	size_t n;

	plugin_host_add_dir(ph, plugins);
	plugin_host_add_dir(ph, test_plugins);
	plugin_host_add_dir(ph, fixtures);
	if (exists(plugins, "mt2060.so")) {
		CHECK_EQ_INT(plugin_host_load(ph, TSTUB_CHIP_MT2060, &p), 0);
		CHECK(p && strcmp(p->info.name, "MT2060") == 0);
		CHECK(p && p->info.chip_id == TSTUB_CHIP_MT2060);
	} else {
		printf("mt2060.so not built: skipped\n");
	}
	CHECK_EQ_INT(plugin_host_list(ph, &list, &n), 0);
	if (exists(test_plugins, "wrongabi.so")) {
		const struct plugin_entry *e = entry(list, n, "wrongabi.so");

		CHECK(e && e->error == -EPROTO &&
		      strstr(e->reason, "not supported, host speaks 1"));
	}
	if (exists(test_plugins, "nosym.so")) {
		const struct plugin_entry *e = entry(list, n, "nosym.so");

		CHECK(e && e->error == -EPROTO &&
		      strstr(e->reason, "missing symbol"));
	}
	if (exists(test_plugins, "ctorcrash.so")) {
		/* crashed in the trial child, never opened in this process */
		const struct plugin_entry *e = entry(list, n, "ctorcrash.so");

		CHECK(e && e->error == -ENOEXEC &&
		      strstr(e->reason, "crashed while loading (signal 11)"));
	} else {
		CHECK(!"ctorcrash.so not built");
	}
	free(list);
	/* Still working after the refusals. */
	CHECK_EQ_INT(plugin_host_load(ph, 0xF0F0, &p), 0);
	CHECK_EQ_INT(plugin_host_load(ph, 0xBEEF, &p), -ENOENT);
	plugin_host_free(ph);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr,
			"usage: %s FIXTURE_DIR PLUGIN_DIR "
			"TEST_PLUGIN_DIR\n",
			argv[0]);
		return 2;
	}
	log_set_level(LL_DEBUG);
	test_fixtures(argv[1]);
	test_project_plugins(argv[1], argv[2], argv[3]);
	return check_done("test_plugin_host");
}

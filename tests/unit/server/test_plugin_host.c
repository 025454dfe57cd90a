// SPDX-License-Identifier: MIT
/*
 * The plugin host against real shared objects: the fixture plugins built
 * beside this test (argv[1]) and, when built, the chip plugins (argv[2]),
 * the project's test plugins (argv[3]) and the one that hangs while
 * loading (argv[4]).  Loads are answered from the loop, after the trial
 * children described the files; the host itself never opens a plugin.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "eventbus.h"
#include "log.h"
#include "loop.h"
#include "plugin_host.h"

/* Loop rounds a test waits at most: every trial ends within its deadline,
 * so this only bounds a broken host. */
#define MAX_ROUNDS 2000

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

struct load_answer {
	int done;
	int err;
	struct plugin *p;
};

static void load_answered(int err, struct plugin *p, void *arg)
{
	struct load_answer *a = arg;

	a->done++;
	a->err = err;
	a->p = p;
}

/* A load, its answer awaited in the loop; never answered from inside
 * plugin_host_load(). */
static int load(struct loop *l, struct plugin_host *ph, uint32_t chip,
		struct plugin **out)
{
	struct load_answer a = {0};

	CHECK_EQ_INT(plugin_host_load(ph, chip, load_answered, &a), 0);
	CHECK_EQ_INT(a.done, 0);
	for (int i = 0; i < MAX_ROUNDS && !a.done; i++)
		loop_run_once(l, 100);
	CHECK_EQ_INT(a.done, 1);
	*out = a.p;
	return a.done ? a.err : -ETIMEDOUT;
}

static void test_fixtures(const char *dir)
{
	struct loop *l = loop_new();
	struct eventbus *eb = eventbus_new(64);
	struct plugin_host *ph = plugin_host_new(l, eb);
	const struct plugin_entry *e;
	struct plugin_entry *list;
	struct plugin *p, *again;
	size_t n;

	CHECK_EQ_INT(plugin_host_add_dir(ph, dir), 0);
	/* A listing answers with what is known and never tries a file:
	 * before the loop ran, nothing is. */
	CHECK_EQ_INT(plugin_host_list(ph, &list, &n), 0);
	CHECK_EQ_INT(n, 4);
	for (size_t i = 0; i < n; i++)
		CHECK(list[i].error == -EINPROGRESS &&
		      strstr(list[i].reason, "being tried"));
	free(list);
	CHECK_EQ_INT(load(l, ph, 0xF0F0, &p), 0);
	CHECK(p && strcmp(p->info.name, "GOODCHIP") == 0);
	CHECK(p && strcmp(p->file, "goodchip.so") == 0);
	CHECK(p && p->abi == TUNERD_PLUGIN_ABI);
	CHECK_EQ_INT(count_events(eb, "plugin.load"), 1);
	/* Loaded once: a second load finds it. */
	CHECK_EQ_INT(load(l, ph, 0xF0F0, &again), 0);
	CHECK(again == p);
	CHECK_EQ_INT(count_events(eb, "plugin.load"), 1);

	/* The bad ones were refused on the way, each with a log line and
	 * an event; the host goes on. */
	CHECK(count_events(eb, "plugin.refused") >= 2);
	CHECK_EQ_INT(load(l, ph, 0xBEEF, &again), -ENOENT);
	CHECK_EQ_INT(load(l, ph, 0xF0F1, &again), -EPROTO);

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
	CHECK_EQ_INT(load(l, ph, 0xF0F0, &p), 0);
	/* Each refusal was said once, however often the files were
	 * looked at: the cache knows them as they are. */
	CHECK_EQ_INT(count_events(eb, "plugin.refused"), 3);
	plugin_host_free(ph);
	eventbus_free(eb);
	loop_free(l);
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
	struct loop *l = loop_new();
	struct plugin_host *ph = plugin_host_new(l, NULL);
	struct plugin_entry *list;
	struct plugin *p;
	size_t n;

	plugin_host_add_dir(ph, plugins);
	plugin_host_add_dir(ph, test_plugins);
	plugin_host_add_dir(ph, fixtures);
	if (exists(plugins, "mt2060.so")) {
		CHECK_EQ_INT(load(l, ph, TSTUB_CHIP_MT2060, &p), 0);
		CHECK(p && strcmp(p->info.name, "MT2060") == 0);
		CHECK(p && p->info.chip_id == TSTUB_CHIP_MT2060);
	} else {
		printf("mt2060.so not built: skipped\n");
	}
	/* Every file known: the test plugins come before the fixtures. */
	CHECK_EQ_INT(load(l, ph, 0xF0F0, &p), 0);
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
	CHECK_EQ_INT(load(l, ph, 0xF0F0, &p), 0);
	CHECK_EQ_INT(load(l, ph, 0xBEEF, &p), -ENOENT);
	plugin_host_free(ph);
	loop_free(l);
}

/* Copy src to dir/name through a rename, as an install would. */
static void install_file(const char *src, const char *dir, const char *name)
{
	char tmp[4096], dst[4096], buf[65536];
	FILE *in = fopen(src, "rb"), *out;
	size_t n;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	out = fopen(tmp, "wb");
	CHECK(in && out);
	if (!in || !out)
		return;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		CHECK_EQ_INT(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
	CHECK_EQ_INT(rename(tmp, dst), 0);
}

/* Descriptions are cached by path, size and mtime: a file is tried once
 * per version, and again when it changes. */
static void test_cache(const char *fixtures)
{
	struct loop *l = loop_new();
	struct eventbus *eb = eventbus_new(64);
	struct plugin_host *ph = plugin_host_new(l, eb);
	char dir[] = "/tmp/tunerd-ph-cache-XXXXXX", src[4096], path[4096];
	const struct timespec old_times[2] = {{1000000000, 0}, {1000000000, 0}};
	struct plugin *p;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(src, sizeof(src), "%s/badabi.so", fixtures);
	install_file(src, dir, "chip.so");
	/* An old mtime: the next version differs even where size and the
	 * clock's granularity would not tell them apart. */
	snprintf(path, sizeof(path), "%s/chip.so", dir);
	CHECK_EQ_INT(utimensat(AT_FDCWD, path, old_times, 0), 0);
	plugin_host_add_dir(ph, dir);
	CHECK_EQ_INT(load(l, ph, 0xF0F0, &p), -ENOENT);
	CHECK_EQ_INT(load(l, ph, 0xF0F0, &p), -ENOENT);
	CHECK_EQ_INT(count_events(eb, "plugin.refused"), 1);
	/* A new version under the same path is tried again. */
	snprintf(src, sizeof(src), "%s/goodchip.so", fixtures);
	install_file(src, dir, "chip.so");
	CHECK_EQ_INT(load(l, ph, 0xF0F0, &p), 0);
	CHECK(p && strcmp(p->file, "chip.so") == 0);
	CHECK_EQ_INT(count_events(eb, "plugin.refused"), 1);
	plugin_host_free(ph);
	eventbus_free(eb);
	loop_free(l);
	unlink(path);
	rmdir(dir);
}

/* Run the loop until the hanging plugin's trial child wrote its pid. */
static pid_t wait_hang_mark(struct loop *l, const char *mark)
{
	for (int i = 0; i < MAX_ROUNDS; i++) {
		FILE *f = fopen(mark, "r");
		int pid = 0;

		if (f) {
			int ok = fscanf(f, "%d", &pid) == 1;

			fclose(f);
			if (ok)
				return (pid_t)pid;
		}
		loop_run_once(l, 10);
	}
	CHECK(!"the hanging plugin's trial never began");
	return -1;
}

static int child_running(pid_t pid)
{
	siginfo_t si = {0};

	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
		   0 &&
	       si.si_pid == 0;
}

/* A trial child holds no fd of the daemon's, is killed at its deadline,
 * and is killed and reaped when the host goes. */
static void test_hang(const char *fixtures, const char *hang_dir)
{
	struct loop *l = loop_new();
	struct plugin_host *ph = plugin_host_new(l, NULL);
	const struct plugin_entry *e;
	struct plugin_entry *list;
	struct load_answer pending = {0};
	char mark[64];
	struct plugin *p;
	struct pollfd pfd;
	int inherited[2];
	pid_t pid;
	size_t n;

	if (!exists(hang_dir, "ctorhang.so")) {
		CHECK(!"ctorhang.so not built");
		return;
	}
	snprintf(mark, sizeof(mark), "/tmp/tunerd-ph-hang-%d", (int)getpid());
	unlink(mark);
	setenv("TUNERD_TEST_HANG_MARK", mark, 1);
	/* Without O_CLOEXEC: a fork would hand the write end down. */
	CHECK_EQ_INT(pipe(inherited), 0);
	plugin_host_set_trial_timeout(ph, 600000);
	plugin_host_add_dir(ph, hang_dir);
	pid = wait_hang_mark(l, mark);
	CHECK(pid > 0 && child_running(pid));
	close(inherited[1]);
	pfd = (struct pollfd){.fd = inherited[0], .events = POLLIN};
	CHECK_EQ_INT(poll(&pfd, 1, 0), 1);
	CHECK(pfd.revents & POLLHUP); /* the hanging child holds no copy */
	close(inherited[0]);
	/* Stopping answers the waiting load and kills and reaps the
	 * child; later loads are refused. */
	CHECK_EQ_INT(plugin_host_load(ph, 0xBEEF, load_answered, &pending), 0);
	plugin_host_stop(ph);
	CHECK(pending.done == 1 && pending.err == -ECANCELED);
	CHECK(waitpid(pid, NULL, WNOHANG) < 0 && errno == ECHILD);
	CHECK_EQ_INT(plugin_host_load(ph, 0xBEEF, load_answered, &pending),
		     -ECANCELED);
	plugin_host_free(ph);
	unlink(mark);

	ph = plugin_host_new(l, NULL);
	plugin_host_set_trial_timeout(ph, 200);
	plugin_host_add_dir(ph, fixtures);
	plugin_host_add_dir(ph, hang_dir);
	CHECK_EQ_INT(load(l, ph, 0xF0F0, &p), 0);
	CHECK_EQ_INT(load(l, ph, 0xBEEF, &p), -ENOENT);
	CHECK_EQ_INT(plugin_host_list(ph, &list, &n), 0);
	e = entry(list, n, "ctorhang.so");
	CHECK(e && e->error == -ENOEXEC &&
	      strstr(e->reason, "plugin ctorhang.so: hung for 200 ms"));
	free(list);
	plugin_host_free(ph);
	loop_free(l);
	unlink(mark);
	unsetenv("TUNERD_TEST_HANG_MARK");
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr,
			"usage: %s FIXTURE_DIR PLUGIN_DIR "
			"TEST_PLUGIN_DIR HANG_PLUGIN_DIR\n",
			argv[0]);
		return 2;
	}
	log_set_level(LL_DEBUG);
	test_fixtures(argv[1]);
	test_project_plugins(argv[1], argv[2], argv[3]);
	test_cache(argv[1]);
	test_hang(argv[1], argv[4]);
	return check_done("test_plugin_host");
}

// SPDX-License-Identifier: MIT
/* The state directory: opening it, atomic writes, reading back, and every
 * damaged document set aside instead of read. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "state_file.h"
#include "unit_tmpdir.h"

static char top[PATH_MAX / 2];

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", top, name);
}

static void put(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	path_of(path, sizeof(path), name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Files in the top directory whose name starts with prefix. */
static int count_prefixed(const char *prefix)
{
	DIR *dir = opendir(top);
	struct dirent *e;
	int n = 0;

	while (dir && (e = readdir(dir)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (dir)
		closedir(dir);
	return n;
}

static void test_open(void)
{
	struct state_dir *sd = NULL;
	char path[PATH_MAX];

	CHECK_EQ_INT(state_dir_open("relative/dir", &sd), -EINVAL);
	CHECK_EQ_INT(state_dir_open("", &sd), -EINVAL);
	CHECK(sd == NULL);
	path_of(path, sizeof(path), "no/such/parent");
	CHECK_EQ_INT(state_dir_open(path, &sd), -ENOENT);
	put("plain", "x");
	path_of(path, sizeof(path), "plain");
	CHECK_EQ_INT(state_dir_open(path, &sd), -ENOTDIR);
	/* The last component is made when missing, and no probe is left. */
	path_of(path, sizeof(path), "made");
	CHECK_EQ_INT(state_dir_open(path, &sd), 0);
	CHECK(sd != NULL);
	CHECK(!strcmp(state_dir_path(sd), path));
	state_dir_close(sd);
	CHECK_EQ_INT(state_dir_open(path, &sd), 0); /* exists: fine */
	state_dir_close(sd);
	CHECK_EQ_INT(count_prefixed(".tunerd-probe"), 0);
}

static void test_write_read(struct state_dir *sd)
{
	json_t *doc = json_pack("{s:i, s:[s]}", "version", 1, "list", "a");
	json_t *back = NULL;
	char path[PATH_MAX];
	struct stat st;

	CHECK_EQ_INT(state_file_read(sd, "things", &back), -ENOENT);
	CHECK(back == NULL);
	CHECK_EQ_INT(state_file_write(sd, "things", doc), 0);
	CHECK_EQ_INT(state_file_read(sd, "things", &back), 0);
	CHECK(json_equal(doc, back));
	json_decref(back);
	path_of(path, sizeof(path), "things.json");
	CHECK_EQ_INT(stat(path, &st), 0);
	CHECK_EQ_INT(st.st_mode & 0777, 0600); /* lease ids are secrets */
	CHECK_EQ_INT(count_prefixed(".things"), 0);

	/* A second write replaces the first whole. */
	json_object_set_new(doc, "version", json_integer(2));
	CHECK_EQ_INT(state_file_write(sd, "things", doc), 0);
	CHECK_EQ_INT(state_file_read(sd, "things", &back), 0);
	CHECK_EQ_INT(json_integer_value(json_object_get(back, "version")), 2);
	json_decref(back);

	/* An array is a document too. */
	CHECK_EQ_INT(state_file_write(sd, "list", json_object_get(doc, "list")),
		     0);
	CHECK_EQ_INT(state_file_read(sd, "list", &back), 0);
	CHECK(json_is_array(back));
	json_decref(back);
	json_decref(doc);
}

/* A write that fails leaves the document it would replace intact. */
static void test_failed_write(struct state_dir *sd)
{
	json_t *one = json_pack("{s:i}", "n", 1), *two, *back = NULL;
	char path[PATH_MAX];

	CHECK_EQ_INT(state_file_write(sd, "kept", one), 0);
	path_of(path, sizeof(path), ".kept.json.tmp");
	CHECK_EQ_INT(mkdir(path, 0700), 0); /* the temporary file cannot be */
	two = json_pack("{s:i}", "n", 2);
	CHECK_EQ_INT(state_file_write(sd, "kept", two), -EISDIR);
	CHECK_EQ_INT(state_file_read(sd, "kept", &back), 0);
	CHECK(json_equal(one, back));
	rmdir(path);
	json_decref(back);
	json_decref(one);
	json_decref(two);
}

static void test_bad_names(struct state_dir *sd)
{
	static const char *const bad[] = {
	    "",
	    "../x",
	    "a/b",
	    "Caps",
	    ".hidden",
	    "a.json",
	    "a-name-longer-than-thirty-two-chars"};
	json_t *doc = json_object(), *back = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ_INT(state_file_write(sd, bad[i], doc), -EINVAL);
		CHECK_EQ_INT(state_file_read(sd, bad[i], &back), -EINVAL);
		CHECK_EQ_INT(state_file_set_aside(sd, bad[i], "x"), -EINVAL);
	}
	CHECK_EQ_INT(state_file_write(sd, "ok_name-2", NULL), -EINVAL);
	CHECK_EQ_INT(state_file_write(NULL, "ok", doc), -EINVAL);
	json_decref(doc);
}

/* name holding text reads as -EBADMSG and is set aside. */
static void check_corrupt(struct state_dir *sd, const char *name,
			  const char *text, int aside_before)
{
	char file[64], prefix[96];
	json_t *back = (json_t *)1;

	snprintf(file, sizeof(file), "%s.json", name);
	snprintf(prefix, sizeof(prefix), "%s.json.corrupt-", name);
	put(file, text);
	CHECK_EQ_INT(state_file_read(sd, name, &back), -EBADMSG);
	CHECK(back == NULL);
	CHECK_EQ_INT(count_prefixed(prefix), aside_before + 1);
	CHECK_EQ_INT(state_file_read(sd, name, &back), -ENOENT);
}

static void test_corrupt(struct state_dir *sd)
{
	json_t *doc = json_pack("{s:i}", "n", 1), *back = NULL;
	char *big;

	check_corrupt(sd, "torn", "{\"version\":1,\"leases\":[{\"tun", 0);
	/* A second one within the same second does not replace the first. */
	check_corrupt(sd, "torn", "", 1);
	check_corrupt(sd, "scalar", "42", 0);
	check_corrupt(sd, "dup", "{\"a\":1,\"a\":2}", 0);
	big = malloc(STATE_FILE_MAX + 2);
	if (big) {
		memset(big, ' ', STATE_FILE_MAX + 1);
		big[0] = '[';
		big[STATE_FILE_MAX] = ']';
		big[STATE_FILE_MAX + 1] = '\0';
		check_corrupt(sd, "big", big, 0);
		free(big);
	}
	/* After a set-aside the name is free for a good document. */
	CHECK_EQ_INT(state_file_write(sd, "torn", doc), 0);
	CHECK_EQ_INT(state_file_read(sd, "torn", &back), 0);
	json_decref(back);
	/* A caller that finds the content wrong sets it aside itself. */
	CHECK_EQ_INT(state_file_set_aside(sd, "torn", "not what I want"), 0);
	CHECK_EQ_INT(count_prefixed("torn.json.corrupt-"), 3);
	CHECK_EQ_INT(state_file_set_aside(sd, "torn", "again"), -ENOENT);
	json_decref(doc);
}

static void test_too_big_to_write(struct state_dir *sd)
{
	json_t *doc = json_array(), *back = NULL;
	char *s = malloc(STATE_FILE_MAX);

	if (!s)
		return;
	memset(s, 'x', STATE_FILE_MAX - 1);
	s[STATE_FILE_MAX - 1] = '\0';
	json_array_append_new(doc, json_string(s));
	CHECK_EQ_INT(state_file_write(sd, "huge", doc), -EFBIG);
	CHECK_EQ_INT(state_file_read(sd, "huge", &back), -ENOENT);
	free(s);
	json_decref(doc);
}

int main(void)
{
	char tmpl[] = "/tmp/tunerd-state-XXXXXX", path[PATH_MAX];
	struct state_dir *sd = NULL;

	log_set_level(LL_ERR - 1); /* the set-asides' lines are expected */
	if (!mkdtemp(tmpl))
		return 1;
	snprintf(top, sizeof(top), "%s", tmpl);
	test_open();
	snprintf(top, sizeof(top), "%s/made", tmpl);
	path_of(path, sizeof(path), "");
	path[strlen(path) - 1] = '\0';
	CHECK_EQ_INT(state_dir_open(path, &sd), 0);
	if (sd) {
		test_write_read(sd);
		test_failed_write(sd);
		test_bad_names(sd);
		test_corrupt(sd);
		test_too_big_to_write(sd);
		state_dir_close(sd);
	}
	unit_tmpdir_remove(tmpl);
	return check_done("test_state_file");
}

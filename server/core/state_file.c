// SPDX-License-Identifier: MIT
/*
 * Named JSON documents in the state directory, written atomically
 * (temporary file, fsync, rename, fsync of the directory) and read back
 * with every damage turned into "no document" plus a file set aside for
 * a human to look at.  The directory stays open (a dirfd) so that a
 * rename or fsync never depends on the path still naming it.
 */
#define _GNU_SOURCE /* renameat2 */
#include "state_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

struct state_dir {
	int fd;
	char path[PATH_MAX];
};

static int name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > STATE_NAME_MAX)
		return 0;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '_' || *p == '-'))
			return 0;
	return 1;
}

/* Writable is proven, not guessed: access() says yes to root on a
 * read-only mount's mode bits and no to nothing else that matters. */
static int probe_writable(int dfd)
{
	static const char probe[] = ".tunerd-probe";
	int fd =
	    openat(dfd, probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	close(fd);
	return unlinkat(dfd, probe, 0) < 0 ? -errno : 0;
}

int state_dir_open(const char *path, struct state_dir **out)
{
	struct state_dir *sd;
	int err;

	*out = NULL;
	if (!path || path[0] != '/' || strlen(path) >= PATH_MAX - 64)
		return -EINVAL;
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	sd = calloc(1, sizeof(*sd));
	if (!sd)
		return -ENOMEM;
	snprintf(sd->path, sizeof(sd->path), "%s", path);
	sd->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sd->fd < 0) {
		err = -errno;
		free(sd);
		return err;
	}
	err = probe_writable(sd->fd);
	if (err) {
		state_dir_close(sd);
		return err;
	}
	*out = sd;
	return 0;
}

void state_dir_close(struct state_dir *sd)
{
	if (!sd)
		return;
	close(sd->fd);
	free(sd);
}

const char *state_dir_path(const struct state_dir *sd)
{
	return sd ? sd->path : "";
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* text into tmp, durable before it is renamed over the document. */
static int write_tmp(int dfd, const char *tmp, const char *text)
{
	int fd =
	    openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int err;

	if (fd < 0)
		return -errno;
	err = write_all(fd, text, strlen(text));
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

int state_file_write(struct state_dir *sd, const char *name, const json_t *doc)
{
	char file[STATE_NAME_MAX + 8], tmp[STATE_NAME_MAX + 16];
	char *text;
	int err;

	if (!sd || !name_ok(name) || !doc)
		return -EINVAL;
	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		return -ENOMEM;
	if (strlen(text) > STATE_FILE_MAX) {
		free(text);
		return -EFBIG; /* it could never be read back */
	}
	snprintf(file, sizeof(file), "%s.json", name);
	snprintf(tmp, sizeof(tmp), ".%s.json.tmp", name);
	err = write_tmp(sd->fd, tmp, text);
	free(text);
	if (!err && renameat(sd->fd, tmp, sd->fd, file) < 0)
		err = -errno;
	/* The rename is durable only once the directory is. */
	if (!err && fsync(sd->fd) < 0)
		err = -errno;
	if (err)
		unlinkat(sd->fd, tmp, 0);
	return err;
}

int state_file_set_aside(struct state_dir *sd, const char *name,
			 const char *why)
{
	char file[STATE_NAME_MAX + 8], aside[STATE_NAME_MAX + 64];
	long long now = (long long)time(NULL);

	if (!sd || !name_ok(name))
		return -EINVAL;
	snprintf(file, sizeof(file), "%s.json", name);
	/* Two in one second keep both: never overwrite an earlier one. */
	for (int i = 0; i < 100; i++) {
		if (i)
			snprintf(aside, sizeof(aside), "%s.corrupt-%lld.%d",
				 file, now, i);
		else
			snprintf(aside, sizeof(aside), "%s.corrupt-%lld", file,
				 now);
		if (renameat2(sd->fd, file, sd->fd, aside, RENAME_NOREPLACE) ==
		    0) {
			fsync(sd->fd);
			log_err("state: %s/%s: %s; moved aside as %s, "
				"starting without it",
				sd->path, file, why, aside);
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	log_err("state: %s/%s: %s; cannot move it aside: %s", sd->path, file,
		why, strerror(errno));
	return -errno;
}

/* The file's bytes, at most STATE_FILE_MAX of them: 0, -ENOENT, -EFBIG
 * or the errno of a failed read. */
static int read_text(int dfd, const char *file, char **text, size_t *len)
{
	int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t cap = 4096, n = 0;
	char *buf = NULL, *grown;
	ssize_t r;
	int err = 0;

	if (fd < 0)
		return -errno;
	do {
		if (n == cap || !buf) {
			cap = buf ? cap * 2 : cap;
			grown = realloc(buf, cap + 1);
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			buf = grown;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = -errno;
		else
			n += (size_t)r;
		if (n > STATE_FILE_MAX)
			err = -EFBIG;
	} while (!err && r != 0);
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*text = buf;
	*len = n;
	return 0;
}

int state_file_read(struct state_dir *sd, const char *name, json_t **doc)
{
	char file[STATE_NAME_MAX + 8], why[200];
	json_error_t jerr;
	size_t len = 0;
	char *text = NULL;
	int err;

	*doc = NULL;
	if (!sd || !name_ok(name))
		return -EINVAL;
	snprintf(file, sizeof(file), "%s.json", name);
	err = read_text(sd->fd, file, &text, &len);
	if (err == -EFBIG) {
		snprintf(why, sizeof(why), "larger than %u bytes",
			 STATE_FILE_MAX);
		state_file_set_aside(sd, name, why);
		return -EBADMSG;
	}
	if (err) {
		if (err != -ENOENT)
			log_err("state: %s/%s: %s; starting without it",
				sd->path, file, strerror(-err));
		return err;
	}
	*doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (*doc && (json_is_object(*doc) || json_is_array(*doc)))
		return 0;
	if (*doc)
		snprintf(why, sizeof(why), "not a JSON object or array");
	else
		snprintf(why, sizeof(why), "not JSON (line %d: %s)", jerr.line,
			 jerr.text);
	json_decref(*doc);
	*doc = NULL;
	state_file_set_aside(sd, name, why);
	return -EBADMSG;
}

// SPDX-License-Identifier: MIT
/*
 * The lease table kept in a state directory: every change written before
 * it is made, read back by a new table as it was, and a failed write
 * changing nothing.
 */
#define _GNU_SOURCE /* nftw */
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_json.h"
#include "check.h"
#include "lease.h"
#include "log.h"
#include "state_file.h"

static char top[PATH_MAX / 2];

/* The leases in the document, or -1 when it cannot be read. */
static int saved_count(struct state_dir *sd)
{
	json_t *doc = NULL;
	int n = -1;

	if (!state_file_read(sd, "leases", &doc))
		n = (int)json_array_size(json_object_get(doc, "leases"));
	json_decref(doc);
	return n;
}

static void test_round_trip(struct state_dir *sd)
{
	struct lease_table *lt = lease_table_new(NULL, NULL), *again;
	struct lease a, b, back, other;

	CHECK_EQ_INT(lease_table_keep(lt, sd), 0);
	CHECK_EQ_INT(saved_count(sd), -1); /* nothing written yet */
	CHECK_EQ_INT(lease_acquire(lt, 1, "rec", 300, 60, &a, &other), 0);
	CHECK_EQ_INT(lease_acquire(lt, 2, "live ✓", 10, 30, &b, &other), 0);
	CHECK_EQ_INT(saved_count(sd), 2);
	CHECK_EQ_INT(lease_renew(lt, 1, a.id, 600, &a, &other), 0);
	CHECK_EQ_INT(lease_release(lt, 2, b.id, &other), 0);
	CHECK_EQ_INT(saved_count(sd), 1);

	/* A new table (a restarted daemon) has the lease as acknowledged. */
	again = lease_table_new(NULL, NULL);
	CHECK_EQ_INT(lease_table_keep(again, sd), 0);
	CHECK_EQ_INT(lease_get(again, 1, &back), 1);
	CHECK(!strcmp(back.id, a.id));
	CHECK(!strcmp(back.holder, "rec"));
	CHECK_EQ_INT(back.priority, 300);
	CHECK_EQ_INT(back.ttl_s, 600);
	CHECK_EQ_INT(back.expires_wall, a.expires_wall);
	CHECK_EQ_INT(lease_get(again, 2, &back), 0);
	CHECK(lease_allows(again, 1, a.id, &other));
	CHECK_EQ_INT(lease_renew(again, 1, a.id, 0, &back, &other), 0);
	CHECK_EQ_INT(lease_table_keep(again, sd), -EBUSY); /* not empty */
	lease_table_free(again);
	lease_table_free(lt);
}

/* With the temporary file made impossible every write fails: the table
 * must then be exactly as before each call. */
static void test_failed_writes(struct state_dir *sd)
{
	struct lease_table *lt = lease_table_new(NULL, NULL);
	struct lease a, b, back, other;
	char blocker[PATH_MAX];

	CHECK_EQ_INT(lease_table_keep(lt, sd), 0);
	CHECK_EQ_INT(lease_get(lt, 1, &a), 1); /* from test_round_trip */
	snprintf(blocker, sizeof(blocker), "%s/.leases.json.tmp", top);
	CHECK_EQ_INT(mkdir(blocker, 0700), 0);

	CHECK_EQ_INT(lease_acquire(lt, 3, "new", 5, 30, &b, &other), -EISDIR);
	CHECK_EQ_INT(lease_get(lt, 3, &back), 0);
	/* a pre-emption that cannot be written keeps the holder */
	CHECK_EQ_INT(lease_acquire(lt, 1, "urgent", 1000, 30, &b, &other),
		     -EISDIR);
	CHECK_EQ_INT(lease_get(lt, 1, &back), 1);
	CHECK(!strcmp(back.id, a.id));
	CHECK_EQ_INT(lease_renew(lt, 1, a.id, 5, &b, &other), -EISDIR);
	CHECK_EQ_INT(lease_get(lt, 1, &back), 1);
	CHECK_EQ_INT(back.expires_wall, a.expires_wall);
	CHECK_EQ_INT(back.ttl_s, a.ttl_s);
	CHECK_EQ_INT(lease_release(lt, 1, a.id, &other), -EISDIR);
	CHECK_EQ_INT(lease_get(lt, 1, &back), 1);
	/* refusals that change nothing need no write */
	CHECK_EQ_INT(lease_release(lt, 9, a.id, &other), -ENOENT);

	rmdir(blocker);
	CHECK_EQ_INT(lease_release(lt, 1, a.id, &other), 0);
	CHECK_EQ_INT(saved_count(sd), 0);
	lease_table_free(lt);
}

static void put_leases(struct state_dir *sd, json_t *leases)
{
	json_t *doc = json_pack("{s:i, s:o}", "version", 1, "leases", leases);

	CHECK_EQ_INT(state_file_write(sd, "leases", doc), 0);
	json_decref(doc);
}

/* Expired leases are dropped; the rest keep their wall-clock expiry,
 * never more than one ttl away; a bad document is set aside whole. */
static void test_read_back(struct state_dir *sd)
{
	uint64_t now = api_realtime_ms();
	struct lease_table *lt = lease_table_new(NULL, NULL);
	struct lease back;
	const char *id = "0123456789abcdef0123456789abcdef";

	put_leases(sd, json_pack("[{s:i, s:s, s:s, s:i, s:i, s:I}, "
				 "{s:i, s:s, s:s, s:i, s:i, s:I}]",
				 "tuner", 1, "id", id, "holder", "gone",
				 "priority", 1, "ttl_s", 60, "expires_ms",
				 (json_int_t)now - 1, "tuner", 2, "id", id,
				 "holder", "far", "priority", 1, "ttl_s", 60,
				 "expires_ms", (json_int_t)now + 3600000));
	CHECK_EQ_INT(lease_table_keep(lt, sd), 0);
	CHECK_EQ_INT(lease_get(lt, 1, &back), 0);
	CHECK_EQ_INT(lease_get(lt, 2, &back), 1);
	CHECK(back.expires_wall <= api_realtime_ms() + 60000);
	lease_table_free(lt);

	put_leases(sd, json_pack("[{s:i, s:s, s:s, s:i, s:i, s:I}]", "tuner", 1,
				 "id", "NOT-HEX", "holder", "x", "priority", 1,
				 "ttl_s", 60, "expires_ms",
				 (json_int_t)now + 1000));
	lt = lease_table_new(NULL, NULL);
	CHECK_EQ_INT(lease_table_keep(lt, sd), 0);
	CHECK_EQ_INT(lease_get(lt, 1, &back), 0);
	CHECK_EQ_INT(saved_count(sd), -1); /* set aside */
	lease_table_free(lt);
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int main(void)
{
	char tmpl[] = "/tmp/tunerd-leases-XXXXXX";
	struct state_dir *sd = NULL;

	log_set_level(LL_ERR - 1); /* the refusals' lines are expected */
	if (!mkdtemp(tmpl))
		return 1;
	snprintf(top, sizeof(top), "%s", tmpl);
	CHECK_EQ_INT(state_dir_open(top, &sd), 0);
	if (sd) {
		test_round_trip(sd);
		test_failed_writes(sd);
		test_read_back(sd);
		state_dir_close(sd);
	}
	nftw(tmpl, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	return check_done("test_lease_store");
}

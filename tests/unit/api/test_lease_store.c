// SPDX-License-Identifier: MIT
/*
 * The lease table kept in a state directory: every change saved before
 * it is told final, read back by a new table as it was, and a failed
 * write changing nothing.  (The group commit itself, one write for many
 * changes and the loop free meanwhile: test_lease_commit.c.)
 */
#define _GNU_SOURCE
#include <errno.h>
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
#include "lease_told.h"
#include "log.h"
#include "loop.h"
#include "state_file.h"
#include "unit_tmpdir.h"

static char top[PATH_MAX / 2];
static struct loop *lp;

/* Run the loop until t was told (it may have been by an earlier
 * call's loop: one write carries the changes of a turn); returns what. */
static int saved(struct told *t)
{
	for (int i = 0; i < 1000 && !t->calls; i++)
		loop_run_once(lp, 1000);
	CHECK_EQ_INT(t->calls, 1);
	return t->err;
}

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
	struct lease_table *lt = lease_table_new(lp, NULL), *again;
	struct lease a, b, back, other;
	struct told t1, t2;

	CHECK_EQ_INT(lease_table_keep(lt, sd), 0);
	CHECK_EQ_INT(saved_count(sd), -1); /* nothing written yet */
	CHECK_EQ_INT(
	    lease_acquire(lt, 1, "rec", 300, 60, &a, &other, told(&t1)), 0);
	CHECK_EQ_INT(
	    lease_acquire(lt, 2, "live ✓", 10, 30, &b, &other, told(&t2)), 0);
	CHECK_EQ_INT(t1.calls + t2.calls, 0); /* never from inside */
	CHECK_EQ_INT(saved_count(sd), -1);    /* nor before the write */
	CHECK_EQ_INT(saved(&t1), 0);
	CHECK_EQ_INT(saved(&t2), 0);
	CHECK_EQ_INT(saved_count(sd), 2);
	CHECK_EQ_INT(lease_renew(lt, 1, a.id, 600, &a, &other, told(&t1)), 0);
	CHECK_EQ_INT(lease_release(lt, 2, b.id, &other, told(&t2)), 0);
	CHECK_EQ_INT(saved(&t1), 0);
	CHECK_EQ_INT(saved(&t2), 0);
	CHECK_EQ_INT(saved_count(sd), 1);

	/* A new table (a restarted daemon) has the lease as acknowledged. */
	again = lease_table_new(lp, NULL);
	CHECK_EQ_INT(lease_table_keep(again, sd), 0);
	CHECK_EQ_INT(lease_get(again, 1, &back), 1);
	CHECK(!strcmp(back.id, a.id));
	CHECK(!strcmp(back.holder, "rec"));
	CHECK_EQ_INT(back.priority, 300);
	CHECK_EQ_INT(back.ttl_s, 600);
	CHECK_EQ_INT(back.expires_wall, a.expires_wall);
	CHECK_EQ_INT(lease_get(again, 2, &back), 0);
	CHECK(lease_allows(again, 1, a.id, &other));
	CHECK_EQ_INT(lease_renew(again, 1, a.id, 0, &back, &other, told(&t1)),
		     0);
	CHECK_EQ_INT(saved(&t1), 0);
	CHECK_EQ_INT(lease_table_keep(again, sd), -EBUSY); /* not empty */
	lease_table_free(again);
	lease_table_free(lt);
}

/* With the temporary file made impossible every write fails: each
 * change is told so, and the table is then exactly as before it. */
static void test_failed_writes(struct state_dir *sd)
{
	struct lease_table *lt = lease_table_new(lp, NULL);
	struct lease a, b, back, other;
	char blocker[PATH_MAX];
	struct told t;

	CHECK_EQ_INT(lease_table_keep(lt, sd), 0);
	CHECK_EQ_INT(lease_get(lt, 1, &a), 1); /* from test_round_trip */
	snprintf(blocker, sizeof(blocker), "%s/.leases.json.tmp", top);
	CHECK_EQ_INT(mkdir(blocker, 0700), 0);

	CHECK_EQ_INT(lease_acquire(lt, 3, "new", 5, 30, &b, &other, told(&t)),
		     0);
	CHECK_EQ_INT(saved(&t), -EISDIR);
	CHECK_EQ_INT(lease_get(lt, 3, &back), 0);
	/* a pre-emption that cannot be written keeps the holder */
	CHECK_EQ_INT(
	    lease_acquire(lt, 1, "urgent", 1000, 30, &b, &other, told(&t)), 1);
	CHECK_EQ_INT(saved(&t), -EISDIR);
	CHECK_EQ_INT(lease_get(lt, 1, &back), 1);
	CHECK(!strcmp(back.id, a.id));
	CHECK_EQ_INT(lease_renew(lt, 1, a.id, 5, &b, &other, told(&t)), 0);
	CHECK_EQ_INT(saved(&t), -EISDIR);
	CHECK_EQ_INT(lease_get(lt, 1, &back), 1);
	CHECK_EQ_INT(back.expires_wall, a.expires_wall);
	CHECK_EQ_INT(back.ttl_s, a.ttl_s);
	CHECK_EQ_INT(lease_release(lt, 1, a.id, &other, told(&t)), 0);
	CHECK_EQ_INT(saved(&t), -EISDIR);
	CHECK_EQ_INT(lease_get(lt, 1, &back), 1);
	/* refusals that change nothing need no write */
	CHECK_EQ_INT(lease_release(lt, 9, a.id, &other, told(&t)), -ENOENT);
	CHECK(!lease_waiting(&t.w));

	rmdir(blocker);
	CHECK_EQ_INT(lease_release(lt, 1, a.id, &other, told(&t)), 0);
	CHECK_EQ_INT(saved(&t), 0);
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
	struct lease_table *lt = lease_table_new(lp, NULL);
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
	lt = lease_table_new(lp, NULL);
	CHECK_EQ_INT(lease_table_keep(lt, sd), 0);
	CHECK_EQ_INT(lease_get(lt, 1, &back), 0);
	CHECK_EQ_INT(saved_count(sd), -1); /* set aside */
	lease_table_free(lt);
}

int main(void)
{
	char tmpl[] = "/tmp/tunerd-leases-XXXXXX";
	struct state_dir *sd = NULL;

	log_set_level(LL_ERR - 1); /* the refusals' lines are expected */
	if (!mkdtemp(tmpl))
		return 1;
	snprintf(top, sizeof(top), "%s", tmpl);
	lp = loop_new();
	CHECK_EQ_INT(state_dir_open(top, &sd), 0);
	if (sd && lp) {
		test_round_trip(sd);
		test_failed_writes(sd);
		test_read_back(sd);
	}
	state_dir_close(sd);
	loop_free(lp);
	unit_tmpdir_remove(tmpl);
	return check_done("test_lease_store");
}

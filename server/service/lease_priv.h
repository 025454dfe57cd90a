/* SPDX-License-Identifier: MIT */
/*
 * lease_priv.h - private to lease.c (the table: slots, expiry, the
 * operations) and lease_commit.c (the changes waiting for a write, the
 * write, the committed copy, the roll-back).
 */
#ifndef TUNERD_LEASE_PRIV_H
#define TUNERD_LEASE_PRIV_H

#include <jansson.h>
#include <stddef.h>

#include "lease.h"

struct state_doc;

struct lease_slot {
	struct lease lease;
	uint64_t timer;
	struct lease_table *lt;
	struct lease_slot *next;
};

/* A change waiting for its write: its events and its waiter. */
struct lease_change {
	struct lease_change *next;
	const char *event; /* lease.acquired, .renewed or .released */
	struct lease lease;
	int has_preempted;
	struct lease preempted; /* lease.preempted first, with extra */
	json_t *extra;
	struct lease_waiter *w;
};

struct lease_list {
	struct lease *v;
	size_t n;
};

struct lease_table {
	struct loop *loop;
	struct eventbus *events;
	struct lease_slot *slots;
	struct state_dir *state; /* NULL: leases live in memory only */
	struct state_doc *doc;
	struct lease_list committed; /* as on disk */
	struct lease_list writing;   /* the copy in the write in flight */
	struct lease_change *gathering, **gathering_tail; /* the next write's */
	struct lease_change *in_write; /* the changes the write carries */
	int save_failed;               /* the last write failed (logged once) */
	/* Bumped by every change of slots: added, renewed, gone. */
	uint64_t version;
};

/* lease.c */
void lease_publish(struct lease_table *lt, const char *type,
		   const struct lease *l, json_t *extra);
/* A slot for a copy of l, its expiry armed (NULL: out of memory). */
struct lease_slot *lease_slot_add(struct lease_table *lt,
				  const struct lease *l);
void lease_slots_free(struct lease_table *lt, struct lease_slot *s);

/* lease_commit.c */
/* Keep lt in sd's document from now on.  0 or -ENOMEM. */
int lease_commit_open(struct lease_table *lt, struct state_dir *sd);
/* A change record of event for l (NULL: out of memory). */
struct lease_change *lease_change_new(const char *event, const struct lease *l);
/* c was made in the table: final now without a state directory, else
 * pending (w told later).  Returns ret. */
int lease_change_add(struct lease_table *lt, struct lease_change *c,
		     struct lease_waiter *w, int ret);
void lease_changes_free(struct lease_change *c);
/* A copy of the table's leases into ll.  0 or -ENOMEM. */
int lease_list_of_slots(struct lease_table *lt, struct lease_list *ll);
void lease_list_clear(struct lease_list *ll);

#endif /* TUNERD_LEASE_PRIV_H */

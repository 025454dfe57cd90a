// SPDX-License-Identifier: MIT
/*
 * A tuner's lock: lock gained and lost derived from consecutive status
 * reads (any: a command's, the kernel's, the worker's lock watch), and
 * the tunes whose callers wait for lock, answered by the first status
 * that shows it.  No polling here: the worker reports a lock as it sees
 * it, and the tuner's one deadline timer (tuner.c) bounds the waits.
 */
#include <stdint.h>
#include <string.h>

#include "api_json.h"
#include "eventbus.h"
#include "loop.h"
#include "tuner_priv.h"

/* Lock gained/lost, derived from consecutive statuses. */
static void tuner_track_lock(struct tuner *t, const struct tstub_status *st)
{
	int prev = t->locked, now = -1;

	/* The 1 s sampler reads the same values most of the time. */
	if (!t->have_status || memcmp(&t->status, st, sizeof(*st)))
		tuner_changed(t);
	t->status = *st;
	t->have_status = 1;
	t->status_at_ms = eventbus_now_ms();
	if (st->valid & TSTUB_ST_FE_STATUS)
		now = !!(st->fe_status & TSTUB_FE_HAS_LOCK);
	else if (st->valid & TSTUB_ST_PLL_LOCK)
		now = !!st->pll_locked;
	if (now < 0 || now == prev)
		return;
	t->locked = now;
	if (!now && prev != 1)
		return; /* unknown -> unlocked is no news */
	if (now)
		t->counters.lock_gained++;
	else
		t->counters.lock_lost++;
	tuner_publish(
	    t, "tuner.lock",
	    json_pack("{s:b,s:o}", "locked", now, "status",
		      status_to_json(st, (uint64_t)t->changed_at_ms)));
}

void tuner_take_status(struct tuner *t, const struct tstub_status *st)
{
	struct tstub_status copy = *st; /* st may be t->status */

	tuner_track_lock(t, &copy);
	if (api_status_locked(&copy))
		tuner_lock_waits_answer(t, UINT64_MAX, &copy);
}

/* Answer the lock waits due by due_ms (UINT64_MAX: all) with st, the
 * last status known (NULL: none).  Taken out of the table first: a
 * completion may submit or forget. */
void tuner_lock_waits_answer(struct tuner *t, uint64_t due_ms,
			     const struct tstub_status *st)
{
	struct tuner_req out[TUNER_QUEUE_MAX];
	unsigned int n = 0, keep = 0;

	for (unsigned int i = 0; i < t->nlock_waits; i++) {
		if (t->lock_waits[i].lock_deadline_ms <= due_ms)
			out[n++] = t->lock_waits[i];
		else
			t->lock_waits[keep++] = t->lock_waits[i];
	}
	t->nlock_waits = keep;
	for (unsigned int i = 0; i < n; i++)
		tuner_req_finish(&out[i], 0, st);
}

/* A tune whose caller waits for lock and that found none: kept until a
 * status shows lock or its lock deadline.  Whether r was kept. */
int tuner_lock_wait_keep(struct tuner *t, const struct tuner_req *r, int err,
			 const struct tstub_status *st)
{
	if (err || !r->done || !r->lock_deadline_ms ||
	    r->lock_deadline_ms <= loop_now_ms() ||
	    (st && api_status_locked(st)) || t->nlock_waits == TUNER_QUEUE_MAX)
		return 0;
	t->lock_waits[t->nlock_waits++] = *r;
	return 1;
}

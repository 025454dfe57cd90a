// SPDX-License-Identifier: MIT
/*
 * The driver's summary: REST requests by kind and status, the losses by
 * libcurl's reason, the slowloris figures, and the subscribers sorted
 * into kept up, dropped as slow (told), and failed.  Each report returns
 * how many of its checks failed; lines of a failed check start "FAIL".
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>

#include "soak.h"

static const char *const kind_names[REQ_KINDS] = {
    "tune", "tune (churned)", "lease take", "lease renew", "lease release"};

static uint64_t sum_row(const uint64_t *row, int n)
{
	uint64_t s = 0;

	for (int i = 0; i < n; i++)
		s += row[i];
	return s;
}

static void print_row(const struct soak_rest_result *r, int k)
{
	printf("  %-16s %9llu %6llu  ", kind_names[k],
	       (unsigned long long)r->sent[k],
	       (unsigned long long)sum_row(r->lost[k], SOAK_CURLE_SLOTS));
	for (int s = 0; s < SOAK_STATUS_SLOTS; s++)
		if (r->status[k][s])
			printf(" %d:%llu", s,
			       (unsigned long long)r->status[k][s]);
	printf("\n");
}

static void print_losses(const struct soak_rest_result *r)
{
	for (int c = 0; c < SOAK_CURLE_SLOTS; c++) {
		uint64_t n = 0;

		for (int k = 0; k < REQ_KINDS; k++)
			n += r->lost[k][c];
		if (n)
			printf("FAIL   lost %llu: %s\n", (unsigned long long)n,
			       curl_easy_strerror((CURLcode)c));
	}
}

int soak_report_rest(const struct soak_rest_result *r, int seconds)
{
	uint64_t sent = 0, lost = 0, answered = 0;

	printf("\nREST requests over %d s (answers by HTTP status; lost = no "
	       "HTTP answer):\n",
	       seconds);
	printf("  %-16s %9s %6s   %s\n", "kind", "sent", "lost",
	       "status:count");
	for (int k = 0; k < REQ_KINDS; k++) {
		print_row(r, k);
		sent += r->sent[k];
		lost += sum_row(r->lost[k], SOAK_CURLE_SLOTS);
		answered += sum_row(r->status[k], SOAK_STATUS_SLOTS);
	}
	printf("  %-16s %9llu %6llu   answered %llu (%.1f/s)\n", "all",
	       (unsigned long long)sent, (unsigned long long)lost,
	       (unsigned long long)answered, (double)answered / seconds);
	printf("  tunes due but not sent (every connection busy): %llu; TCP "
	       "connections opened: %llu\n",
	       (unsigned long long)r->not_sent_busy,
	       (unsigned long long)r->connections);
	printf("  tune answer time: mean %.1f ms, max %llu ms; leases taken: "
	       "%llu\n",
	       r->tune_answers ? (double)r->tune_ms_sum / r->tune_answers : 0,
	       (unsigned long long)r->tune_ms_max,
	       (unsigned long long)r->leases_held);
	print_losses(r);
	if (!sent)
		printf("FAIL   no request was sent\n");
	if (answered + lost != sent)
		printf("FAIL   %llu requests neither answered nor lost\n",
		       (unsigned long long)(sent - answered - lost));
	return (lost || !sent || answered + lost != sent) ? 1 : 0;
}

void soak_report_slow(const struct soak_slow_result *r, int conns,
		      const char *source)
{
	uint64_t silent = r->closed_silent;

	printf("\nslowloris (%d connections from %s, a header byte every "
	       "2 s):\n",
	       conns, source ? source : "loopback");
	printf("  connections %llu (connect failed %llu): closed unanswered "
	       "%llu (life mean %.1f s, max %.1f s), refused 503 %llu, other "
	       "answers %llu; head bytes %llu\n",
	       (unsigned long long)r->opened,
	       (unsigned long long)r->connect_fail, (unsigned long long)silent,
	       silent ? (double)r->life_ms_sum / (double)silent / 1000 : 0,
	       (double)r->life_ms_max / 1000,
	       (unsigned long long)r->refused_503,
	       (unsigned long long)r->answered, (unsigned long long)r->bytes);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* min, median, max of one figure over the subscribers */
static void print_spread(const struct soak_sub_result *r, int n,
			 const char *what,
			 uint64_t (*get)(const struct soak_sub_result *),
			 int dropped_only)
{
	uint64_t *v = calloc((size_t)n + 1, sizeof(*v));
	int m = 0;

	for (int i = 0; v && i < n; i++)
		if (!dropped_only || r[i].told_slow)
			v[m++] = get(&r[i]);
	n = m;
	if (!v || !n) {
		free(v);
		return;
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	printf("  %s: min %llu, median %llu, max %llu\n", what,
	       (unsigned long long)v[0], (unsigned long long)v[n / 2],
	       (unsigned long long)v[n - 1]);
	free(v);
}

static uint64_t get_events(const struct soak_sub_result *r)
{
	return r->events;
}

static uint64_t get_lag(const struct soak_sub_result *r)
{
	return r->lag_ms_max;
}

static uint64_t get_lag_at_drop(const struct soak_sub_result *r)
{
	return r->lag_at_drop;
}

struct sub_totals {
	int kept_up, slow_subs, gap_subs, hole_subs, dup_subs, untold_subs;
	int never, not_at_end, refused_subs;
	uint64_t slow_drops, gap_msgs, gap_lost, holes, dups, untold, refusals;
};

static void add_up(struct sub_totals *t, const struct soak_sub_result *s)
{
	t->slow_subs += s->told_slow > 0;
	t->slow_drops += s->told_slow;
	t->gap_subs += s->gap_msgs > 0;
	t->gap_msgs += s->gap_msgs;
	t->gap_lost += s->gap_lost;
	t->hole_subs += s->holes > 0;
	t->holes += s->holes;
	t->dup_subs += s->dups > 0;
	t->dups += s->dups;
	t->untold_subs += s->untold_close > 0;
	t->untold += s->untold_close;
	t->refused_subs += s->connect_fail > 0;
	t->refusals += s->connect_fail;
	t->never += s->first_seq == 0 && s->gap_msgs == 0;
	t->not_at_end += !s->reached_end;
	t->kept_up += !s->told_slow && !s->gap_msgs && !s->holes && !s->dups &&
		      !s->untold_close && s->reached_end;
}

int soak_report_subs(const struct soak_sub_result *r, int n, uint64_t first,
		     uint64_t last)
{
	struct sub_totals t = {0};
	int failed = 0;

	for (int i = 0; i < n; i++)
		add_up(&t, &r[i]);
	printf("\nevent subscribers (WebSocket, unfiltered, since=%llu): %d; "
	       "events seq %llu..%llu (%llu)\n",
	       (unsigned long long)first - 1, n, (unsigned long long)first,
	       (unsigned long long)last,
	       (unsigned long long)(last >= first ? last - first + 1 : 0));
	printf("  kept up (every event in order, never dropped, at the last "
	       "event): %d\n",
	       t.kept_up);
	printf("  dropped as slow and told (slow_consumer), came back with "
	       "since=: %d subscribers, %llu drops\n",
	       t.slow_subs, (unsigned long long)t.slow_drops);
	printf("  losses told by a gap message: %llu messages, %llu events, "
	       "in %d subscribers\n",
	       (unsigned long long)t.gap_msgs, (unsigned long long)t.gap_lost,
	       t.gap_subs);
	printf("  connections refused: %llu, to %d subscribers\n",
	       (unsigned long long)t.refusals, t.refused_subs);
	print_spread(r, n, "events per subscriber (till all had the last)",
		     get_events, 0);
	print_spread(r, n,
		     "latest event (publication -> receipt, ms; 1 in 8 "
		     "sampled)",
		     get_lag, 0);
	print_spread(r, n,
		     "dropped ones: lateness (ms) of their last sampled event "
		     "before the slow_consumer",
		     get_lag_at_drop, 1);
	if (t.hole_subs && ++failed)
		printf("FAIL   seq holes without a gap message: %llu, in %d "
		       "subscribers\n",
		       (unsigned long long)t.holes, t.hole_subs);
	if (t.dup_subs && ++failed)
		printf("FAIL   seq repeated or out of order: %llu, in %d "
		       "subscribers\n",
		       (unsigned long long)t.dups, t.dup_subs);
	if (t.untold_subs && ++failed)
		printf("FAIL   streams closed without a closed message: %llu, "
		       "in %d subscribers\n",
		       (unsigned long long)t.untold, t.untold_subs);
	if (t.never && ++failed)
		printf("FAIL   subscribers that never got an event: %d\n",
		       t.never);
	if (t.not_at_end && ++failed)
		printf("FAIL   subscribers short of the last event (%llu), "
		       "stuck or out of time: %d\n",
		       (unsigned long long)last, t.not_at_end);
	return failed;
}

// SPDX-License-Identifier: MIT
/*
 * The REST load: tunes at a fixed rate spread over the tuners, and lease
 * holders churning on the first few tuners, over at most rest_conns
 * keep-alive connections (one libcurl multi handle, its connection cache
 * as big as the pool, so connections are reused, not reopened).
 *
 * The rate is open-loop: a tune is due every 1/rate s whatever the
 * daemon does, and goes out on a free handle.  When every handle waits
 * for an answer the tune is not sent and counted apart (not_sent_busy):
 * a request never sent is not a lost one, but many of them mean the
 * daemon did not keep up with the rate.
 *
 * Every request sent ends in exactly one of two counters: its HTTP
 * status (an answer, whatever it says: 409, 429 and 503 are answers), or
 * libcurl's reason for having none (reset, timeout, empty reply): a loss.
 *
 * Leases: each churned tuner has `holders` holders.  A holder takes the
 * lease (ttl 5 s), renews it every second for 2-4 s, then releases it;
 * one take in eight asks a higher priority and so pre-empts whoever holds
 * it.  The tunes on a churned tuner carry the lease of the holder that
 * last got it (header X-Tunerd-Lease), so most pass, and those that race
 * a change of holder get 409.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "soak.h"

#define REST_TIMEOUT_MS  30000
#define REST_BODY_MAX    4096
#define REST_URL_MAX     160
#define REST_LEASE_TTL_S 5
#define REST_PRIO        100
#define REST_PRIO_HIGH   150
#define REST_POLL_MS     10
#define REST_LOSS_LOG    20

enum holder_state { H_IDLE, H_HOLDING };

struct holder {
	int tuner, index;
	char name[32];
	enum holder_state state;
	int busy; /* a request of this holder is out */
	char lease_id[64];
	uint64_t next_at, hold_until;
	unsigned takes;
};

struct req {
	CURL *easy;
	int busy;
	enum soak_req kind;
	int tuner;
	struct holder *h;
	uint64_t start_ms;
	struct curl_slist *hdrs;
	char body[REST_BODY_MAX];
	size_t body_len;
};

struct rest {
	const struct soak_opts *o;
	CURLM *multi;
	struct req *pool;
	int npool;
	struct holder *holders;
	int nholders;
	struct holder *holding[SOAK_TUNERS_MAX + 1]; /* tuner -> holder */
	unsigned tunes;
	unsigned seed;
	uint64_t losses_logged;
	struct soak_rest_result r;
};

static struct rest R;

static const unsigned freqs[] = {490000000, 514000000, 506000000, 482000000,
				 530000000};

static const char *const kind_names[REQ_KINDS] = {"tune", "tune (leased tuner)",
						  "lease take", "lease renew",
						  "lease release"};

static unsigned rnd(unsigned n)
{
	return (unsigned)rand_r(&R.seed) % n;
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct req *q = arg;
	size_t len = size * n, room = sizeof(q->body) - 1 - q->body_len;

	if (len > room)
		len = room; /* only lease answers are read; they are short */
	memcpy(q->body + q->body_len, p, len);
	q->body_len += len;
	return size * n;
}

static struct req *free_req(void)
{
	for (int i = 0; i < R.npool; i++)
		if (!R.pool[i].busy)
			return &R.pool[i];
	return NULL;
}

/* method: "POST" with body, or "DELETE" without. */
static void req_send(struct req *q, enum soak_req kind, int tuner,
		     const char *path, const char *method, const char *body,
		     const char *lease)
{
	char url[REST_URL_MAX], hdr[96];

	snprintf(url, sizeof(url), "http://%s:%d/api/v1/tuners/%d/%s",
		 R.o->host, R.o->port, tuner, path);
	q->kind = kind;
	q->tuner = tuner;
	q->body_len = 0;
	q->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	if (lease) {
		snprintf(hdr, sizeof(hdr), "X-Tunerd-Lease: %s", lease);
		q->hdrs = curl_slist_append(q->hdrs, hdr);
	}
	curl_easy_setopt(q->easy, CURLOPT_URL, url);
	curl_easy_setopt(q->easy, CURLOPT_HTTPHEADER, q->hdrs);
	if (body) {
		curl_easy_setopt(q->easy, CURLOPT_CUSTOMREQUEST, NULL);
		curl_easy_setopt(q->easy, CURLOPT_COPYPOSTFIELDS, body);
	} else {
		curl_easy_setopt(q->easy, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(q->easy, CURLOPT_CUSTOMREQUEST, method);
	}
	q->busy = 1;
	q->start_ms = soak_now_ms();
	R.r.sent[kind]++;
	curl_multi_add_handle(R.multi, q->easy);
}

static void send_tune(struct req *q, int tuner)
{
	char body[160];
	struct holder *h = R.holding[tuner];

	snprintf(body, sizeof(body),
		 "{\"delivery_system\":\"DVBT\",\"frequency\":%u,"
		 "\"bandwidth\":8000000}",
		 freqs[(R.tunes / (unsigned)R.o->tuners) % 5]);
	q->h = NULL;
	req_send(q, tuner <= R.o->lease_tuners ? REQ_TUNE_LEASED : REQ_TUNE,
		 tuner, "tune", "POST", body, h ? h->lease_id : NULL);
}

/* A holder's next step, when its time has come and a handle is free. */
static void holder_step(struct holder *h, struct req *q, uint64_t now)
{
	char body[160];

	q->h = h;
	h->busy = 1;
	if (h->state == H_IDLE) {
		int high = (++h->takes % 8) == 0;

		snprintf(body, sizeof(body),
			 "{\"holder\":\"%s\",\"ttl_s\":%d,\"priority\":%d}",
			 h->name, REST_LEASE_TTL_S,
			 high ? REST_PRIO_HIGH : REST_PRIO);
		req_send(q, REQ_LEASE_TAKE, h->tuner, "lease", "POST", body,
			 NULL);
	} else if (now >= h->hold_until) {
		if (R.holding[h->tuner] == h)
			R.holding[h->tuner] = NULL;
		req_send(q, REQ_LEASE_RELEASE, h->tuner, "lease", "DELETE",
			 NULL, h->lease_id);
	} else {
		snprintf(body, sizeof(body),
			 "{\"lease_id\":\"%s\",\"ttl_s\":%d}", h->lease_id,
			 REST_LEASE_TTL_S);
		req_send(q, REQ_LEASE_RENEW, h->tuner, "lease", "POST", body,
			 NULL);
	}
}

static void holder_idle(struct holder *h, uint64_t now)
{
	if (R.holding[h->tuner] == h)
		R.holding[h->tuner] = NULL;
	h->state = H_IDLE;
	h->next_at = now + 300 + rnd(700);
}

/* A holder's answer: what it holds next. */
static void holder_answer(struct holder *h, struct req *q, long status,
			  uint64_t now)
{
	h->busy = 0;
	if (q->kind == REQ_LEASE_TAKE && status == 201) {
		json_t *j = json_loadb(q->body, q->body_len, 0, NULL);
		const char *id =
		    json_string_value(json_object_get(j, "lease_id"));

		snprintf(h->lease_id, sizeof(h->lease_id), "%s", id ? id : "");
		json_decref(j);
		h->state = H_HOLDING;
		h->hold_until = now + 2000 + rnd(2000);
		h->next_at = now + 1000;
		R.holding[h->tuner] = h;
		R.r.leases_held++;
		return;
	}
	if (q->kind == REQ_LEASE_RENEW && status == 200) {
		h->next_at = now + 1000;
		return;
	}
	holder_idle(h, now); /* released, refused, pre-empted or lost */
}

static void note_loss(struct req *q, CURLcode res, uint64_t ms)
{
	R.r.lost[q->kind][res < SOAK_CURLE_SLOTS ? res : 0]++;
	if (R.losses_logged++ < REST_LOSS_LOG)
		fprintf(stderr,
			"soak: lost: %s on tuner %d after %llu ms: %s\n",
			kind_names[q->kind], q->tuner, (unsigned long long)ms,
			curl_easy_strerror(res));
}

static void on_done(CURL *easy, CURLcode res)
{
	struct req *q = NULL;
	long status = 0, conns = 0;
	uint64_t now = soak_now_ms(), ms;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&q);
	curl_multi_remove_handle(R.multi, easy);
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &conns);
	R.r.connections += (uint64_t)conns;
	ms = now - q->start_ms;
	if (res == CURLE_OK && status > 0 && status < SOAK_STATUS_SLOTS) {
		R.r.status[q->kind][status]++;
		if (q->kind <= REQ_TUNE_LEASED) {
			R.r.tune_answers++;
			R.r.tune_ms_sum += ms;
			if (ms > R.r.tune_ms_max)
				R.r.tune_ms_max = ms;
		}
	} else {
		note_loss(q, res, ms);
		status = 0;
	}
	if (q->h)
		holder_answer(q->h, q, status, now);
	curl_slist_free_all(q->hdrs);
	q->hdrs = NULL;
	q->busy = 0;
}

static int rest_setup(const struct soak_opts *o)
{
	R.o = o;
	R.seed = (unsigned)getpid();
	R.npool = o->rest_conns;
	R.pool = calloc((size_t)R.npool, sizeof(*R.pool));
	R.nholders = o->lease_tuners * o->holders;
	R.holders = calloc((size_t)R.nholders + 1, sizeof(*R.holders));
	R.multi = curl_multi_init();
	if (!R.pool || !R.holders || !R.multi)
		return -1;
	/* at most one connection per handle, all kept for reuse */
	curl_multi_setopt(R.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
			  (long)R.npool);
	curl_multi_setopt(R.multi, CURLMOPT_MAXCONNECTS, (long)R.npool);
	for (int i = 0; i < R.npool; i++) {
		struct req *q = &R.pool[i];

		q->easy = curl_easy_init();
		if (!q->easy)
			return -1;
		curl_easy_setopt(q->easy, CURLOPT_PRIVATE, q);
		curl_easy_setopt(q->easy, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(q->easy, CURLOPT_WRITEDATA, q);
		curl_easy_setopt(q->easy, CURLOPT_TIMEOUT_MS,
				 (long)REST_TIMEOUT_MS);
		curl_easy_setopt(q->easy, CURLOPT_NOSIGNAL, 1L);
	}
	for (int i = 0; i < R.nholders; i++) {
		struct holder *h = &R.holders[i];

		h->tuner = i / o->holders + 1;
		h->index = i % o->holders;
		snprintf(h->name, sizeof(h->name), "soak-t%d-h%d", h->tuner,
			 h->index);
		h->next_at = soak_now_ms() + rnd(1000);
	}
	return 0;
}

static void rest_teardown(void)
{
	for (int i = 0; R.pool && i < R.npool; i++) {
		if (R.pool[i].busy)
			curl_multi_remove_handle(R.multi, R.pool[i].easy);
		curl_slist_free_all(R.pool[i].hdrs);
		curl_easy_cleanup(R.pool[i].easy);
	}
	curl_multi_cleanup(R.multi);
	free(R.pool);
	free(R.holders);
}

/* The tunes due by now, and the holders whose time has come. */
static void issue(uint64_t now, double *next_due, double step)
{
	while (*next_due <= (double)now) {
		struct req *q = free_req();

		*next_due += step;
		if (!q) {
			R.r.not_sent_busy++;
			continue;
		}
		send_tune(q, (int)(R.tunes % (unsigned)R.o->tuners) + 1);
		R.tunes++;
	}
	for (int i = 0; i < R.nholders; i++) {
		struct holder *h = &R.holders[i];
		struct req *q;

		if (h->busy || now < h->next_at || !(q = free_req()))
			continue;
		holder_step(h, q, now);
	}
}

static int busy_count(void)
{
	int n = 0;

	for (int i = 0; i < R.npool; i++)
		n += R.pool[i].busy;
	return n;
}

static void pump(int wait_ms)
{
	int running, left;
	CURLMsg *m;

	curl_multi_poll(R.multi, NULL, 0, wait_ms, NULL);
	curl_multi_perform(R.multi, &running);
	while ((m = curl_multi_info_read(R.multi, &left)))
		if (m->msg == CURLMSG_DONE)
			on_done(m->easy_handle, m->data.result);
}

static int stop_asked(int ctl)
{
	char c;
	ssize_t n = read(ctl, &c, 1);

	if (n == 0)
		return 1; /* the parent is gone */
	return n == 1 ? c == SOAK_CMD_STOP : errno != EAGAIN;
}

int soak_rest_main(const struct soak_opts *o, int ctl)
{
	double step = 1000.0 / o->rate, next_due;
	char ready = SOAK_READY, z = 'Z';
	int ret;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) || rest_setup(o))
		return 1;
	if (soak_write_all(ctl, &ready, 1))
		return 1;
	next_due = (double)soak_now_ms();
	while (!stop_asked(ctl)) {
		uint64_t now = soak_now_ms();
		double wait = next_due - (double)now;

		issue(now, &next_due, step);
		pump(wait < 1              ? 1
		     : wait > REST_POLL_MS ? REST_POLL_MS
					   : (int)wait);
	}
	/* the requests out get their answer or their timeout */
	while (busy_count())
		pump(REST_POLL_MS);
	ret = soak_write_all(ctl, &z, 1) ||
	      soak_write_all(ctl, &R.r, sizeof(R.r));
	rest_teardown();
	curl_global_cleanup();
	return ret;
}

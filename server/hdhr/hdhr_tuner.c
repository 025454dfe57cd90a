// SPDX-License-Identifier: MIT
/*
 * The tuners as HDHomeRun tuners: the lockkey as a tunerd lease (holder
 * "hdhomerun:<IP>", the configured TTL, renewed by the holder's keyed
 * requests and by its running stream, so a vanished client's lock
 * expires), tunes through the command service (its lease and role
 * checks), the status line and streaminfo (the PAT/SDT/NIT of the
 * multiplex read from the tuner's stream).
 *
 * Lease changes are not waited for (no lease_waiter): the answer goes out
 * at once and the change is saved with the next group commit.  A crash
 * in between loses a lock a client could take again at once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "hdhr_priv.h"
#include "loop.h"
#include "net_api.h"
#include "scan_tables.h"
#include "tuner.h"

static struct lease_table *leases_of(struct hdhr_tuner *t)
{
	return net_api_of(t->h->d)->leases;
}

unsigned int hdhr_tuner_count(struct daemon *d)
{
	unsigned int n = 0;

	for (struct tuner *t = tuner_first(d); t; t = tuner_next(t))
		n++;
	return n < HDHR_TUNERS_MAX ? n : HDHR_TUNERS_MAX;
}

int hdhr_tuner_id(struct daemon *d, unsigned int index, uint32_t *id)
{
	struct tuner *t = tuner_first(d);

	for (unsigned int i = 0; t && i < index; i++)
		t = tuner_next(t);
	if (!t || index >= HDHR_TUNERS_MAX)
		return -ENOENT;
	*id = tuner_id(t);
	return 0;
}

static void tuner_state_init(struct hdhr *h, unsigned int i)
{
	struct hdhr_tuner *t = &h->tuners[i];

	t->h = h;
	t->index = i;
	snprintf(t->channel, sizeof(t->channel), "none");
	snprintf(t->channelmap, sizeof(t->channelmap), "eu-bcast");
	snprintf(t->vchannel, sizeof(t->vchannel), "none");
	snprintf(t->filter, sizeof(t->filter), "0x0000-0x1fff");
}

void hdhr_tuners_refresh(struct hdhr *h)
{
	unsigned int n = hdhr_tuner_count(h->d);

	for (unsigned int i = h->ntuners; i < n; i++)
		tuner_state_init(h, i);
	h->ntuners = n > h->ntuners ? n : h->ntuners;
	for (unsigned int i = 0; i < h->ntuners; i++)
		hdhr_tuner_id(h->d, i, &h->tuners[i].id);
}

void hdhr_tuners_init(struct hdhr *h)
{
	hdhr_tuners_refresh(h);
}

void hdhr_tuner_tables_close(struct hdhr_tuner *t)
{
	if (t->tables)
		stream_reader_close(t->tables, STREAM_END_CLIENT);
	t->tables = NULL;
}

void hdhr_tuners_fini(struct hdhr *h)
{
	for (unsigned int i = 0; i < h->ntuners; i++) {
		struct hdhr_tuner *t = &h->tuners[i];

		hdhr_target_stop(t, "daemon stopping");
		hdhr_tuner_tables_close(t);
		scan_tables_free(t->st);
		t->st = NULL;
	}
}

static void lock_clear(struct hdhr_tuner *t)
{
	t->lockkey = 0;
	t->lease_id[0] = '\0';
	hdhr_target_stop(t, "lock ended");
	hdhr_tuner_tables_close(t);
}

/* 1 while t's lockkey still has its lease (not expired, not
 * pre-empted); a lock whose lease ended is cleared here. */
static int lock_alive(struct hdhr_tuner *t)
{
	struct lease l;

	if (!t->lockkey)
		return 0;
	if (lease_get(leases_of(t), t->id, &l) && !strcmp(l.id, t->lease_id))
		return 1;
	lock_clear(t);
	return 0;
}

static void lock_renew(struct hdhr_tuner *t)
{
	struct lease l, other;

	lease_renew(leases_of(t), t->id, t->lease_id, 0, &l, &other, NULL);
}

void hdhr_tuners_tick(struct hdhr *h)
{
	uint64_t now = loop_now_ms();

	hdhr_tuners_refresh(h);
	for (unsigned int i = 0; i < h->ntuners; i++) {
		struct hdhr_tuner *t = &h->tuners[i];

		lock_alive(t);
		hdhr_target_tick(t, now);
		if (t->tables && now - t->tables_since_ms >= HDHR_TABLES_MS)
			hdhr_tuner_tables_close(t);
		/* A running stream keeps its lock. */
		if (t->target && t->lockkey)
			lock_renew(t);
	}
}

void hdhr_tuner_touch(struct hdhr_tuner *t, const struct sockaddr_in *peer)
{
	if (t->target &&
	    (peer->sin_addr.s_addr == t->lock_ip.s_addr ||
	     peer->sin_addr.s_addr == t->target->to.sin_addr.s_addr))
		t->target->renewed_ms = loop_now_ms();
}

static void locked_by(struct hdhr_tuner *t, char *err, size_t len)
{
	char ip[INET_ADDRSTRLEN];
	struct lease l;

	if (lock_alive(t)) {
		inet_ntop(AF_INET, &t->lock_ip, ip, sizeof(ip));
		snprintf(err, len, "ERROR: resource locked by %s", ip);
	} else if (lease_get(leases_of(t), t->id, &l)) {
		snprintf(err, len, "ERROR: resource locked by %s", l.holder);
	} else {
		snprintf(err, len, "ERROR: resource locked");
	}
}

int hdhr_tuner_may_set(struct hdhr_tuner *t, const struct hdhr_req *req,
		       const struct sockaddr_in *peer, char *err, size_t len)
{
	struct lease l;

	(void)peer;
	if (lock_alive(t)) {
		if (req->lockkey != t->lockkey) {
			locked_by(t, err, len);
			return -EBUSY;
		}
		lock_renew(t);
		if (t->target)
			t->target->renewed_ms = loop_now_ms();
		return 0;
	}
	/* A REST lease excludes HDHomeRun clients, as their lock excludes
	 * REST clients (the lease's id is theirs alone). */
	if (lease_get(leases_of(t), t->id, &l)) {
		locked_by(t, err, len);
		return -EBUSY;
	}
	return 0;
}

void hdhr_tuner_lockkey_get(struct hdhr_tuner *t, char *buf, size_t len)
{
	struct lease l;

	if (lock_alive(t))
		inet_ntop(AF_INET, &t->lock_ip, buf, (socklen_t)len);
	else if (lease_get(leases_of(t), t->id, &l))
		snprintf(buf, len, "%s", l.holder);
	else
		snprintf(buf, len, "none");
}

static int lock_take(struct hdhr_tuner *t, uint32_t key,
		     const struct sockaddr_in *peer, char *err, size_t len)
{
	char holder[48], ip[INET_ADDRSTRLEN];
	struct lease l, other;
	unsigned int ttl;
	int ret;

	inet_ntop(AF_INET, &peer->sin_addr, ip, sizeof(ip));
	snprintf(holder, sizeof(holder), "hdhomerun:%s", ip);
	/* The section allows a day; a lease lives at most LEASE_TTL_MAX. */
	ttl = (unsigned int)t->h->cfg->hdhomerun.lockkey_ttl_s;
	if (ttl > LEASE_TTL_MAX)
		ttl = LEASE_TTL_MAX;
	ret = lease_acquire(leases_of(t), t->id, holder, LEASE_PRIO_DEFAULT,
			    ttl, &l, &other, NULL);
	if (ret == -EBUSY) {
		snprintf(err, len, "ERROR: resource locked by %s",
			 other.holder);
		return ret;
	}
	if (ret < 0) {
		snprintf(err, len, "ERROR: internal error");
		return ret;
	}
	t->lockkey = key;
	t->lock_ip = peer->sin_addr;
	snprintf(t->lease_id, sizeof(t->lease_id), "%s", l.id);
	return 0;
}

/* "force": an HDHomeRun lock is broken; a REST lease only when its
 * priority is below an HDHomeRun lock's (the lease rules). */
static int lock_force(struct hdhr_tuner *t, const struct sockaddr_in *peer,
		      char *err, size_t len)
{
	struct lease l, other;

	if (lock_alive(t)) {
		lease_release(leases_of(t), t->id, t->lease_id, &other, NULL);
		lock_clear(t);
		return 0;
	}
	if (!lease_get(leases_of(t), t->id, &l))
		return 0;
	if (lock_take(t, 1, peer, err, len))
		return -EBUSY;
	lease_release(leases_of(t), t->id, t->lease_id, &other, NULL);
	lock_clear(t);
	return 0;
}

int hdhr_tuner_lockkey_set(struct hdhr_tuner *t, const struct hdhr_req *req,
			   const struct sockaddr_in *peer, char *err,
			   size_t len)
{
	struct lease other;
	char *end;
	unsigned long key;

	if (!strcmp(req->value, "force"))
		return lock_force(t, peer, err, len);
	if (lock_alive(t) && req->lockkey != t->lockkey) {
		locked_by(t, err, len);
		return -EBUSY;
	}
	if (!strcmp(req->value, "none")) {
		if (t->lockkey) {
			lease_release(leases_of(t), t->id, t->lease_id, &other,
				      NULL);
			lock_clear(t);
		}
		return 0;
	}
	key = strtoul(req->value, &end, 10);
	if (*end || !*req->value || key == 0 || key > 0xFFFFFFFFul) {
		snprintf(err, len, "ERROR: invalid lockkey");
		return -EINVAL;
	}
	if (t->lockkey) { /* the holder changes its key */
		t->lockkey = (uint32_t)key;
		lock_renew(t);
		return 0;
	}
	return lock_take(t, (uint32_t)key, peer, err, len);
}

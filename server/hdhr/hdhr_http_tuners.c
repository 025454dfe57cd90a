// SPDX-License-Identifier: MIT
/*
 * What an HDHomeRun transport needs of the daemon: channels by
 * GuideNumber, free tuners, the params of a tune by frequency, and the
 * lease that makes a tuner an HDHomeRun client's.
 *
 * A free tuner is ready, has no lease and no stream reader: the same
 * test for an HTTP stream and (later) a lockkey, so a REST lease or a
 * REST stream keeps a tuner from either.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "channel_list.h"
#include "daemon.h"
#include "hdhr_http.h"
#include "json_api.h"
#include "net_api.h"
#include "stream.h"
#include "tuner.h"

void hdhr_guide_number(json_t *channel, char *buf, size_t len)
{
	json_t *lcn = json_object_get(channel, "lcn");
	json_t *sid = json_object_get(channel, "service_id");

	if (json_is_integer(lcn))
		snprintf(buf, len, "%lld", (long long)json_integer_value(lcn));
	else if (json_is_integer(sid))
		snprintf(buf, len, "%lld", (long long)json_integer_value(sid));
	else if (len)
		buf[0] = '\0';
}

json_t *hdhr_channel_by_guide(struct net_api *net, const char *guide)
{
	json_t *all =
	    net->channels ? channel_list_entries(net->channels) : NULL;
	char g[HDHR_GUIDE_MAX];
	size_t i;
	json_t *ch;

	json_array_foreach(all, i, ch)
	{
		hdhr_guide_number(ch, g, sizeof(g));
		if (g[0] && !strcmp(g, guide))
			return ch;
	}
	return NULL;
}

static int chip_receives(const struct tuner_snapshot *s,
			 const struct tstub_params *p)
{
	if (!s->have_info)
		return 0;
	if (!p)
		return 1;
	if (p->delsys >= 32 || !(s->info.delsys_mask & (1u << p->delsys)))
		return 0;
	return p->frequency >= s->info.freq_min &&
	       (!s->info.freq_max || p->frequency <= s->info.freq_max);
}

int hdhr_tuner_free(struct net_api *net, uint32_t tuner,
		    const struct tstub_params *p)
{
	struct tuner *t = tuner_find(net->d, tuner);
	struct tuner_snapshot s;
	struct stream_stats st;
	struct lease l;

	if (!t)
		return 0;
	tuner_snapshot(t, &s);
	if (s.state != TUNER_READY || !chip_receives(&s, p))
		return 0;
	if (net->leases && lease_get(net->leases, tuner, &l))
		return 0;
	stream_hub_stats(net->streams, tuner, &st);
	return st.readers == 0;
}

uint32_t hdhr_tuner_pick(struct net_api *net, const struct tstub_params *p)
{
	for (struct tuner *t = tuner_first(net->d); t; t = tuner_next(t))
		if (hdhr_tuner_free(net, tuner_id(t), p))
			return tuner_id(t);
	return 0;
}

static int mux_params(struct net_api *net, uint32_t freq,
		      struct tstub_params *out)
{
	json_t *all =
	    net->channels ? channel_list_entries(net->channels) : NULL;
	struct api_error e = {0};
	size_t i;
	json_t *ch;

	json_array_foreach(all, i, ch)
	{
		json_t *p = json_object_get(ch, "params");

		if (json_integer_value(json_object_get(p, "frequency")) !=
		    (json_int_t)freq)
			continue;
		if (!params_from_json(p, NULL, out, &e))
			return 0;
		api_error_clear(&e);
	}
	return -ENOENT;
}

/* The digital systems a frequency alone may mean, in the order tried. */
static const uint32_t guess_order[] = {TSTUB_DELSYS_DVBT, TSTUB_DELSYS_DVBT2,
				       TSTUB_DELSYS_DVBC_A, TSTUB_DELSYS_ATSC};

int hdhr_params_for_frequency(struct net_api *net, uint32_t freq,
			      struct tstub_params *out)
{
	struct tuner_snapshot s;

	if (!mux_params(net, freq, out))
		return 0;
	for (struct tuner *t = tuner_first(net->d); t; t = tuner_next(t)) {
		tuner_snapshot(t, &s);
		for (size_t i = 0;
		     s.have_info &&
		     i < sizeof(guess_order) / sizeof(guess_order[0]);
		     i++) {
			struct tstub_params p = {.delsys = guess_order[i],
						 .frequency = freq};

			if (p.delsys == TSTUB_DELSYS_DVBT ||
			    p.delsys == TSTUB_DELSYS_DVBT2)
				p.bandwidth = 8000000;
			if (p.delsys == TSTUB_DELSYS_DVBC_A)
				p.symbol_rate = 6900000;
			if (chip_receives(&s, &p)) {
				*out = p;
				return 0;
			}
		}
	}
	return -ENOENT;
}

void hdhr_holder(const struct sockaddr *peer, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (peer && peer->sa_family == AF_INET)
		inet_ntop(AF_INET,
			  &((const struct sockaddr_in *)peer)->sin_addr, ip,
			  sizeof(ip));
	else if (peer && peer->sa_family == AF_INET6)
		inet_ntop(AF_INET6,
			  &((const struct sockaddr_in6 *)peer)->sin6_addr, ip,
			  sizeof(ip));
	snprintf(buf, len, "hdhomerun:%s", ip);
}

int hdhr_lease_take(struct net_api *net, uint32_t tuner, const char *holder,
		    struct lease *out)
{
	struct lease other;
	int ret;

	if (!net->leases)
		return -ENOMEM;
	ret = lease_acquire(net->leases, tuner, holder, HDHR_LEASE_PRIORITY,
			    HDHR_LEASE_TTL_S, out, &other, NULL);
	return ret < 0 ? ret : 0;
}

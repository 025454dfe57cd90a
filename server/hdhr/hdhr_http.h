/* SPDX-License-Identifier: MIT */
/*
 * hdhr_http.h - the HDHomeRun face's HTTP side (what Plex, Jellyfin,
 * Emby and Channels speak): /discover.json, /lineup.json,
 * /lineup_status.json, POST /lineup.post, and the streams /auto/v<N>,
 * /tuner<N>/v<N>, /auto/ch<Hz>.  Served by the REST layer's
 * libmicrohttpd on the main port, and on the configuration's http_port
 * as a second listener of the same front (which serves only these
 * paths).  Off unless hdhomerun.enabled; then only for peers in
 * hdhomerun.allow, with hdhomerun.role, never with tokens.
 *
 * The helpers below the HTTP ones (hdhr_http_tuners.c) are what any
 * HDHomeRun transport needs: a channel by GuideNumber, a free tuner for
 * params, a lease as holder "hdhomerun:<IP>".  Loop thread only.
 */
#ifndef TUNERD_HDHR_HTTP_H
#define TUNERD_HDHR_HTTP_H

#include <jansson.h>
#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "lease.h"
#include "tuner_stub.h"

struct net_api;
struct rest_req;
struct sockaddr;

/* A stream's lease: renewed every HDHR_LEASE_TTL_S / 3 while it runs. */
#define HDHR_LEASE_TTL_S 30
/* Its priority: the API's default, so a REST lease of a higher one may
 * pre-empt an HDHomeRun client, as it may any other holder. */
#define HDHR_LEASE_PRIORITY LEASE_PRIO_DEFAULT
/* How long a stream's tune waits for lock before the stream starts
 * anyway (a client then sees what the tuner delivers). */
#define HDHR_WAIT_LOCK_MS 3000
/* ?duration= bound (seconds): a day. */
#define HDHR_DURATION_MAX 86400
/* Text bounds: a GuideNumber, a peer's address. */
#define HDHR_GUIDE_MAX  16
#define HDHR_HOLDER_MAX 64

/* After the front started: the second listener on http_port when
 * enabled.  0 or -errno (logged; the daemon does not start). */
int hdhr_http_start(struct net_api *net);
void hdhr_http_free(struct net_api *net);

/*
 * r's request for url: 1 when the HDHomeRun face answered it (*ret is
 * the handler's result), 0 when REST routes it.  The face's paths when
 * it is off are REST's (so 404, as on a box without the face); any other
 * path on the face's own port is a 404.
 */
int hdhr_http_route(struct rest_req *r, const char *url, const char *method,
		    enum MHD_Result *ret);

/* GET /auto/..., /tuner<N>/... (hdhr_http_stream.c); path after the
 * first '/'; tuner 0: any free one. */
enum MHD_Result hdhr_http_stream(struct rest_req *r, uint32_t tuner,
				 const char *what);

/* The 503 HDHomeRun clients expect when no tuner is free (one_tuner:
 * the one asked for is taken): plain text and X-HDHomeRun-Error
 * "805 All Tuners In Use" ("804 Tuner In Use"). */
enum MHD_Result hdhr_http_busy(struct rest_req *r, int one_tuner);

/* ---- shared helpers (hdhr_http_tuners.c) ---- */

/* A channel's GuideNumber: its LCN, else its service id ("" when it has
 * neither). */
void hdhr_guide_number(json_t *channel, char *buf, size_t len);
/* The channel list's entry whose GuideNumber is guide (borrowed), or
 * NULL. */
json_t *hdhr_channel_by_guide(struct net_api *net, const char *guide);
/* 1 when tuner is free (ready, no lease, no stream reader) and its chip
 * can receive p. */
int hdhr_tuner_free(struct net_api *net, uint32_t tuner,
		    const struct tstub_params *p);
/* The first free tuner for p (NULL: any), or 0 when none is. */
uint32_t hdhr_tuner_pick(struct net_api *net, const struct tstub_params *p);

/* The params of a tune to freq Hz: the channel list's multiplex there,
 * else the first digital system of the first chip that covers it.
 * 0, or -ENOENT. */
int hdhr_params_for_frequency(struct net_api *net, uint32_t freq,
			      struct tstub_params *out);
/* "hdhomerun:<IP>" for peer. */
void hdhr_holder(const struct sockaddr *peer, char *buf, size_t len);
/* Lease tuner for holder (HDHR_LEASE_TTL_S, HDHR_LEASE_PRIORITY): 0 with
 * the lease in *out, or -EBUSY / -ENOMEM.  The lease is in the table at
 * once (its write follows); release it with lease_release(). */
int hdhr_lease_take(struct net_api *net, uint32_t tuner, const char *holder,
		    struct lease *out);

#endif /* TUNERD_HDHR_HTTP_H */

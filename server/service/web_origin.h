/* SPDX-License-Identifier: MIT */
/*
 * web_origin.h - which web pages may use the API from a browser.
 *
 * A browser names the page behind a request in its Origin header.  A page
 * served by this box (same origin) may always call it; a page of another
 * origin only when the configuration's "cors.origins" lists it.  Any other
 * request that carries an Origin is refused, whatever the method: that is
 * what keeps a page on the box's own browser from borrowing the loopback
 * rule (a simple cross-site POST to /sleep needs no preflight).  Requests
 * without an Origin (curl, scripts, players) are not browsers' and are
 * not affected.
 */
#ifndef TUNERD_WEB_ORIGIN_H
#define TUNERD_WEB_ORIGIN_H

#include <stddef.h>

struct api_config;

#define WEB_ORIGIN_MAX 256 /* bytes of one origin */

/* 1 when origin ("https://console.example:8443") is listed. */
int web_origin_listed(const struct api_config *cfg, const char *origin);
/* 1 when origin's host[:port] is host (the request's Host header). */
int web_origin_same(const char *origin, const char *host);
/* 1 when a request with this Origin (NULL: none) and Host may go on. */
int web_origin_allowed(const struct api_config *cfg, const char *origin,
		       const char *host);
/*
 * Check an origin for the configuration: scheme http or https, a host,
 * an optional port, nothing after it ("https://a.example", not
 * "https://a.example/").  0, or -1 with a sentence in err.
 */
int web_origin_check(const char *origin, char *err, size_t errlen);

#endif /* TUNERD_WEB_ORIGIN_H */

// SPDX-License-Identifier: MIT
/*
 * Origins.  Compared as the exact serialisation browsers send (scheme,
 * host, port when not the default), case-insensitively: an origin is
 * never normalised here, so the configuration must name it as a browser
 * writes it; web_origin_check() refuses the forms that could never match.
 */
#include "web_origin.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api_config.h"

int web_origin_listed(const struct api_config *cfg, const char *origin)
{
	if (!cfg || !origin)
		return 0;
	for (size_t i = 0; i < cfg->cors.norigins; i++)
		if (!strcasecmp(cfg->cors.origins[i], origin))
			return 1;
	return 0;
}

int web_origin_same(const char *origin, const char *host)
{
	const char *authority;

	if (!origin || !host)
		return 0;
	authority = strstr(origin, "://");
	return authority && !strcasecmp(authority + 3, host);
}

int web_origin_allowed(const struct api_config *cfg, const char *origin,
		       const char *host)
{
	return !origin || web_origin_same(origin, host) ||
	       web_origin_listed(cfg, origin);
}

static int host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '[' ||
	       c == ']' || c == ':';
}

int web_origin_check(const char *origin, char *err, size_t errlen)
{
	const char *host;
	size_t n = strlen(origin);

	if (!strncmp(origin, "http://", 7))
		host = origin + 7;
	else if (!strncmp(origin, "https://", 8))
		host = origin + 8;
	else
		host = NULL;
	if (!host || !*host || n > WEB_ORIGIN_MAX)
		goto bad;
	for (const char *p = host; *p; p++)
		if (!host_char(*p))
			goto bad;
	if (host[strlen(host) - 1] == ':' || *host == ':')
		goto bad;
	return 0;
bad:
	snprintf(err, errlen,
		 "\"%.80s\" is not an origin (scheme://host[:port], http or "
		 "https, no path, at most %d bytes)",
		 origin, WEB_ORIGIN_MAX);
	return -1;
}

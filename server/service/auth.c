// SPDX-License-Identifier: MIT
/*
 * Bearer tokens and roles.  The comparison runs over every configured
 * token and every byte of the longer string whatever matches, so the
 * time taken tells nothing about a token's prefix or which token matched.
 */
#include "auth.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "api_config.h"
#include "daemon.h"
#include "net_api.h"

static const char *const role_names[] = {
    [ROLE_NONE] = "none",
    [ROLE_VIEWER] = "viewer",
    [ROLE_OPERATOR] = "operator",
    [ROLE_ADMIN] = "admin",
};

const char *role_name(enum role r)
{
	return (unsigned int)r <= ROLE_ADMIN ? role_names[r] : "none";
}

enum role role_parse(const char *name)
{
	for (int r = ROLE_VIEWER; r <= ROLE_ADMIN; r++)
		if (name && strcmp(name, role_names[r]) == 0)
			return (enum role)r;
	return ROLE_NONE;
}

int auth_token_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen > blen ? alen : blen;
	volatile unsigned char diff = (unsigned char)(alen != blen);

	for (size_t i = 0; i < n; i++) {
		unsigned char x = i < alen ? (unsigned char)a[i] : 0;
		unsigned char y = i < blen ? (unsigned char)b[i] : 0;

		diff |= x ^ y;
	}
	return diff == 0;
}

int auth_peer_is_loopback(const struct sockaddr *peer)
{
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0,    0,
						 0, 0, 0, 0, 0xff, 0xff};

	if (!peer)
		return 0;
	if (peer->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)peer;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (peer->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)peer;
		const unsigned char *a = in6->sin6_addr.s6_addr;

		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return 1;
		return memcmp(a, mapped, sizeof(mapped)) == 0 && a[12] == 127;
	}
	return 0;
}

static void deny(struct auth_result *out, int status, const char *message)
{
	out->ok = 0;
	out->http_status = status;
	out->code = status == 401 ? "unauthorized" : "forbidden";
	out->message = message;
}

static const struct api_token *find_token(const struct api_config *cfg,
					  const char *bearer)
{
	const struct api_token *found = NULL;
	size_t blen = strlen(bearer);

	for (size_t i = 0; i < cfg->ntokens; i++) {
		const struct api_token *t = &cfg->tokens[i];

		if (auth_token_equal(bearer, blen, t->secret, t->secret_len) &&
		    !found)
			found = t;
	}
	return found;
}

void auth_check_config(const struct api_config *cfg, const char *bearer,
		       const struct sockaddr *peer, enum role needed,
		       struct auth_result *out)
{
	const struct api_token *t;

	memset(out, 0, sizeof(*out));
	if (!cfg || !cfg->ntokens) {
		if (!auth_peer_is_loopback(peer))
			return deny(out, 403,
				    "no tokens configured: only loopback "
				    "clients are allowed; add tokens to the "
				    "config file");
		out->role = ROLE_ADMIN;
		out->ok = 1;
		return;
	}
	if (!bearer || !*bearer)
		return deny(out, 401, "a bearer token is required");
	t = find_token(cfg, bearer);
	if (!t)
		return deny(out, 401, "the bearer token is not valid");
	out->role = t->role;
	out->token_name = t->name;
	if (t->role < needed)
		return deny(out, 403, "the token's role is too low for this");
	out->ok = 1;
}

void auth_check(const struct daemon *d, const char *bearer,
		const struct sockaddr *peer, enum role needed,
		struct auth_result *out)
{
	const struct net_api *net = d ? d->api : NULL;

	auth_check_config(net ? &net->cfg : NULL, bearer, peer, needed, out);
}

const char *auth_token_from_ws_protocols(const char *protocols, char *buf,
					 size_t len)
{
	const char *p = protocols;

	while (p && *p) {
		size_t n;

		p += strspn(p, " \t,");
		n = strcspn(p, " \t,");
		if (n > 7 && strncmp(p, "bearer.", 7) == 0) {
			if (n - 7 >= len)
				return NULL;
			memcpy(buf, p + 7, n - 7);
			buf[n - 7] = '\0';
			return buf;
		}
		p += n;
	}
	return NULL;
}

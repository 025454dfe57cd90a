/* SPDX-License-Identifier: MIT */
/*
 * auth.h - who may do what on the network API.
 *
 * Roles, in order: viewer (GET, events) < operator (+ tune, lease, sleep,
 * init) < admin (+ plugins).  A request carries a bearer token
 * ("Authorization: Bearer <t>", WebSocket "Sec-WebSocket-Protocol:
 * tunerd.v1, bearer.<t>", SSE "?access_token=<t>").  With no tokens
 * configured, loopback peers (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104) are
 * admin and every other peer is refused.
 *
 * Tokens are compared in constant time and never logged.
 */
#ifndef TUNERD_AUTH_H
#define TUNERD_AUTH_H

#include <stddef.h>

struct daemon;
struct sockaddr;

enum role {
	ROLE_NONE = 0,
	ROLE_VIEWER = 1,
	ROLE_OPERATOR = 2,
	ROLE_ADMIN = 3,
};

struct auth_result {
	enum role role;         /* the caller's role (ROLE_NONE if unknown) */
	const char *token_name; /* the matching token's name, or NULL */
	int ok;                 /* 1: allowed for the role asked for */
	int http_status;        /* 0 when ok, else 401 or 403 */
	const char *code;    /* NULL when ok, else "unauthorized"/"forbidden" */
	const char *message; /* NULL when ok, else a human sentence */
};

/*
 * Decide whether a caller presenting bearer_token (NULL: none) from peer
 * may act with role needed.  Fills out in every case; the strings it
 * points to live as long as d's configuration.
 * 401: a token is needed and none/an unknown one came.
 * 403: the token is valid but its role is too low (details.required_role
 *      is role_name(needed)), or no tokens are configured and the peer is
 *      not on loopback.
 */
void auth_check(const struct daemon *d, const char *bearer_token,
		const struct sockaddr *peer, enum role needed,
		struct auth_result *out);

/*
 * The token in a Sec-WebSocket-Protocol header ("tunerd.v1, bearer.XYZ"),
 * copied into buf (len bytes).  Returns buf, or NULL when there is none or
 * it does not fit.
 */
const char *auth_token_from_ws_protocols(const char *sec_websocket_protocol,
					 char *buf, size_t len);

/* "viewer", "operator", "admin" ("none" for ROLE_NONE). */
const char *role_name(enum role r);
/* ROLE_NONE for an unknown name. */
enum role role_parse(const char *name);

/* 1 when the address is loopback (127.0.0.0/8, ::1, v4-mapped 127/8). */
int auth_peer_is_loopback(const struct sockaddr *peer);
/* Constant-time in the length of the longer input: 1 when equal. */
int auth_token_equal(const char *a, size_t alen, const char *b, size_t blen);

#endif /* TUNERD_AUTH_H */

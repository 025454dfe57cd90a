// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the HTTP front's checks of a new connection's request
 * head (front_head.c), called as the front calls them on the bytes it
 * peeked: at most HTTP_FRONT_PEEK_MAX of them, cut after the blank line
 * when there is one, truncated otherwise.  Every refusal is then sent as
 * the front sends it, into a socket pair, and must arrive as an HTTP
 * answer whose body is the API's JSON error object.
 */
#define _GNU_SOURCE /* memmem */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_front_priv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_answer(const struct front_refusal *why)
{
	char buf[HTTP_FRONT_PEEK_MAX + 1], *body;
	unsigned int status = 0;
	json_error_t jerr;
	json_t *j;
	ssize_t n;
	int sv[2];

	if (why->status < 400 || why->status > 599 || !why->code ||
	    !why->message)
		abort();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return;
	front_head_answer(sv[0], why);
	n = recv(sv[1], buf, sizeof(buf) - 1, MSG_DONTWAIT);
	if (n <= 0)
		abort();
	buf[n] = '\0';
	body = strstr(buf, "\r\n\r\n");
	if (sscanf(buf, "HTTP/1.1 %u ", &status) != 1 ||
	    status != why->status || !body)
		abort();
	j = json_loads(body + 4, 0, &jerr);
	if (!j || !json_is_string(
		      json_object_get(json_object_get(j, "error"), "code")))
		abort();
	json_decref(j);
	close(sv[0]);
	close(sv[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char head[HTTP_FRONT_PEEK_MAX + 1];
	size_t n = size < HTTP_FRONT_PEEK_MAX ? size : HTTP_FRONT_PEEK_MAX;
	struct front_refusal why;
	const char *end;

	/* As pending_check() in http_front.c: a NUL after the peeked bytes,
	 * the head up to its blank line, or everything when cut. */
	memcpy(head, data, n);
	head[n] = '\0';
	end = memmem(head, n, "\r\n\r\n", 4);
	if (!end && n < HTTP_FRONT_PEEK_MAX)
		return 0; /* the front waits for more (or the deadline) */
	if (front_head_check(head, end ? (size_t)(end + 2 - head) : n, !end,
			     &why))
		check_answer(&why);
	return 0;
}

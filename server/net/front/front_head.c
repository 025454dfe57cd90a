// SPDX-License-Identifier: MIT
/*
 * The bounds of a new connection's request head, checked on the bytes the
 * front peeked at before it hands the connection over.
 *
 * libmicrohttpd 0.9.75 answers some malformed heads itself, before any
 * handler runs, with HTML pages (and, for an overflowing Content-Length,
 * its status line and headers twice).  The front sees every new connection's whole head first, so it
 * refuses those heads here with the API's JSON error object and closes.
 * It also closes the request smuggling surface: two different
 * Content-Lengths, or a Content-Length next to a Transfer-Encoding, are
 * refused instead of one of them winning.
 *
 * This is not an HTTP parser: only the request line's shape, the header
 * names and the two framing headers are looked at, and libmicrohttpd
 * still parses whatever it serves.  The trade-off is that
 * only the first request of a connection passes here: the requests that
 * follow on a kept-alive connection go to libmicrohttpd directly.
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_front_priv.h"
#include "json_api.h"
#include "rest.h"

/* At most this much of what the client sent is read and dropped before
 * the answer, so that the close does not reset the connection under it. */
#define FRONT_HEAD_DRAIN_MAX (64 * 1024)

static int refuse_with(struct front_refusal *out, unsigned int status,
		       const char *code, const char *message, long max)
{
	out->status = status;
	out->code = code;
	out->message = message;
	out->max = max;
	return 1;
}

/* RFC 9110 tchar: what a method or a header name is made of. */
static int is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static size_t tchar_span(const char *s, const char *end)
{
	const char *p = s;

	while (p < end && is_tchar((unsigned char)*p))
		p++;
	return (size_t)(p - s);
}

/* "HTTP/" DIGIT "." DIGIT: 1 for 1.0 and 1.1, 0 for another version of
 * that shape, -1 for anything else. */
static int version_known(const char *v, size_t len)
{
	if (len != 8 || memcmp(v, "HTTP/", 5) || v[6] != '.' || v[5] < '0' ||
	    v[5] > '9' || v[7] < '0' || v[7] > '9')
		return -1;
	return v[5] == '1' && (v[7] == '0' || v[7] == '1');
}

/* METHOD SP request-target SP HTTP-version; terminated says whether the
 * line's end is among the peeked bytes. */
static int check_request_line(const char *line, const char *eol, int terminated,
			      struct front_refusal *out)
{
	static const char shape[] = "the request line is not METHOD SP "
				    "TARGET SP HTTP-VERSION";
	size_t mlen = tchar_span(line, eol);
	const char *target = line + mlen + 1, *sp2, *t;
	int known;

	if (!mlen || target > eol || target[-1] != ' ')
		return refuse_with(out, 400, "bad_request", shape, -1);
	sp2 = memchr(target, ' ', (size_t)(eol - target));
	if ((size_t)((sp2 ? sp2 : eol) - target) > REST_URI_MAX)
		return refuse_with(out, 414, "uri_too_long",
				   "the request URI is longer than 2048 bytes",
				   REST_URI_MAX);
	if (!terminated || !sp2 || sp2 == target)
		return refuse_with(out, 400, "bad_request", shape, -1);
	for (t = target; t < sp2; t++)
		if ((unsigned char)*t <= ' ' || *t == 0x7f)
			return refuse_with(out, 400, "bad_request", shape, -1);
	known = version_known(sp2 + 1, (size_t)(eol - sp2 - 1));
	if (known < 0)
		return refuse_with(out, 400, "bad_request", shape, -1);
	if (!known)
		return refuse_with(out, 505, "bad_request",
				   "only HTTP/1.0 and HTTP/1.1 are served", -1);
	return 0;
}

/* A Content-Length value: 1*DIGIT after optional blanks.  Blanks after
 * the digits are refused as libmicrohttpd 0.9.75 refuses them (with its
 * HTML page otherwise).  0 and *len, or -EINVAL (not a number), or
 * -ERANGE (not a 64-bit one). */
static int parse_content_length(const char *v, const char *end, uint64_t *len)
{
	uint64_t n = 0;
	const char *p;

	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	if (v == end)
		return -EINVAL;
	for (p = v; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		if (n > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	*len = n;
	return 0;
}

/* What the header lines say about the body's framing. */
struct framing {
	int content_lengths, transfer_encoding;
	uint64_t content_length;
};

static int check_header_line(const char *line, const char *eol,
			     struct framing *fr, struct front_refusal *out)
{
	size_t nlen = tchar_span(line, eol);
	uint64_t len;
	int err;

	if (line[0] == ' ' || line[0] == '\t')
		return 0; /* a folded line: MHD's to join or refuse */
	if (!nlen || line + nlen >= eol || line[nlen] != ':')
		return refuse_with(out, 400, "bad_request",
				   "a header line is not NAME: VALUE", -1);
	if (nlen == 17 && !strncasecmp(line, "transfer-encoding", 17)) {
		fr->transfer_encoding = 1;
		return 0;
	}
	if (nlen != 14 || strncasecmp(line, "content-length", 14))
		return 0;
	err = parse_content_length(line + 15, eol, &len);
	if (err == -ERANGE)
		return refuse_with(out, 413, "body_too_large",
				   "the body is larger than 65536 bytes",
				   REST_BODY_MAX);
	if (err)
		return refuse_with(out, 400, "bad_request",
				   "Content-Length is not a number", -1);
	if (fr->content_lengths++ && len != fr->content_length)
		return refuse_with(out, 400, "bad_request",
				   "two different Content-Lengths", -1);
	fr->content_length = len;
	return 0;
}

int front_head_check(const char *head, size_t len, int truncated,
		     struct front_refusal *out)
{
	const char *end = head + len, *line = head;
	struct framing fr = {0};
	int first = 1;

	_Static_assert(REST_URI_MAX == 2048 && REST_BODY_MAX == 65536,
		       "the messages name the limits");
	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *eol = nl ? nl : end;

		if (eol > line && eol[-1] == '\r')
			eol--;
		if (first && check_request_line(line, eol, nl != NULL, out))
			return 1;
		if (!first && eol == line)
			break; /* the empty line ending the head */
		if (!nl && truncated)
			break; /* a line cut by the peek bound */
		if (!first && check_header_line(line, eol, &fr, out))
			return 1;
		first = 0;
		line = nl ? nl + 1 : end;
	}
	if (truncated)
		return refuse_with(out, 431, "bad_request",
				   "the request head is larger than 8192 bytes",
				   HTTP_FRONT_PEEK_MAX);
	if (fr.content_lengths && fr.transfer_encoding)
		return refuse_with(out, 400, "bad_request",
				   "Content-Length and Transfer-Encoding "
				   "together",
				   -1);
	return 0;
}

static const char *status_text(unsigned int status)
{
	switch (status) {
	case 413:
		return "Content Too Large";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Bad Request";
	}
}

void front_head_answer(int fd, const struct front_refusal *r)
{
	json_t *details =
	    r->max >= 0 ? json_pack("{s:I}", "max", (json_int_t)r->max) : NULL;
	json_t *err = api_error_json(r->code, r->message, details);
	char *body = err ? json_dumps(err, JSON_COMPACT) : NULL;
	char buf[HTTP_FRONT_PEEK_MAX];
	size_t drained = 0;
	ssize_t n;
	int len;

	json_decref(err);
	while (drained < FRONT_HEAD_DRAIN_MAX &&
	       (n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		drained += (size_t)n;
	if (body) {
		len = snprintf(buf, sizeof(buf),
			       "HTTP/1.1 %u %s\r\n"
			       "Content-Type: application/json\r\n"
			       "Content-Length: %zu\r\n"
			       "Connection: close\r\n\r\n%s\n",
			       r->status, status_text(r->status),
			       strlen(body) + 1, body);
		if (len > 0 && (size_t)len < sizeof(buf)) {
			n = send(fd, buf, (size_t)len,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			(void)n;
		}
	}
	free(body);
	shutdown(fd, SHUT_WR);
}

// SPDX-License-Identifier: MIT
/*
 * sse_reader.c - text/event-stream parser.
 */
#include "sse_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void sse_init(struct sse_parser *p, sse_event_fn fn, void *ctx, size_t max_line)
{
	memset(p, 0, sizeof(*p));
	p->fn = fn;
	p->ctx = ctx;
	p->line.max = max_line;
	p->data.max = max_line;
	p->type.max = 256;
	p->id.max = 256;
	p->retry_ms = -1;
}

static int sse_set(struct ctl_buf *b, const char *v, size_t n)
{
	ctl_buf_reset(b);
	return ctl_buf_append(b, v, n) ? -ENOMEM : 0;
}

static int sse_dispatch(struct sse_parser *p)
{
	const char *type = p->type.len ? p->type.data : "message";
	int ret = 0;

	if (p->have_data) {
		/* the data buffer ends with the last line's LF: drop it */
		p->data.data[--p->data.len] = '\0';
		ret = p->fn(p->ctx, p->id.data ? p->id.data : "", type,
			    p->data.data);
	}
	ctl_buf_reset(&p->data);
	ctl_buf_reset(&p->type);
	p->have_data = false;
	return ret;
}

static int sse_field(struct sse_parser *p, const char *name, const char *v,
		     size_t vlen)
{
	if (!strcmp(name, "data")) {
		p->have_data = true;
		if (ctl_buf_append(&p->data, v, vlen) ||
		    ctl_buf_append(&p->data, "\n", 1))
			return -ENOMEM;
		return 0;
	}
	if (!strcmp(name, "event"))
		return sse_set(&p->type, v, vlen);
	if (!strcmp(name, "id")) {
		if (memchr(v, '\0', vlen))
			return 0; /* the standard ignores such ids */
		return sse_set(&p->id, v, vlen);
	}
	if (!strcmp(name, "retry") && vlen && vlen < 10 &&
	    strspn(v, "0123456789") == vlen)
		p->retry_ms = strtol(v, NULL, 10);
	return 0;
}

static int sse_line(struct sse_parser *p, char *line, size_t len)
{
	char *colon;
	const char *value = "";
	size_t vlen = 0;

	if (len == 0)
		return sse_dispatch(p);
	if (line[0] == ':')
		return 0; /* comment, e.g. a keep-alive */
	colon = memchr(line, ':', len);
	if (colon) {
		*colon = '\0';
		value = colon + 1;
		vlen = len - (size_t)(value - line);
		if (vlen && *value == ' ') {
			value++;
			vlen--;
		}
	}
	return sse_field(p, line, value, vlen);
}

int sse_feed(struct sse_parser *p, const char *buf, size_t len)
{
	size_t i, start = 0;
	int ret;

	for (i = 0; i < len; i++) {
		char c = buf[i];

		if (c != '\r' && c != '\n')
			continue;
		if (c == '\n' && p->after_cr && i == start &&
		    p->line.len == 0) {
			p->after_cr = false;
			start = i + 1;
			continue;
		}
		if (ctl_buf_append(&p->line, buf + start, i - start))
			return -ENOMEM;
		p->after_cr = c == '\r';
		ret = sse_line(p, p->line.data ? p->line.data : (char *)"",
			       p->line.len);
		ctl_buf_reset(&p->line);
		if (ret)
			return ret;
		start = i + 1;
	}
	if (start < len) {
		p->after_cr = false;
		if (ctl_buf_append(&p->line, buf + start, len - start))
			return -ENOMEM;
	}
	return 0;
}

void sse_reset(struct sse_parser *p)
{
	ctl_buf_reset(&p->line);
	ctl_buf_reset(&p->data);
	ctl_buf_reset(&p->type);
	p->have_data = false;
	p->after_cr = false;
}

void sse_free(struct sse_parser *p)
{
	ctl_buf_free(&p->line);
	ctl_buf_free(&p->data);
	ctl_buf_free(&p->type);
	ctl_buf_free(&p->id);
}

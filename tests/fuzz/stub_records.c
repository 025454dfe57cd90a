// SPDX-License-Identifier: MIT
/*
 * stub_records.c - cutting a stub fuzz target's input into records
 * and messages (stub_records.h).
 */
#include <string.h>

#include "stub_records.h"

void fz_for_each_record(const uint8_t *data, size_t size, fz_record_fn *fn,
			void *ctx)
{
	size_t pos = 0;

	while (pos + 3 <= size) {
		int k = data[pos];
		size_t len = (size_t)(data[pos + 1] | data[pos + 2] << 8);

		pos += 3;
		if (len > size - pos)
			len = size - pos;
		fn(ctx, k, data + pos, len);
		pos += len;
	}
}

size_t fz_fixed_header(union tstub_buf *m, const uint8_t *p, size_t len)
{
	size_t n = len < sizeof(m->bytes) ? len : sizeof(m->bytes);

	memcpy(m->bytes, p, n);
	if (n >= sizeof(m->hdr)) {
		m->hdr.len = (uint32_t)n;
		m->hdr.flags &= TSTUB_F_REPLY;
	}
	return n;
}

size_t fz_body(union tstub_buf *m, size_t body_len, const uint8_t *src,
	       size_t src_len)
{
	if (body_len > TSTUB_MSG_MAX - sizeof(m->hdr))
		body_len = TSTUB_MSG_MAX - sizeof(m->hdr);
	memset(m->bytes, 0, sizeof(m->hdr) + body_len);
	if (src_len)
		memcpy(m->bytes + sizeof(m->hdr), src,
		       src_len < body_len ? src_len : body_len);
	return body_len;
}

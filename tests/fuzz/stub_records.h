/* SPDX-License-Identifier: MIT */
/*
 * stub_records.h - how the stub fuzz targets (fuzz_stub_box.c,
 * fuzz_stub_daemon.c, fuzz_stub_worker.c) cut an input into messages.
 *
 * An input is records of a byte k, a le16 length and that many bytes (the
 * last record is cut at the input's end); what k means is each target's.
 */
#ifndef TUNERD_FUZZ_STUB_RECORDS_H
#define TUNERD_FUZZ_STUB_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "tstub_codec.h"

typedef void fz_record_fn(void *ctx, int k, const uint8_t *p, size_t len);

/* Call fn for every record of data, in order. */
void fz_for_each_record(const uint8_t *data, size_t size, fz_record_fn *fn,
			void *ctx);

/* The bytes as a message (cut at TSTUB_MSG_MAX) whose header, when it has
 * a whole one, carries the right length and no flag but REPLY: the
 * bytes to send. */
size_t fz_fixed_header(union tstub_buf *m, const uint8_t *p, size_t len);

/* A zeroed header and a body of body_len bytes (cut to what a message
 * holds): src's first bytes, zero-padded.  The body's length. */
size_t fz_body(union tstub_buf *m, size_t body_len, const uint8_t *src,
	       size_t src_len);

#endif /* TUNERD_FUZZ_STUB_RECORDS_H */

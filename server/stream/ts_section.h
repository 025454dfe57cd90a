/* SPDX-License-Identifier: MIT */
/*
 * ts_section.h - one PSI/SI section gathered from the TS packets of its
 * PID: the transport layer under libdvbv5's table parsers, shared by the
 * streams' PAT/PMT filter and a scan's PAT/SDT/NIT reading.
 */
#ifndef TUNERD_TS_SECTION_H
#define TUNERD_TS_SECTION_H

#include <stddef.h>
#include <stdint.h>

#define TS_SECTION_PACKET 188
/* EN 300 468: PAT, PMT, SDT and NIT sections <= 1024 bytes, EIT 4096. */
#define TS_SECTION_MAX 4096

struct ts_section {
	/* A packet's payload may run past the section's end: room for it. */
	uint8_t buf[TS_SECTION_MAX + TS_SECTION_PACKET];
	size_t len, want; /* want 0: waiting for a section start */
	size_t done;      /* length of the section just completed */
};

/*
 * Feed one 188-byte packet of the section's PID (TEI-marked packets and
 * packets without payload are ignored); 1 when s->buf holds a whole
 * section of at most max bytes (s->done) with a good CRC.  A section
 * that starts in the packet that ends another is taken at the table's
 * next repetition.
 */
int ts_section_push(struct ts_section *s, const uint8_t *pkt, size_t max);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * ts_section.c - a section gathered from TS packets: the pointer field
 * at a payload unit start, the section length from its header, the CRC
 * checked with libdvbv5's dvb_crc32().
 */
#include "ts_section.h"

#include <libdvbv5/crc32.h>
#include <string.h>

/* The packet's payload, past any adaptation field; NULL when none. */
static const uint8_t *payload_of(const uint8_t *pkt, size_t *len)
{
	unsigned int afc = (pkt[3] >> 4) & 3;
	size_t off = 4;

	if (!(afc & 1) || (pkt[1] & 0x80))
		return NULL;
	if (afc & 2)
		off += 1u + pkt[4];
	if (off >= TS_SECTION_PACKET)
		return NULL;
	*len = TS_SECTION_PACKET - off;
	return pkt + off;
}

int ts_section_push(struct ts_section *s, const uint8_t *pkt, size_t max)
{
	size_t len, room;
	const uint8_t *p = payload_of(pkt, &len);

	if (!p)
		return 0;
	if (pkt[1] & 0x40) { /* payload_unit_start: pointer_field */
		if (1u + p[0] >= len)
			return 0;
		len -= 1u + p[0];
		p += 1u + p[0];
		s->len = s->want = 0;
	} else if (!s->len) {
		return 0; /* the middle of a section whose start was missed */
	}
	room = sizeof(s->buf) - s->len;
	memcpy(s->buf + s->len, p, len < room ? len : room);
	s->len += len < room ? len : room;
	if (!s->want && s->len >= 3) {
		s->want = 3u + (((size_t)s->buf[1] & 0x0F) << 8 | s->buf[2]);
		if (s->want > max || s->want > TS_SECTION_MAX || s->want < 12) {
			s->len = s->want = 0;
			return 0;
		}
	}
	if (!s->want || s->len < s->want)
		return 0;
	s->done = s->want;
	s->len = s->want = 0;
	return dvb_crc32(s->buf, s->done, 0xFFFFFFFF) == 0;
}

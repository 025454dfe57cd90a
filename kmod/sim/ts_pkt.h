/* SPDX-License-Identifier: MIT */
/*
 * ts_pkt.h - MPEG-2 transport stream packet fields (ISO/IEC 13818-1
 * 2.4.3), the few the simulated box's multiplexer reads and rewrites:
 * PID, continuity counter, PCR, and PTS/DTS of a PES header.
 */
#ifndef SIM_TS_PKT_H
#define SIM_TS_PKT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define TS_PACKET      188
#define TS_SYNC        0x47
#define TS_PID_PAT     0x0000
#define TS_PID_NIT     0x0010
#define TS_PID_SDT     0x0011
#define TS_PID_TDT     0x0014
#define TS_PID_NULL    0x1fff
#define TS_CLOCK       27000000ull /* PCR ticks a second */
#define TS_PTS_CLOCK   90000ull    /* PTS/DTS ticks a second */
#define TS_PTS_MASK    ((1ull << 33) - 1)
#define TS_PCR_MODULUS ((1ull << 33) * 300ull)

static inline uint16_t ts_pid(const uint8_t *p)
{
	return (uint16_t)(((p[1] & 0x1f) << 8) | p[2]);
}

static inline void ts_set_pid(uint8_t *p, uint16_t pid)
{
	p[1] = (uint8_t)((p[1] & 0xe0) | ((pid >> 8) & 0x1f));
	p[2] = (uint8_t)pid;
}

static inline bool ts_has_payload(const uint8_t *p)
{
	return p[3] & 0x10;
}

static inline bool ts_payload_start(const uint8_t *p)
{
	return p[1] & 0x40;
}

static inline void ts_set_cc(uint8_t *p, uint8_t cc)
{
	p[3] = (uint8_t)((p[3] & 0xf0) | (cc & 0x0f));
}

static inline uint8_t ts_cc(const uint8_t *p)
{
	return p[3] & 0x0f;
}

/* Adaptation field length, or -1 without one. */
static inline int ts_af_len(const uint8_t *p)
{
	return (p[3] & 0x20) ? p[4] : -1;
}

static inline bool ts_has_pcr(const uint8_t *p)
{
	return ts_af_len(p) >= 7 && (p[5] & 0x10);
}

/* PCR in 27 MHz ticks (base * 300 + extension). */
static inline uint64_t ts_get_pcr(const uint8_t *p)
{
	uint64_t base = ((uint64_t)p[6] << 25) | ((uint64_t)p[7] << 17) |
			((uint64_t)p[8] << 9) | ((uint64_t)p[9] << 1) |
			(p[10] >> 7);

	return base * 300 + (uint64_t)(((p[10] & 1) << 8) | p[11]);
}

static inline void ts_put_pcr(uint8_t *p, uint64_t pcr)
{
	uint64_t base = (pcr / 300) & TS_PTS_MASK;
	unsigned int ext = (unsigned int)(pcr % 300);

	p[6] = (uint8_t)(base >> 25);
	p[7] = (uint8_t)(base >> 17);
	p[8] = (uint8_t)(base >> 9);
	p[9] = (uint8_t)(base >> 1);
	p[10] = (uint8_t)(((base & 1) << 7) | 0x7e | (ext >> 8));
	p[11] = (uint8_t)ext;
}

/* The 5-byte PTS/DTS field with its 4-bit prefix. */
static inline uint64_t ts_get_timestamp(const uint8_t *t)
{
	return ((uint64_t)(t[0] & 0x0e) << 29) | ((uint64_t)t[1] << 22) |
	       ((uint64_t)(t[2] & 0xfe) << 14) | ((uint64_t)t[3] << 7) |
	       (t[4] >> 1);
}

static inline void ts_put_timestamp(uint8_t *t, unsigned int prefix,
				    uint64_t ts)
{
	ts &= TS_PTS_MASK;
	t[0] = (uint8_t)((prefix << 4) | ((ts >> 29) & 0x0e) | 1);
	t[1] = (uint8_t)(ts >> 22);
	t[2] = (uint8_t)(((ts >> 14) & 0xfe) | 1);
	t[3] = (uint8_t)(ts >> 7);
	t[4] = (uint8_t)(((ts << 1) & 0xfe) | 1);
}

/* Offset of the payload, or -1 if the packet has none. */
static inline int ts_payload_offset(const uint8_t *p)
{
	int af = ts_af_len(p);
	int off = 4 + (af >= 0 ? af + 1 : 0);

	return ts_has_payload(p) && off < TS_PACKET ? off : -1;
}

/* An adaptation-field-only packet carrying a PCR; its CC is the PID's
 * current one (no payload: the counter does not advance). */
static inline void ts_make_pcr_packet(uint8_t *p, uint16_t pid, uint8_t cc,
				      uint64_t pcr)
{
	memset(p, 0xff, TS_PACKET);
	p[0] = TS_SYNC;
	p[1] = (uint8_t)((pid >> 8) & 0x1f);
	p[2] = (uint8_t)pid;
	p[3] = (uint8_t)(0x20 | (cc & 0x0f));
	p[4] = TS_PACKET - 5;
	p[5] = 0x10;
	ts_put_pcr(p, pcr);
}

static inline void ts_make_null_packet(uint8_t *p)
{
	memset(p, 0xff, TS_PACKET);
	p[0] = TS_SYNC;
	p[1] = 0x1f;
	p[2] = 0xff;
	p[3] = 0x10;
}

#endif /* SIM_TS_PKT_H */

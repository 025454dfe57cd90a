// SPDX-License-Identifier: MIT
/*
 * The tables of one multiplex during a scan: sections collected from the
 * packets of PIDs 0 (PAT), 0x11 (SDT) and 0x10 (NIT), each parsed by
 * libdvbv5 on its own and merged into a struct scan_mux.
 *
 * A section starts where a packet with payload_unit_start points
 * (pointer_field) and ends after section_length bytes; a section is taken
 * only with a good CRC (libdvbv5's dvb_crc32).  Only the first section
 * starting in a packet is collected: the tables a scan reads repeat many
 * times a second, so one that shares its packet with another is simply
 * taken at a later repetition.
 */
#include "scan_tables.h"
#include "ts_section.h"

#include <libdvbv5/desc_logical_channel.h>
#include <libdvbv5/desc_service.h>
#include <libdvbv5/descriptors.h>
#include <libdvbv5/dvb-fe.h>
#include <libdvbv5/nit.h>
#include <libdvbv5/pat.h>
#include <libdvbv5/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PACKET    188
#define TABLE_PAT 0x00
#define TABLE_NIT 0x40
#define TABLE_SDT 0x42

enum { PID_PAT = 0x0000, PID_NIT = 0x0010, PID_SDT = 0x0011 };

/* One table being gathered from its PID. */
struct table_in {
	struct ts_section in;
	uint8_t seen[32]; /* section_numbers taken, a bit each */
	int last;         /* last_section_number, -1 before the first */
	int version;
	int complete;
};

struct scan_tables {
	struct dvb_v5_fe_parms *parms; /* libdvbv5's log handle */
	struct table_in pat, sdt, nit;
	struct scan_mux mux;
};

struct scan_tables *scan_tables_new(void)
{
	struct scan_tables *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->parms = dvb_fe_dummy();
	if (!t->parms) {
		free(t);
		return NULL;
	}
	/* libdvbv5 logs what it cannot parse at this level and above. */
	t->parms->verbose = 0;
	t->pat.last = t->sdt.last = t->nit.last = -1;
	return t;
}

void scan_tables_free(struct scan_tables *t)
{
	if (!t)
		return;
	dvb_fe_close(t->parms);
	free(t);
}

const struct scan_mux *scan_tables_result(const struct scan_tables *t)
{
	return &t->mux;
}

/* ---- sections from packets ---- */

/* 1 when the section in s->in.buf is one of table_id not taken yet (a new
 * version starts the gathering again). */
static int section_wanted(struct table_in *s, uint8_t table_id)
{
	const uint8_t *b = s->in.buf;
	int version = (b[5] >> 1) & 0x1F, number = b[6];

	if (b[0] != table_id || !(b[5] & 1)) /* current_next_indicator */
		return 0;
	if (s->complete && version == s->version)
		return 0;
	if (version != s->version || s->last < 0) {
		memset(s->seen, 0, sizeof(s->seen));
		s->version = version;
		s->complete = 0;
	}
	s->last = b[7];
	if (s->seen[number / 8] & (1u << (number % 8)))
		return 0;
	s->seen[number / 8] |= (uint8_t)(1u << (number % 8));
	s->complete = 1;
	for (int i = 0; i <= s->last; i++)
		if (!(s->seen[i / 8] & (1u << (i % 8))))
			s->complete = 0;
	return 1;
}

/* ---- the tables' content ---- */

static struct scan_service *service_of(struct scan_mux *m, uint16_t sid)
{
	for (unsigned int i = 0; i < m->nservices; i++)
		if (m->services[i].sid == sid)
			return &m->services[i];
	if (m->nservices == SCAN_SERVICES_MAX)
		return NULL;
	m->services[m->nservices] =
	    (struct scan_service){.sid = sid, .lcn = -1};
	return &m->services[m->nservices++];
}

static void pat_section(struct scan_tables *t)
{
	struct dvb_table_pat *pat = NULL;
	struct scan_service *s;

	if (dvb_table_pat_init(t->parms, t->pat.in.buf, (ssize_t)t->pat.in.done,
			       &pat) < 0 ||
	    !pat) {
		dvb_table_pat_free(pat);
		return;
	}
	t->mux.tsid = pat->header.id;
	dvb_pat_program_foreach(pgm, pat)
	{
		s = pgm->service_id ? service_of(&t->mux, pgm->service_id)
				    : NULL; /* 0: the NIT's PID */
		if (s)
			s->in_pat = 1;
	}
	dvb_table_pat_free(pat);
}

static void sdt_section(struct scan_tables *t)
{
	struct dvb_table_sdt *sdt = NULL;
	struct scan_service *s;

	if (dvb_table_sdt_init(t->parms, t->sdt.in.buf, (ssize_t)t->sdt.in.done,
			       &sdt) < 0 ||
	    !sdt) {
		dvb_table_sdt_free(sdt);
		return;
	}
	t->mux.onid = sdt->network_id;
	dvb_sdt_service_foreach(svc, sdt)
	{
		s = service_of(&t->mux, svc->service_id);
		dvb_desc_find(struct dvb_desc_service, d, svc,
			      service_descriptor)
		{
			if (!s)
				break;
			s->service_type = d->service_type;
			if (d->name)
				snprintf(s->name, sizeof(s->name), "%s",
					 d->name);
		}
	}
	dvb_table_sdt_free(sdt);
}

/* The LCN descriptor (0x83, EACEM/EICTA and the UK's DTG under their
 * private data specifiers) of the transport streams of this multiplex. */
static void nit_section(struct scan_tables *t)
{
	struct dvb_table_nit *nit = NULL;
	struct scan_service *s;

	if (dvb_table_nit_init(t->parms, t->nit.in.buf, (ssize_t)t->nit.in.done,
			       &nit) < 0 ||
	    !nit) {
		dvb_table_nit_free(nit);
		return;
	}
	t->mux.nid = nit->header.id;
	dvb_nit_transport_foreach(tr, nit)
	{
		if (t->mux.have_pat && tr->transport_id != t->mux.tsid)
			continue;
		dvb_desc_find(struct dvb_desc_logical_channel, d, tr,
			      logical_channel_number_descriptor)
		{
			for (unsigned int i = 0; i < d->length / 4u; i++) {
				s = service_of(&t->mux, d->lcn[i].service_id);
				if (s)
					s->lcn =
					    d->lcn[i].logical_channel_number;
			}
		}
	}
	dvb_table_nit_free(nit);
}

static void packet_in(struct scan_tables *t, const uint8_t *pkt)
{
	unsigned int pid = ((pkt[1] & 0x1Fu) << 8) | pkt[2];

	if (pkt[0] != 0x47)
		return;
	if (pid == PID_PAT &&
	    ts_section_push(&t->pat.in, pkt, TS_SECTION_MAX) &&
	    section_wanted(&t->pat, TABLE_PAT)) {
		pat_section(t);
		t->mux.have_pat = t->pat.complete;
	} else if (pid == PID_SDT &&
		   ts_section_push(&t->sdt.in, pkt, TS_SECTION_MAX) &&
		   section_wanted(&t->sdt, TABLE_SDT)) {
		sdt_section(t);
		t->mux.have_sdt = t->sdt.complete;
	} else if (pid == PID_NIT && t->mux.have_pat &&
		   ts_section_push(&t->nit.in, pkt, TS_SECTION_MAX) &&
		   section_wanted(&t->nit, TABLE_NIT)) {
		nit_section(t);
		t->mux.have_nit = t->nit.complete;
	}
}

int scan_tables_feed(struct scan_tables *t, const uint8_t *pkts, size_t n)
{
	for (size_t off = 0; off + PACKET <= n; off += PACKET)
		packet_in(t, pkts + off);
	return t->mux.have_pat && t->mux.have_sdt && t->mux.have_nit;
}

enum scan_service_kind scan_service_kind_of(uint8_t service_type)
{
	switch (service_type) {
	case 0x01: /* MPEG-2 SD digital television */
	case 0x16: /* H.264/AVC SD digital television */
		return SCAN_KIND_TV;
	case 0x11: /* MPEG-2 HD digital television */
	case 0x19: /* H.264/AVC HD digital television */
	case 0x1F: /* HEVC digital television */
		return SCAN_KIND_HD;
	case 0x02: /* digital radio sound */
	case 0x0A: /* advanced codec digital radio sound */
		return SCAN_KIND_RADIO;
	default:
		return SCAN_KIND_OTHER;
	}
}

const char *scan_service_kind_name(enum scan_service_kind k)
{
	static const char *const names[] = {"other", "tv", "radio", "hd"};

	return names[k];
}

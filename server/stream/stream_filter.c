// SPDX-License-Identifier: MIT
/*
 * A reader's filter (stream_filter.h).
 *
 * Tables are parsed by libdvbv5 (dvb_table_pat_init, dvb_table_pmt_init)
 * and the rewritten PAT is built by libdvbpsi
 * (dvbpsi_pat_sections_generate); what is done here is the transport
 * layer only: collecting a section from the payloads of its PID
 * (pointer_field, section_length), its CRC (libdvbv5's dvb_crc32), and
 * putting the generated section into a packet.  A PAT or PMT is taken as
 * one section, as every multiplex with fewer than ~250 services sends it.
 * A section is parsed again only when its CRC changed: the tables repeat
 * ten times a second and are almost always the same.
 */
#include "stream_filter.h"
#include "ts_section.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <dvbpsi/dvbpsi.h>
#include <dvbpsi/pat.h>
#include <dvbpsi/psi.h>
#include <libdvbv5/pat.h>
#include <libdvbv5/pmt.h>

#define TS_PACKET_LEN 188
#define SECTION_MAX   1024 /* PAT and PMT: section_length <= 1021 */
#define PID_UNKNOWN   (-1)

/* One section being collected from the packets of a PID. */
struct section {
	struct ts_section in;
	uint32_t crc; /* of the last section parsed */
	int parsed;
};

struct stream_filter {
	struct stream_filter_spec spec;
	struct dvb_v5_fe_parms *parms;
	uint8_t pass[TS_PID_COUNT / 8]; /* PIDs passed as they are */
	int pmt_pid;
	struct section pat, pmt;
	uint8_t pat_pkt[TS_PACKET_LEN]; /* the rewritten PAT, one packet */
	int have_pat_pkt;
	uint8_t pat_cc;
	dvbpsi_t *psi;
};

static void pid_set(uint8_t *set, unsigned int pid)
{
	set[pid >> 3] |= (uint8_t)(1u << (pid & 7));
}

static int pid_isset(const uint8_t *set, unsigned int pid)
{
	return set[pid >> 3] & (1u << (pid & 7));
}

/* ---- query values ---- */

static int parse_uint(const char **p, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(*p, &end, 0);
	if (errno || v > max || end == *p)
		return -EINVAL;
	*p = end;
	*out = v;
	return 0;
}

int stream_filter_parse_pids(struct stream_filter_spec *spec, const char *s,
			     const char **why)
{
	const char *p = s;
	unsigned long v;

	spec->mode = STREAM_FILTER_PIDS;
	spec->npids = 0;
	while (1) {
		if (parse_uint(&p, TS_PID_COUNT - 1, &v)) {
			*why = "a comma list of PIDs 0..8191";
			return -EINVAL;
		}
		if (spec->npids == STREAM_FILTER_PIDS_MAX) {
			*why = "at most 64 PIDs";
			return -EINVAL;
		}
		spec->pids[spec->npids++] = (uint16_t)v;
		if (!*p)
			return 0;
		if (*p++ != ',') {
			*why = "a comma list of PIDs 0..8191";
			return -EINVAL;
		}
	}
}

int stream_filter_parse_service(struct stream_filter_spec *spec, const char *s,
				const char **why)
{
	const char *p = s;
	unsigned long v;

	if (parse_uint(&p, 65535, &v) || *p || !v) {
		*why = "a service id (program number) 1..65535";
		return -EINVAL;
	}
	spec->mode = STREAM_FILTER_SERVICE;
	spec->service = (uint16_t)v;
	return 0;
}

/* ---- life ---- */

struct stream_filter *stream_filter_new(const struct stream_filter_spec *spec,
					struct dvb_v5_fe_parms *parms)
{
	struct stream_filter *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->spec = *spec;
	f->parms = parms;
	f->pmt_pid = PID_UNKNOWN;
	for (unsigned int i = 0; i < spec->npids; i++)
		pid_set(f->pass, spec->pids[i]);
	if (spec->mode == STREAM_FILTER_SERVICE) {
		f->psi = dvbpsi_new(NULL, DVBPSI_MSG_NONE);
		if (!f->psi || !parms) {
			stream_filter_free(f);
			return NULL;
		}
	}
	return f;
}

void stream_filter_free(struct stream_filter *f)
{
	if (!f)
		return;
	if (f->psi)
		dvbpsi_delete(f->psi);
	free(f);
}

int stream_filter_pmt_pid(const struct stream_filter *f)
{
	return f->pmt_pid;
}

/* ---- sections from packets ---- */

/* 1 when the complete section differs from the one parsed last. */
static int section_new(struct section *s)
{
	const uint8_t *c = s->in.buf + s->in.done - 4;
	uint32_t crc = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 |
		       (uint32_t)c[2] << 8 | c[3];

	if (s->parsed && crc == s->crc)
		return 0;
	s->crc = crc;
	s->parsed = 1;
	return 1;
}

/* ---- the service's tables ---- */

/* The one-service PAT in f->pat_pkt, from libdvbpsi. */
static void pat_build(struct stream_filter *f, uint16_t ts_id, uint8_t version)
{
	dvbpsi_pat_t pat;
	dvbpsi_psi_section_t *sec;
	size_t len;

	dvbpsi_pat_init(&pat, ts_id, version, true);
	if (!dvbpsi_pat_program_add(&pat, f->spec.service,
				    (uint16_t)f->pmt_pid)) {
		dvbpsi_pat_empty(&pat);
		return;
	}
	sec = dvbpsi_pat_sections_generate(f->psi, &pat, 253);
	dvbpsi_pat_empty(&pat);
	if (!sec)
		return;
	len = 3u + sec->i_length;
	if (len <= TS_PACKET_LEN - 5) {
		memset(f->pat_pkt, 0xFF, sizeof(f->pat_pkt));
		f->pat_pkt[0] = 0x47;
		f->pat_pkt[1] = 0x40; /* payload_unit_start, PID 0 */
		f->pat_pkt[2] = 0x00;
		f->pat_pkt[4] = 0; /* pointer_field */
		memcpy(f->pat_pkt + 5, sec->p_data, len);
		f->have_pat_pkt = 1;
	}
	dvbpsi_DeletePSISections(sec);
}

static void pat_parsed(struct stream_filter *f)
{
	struct dvb_table_pat *pat = NULL;
	int pmt_pid = PID_UNKNOWN;

	if (dvb_table_pat_init(f->parms, f->pat.in.buf, (ssize_t)f->pat.in.done,
			       &pat) < 0 ||
	    !pat)
		return;
	dvb_pat_program_foreach(prog, pat)
	{
		if (prog->service_id == f->spec.service)
			pmt_pid = prog->pid;
	}
	if (pmt_pid != f->pmt_pid) {
		/* Another PMT: its PIDs are learnt again. */
		memset(f->pass, 0, sizeof(f->pass));
		memset(&f->pmt, 0, sizeof(f->pmt));
		f->pmt_pid = pmt_pid;
	}
	f->have_pat_pkt = 0;
	if (pmt_pid != PID_UNKNOWN)
		pat_build(f, pat->header.id, pat->header.version);
	dvb_table_pat_free(pat);
}

static void pmt_parsed(struct stream_filter *f)
{
	struct dvb_table_pmt *pmt = NULL;

	if (dvb_table_pmt_init(f->parms, f->pmt.in.buf, (ssize_t)f->pmt.in.done,
			       &pmt) < 0 ||
	    !pmt)
		return;
	if (pmt->header.id == f->spec.service) {
		memset(f->pass, 0, sizeof(f->pass));
		pid_set(f->pass, (unsigned int)f->pmt_pid);
		if (pmt->pcr_pid != TS_PID_NULL)
			pid_set(f->pass, pmt->pcr_pid);
		dvb_pmt_stream_foreach(es, pmt)
		{
			pid_set(f->pass, es->elementary_pid);
		}
	}
	dvb_table_pmt_free(pmt);
}

/* PID 0 of a service filter: the rewritten PAT for each PAT start, with
 * the reader's own continuity counter. */
static const uint8_t *service_pat(struct stream_filter *f, const uint8_t *pkt)
{
	if (ts_section_push(&f->pat.in, pkt, SECTION_MAX) &&
	    section_new(&f->pat))
		pat_parsed(f);
	if (!(pkt[1] & 0x40) || !f->have_pat_pkt ||
	    !pid_isset(f->pass, (unsigned int)f->pmt_pid))
		return NULL;
	f->pat_pkt[3] = (uint8_t)(0x10 | f->pat_cc);
	f->pat_cc = (f->pat_cc + 1) & 0x0F;
	return f->pat_pkt;
}

const uint8_t *stream_filter_packet(struct stream_filter *f, const uint8_t *pkt)
{
	unsigned int pid = ((unsigned int)pkt[1] & 0x1F) << 8 | pkt[2];

	switch (f->spec.mode) {
	case STREAM_FILTER_ALL:
		return pkt;
	case STREAM_FILTER_PIDS:
		return pid_isset(f->pass, pid) ? pkt : NULL;
	case STREAM_FILTER_SERVICE:
		break;
	}
	if (pid == 0)
		return service_pat(f, pkt);
	if (f->pmt_pid != PID_UNKNOWN && pid == (unsigned int)f->pmt_pid &&
	    ts_section_push(&f->pmt.in, pkt, SECTION_MAX) &&
	    section_new(&f->pmt))
		pmt_parsed(f);
	return pid_isset(f->pass, pid) ? pkt : NULL;
}

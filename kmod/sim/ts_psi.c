// SPDX-License-Identifier: MIT
/*
 * ts_psi.c - PSI/SI tables of a simulated multiplex.  libdvbpsi builds
 * the sections (syntax, section splitting, CRC) and the descriptors it
 * knows; this file only fills the tables from the RF environment and
 * cuts sections into packets, each section starting a packet (pointer
 * field 0) so a receiver that joins late resynchronises at once.
 */
#include "ts_psi.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <dvbpsi/dvbpsi.h>
#include <dvbpsi/psi.h>
/* the rest of libdvbpsi needs the two above */
#include <dvbpsi/descriptor.h>
#include <dvbpsi/dr_40.h>
#include <dvbpsi/dr_41.h>
#include <dvbpsi/dr_48.h>
#include <dvbpsi/dr_5a.h>
#include <dvbpsi/dr_83.h>
#include <dvbpsi/nit.h>
#include <dvbpsi/pat.h>
#include <dvbpsi/pmt.h>
#include <dvbpsi/sdt.h>
#include <dvbpsi/tot.h>

#include "ts_pkt.h"

#define PSI_PROVIDER "tunerd-simbox"

static void psi_message(dvbpsi_t *h, const dvbpsi_msg_level_t level,
			const char *msg)
{
	(void)h;
	(void)level;
	(void)msg; /* generation of well-formed tables does not warn */
}

/* Sections into packets; consumes the section list. */
static int psi_packetize(dvbpsi_psi_section_t *sections, uint16_t pid,
			 struct ts_psi_table *out)
{
	size_t n = 0, at = 0;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	for (dvbpsi_psi_section_t *s = sections; s; s = s->p_next) {
		size_t len = (size_t)(s->p_payload_end - s->p_data) +
			     (s->b_syntax_indicator ? 4 : 0);

		n += (len + 1 + TS_PACKET - 5) / (TS_PACKET - 4);
	}
	out->packets = n ? malloc(n * TS_PACKET) : NULL;
	if (!out->packets) {
		dvbpsi_DeletePSISections(sections);
		return n ? -ENOMEM : -EINVAL;
	}
	memset(out->packets, 0xff, n * TS_PACKET);
	for (dvbpsi_psi_section_t *s = sections; s; s = s->p_next) {
		size_t len = (size_t)(s->p_payload_end - s->p_data) +
			     (s->b_syntax_indicator ? 4 : 0);
		const uint8_t *src = s->p_data;
		bool first = true;

		while (len) {
			uint8_t *p = out->packets + at++ * TS_PACKET;
			size_t room = TS_PACKET - 4 - (first ? 1 : 0);
			size_t chunk = len < room ? len : room;

			p[0] = TS_SYNC;
			p[1] = (uint8_t)((first ? 0x40 : 0) | (pid >> 8));
			p[2] = (uint8_t)pid;
			p[3] = 0x10;
			if (first)
				p[4] = 0; /* pointer_field */
			memcpy(p + TS_PACKET - room, src, chunk);
			src += chunk;
			len -= chunk;
			first = false;
		}
	}
	out->npackets = at;
	dvbpsi_DeletePSISections(sections);
	return 0;
}

int ts_psi_pat(const struct sim_carrier *c, const struct sim_service *svcs,
	       struct ts_psi_table *out)
{
	dvbpsi_t *h = dvbpsi_new(psi_message, DVBPSI_MSG_NONE);
	dvbpsi_psi_section_t *sec = NULL;
	dvbpsi_pat_t pat;

	if (!h)
		return -ENOMEM;
	dvbpsi_pat_init(&pat, c->mux.tsid, 0, true);
	dvbpsi_pat_program_add(&pat, 0, TS_PID_NIT);
	for (uint32_t i = 0; i < c->nservices; i++)
		dvbpsi_pat_program_add(&pat, svcs[i].sid, svcs[i].pmt_pid);
	sec = dvbpsi_pat_sections_generate(h, &pat, 253);
	dvbpsi_pat_empty(&pat);
	dvbpsi_delete(h);
	return psi_packetize(sec, TS_PID_PAT, out);
}

int ts_psi_pmt(const struct sim_carrier *c, const struct sim_service *s,
	       struct ts_psi_table *out)
{
	dvbpsi_t *h = dvbpsi_new(psi_message, DVBPSI_MSG_NONE);
	uint16_t pcr_pid = s->video_pid ? s->video_pid : s->audio_pid;
	dvbpsi_psi_section_t *sec;
	dvbpsi_pmt_t pmt;

	(void)c;
	if (!h)
		return -ENOMEM;
	dvbpsi_pmt_init(&pmt, s->sid, 0, true, pcr_pid);
	if (s->video_pid)
		dvbpsi_pmt_es_add(&pmt, TS_STREAM_MPEG2_VIDEO, s->video_pid);
	dvbpsi_pmt_es_add(&pmt, TS_STREAM_MPEG1_AUDIO, s->audio_pid);
	sec = dvbpsi_pmt_sections_generate(h, &pmt);
	dvbpsi_pmt_empty(&pmt);
	dvbpsi_delete(h);
	return psi_packetize(sec, s->pmt_pid, out);
}

static dvbpsi_descriptor_t *psi_service_dr(const struct sim_service *s)
{
	dvbpsi_service_dr_t d = {0};
	size_t plen = strlen(PSI_PROVIDER), nlen = strlen(s->name);

	d.i_service_type = s->type;
	d.i_service_provider_name_length = (uint8_t)plen;
	memcpy(d.i_service_provider_name, PSI_PROVIDER, plen);
	d.i_service_name_length = (uint8_t)nlen;
	memcpy(d.i_service_name, s->name, nlen);
	return dvbpsi_GenServiceDr(&d, false);
}

/* Descriptor lists take copies: the generated descriptor is freed here. */
static void psi_sdt_add(dvbpsi_sdt_t *sdt, const struct sim_service *s)
{
	dvbpsi_sdt_service_t *svc =
	    dvbpsi_sdt_service_add(sdt, s->sid, false, false, 4, false);
	dvbpsi_descriptor_t *d = psi_service_dr(s);

	if (svc && d)
		dvbpsi_sdt_service_descriptor_add(svc, d->i_tag, d->i_length,
						  d->p_data);
	dvbpsi_DeleteDescriptors(d);
}

int ts_psi_sdt(const struct sim_carrier *c, const struct sim_service *svcs,
	       struct ts_psi_table *out)
{
	dvbpsi_t *h = dvbpsi_new(psi_message, DVBPSI_MSG_NONE);
	dvbpsi_psi_section_t *sec;
	dvbpsi_sdt_t sdt;

	if (!h)
		return -ENOMEM;
	dvbpsi_sdt_init(&sdt, 0x42, c->mux.tsid, 0, true, c->mux.onid);
	for (uint32_t i = 0; i < c->nservices; i++)
		psi_sdt_add(&sdt, &svcs[i]);
	sec = dvbpsi_sdt_sections_generate(h, &sdt);
	dvbpsi_sdt_empty(&sdt);
	dvbpsi_delete(h);
	return psi_packetize(sec, TS_PID_SDT, out);
}

/* EN 300 468 6.2.13.4 codes; DVB-T only knows 2K, 8K (and 4K). */
static dvbpsi_descriptor_t *psi_terrestrial_dr(const struct sim_carrier *c)
{
	static const uint16_t guards[] = {32, 16, 8, 4};
	static const uint8_t rates[][2] = {
	    {1, 2}, {2, 3}, {3, 4}, {5, 6}, {7, 8}};
	const struct sim_mux_params *m = &c->mux;
	dvbpsi_terr_deliv_sys_dr_t d = {0};

	d.i_centre_frequency = c->frequency / 10;
	d.i_bandwidth = c->bandwidth >= 8000000   ? 0
			: c->bandwidth >= 7000000 ? 1
			: c->bandwidth >= 6000000 ? 2
						  : 3;
	d.i_priority = 1;
	d.i_time_slice_indicator = 1; /* not used */
	d.i_mpe_fec_indicator = 1;
	d.i_constellation = m->bits == 2 ? 0 : m->bits == 4 ? 1 : 2;
	for (uint8_t i = 0; i < 4; i++)
		if (m->guard_den == guards[i])
			d.i_guard_interval = i;
	for (uint8_t i = 0; i < 5; i++)
		if (m->fec_num == rates[i][0] && m->fec_den == rates[i][1])
			d.i_code_rate_hp_stream = d.i_code_rate_lp_stream = i;
	d.i_transmission_mode = m->fft_k == 8 ? 1 : m->fft_k == 4 ? 2 : 0;
	return dvbpsi_GenTerrDelivSysDr(&d, false);
}

static void psi_ts_add_dr(dvbpsi_nit_ts_t *ts, dvbpsi_descriptor_t *d)
{
	if (ts && d)
		dvbpsi_nit_ts_descriptor_add(ts, d->i_tag, d->i_length,
					     d->p_data);
	dvbpsi_DeleteDescriptors(d);
}

/*
 * The delivery descriptor of the carrier: DVB-T's own descriptor, or for
 * DVB-T2 the minimal T2 delivery system descriptor (an extension
 * descriptor, tag 0x7f/0x04, plp 0, system id 0), which libdvbpsi has no
 * generator for.
 */
static void psi_delivery(dvbpsi_nit_ts_t *ts, const struct sim_carrier *c)
{
	uint8_t t2[] = {0x04, 0x00, 0x00, 0x00};

	if (c->delsys == TSTUB_DELSYS_DVBT)
		psi_ts_add_dr(ts, psi_terrestrial_dr(c));
	else if (c->delsys == TSTUB_DELSYS_DVBT2 && ts)
		dvbpsi_nit_ts_descriptor_add(ts, 0x7f, sizeof(t2), t2);
}

static void psi_nit_ts(dvbpsi_nit_t *nit, const struct sim_carrier *c,
		       const struct sim_service *svcs)
{
	dvbpsi_nit_ts_t *ts = dvbpsi_nit_ts_add(nit, c->mux.tsid, c->mux.onid);
	dvbpsi_service_list_dr_t list = {0};
	dvbpsi_lcn_dr_t lcn = {0};

	for (uint32_t i = 0; i < c->nservices && i < 64; i++) {
		list.i_service[i].i_service_id = svcs[i].sid;
		list.i_service[i].i_service_type = svcs[i].type;
		lcn.p_entries[i].i_service_id = svcs[i].sid;
		lcn.p_entries[i].b_visible_service_flag = 1;
		lcn.p_entries[i].i_logical_channel_number = svcs[i].lcn;
	}
	list.i_service_count = (uint8_t)(c->nservices < 64 ? c->nservices : 64);
	lcn.i_number_of_entries = list.i_service_count;
	psi_delivery(ts, c);
	psi_ts_add_dr(ts, dvbpsi_GenServiceListDr(&list, false));
	if (lcn.i_number_of_entries)
		psi_ts_add_dr(ts, dvbpsi_GenLCNDr(&lcn, false));
}

int ts_psi_nit(const struct sim_carrier *c, const struct sim_service *svcs,
	       struct ts_psi_table *out)
{
	dvbpsi_t *h = dvbpsi_new(psi_message, DVBPSI_MSG_NONE);
	dvbpsi_network_name_dr_t name = {0};
	const char *net = c->mux.network[0] ? c->mux.network : c->label;
	dvbpsi_psi_section_t *sec;
	dvbpsi_descriptor_t *d;
	dvbpsi_nit_t nit;

	if (!h)
		return -ENOMEM;
	dvbpsi_nit_init(&nit, 0x40, c->mux.nid, c->mux.nid, 0, true);
	name.i_name_length = (uint8_t)strlen(net);
	memcpy(name.i_name_byte, net, name.i_name_length);
	d = dvbpsi_GenNetworkNameDr(&name, false);
	if (d)
		dvbpsi_nit_descriptor_add(&nit, d->i_tag, d->i_length,
					  d->p_data);
	dvbpsi_DeleteDescriptors(d);
	psi_nit_ts(&nit, c, svcs);
	sec = dvbpsi_nit_sections_generate(h, &nit, 0x40);
	dvbpsi_nit_empty(&nit);
	dvbpsi_delete(h);
	return psi_packetize(sec, TS_PID_NIT, out);
}

static unsigned int psi_bcd(unsigned int v)
{
	return ((v / 10) << 4) | (v % 10);
}

/* UTC_time: 16-bit Modified Julian Date, then hh mm ss in BCD. */
static uint64_t psi_utc_field(time_t utc)
{
	uint64_t days = (uint64_t)utc / 86400, secs = (uint64_t)utc % 86400;
	uint64_t mjd = days + 40587; /* 1970-01-01 */

	return (mjd << 24) | (psi_bcd((unsigned int)(secs / 3600)) << 16) |
	       (psi_bcd((unsigned int)(secs / 60 % 60)) << 8) |
	       psi_bcd((unsigned int)(secs % 60));
}

int ts_psi_tdt(time_t utc, struct ts_psi_table *out)
{
	dvbpsi_t *h = dvbpsi_new(psi_message, DVBPSI_MSG_NONE);
	dvbpsi_psi_section_t *sec;
	dvbpsi_tot_t tdt;

	if (!h)
		return -ENOMEM;
	dvbpsi_tot_init(&tdt, 0x70, 0, 0, true, psi_utc_field(utc));
	sec = dvbpsi_tot_sections_generate(h, &tdt);
	dvbpsi_tot_empty(&tdt);
	dvbpsi_delete(h);
	return psi_packetize(sec, TS_PID_TDT, out);
}

void ts_psi_table_free(struct ts_psi_table *t)
{
	free(t->packets);
	memset(t, 0, sizeof(*t));
}

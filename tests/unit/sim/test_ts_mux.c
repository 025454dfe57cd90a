// SPDX-License-Identifier: MIT
/*
 * test_ts_mux - the simulated box's transport stream generator: the
 * environment's MUX and SERVICE lines, the bitrate, tables that parse
 * back with libdvbpsi's decoders, PCR interval, PES timestamps, and
 * packet errors only at a low CNR margin.  argv[1]: the shipped
 * environment file.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dvbpsi/dvbpsi.h>
#include <dvbpsi/psi.h>
/* the rest of libdvbpsi needs the two above */
#include <dvbpsi/demux.h>
#include <dvbpsi/descriptor.h>
#include <dvbpsi/dr_48.h>
#include <dvbpsi/dr_83.h>
#include <dvbpsi/nit.h>
#include <dvbpsi/pat.h>
#include <dvbpsi/pmt.h>
#include <dvbpsi/sdt.h>
#include <dvbpsi/tot.h>

#include "check.h"
#include "rf_env.h"
#include "ts_mux.h"
#include "ts_pkt.h"

static const char env_text[] =
    "DVBT 490000000 8000000 -52.5 30.0 \"MUX A\"\n"
    "  MUX tsid=4164 onid=9018 nid=12293 modulation=QAM64 fec=2/3 "
    "guard=1/32 fft=8k network=London\n"
    "  SERVICE 4164 1 tv 256 1024 1025 \"BBC ONE Lon\"\n"
    "  SERVICE 4287 2 tv 257 1040 1041 \"BBC TWO\"\n"
    "  SERVICE 6720 700 radio 258 - 1057 \"BBC Radio 1\"\n"
    "DVBT2 545833333 8000000 -53 29.5 \"HD\"\n"
    "  MUX tsid=16516 modulation=QAM256 fec=2/3 guard=1/128 fft=32k\n"
    "RADIO 88800000 200000 -48 38 FM\n";

static void test_parse(void)
{
	char err[256] = "";
	struct sim_rf_env *env = sim_rf_env_parse(env_text, err, sizeof(err));
	static const char *bad[] = {
	    "MUX tsid=1\n",
	    "RADIO 88800000 200000 -48 38\n  SERVICE 1 1 radio 256 - 257 "
	    "\"x\"\n",
	    "DVBT 490000000 8000000 -52 30\n  MUX tsid=70000\n",
	    "DVBT 490000000 8000000 -52 30\n  MUX fec=9/8\n",
	    "DVBT 490000000 8000000 -52 30\n  SERVICE 1 1 tv 256 256 257 "
	    "\"x\"\n",
	    "DVBT 490000000 8000000 -52 30\n  SERVICE 1 1 tv 256 300 301 "
	    "\"x\"\n"
	    "  SERVICE 1 2 tv 257 310 311 \"y\"\n",
	    "DVBT 490000000 8000000 -52 30\n  SERVICE 1 1 tv 256 300 301 x\n",
	    "DVBT 490000000 8000000 -52 30\n  SERVICE 1 1024 tv 256 300 301 "
	    "\"x\"\n",
	    "DVBT 490000000 8000000 -52 30\n  SERVICE 1 1 tv 16 300 301 "
	    "\"x\"\n",
	};

	CHECK(env != NULL);
	if (!env) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK_EQ_INT(env->nservices, 3);
	CHECK_EQ_INT(env->carriers[0].nservices, 3);
	CHECK_EQ_INT(env->carriers[0].mux.tsid, 4164);
	CHECK_EQ_INT(env->services[2].type, SIM_SERVICE_RADIO);
	CHECK_EQ_INT(env->services[2].video_pid, 0);
	CHECK(!strcmp(env->services[1].name, "BBC TWO"));
	/* EN 300 744: 8 MHz 64-QAM 2/3 GI 1/32 is 24.128 Mbit/s */
	CHECK(fabs(env->carriers[0].mux.bitrate - 24128342.0) < 2.0);
	/* the UK DVB-T2 HD multiplex: 40.2 Mbit/s */
	CHECK(fabs(env->carriers[1].mux.bitrate - 40.2e6) < 0.1e6);
	CHECK(env->carriers[1].digital && !env->carriers[2].digital);
	sim_rf_env_free(env);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		env = sim_rf_env_parse(bad[i], err, sizeof(err));
		CHECK(env == NULL && err[0]);
		if (env)
			fprintf(stderr, "accepted: %s", bad[i]);
		sim_rf_env_free(env);
	}
}

/* ---- what libdvbpsi decodes from the stream ---- */

struct decoded {
	dvbpsi_t *pat, *sdt_nit[2], *tdt, *pmt[8];
	uint16_t pmt_pid[8];
	int npmt;
	int pat_programs, pmt_es[8], pmt_pcr[8];
	char names[8][64];
	int nnames;
	int lcn[8][2]; /* sid, lcn */
	int nlcn;
	bool tdt_seen, delivery_seen;
};

static void on_pmt(void *arg, dvbpsi_pmt_t *pmt)
{
	struct decoded *d = arg;

	for (int i = 0; i < d->npmt; i++)
		if (d->pmt_pid[i] && d->pmt_es[i] == 0) {
			int n = 0;

			for (dvbpsi_pmt_es_t *es = pmt->p_first_es; es;
			     es = es->p_next)
				n++;
			d->pmt_es[i] = n;
			d->pmt_pcr[i] = pmt->i_pcr_pid;
			break;
		}
	dvbpsi_pmt_delete(pmt);
}

static void on_pat(void *arg, dvbpsi_pat_t *pat)
{
	struct decoded *d = arg;

	d->pat_programs = 0;
	for (dvbpsi_pat_program_t *p = pat->p_first_program; p; p = p->p_next) {
		d->pat_programs++;
		if (p->i_number && d->npmt < 8 && !d->pmt[d->npmt]) {
			d->pmt[d->npmt] = dvbpsi_new(NULL, DVBPSI_MSG_NONE);
			d->pmt_pid[d->npmt] = p->i_pid;
			dvbpsi_pmt_attach(d->pmt[d->npmt], p->i_number, on_pmt,
					  d);
			d->npmt++;
		}
	}
	dvbpsi_pat_delete(pat);
}

static void on_sdt(void *arg, dvbpsi_sdt_t *sdt)
{
	struct decoded *d = arg;

	d->nnames = 0;
	for (dvbpsi_sdt_service_t *s = sdt->p_first_service; s; s = s->p_next)
		for (dvbpsi_descriptor_t *dr = s->p_first_descriptor; dr;
		     dr = dr->p_next) {
			dvbpsi_service_dr_t *sd;

			if (dr->i_tag != 0x48 || d->nnames >= 8 ||
			    !(sd = dvbpsi_DecodeServiceDr(dr)))
				continue;
			snprintf(d->names[d->nnames++], 64, "%.*s",
				 sd->i_service_name_length,
				 (const char *)sd->i_service_name);
		}
	dvbpsi_sdt_delete(sdt);
}

static void on_nit(void *arg, dvbpsi_nit_t *nit)
{
	struct decoded *d = arg;

	d->nlcn = 0;
	for (dvbpsi_nit_ts_t *ts = nit->p_first_ts; ts; ts = ts->p_next)
		for (dvbpsi_descriptor_t *dr = ts->p_first_descriptor; dr;
		     dr = dr->p_next) {
			dvbpsi_lcn_dr_t *l;

			d->delivery_seen |= dr->i_tag == 0x5a;
			if (dr->i_tag != 0x83 || !(l = dvbpsi_DecodeLCNDr(dr)))
				continue;
			for (int i = 0; i < l->i_number_of_entries && i < 8;
			     i++) {
				d->lcn[d->nlcn][0] =
				    l->p_entries[i].i_service_id;
				d->lcn[d->nlcn++][1] =
				    l->p_entries[i].i_logical_channel_number;
			}
		}
	dvbpsi_nit_delete(nit);
}

static void on_tdt(void *arg, dvbpsi_tot_t *tot)
{
	((struct decoded *)arg)->tdt_seen = true;
	dvbpsi_tot_delete(tot);
}

static void on_subtable(dvbpsi_t *h, uint8_t table, uint16_t ext, void *arg)
{
	if (table == 0x42)
		dvbpsi_sdt_attach(h, table, ext, on_sdt, arg);
	else if (table == 0x40)
		dvbpsi_nit_attach(h, table, ext, on_nit, arg);
	else if (table == 0x70)
		dvbpsi_tot_attach(h, table, ext, on_tdt, arg);
}

static void decode(struct decoded *d, uint8_t *ts, size_t n)
{
	memset(d, 0, sizeof(*d));
	d->pat = dvbpsi_new(NULL, DVBPSI_MSG_NONE);
	dvbpsi_pat_attach(d->pat, on_pat, d);
	for (int i = 0; i < 2; i++) {
		d->sdt_nit[i] = dvbpsi_new(NULL, DVBPSI_MSG_NONE);
		dvbpsi_AttachDemux(d->sdt_nit[i], on_subtable, d);
	}
	d->tdt = dvbpsi_new(NULL, DVBPSI_MSG_NONE);
	dvbpsi_AttachDemux(d->tdt, on_subtable, d);
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = ts + i * TS_PACKET;
		uint16_t pid = ts_pid(p);

		if (pid == TS_PID_PAT)
			dvbpsi_packet_push(d->pat, p);
		else if (pid == TS_PID_SDT)
			dvbpsi_packet_push(d->sdt_nit[0], p);
		else if (pid == TS_PID_NIT)
			dvbpsi_packet_push(d->sdt_nit[1], p);
		else if (pid == TS_PID_TDT)
			dvbpsi_packet_push(d->tdt, p);
		for (int k = 0; k < d->npmt; k++)
			if (pid == d->pmt_pid[k])
				dvbpsi_packet_push(d->pmt[k], p);
	}
}

static void decoded_free(struct decoded *d)
{
	dvbpsi_pat_detach(d->pat);
	dvbpsi_delete(d->pat);
	for (int i = 0; i < 2; i++) {
		dvbpsi_DetachDemux(d->sdt_nit[i]);
		dvbpsi_delete(d->sdt_nit[i]);
	}
	dvbpsi_DetachDemux(d->tdt);
	dvbpsi_delete(d->tdt);
	for (int i = 0; i < d->npmt; i++) {
		dvbpsi_pmt_detach(d->pmt[i]);
		dvbpsi_delete(d->pmt[i]);
	}
}

/* ---- the stream ---- */

#define SECONDS 6

static uint8_t *make_stream(struct sim_rf_env *env, double margin, size_t *n,
			    struct ts_mux_stats *st)
{
	struct ts_mux *mux = ts_mux_new(env, 0, NULL, 7);
	uint8_t *ts;

	*n = (size_t)(ts_mux_bitrate(mux) / 1504.0 * SECONDS);
	ts = malloc(*n * TS_PACKET);
	ts_mux_set_margin(mux, margin);
	/* in pieces, as the box paces it */
	for (size_t at = 0; at < *n; at += 80)
		ts_mux_generate(mux, ts + at * TS_PACKET,
				*n - at < 80 ? *n - at : 80, 1700000000);
	ts_mux_get_stats(mux, st);
	ts_mux_free(mux);
	return ts;
}

static void test_tables(struct sim_rf_env *env, uint8_t *ts, size_t n)
{
	struct decoded d;

	decode(&d, ts, n);
	CHECK_EQ_INT(d.pat_programs, 4); /* NIT + 3 services */
	CHECK_EQ_INT(d.npmt, 3);
	CHECK_EQ_INT(d.pmt_es[0], 2);
	CHECK_EQ_INT(d.pmt_pcr[0], 1024);
	CHECK_EQ_INT(d.pmt_es[2], 1); /* radio: audio only */
	CHECK_EQ_INT(d.pmt_pcr[2], 1057);
	CHECK_EQ_INT(d.nnames, 3);
	for (int i = 0; i < 3; i++)
		CHECK(!strcmp(d.names[i], env->services[i].name));
	CHECK_EQ_INT(d.nlcn, 3);
	CHECK_EQ_INT(d.lcn[2][0], 6720);
	CHECK_EQ_INT(d.lcn[2][1], 700);
	CHECK(d.delivery_seen);
	CHECK(d.tdt_seen);
	decoded_free(&d);
}

/* PCRs on 1024: at most 40 ms apart, and true to the packet clock. */
static void test_pcr_and_rate(uint32_t bitrate, uint8_t *ts, size_t n)
{
	uint64_t first = 0, last = 0, max_gap = 0;
	size_t first_at = 0, last_at = 0, count = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t *p = ts + i * TS_PACKET;

		if (ts_pid(p) != 1024 || !ts_has_pcr(p))
			continue;
		uint64_t pcr = ts_get_pcr(p);

		if (count++) {
			if (pcr - last > max_gap)
				max_gap = pcr - last;
		} else {
			first = pcr;
			first_at = i;
		}
		last = pcr;
		last_at = i;
	}
	CHECK(count > SECONDS * 25);
	CHECK(max_gap <= 40 * 27000);
	/* bytes between the first and the last PCR over their time */
	double rate = (double)(last_at - first_at) * 1504.0 * 27e6 /
		      (double)(last - first);
	CHECK(fabs(rate - bitrate) < bitrate * 1e-4);
}

static void test_pes(uint8_t *ts, size_t n)
{
	int video_pts_dts = 0, audio_pts = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t *p = ts + i * TS_PACKET;
		int off = ts_payload_offset(p);

		if (off < 0 || !ts_payload_start(p) || p[off] || p[off + 1] ||
		    p[off + 2] != 1)
			continue;
		if (p[off + 3] == 0xe0 && (p[off + 7] & 0xc0) == 0xc0)
			video_pts_dts++;
		if (p[off + 3] == 0xc0 && (p[off + 7] & 0x80))
			audio_pts++;
	}
	CHECK(video_pts_dts >= SECONDS * 25 * 2 - 2); /* 2 TV services */
	CHECK(audio_pts >= SECONDS * 40 * 3 - 3);
}

/* Continuity gaps and TEI marks a receiver would count. */
static void count_errors(uint8_t *ts, size_t n, int *cc_gaps, int *tei)
{
	static int last[8192];

	*cc_gaps = *tei = 0;
	for (int i = 0; i < 8192; i++)
		last[i] = -1;
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = ts + i * TS_PACKET;
		uint16_t pid = ts_pid(p);

		if (p[1] & 0x80) {
			(*tei)++;
			continue;
		}
		if (pid == TS_PID_NULL || !ts_has_payload(p))
			continue;
		if (last[pid] >= 0 && ts_cc(p) != ((last[pid] + 1) & 15))
			(*cc_gaps)++;
		last[pid] = ts_cc(p);
	}
}

static void test_errors(struct sim_rf_env *env)
{
	struct ts_mux_stats st;
	int gaps, tei;
	size_t n;
	uint8_t *ts = make_stream(env, 12.0, &n, &st);

	count_errors(ts, n, &gaps, &tei);
	CHECK_EQ_INT(gaps, 0);
	CHECK_EQ_INT(tei, 0);
	CHECK_EQ_INT(st.cc_errors + st.tei_packets, 0);
	free(ts);
	ts = make_stream(env, 1.0, &n, &st);
	count_errors(ts, n, &gaps, &tei);
	CHECK(st.cc_errors > 0 && st.tei_packets > 0);
	CHECK(gaps > 0 && tei > 0);
	/* a receiver drops TEI-marked packets: a gap each too */
	CHECK(gaps <= (int)(st.cc_errors + st.tei_packets));
	CHECK_EQ_INT(tei, st.tei_packets);
	free(ts);
}

static void test_shipped(const char *path)
{
	char err[256] = "";
	struct sim_rf_env *env = sim_rf_env_load(path, err, sizeof(err));
	size_t tv = 0;

	CHECK(env != NULL);
	if (!env) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK(env->nservices >= 30);
	for (size_t i = 0; i < env->nservices; i++)
		tv += !strcmp(env->services[i].name, "BBC ONE Lon") ||
		      !strcmp(env->services[i].name, "ITV1") ||
		      !strcmp(env->services[i].name, "Channel 4");
	CHECK_EQ_INT(tv, 3);
	for (size_t i = 0; i < env->count; i++) {
		struct ts_mux *m = ts_mux_new(env, (int)i, NULL, 1);

		CHECK((m != NULL) == env->carriers[i].digital);
		ts_mux_free(m);
	}
	sim_rf_env_free(env);
}

int main(int argc, char **argv)
{
	char err[256];
	struct sim_rf_env *env = sim_rf_env_parse(env_text, err, sizeof(err));
	struct ts_mux_stats st;
	uint8_t *ts;
	size_t n;

	test_parse();
	if (env) {
		ts = make_stream(env, 12.0, &n, &st);
		CHECK(st.null_packets > n / 2); /* empty PES: mostly padding */
		test_tables(env, ts, n);
		test_pcr_and_rate(env->carriers[0].mux.bitrate, ts, n);
		test_pes(ts, n);
		free(ts);
		test_errors(env);
	}
	sim_rf_env_free(env);
	if (argc > 1)
		test_shipped(argv[1]);
	return check_done("test_ts_mux");
}

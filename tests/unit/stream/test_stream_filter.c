// SPDX-License-Identifier: MIT
/*
 * The stream filters (server/stream/stream_filter.c): query values, PID
 * sets and the service filter with its rewritten PAT.  The input tables
 * are generated with libdvbpsi and the output PAT is parsed back with
 * libdvbv5, so neither side checks itself.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <dvbpsi/descriptor.h>
#include <dvbpsi/dvbpsi.h>
#include <dvbpsi/pat.h>
#include <dvbpsi/pmt.h>
#include <dvbpsi/psi.h>
#include <libdvbv5/crc32.h>
#include <libdvbv5/dvb-fe.h>
#include <libdvbv5/pat.h>

#include "check.h"
#include "stream_filter.h"

static uint8_t cc_of[TS_PID_COUNT];

/* One packet holding section s (pointer_field 0), or any payload. */
static void packet(uint8_t *p, unsigned int pid, const uint8_t *sec, size_t len)
{
	memset(p, 0xFF, 188);
	p[0] = 0x47;
	p[1] = (uint8_t)((sec ? 0x40 : 0) | pid >> 8);
	p[2] = (uint8_t)pid;
	p[3] = (uint8_t)(0x10 | cc_of[pid]);
	cc_of[pid] = (cc_of[pid] + 1) & 0x0F;
	if (sec) {
		p[4] = 0;
		memcpy(p + 5, sec, len);
	}
}

static void pat_packet(dvbpsi_t *psi, uint8_t *p, uint16_t pmt1, uint16_t pmt2)
{
	dvbpsi_pat_t pat;
	dvbpsi_psi_section_t *s;

	dvbpsi_pat_init(&pat, 0x1234, 3, true);
	dvbpsi_pat_program_add(&pat, 0x101, pmt1);
	dvbpsi_pat_program_add(&pat, 0x102, pmt2);
	s = dvbpsi_pat_sections_generate(psi, &pat, 253);
	packet(p, 0, s->p_data, 3u + s->i_length);
	dvbpsi_DeletePSISections(s);
	dvbpsi_pat_empty(&pat);
}

static void pmt_packet(dvbpsi_t *psi, uint8_t *p, uint16_t sid, uint16_t pid,
		       uint16_t pcr, uint16_t es1, uint16_t es2)
{
	dvbpsi_pmt_t pmt;
	dvbpsi_psi_section_t *s;

	dvbpsi_pmt_init(&pmt, sid, 1, true, pcr);
	dvbpsi_pmt_es_add(&pmt, 0x02, es1);
	dvbpsi_pmt_es_add(&pmt, 0x04, es2);
	s = dvbpsi_pmt_sections_generate(psi, &pmt);
	packet(p, pid, s->p_data, 3u + s->i_length);
	dvbpsi_DeletePSISections(s);
	dvbpsi_pmt_empty(&pmt);
}

static void test_parse(void)
{
	struct stream_filter_spec s;
	const char *why = NULL;
	static const char *const bad_pids[] = {
	    "", "8192", "1,", ",1", "a", "1,,2", "-1", " 1", "1;2", "0x2000"};
	char many[400] = "0";

	CHECK_EQ_INT(stream_filter_parse_pids(&s, "0,16,17,0x100", &why), 0);
	CHECK_EQ_INT(s.mode, STREAM_FILTER_PIDS);
	CHECK_EQ_INT(s.npids, 4);
	CHECK_EQ_INT(s.pids[3], 256);
	for (size_t i = 0; i < sizeof(bad_pids) / sizeof(*bad_pids); i++) {
		why = NULL;
		CHECK(stream_filter_parse_pids(&s, bad_pids[i], &why) < 0);
		CHECK(why != NULL);
	}
	for (int i = 1; i < STREAM_FILTER_PIDS_MAX; i++)
		strcat(many, ",1");
	CHECK_EQ_INT(stream_filter_parse_pids(&s, many, &why), 0);
	strcat(many, ",1");
	CHECK(stream_filter_parse_pids(&s, many, &why) < 0);
	CHECK_EQ_INT(stream_filter_parse_service(&s, "65535", &why), 0);
	CHECK_EQ_INT(s.service, 65535);
	CHECK_EQ_INT(s.mode, STREAM_FILTER_SERVICE);
	CHECK(stream_filter_parse_service(&s, "0", &why) < 0);
	CHECK(stream_filter_parse_service(&s, "65536", &why) < 0);
	CHECK(stream_filter_parse_service(&s, "1x", &why) < 0);
	CHECK(stream_filter_parse_service(&s, "", &why) < 0);
}

static void test_pids(void)
{
	struct stream_filter_spec s;
	struct stream_filter *f;
	const char *why;
	uint8_t p[188];

	stream_filter_parse_pids(&s, "0,17,512", &why);
	f = stream_filter_new(&s, NULL);
	CHECK(f != NULL);
	for (unsigned int pid = 0; pid < TS_PID_COUNT; pid++) {
		packet(p, pid, NULL, 0);
		CHECK_EQ_INT(stream_filter_packet(f, p) == p,
			     pid == 0 || pid == 17 || pid == 512);
	}
	stream_filter_free(f);
}

/* The rewritten PAT in out: one program (sid -> pmt), valid, ts id kept;
 * returns its continuity counter. */
static int check_pat(struct dvb_v5_fe_parms *parms, const uint8_t *out,
		     uint16_t sid, uint16_t pmt)
{
	size_t len = 3u + (((size_t)out[6] & 0x0F) << 8 | out[7]);
	struct dvb_table_pat *pat = NULL;
	int n = 0;

	CHECK_EQ_INT(out[0], 0x47);
	CHECK_EQ_INT(out[1], 0x40);
	CHECK_EQ_INT(out[2], 0);
	CHECK_EQ_INT(dvb_crc32((uint8_t *)out + 5, len, 0xFFFFFFFF), 0);
	CHECK(dvb_table_pat_init(parms, out + 5, (ssize_t)len, &pat) > 0);
	if (!pat)
		return -1;
	CHECK_EQ_INT(pat->header.id, 0x1234);
	dvb_pat_program_foreach(prog, pat)
	{
		n++;
		CHECK_EQ_INT(prog->service_id, sid);
		CHECK_EQ_INT(prog->pid, pmt);
	}
	CHECK_EQ_INT(n, 1);
	dvb_table_pat_free(pat);
	return out[3] & 0x0F;
}

static void test_service(struct dvb_v5_fe_parms *parms, dvbpsi_t *psi)
{
	struct stream_filter_spec s;
	struct stream_filter *f;
	const uint8_t *out;
	const char *why;
	uint8_t p[188];

	stream_filter_parse_service(&s, "258", &why);
	f = stream_filter_new(&s, parms);
	CHECK(f != NULL);
	/* Before the PAT and PMT: nothing, not even the service's PIDs. */
	packet(p, 0x210, NULL, 0);
	CHECK(stream_filter_packet(f, p) == NULL);
	pat_packet(psi, p, 0x100, 0x110);
	CHECK(stream_filter_packet(f, p) == NULL);
	CHECK_EQ_INT(stream_filter_pmt_pid(f), 0x110);
	/* The other service's PMT is no concern. */
	pmt_packet(psi, p, 0x101, 0x100, 0x200, 0x200, 0x201);
	CHECK(stream_filter_packet(f, p) == NULL);
	pmt_packet(psi, p, 0x102, 0x110, 0x212, 0x210, 0x211);
	CHECK(stream_filter_packet(f, p) == p);
	for (unsigned int pid = 1; pid < TS_PID_COUNT; pid++) {
		packet(p, pid, NULL, 0);
		CHECK_EQ_INT(stream_filter_packet(f, p) == p,
			     pid == 0x110 || pid == 0x210 || pid == 0x211 ||
				 pid == 0x212);
	}
	for (int i = 0; i < 20; i++) {
		pat_packet(psi, p, 0x100, 0x110);
		out = stream_filter_packet(f, p);
		CHECK(out != NULL && out != p);
		if (out)
			CHECK_EQ_INT(check_pat(parms, out, 0x102, 0x110),
				     i & 0x0F);
	}
	/* A PAT whose CRC is broken changes nothing. */
	pat_packet(psi, p, 0x100, 0x120);
	p[20] ^= 0x01;
	stream_filter_packet(f, p);
	CHECK_EQ_INT(stream_filter_pmt_pid(f), 0x110);
	/* The service moves its PMT: its PIDs are learnt again. */
	pat_packet(psi, p, 0x100, 0x120);
	CHECK(stream_filter_packet(f, p) == NULL);
	CHECK_EQ_INT(stream_filter_pmt_pid(f), 0x120);
	packet(p, 0x210, NULL, 0);
	CHECK(stream_filter_packet(f, p) == NULL);
	pmt_packet(psi, p, 0x102, 0x120, 0x213, 0x214, 0x215);
	CHECK(stream_filter_packet(f, p) == p);
	packet(p, 0x213, NULL, 0);
	CHECK(stream_filter_packet(f, p) == p);
	packet(p, 0x210, NULL, 0);
	CHECK(stream_filter_packet(f, p) == NULL);
	stream_filter_free(f);
}

int main(void)
{
	struct dvb_v5_fe_parms *parms = dvb_fe_dummy();
	dvbpsi_t *psi = dvbpsi_new(NULL, DVBPSI_MSG_NONE);

	test_parse();
	test_pids();
	test_service(parms, psi);
	dvbpsi_delete(psi);
	dvb_fe_close(parms);
	return check_done("test_stream_filter");
}

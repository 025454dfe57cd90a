// SPDX-License-Identifier: MIT
/*
 * The HDHomeRun face's channel values and status line
 * (server/hdhr/hdhr_channel.c): every modulation form, channel-map
 * numbers through libhdhomerun's tables, bad values, and the documented
 * ss/snq/seq mapping at its ends and in between.
 */
#include <string.h>

#include "check.h"
#include "hdhr_priv.h"

static void test_channel_values(void)
{
	struct tstub_params p;
	const char *why;

	CHECK_EQ_INT(
	    hdhr_channel_params("auto:490000000", "eu-bcast", &p, &why), 0);
	CHECK_EQ_INT(p.delsys, TSTUB_DELSYS_DVBT);
	CHECK_EQ_INT(p.bandwidth, 8000000);
	CHECK_EQ_INT(p.frequency, 490000000);
	CHECK_EQ_INT(hdhr_channel_params("auto:226500", "eu-bcast", &p, &why),
		     0); /* kHz, band III: 7 MHz */
	CHECK_EQ_INT(p.frequency, 226500000);
	CHECK_EQ_INT(p.bandwidth, 7000000);
	CHECK_EQ_INT(
	    hdhr_channel_params("auto:346000000", "eu-cable", &p, &why), 0);
	CHECK_EQ_INT(p.delsys, TSTUB_DELSYS_DVBC_A);
	CHECK_EQ_INT(p.symbol_rate, 6900000);
	CHECK_EQ_INT(
	    hdhr_channel_params("auto:473000000", "us-bcast", &p, &why), 0);
	CHECK_EQ_INT(p.delsys, TSTUB_DELSYS_ATSC);
	CHECK_EQ_INT(
	    hdhr_channel_params("t7bw7:177500000", "eu-bcast", &p, &why), 0);
	CHECK_EQ_INT(p.bandwidth, 7000000);
	CHECK_EQ_INT(
	    hdhr_channel_params("t8dvbt2:545833333", "eu-bcast", &p, &why), 0);
	CHECK_EQ_INT(p.delsys, TSTUB_DELSYS_DVBT2);
	CHECK_EQ_INT(hdhr_channel_params("a8qam256-6875:346000000", "eu-cable",
					 &p, &why),
		     0);
	CHECK_EQ_INT(p.symbol_rate, 6875000);
	CHECK_EQ_INT(hdhr_channel_params("23", "eu-bcast", &p, &why), 0);
	CHECK_EQ_INT(p.frequency, 490000000);
	CHECK_EQ_INT(p.delsys, TSTUB_DELSYS_DVBT);
	static const char *const bad[] = {"",
					  "auto:",
					  "auto:12x",
					  "zz:490000000",
					  "9999",
					  "23x",
					  "t8:99999999999",
					  "averyveryverylongmodulationname:1",
					  NULL};
	for (int i = 0; bad[i]; i++) {
		why = NULL;
		CHECK(hdhr_channel_params(bad[i], "eu-bcast", &p, &why) ==
		      -EINVAL);
		CHECK(why && !strncmp(why, "ERROR:", 6));
	}
}

static void test_status_line(void)
{
	struct tstub_params p = {.delsys = TSTUB_DELSYS_DVBT,
				 .bandwidth = 8000000};
	struct tstub_status st = {
	    .valid =
		TSTUB_ST_FE_STATUS | TSTUB_ST_STRENGTH_DBM | TSTUB_ST_CNR_DB,
	    .fe_status = TSTUB_FE_HAS_SIGNAL | TSTUB_FE_HAS_LOCK,
	    .strength_mdbm = -52500,
	    .cnr_mdb = 28500};
	char line[200];

	hdhr_status_line(&st, &p, "auto:490000000", 24000000, line,
			 sizeof(line));
	CHECK(!strcmp(line, "ch=auto:490000000 lock=t8dvbt ss=67 snq=95 "
			    "seq=100 bps=24000000 pps=15957"));
	st.strength_mdbm = -120000; /* clamped */
	st.cnr_mdb = 45000;
	st.fe_status = TSTUB_FE_HAS_SIGNAL;
	hdhr_status_line(&st, &p, "auto:490000000", 0, line, sizeof(line));
	CHECK(!strcmp(line, "ch=auto:490000000 lock=none ss=0 snq=100 seq=0 "
			    "bps=0 pps=0"));
	st.valid = TSTUB_ST_STRENGTH_REL | TSTUB_ST_CNR_REL;
	st.strength_rel = 65535;
	st.cnr_rel = 32768;
	hdhr_status_line(&st, &p, "auto:490000000", 0, line, sizeof(line));
	CHECK(strstr(line, "ss=100 snq=50 ") != NULL);
	hdhr_status_line(NULL, NULL, "none", 0, line, sizeof(line));
	CHECK(!strcmp(line, "ch=none lock=none ss=0 snq=0 seq=0 bps=0 pps=0"));
}

int main(void)
{
	test_channel_values();
	test_status_line();
	return check_done("test_hdhr_channel");
}

// SPDX-License-Identifier: MIT
/* tuner.status with economy: which changes pass the deadband, and the
 * status sampler reading at its consumers' shortest interval (the
 * history's 1 s whether or not tuner.status is wanted). */
#include <string.h>

#include "check.h"
#include "daemon.h"
#include "log.h"
#include "loop.h"
#include "status_deadband.h"
#include "status_sampler.h"

static struct tstub_status steady(void)
{
	struct tstub_status st;

	memset(&st, 0, sizeof(st));
	st.valid = TSTUB_ST_FE_STATUS | TSTUB_ST_STRENGTH_DBM |
		   TSTUB_ST_CNR_DB | TSTUB_ST_AFC;
	st.fe_status = TSTUB_FE_HAS_LOCK | TSTUB_FE_HAS_SIGNAL;
	st.strength_mdbm = -50000;
	st.cnr_mdb = 30000;
	st.afc_hz = 0;
	st.frequency = 474000000;
	st.bandwidth = 8000000;
	return st;
}

static void test_deadband(void)
{
	struct tstub_status last = steady(), st = steady();

	CHECK(!status_deadband_moved(&st, &last));
	st.strength_mdbm = -50999; /* under 1 dB */
	st.cnr_mdb = 30999;        /* under 1 dB */
	st.afc_hz = 9999;
	CHECK(!status_deadband_moved(&st, &last));
	st.strength_mdbm = -51000;
	CHECK(status_deadband_moved(&st, &last));
	st = steady();
	st.cnr_mdb = 29000;
	CHECK(status_deadband_moved(&st, &last));
	st = steady();
	st.afc_hz = -10000;
	CHECK(status_deadband_moved(&st, &last));
	st = steady();
	st.fe_status = TSTUB_FE_HAS_SIGNAL; /* lock lost: always */
	CHECK(status_deadband_moved(&st, &last));
	st = steady();
	st.valid &= ~TSTUB_ST_CNR_DB; /* a measure gone: always */
	CHECK(status_deadband_moved(&st, &last));
	st = steady();
	st.frequency += 1; /* another channel: always */
	CHECK(status_deadband_moved(&st, &last));
	/* a value that is not valid does not count */
	last.valid = st.valid = TSTUB_ST_FE_STATUS;
	st.strength_mdbm = 0;
	st.frequency = last.frequency;
	CHECK(!status_deadband_moved(&st, &last));
}

static void on_read(uint32_t tuner, int64_t time_ms,
		    const struct tstub_status *st, uint64_t changed_at_ms,
		    void *arg)
{
	(void)tuner;
	(void)time_ms;
	(void)st;
	(void)changed_at_ms;
	(void)arg;
}

static void test_sampler_intervals(void)
{
	struct daemon d;
	struct status_sampler *s;
	long history, status;

	memset(&d, 0, sizeof(d));
	d.loop = loop_new();
	s = status_sampler_new(&d);
	CHECK(s != NULL);
	if (!s || !d.loop)
		return;
	CHECK_EQ_INT(status_sampler_interval_ms(s), 0); /* nobody asks */
	history = status_sampler_want(s, 1000, on_read, NULL, NULL);
	CHECK(history > 0);
	CHECK_EQ_INT(status_sampler_interval_ms(s), 1000);
	/* a subscriber's faster tuner.status: reads at its interval */
	status = status_sampler_want(s, 100, on_read, NULL, NULL);
	CHECK_EQ_INT(status_sampler_interval_ms(s), 100);
	status_sampler_unwant(s, status);
	CHECK_EQ_INT(status_sampler_interval_ms(s), 1000);
	/* a slower one changes nothing */
	status = status_sampler_want(s, 5000, on_read, NULL, NULL);
	CHECK_EQ_INT(status_sampler_interval_ms(s), 1000);
	status_sampler_unwant(s, history);
	CHECK_EQ_INT(status_sampler_interval_ms(s), 5000);
	status_sampler_unwant(s, status);
	CHECK_EQ_INT(status_sampler_interval_ms(s), 0);
	CHECK(status_sampler_want(s, 0, on_read, NULL, NULL) < 0);
	status_sampler_free(s);
	loop_free(d.loop);
}

int main(void)
{
	test_deadband();
	test_sampler_intervals();
	return check_done("test_status_deadband");
}

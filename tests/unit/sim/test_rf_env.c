// SPDX-License-Identifier: MIT
/*
 * test_rf_env - the RF environment file parser, what a receiver measures,
 * and the shipped environment file (its path is argv[1]).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rf_env.h"
#include "tstub_codec.h"

static const char good_text[] =
    "# a comment line\n"
    "\n"
    "DVBT   490000000 8000000 -52.5 28.5 \"PSB1 BBC A # not a comment\"\n"
    "  dvbt2 545833333 8000000 -53 29.5 PSB3 bare label # comment\r\n"
    "RADIO  88800000 200000 -48 38\n"
    "ANALOG_TV 583250000 8000000 -61.0 42.0 \"\" # empty label\n"
    "DVBC_ANNEX_A 1000000 1000 -150 -50\n"
    "DVBS2 3000000000 100000000 30 100";

static void test_good_file(void)
{
	char err[256] = "";
	struct sim_rf_env *env = sim_rf_env_parse(good_text, err, sizeof(err));

	CHECK(env != NULL);
	if (!env) {
		fprintf(stderr, "parse error: %s\n", err);
		return;
	}
	CHECK_EQ_INT(env->count, 6);
	CHECK_EQ_INT(env->carriers[0].delsys, TSTUB_DELSYS_DVBT);
	CHECK_EQ_INT(env->carriers[0].frequency, 490000000);
	CHECK_EQ_INT(env->carriers[0].bandwidth, 8000000);
	CHECK(env->carriers[0].level_dbm == -52.5);
	CHECK(env->carriers[0].cnr_db == 28.5);
	CHECK(strcmp(env->carriers[0].label, "PSB1 BBC A # not a comment") ==
	      0);
	CHECK_EQ_INT(env->carriers[1].delsys, TSTUB_DELSYS_DVBT2);
	CHECK(strcmp(env->carriers[1].label, "PSB3 bare label") == 0);
	CHECK_EQ_INT(env->carriers[2].delsys, TSTUB_DELSYS_RADIO);
	CHECK(env->carriers[2].label[0] == '\0');
	CHECK_EQ_INT(env->carriers[3].delsys, TSTUB_DELSYS_ANALOG_TV);
	CHECK(env->carriers[3].label[0] == '\0');
	CHECK_EQ_INT(env->carriers[4].frequency, 1000000);
	CHECK_EQ_INT(env->carriers[5].frequency, 3000000000u);
	sim_rf_env_free(env);
}

/* Parse text that must fail, expecting "<text>:line: ..." with want. */
static void expect_error(const char *text, unsigned int line, const char *want)
{
	char err[256] = "";
	char prefix[32];
	struct sim_rf_env *env = sim_rf_env_parse(text, err, sizeof(err));

	snprintf(prefix, sizeof(prefix), "<text>:%u: ", line);
	CHECK(env == NULL);
	CHECK(strncmp(err, prefix, strlen(prefix)) == 0);
	CHECK(strstr(err, want) != NULL);
	if (env || strncmp(err, prefix, strlen(prefix)) || !strstr(err, want))
		fprintf(stderr, "  got '%s', wanted '%s...%s'\n", err, prefix,
			want);
	sim_rf_env_free(env);
}

static void test_errors(void)
{
	const char *ok = "DVBT 490000000 8000000 -50 25 ok\n# comment\n";
	char text[512];

	snprintf(text, sizeof(text), "%sDVBX 1000000 8000000 -50 25\n", ok);
	expect_error(text, 3, "unknown system 'DVBX'");
	snprintf(text, sizeof(text), "%sNONE 490000000 8000000 -50 25\n", ok);
	expect_error(text, 3, "unknown system");
	snprintf(text, sizeof(text), "%sDVBT 49x000000 8000000 -50 25\n", ok);
	expect_error(text, 3, "bad number '49x000000' for frequency");
	snprintf(text, sizeof(text), "%sDVBT -490000000 8000000 -50 25\n", ok);
	expect_error(text, 3, "bad number");
	snprintf(text, sizeof(text), "%sDVBT 490000000 8000000 loud 25\n", ok);
	expect_error(text, 3, "bad number 'loud' for level");
	snprintf(text, sizeof(text), "%sDVBT 490000000 8000000 -50 2.5.1\n",
		 ok);
	expect_error(text, 3, "bad number '2.5.1' for CNR");
	snprintf(text, sizeof(text), "%sDVBT 999999 8000000 -50 25\n", ok);
	expect_error(text, 3, "frequency 999999 Hz out of range");
	snprintf(text, sizeof(text), "%sDVBT 3000000001 8000000 -50 25\n", ok);
	expect_error(text, 3, "out of range");
	snprintf(text, sizeof(text), "%sDVBT 99999999999 8000000 -50 25\n", ok);
	expect_error(text, 3, "bad number");
	snprintf(text, sizeof(text), "%sDVBT 490000000 0 -50 25\n", ok);
	expect_error(text, 3, "bandwidth");
	snprintf(text, sizeof(text), "%sDVBT 490000000 8000000 -50\n", ok);
	expect_error(text, 3, "missing CNR");
	snprintf(text, sizeof(text), "%sDVBT 490000000 # cut short\n", ok);
	expect_error(text, 3, "missing bandwidth");
	snprintf(text, sizeof(text), "%sDVBT 490000000 8000000 -50 25 \"%s\"\n",
		 ok, "0123456789012345678901234567890123456789012345678");
	expect_error(text, 3, "label longer than 47");
	snprintf(text, sizeof(text), "%sDVBT 490000000 8000000 -50 25 \"open\n",
		 ok);
	expect_error(text, 3, "unterminated");
	snprintf(text, sizeof(text),
		 "%sDVBT 490000000 8000000 -50 25 \"a\" b\n", ok);
	expect_error(text, 3, "text after quoted label");

	/* A label of exactly 47 characters fits. */
	snprintf(text, sizeof(text), "DVBT 490000000 8000000 -50 25 %s\n",
		 "01234567890123456789012345678901234567890123456");
	{
		char err[128];
		struct sim_rf_env *env =
		    sim_rf_env_parse(text, err, sizeof(err));

		CHECK(env && strlen(env->carriers[0].label) == 47);
		sim_rf_env_free(env);
	}
}

static void test_too_many(void)
{
	char *many;
	size_t pos = 0;

	many = malloc((SIM_RF_MAX_CARRIERS + 1) * 48);
	if (!many)
		return;
	for (int i = 0; i <= SIM_RF_MAX_CARRIERS; i++)
		pos += (size_t)sprintf(many + pos, "RADIO %d 200000 -50 30\n",
				       87500000 + i * 100000);
	expect_error(many, SIM_RF_MAX_CARRIERS + 1, "too many carriers");
	free(many);
}

static void test_load_errors(void)
{
	char path[] = "/tmp/test_rf_env_XXXXXX";
	char err[512] = "";
	struct sim_rf_env *env;
	FILE *f;
	int fd;

	env = sim_rf_env_load("/nonexistent/dir/x.env", err, sizeof(err));
	CHECK(env == NULL);
	CHECK(strstr(err, "/nonexistent/dir/x.env") != NULL);

	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	fputs("RADIO 88800000 200000 -48 38\n\nRADIO 88.8 200000 -48 38\n", f);
	fclose(f);
	env = sim_rf_env_load(path, err, sizeof(err));
	CHECK(env == NULL);
	{
		char want[300];

		snprintf(want, sizeof(want), "%s:3: bad number '88.8'", path);
		CHECK(strncmp(err, want, strlen(want)) == 0);
	}
	unlink(path);
}

static struct sim_rf_env *measure_env(void)
{
	static const char text[] =
	    "DVBT   490000000 8000000 -60 25 dvbt\n"
	    "DVBT2  546000000 8000000 -55 21 t2-above\n"
	    "DVBT2  554000000 8000000 -55 19 t2-below\n"
	    "DVBT   626000000 8000000 -85 10 weak\n"
	    "DVBT   634000000 8000000 -95 30 under-floor\n"
	    "ANALOG_TV 583250000 8000000 -60 40 pal\n"
	    "RADIO  88800000 200000 -50 30 fm\n";
	char err[128];

	return sim_rf_env_parse(text, err, sizeof(err));
}

static uint32_t measure(const struct sim_rf_env *env, uint32_t f, uint32_t bw,
			uint32_t delsys, struct sim_rf_reading *r)
{
	static uint32_t rng = 12345;

	sim_rf_measure(env, f, bw, delsys, &rng, r);
	return r->fe_status;
}

static void test_measure(void)
{
	const uint32_t all = TSTUB_FE_HAS_SIGNAL | TSTUB_FE_HAS_CARRIER |
			     TSTUB_FE_HAS_VITERBI | TSTUB_FE_HAS_SYNC |
			     TSTUB_FE_HAS_LOCK;
	const uint32_t sc = TSTUB_FE_HAS_SIGNAL | TSTUB_FE_HAS_CARRIER;
	struct sim_rf_env *env = measure_env();
	struct sim_rf_reading r;

	CHECK(env != NULL);
	if (!env)
		return;
	CHECK_EQ_INT(measure(env, 490000000, 8000000, TSTUB_DELSYS_DVBT, &r),
		     all);
	CHECK_EQ_INT(r.carrier, 0);
	CHECK_EQ_INT(r.offset_hz, 0);
	CHECK(fabs(r.level_dbm + 60) <= 0.5 && fabs(r.cnr_db - 25) <= 0.5);
	/* Within a quarter of the bandwidth: still locks; AFC is the
	 * tuned minus the carrier centre. */
	CHECK_EQ_INT(measure(env, 491900000, 8000000, TSTUB_DELSYS_DVBT, &r),
		     all);
	CHECK_EQ_INT(r.offset_hz, 1900000);
	CHECK_EQ_INT(measure(env, 487500000, 0, TSTUB_DELSYS_NONE, &r),
		     TSTUB_FE_HAS_SIGNAL);
	CHECK_EQ_INT(r.offset_hz, -2500000);
	CHECK_EQ_INT(measure(env, 490000000, 8000000, TSTUB_DELSYS_NONE, &r),
		     all);
	CHECK_EQ_INT(measure(env, 490000000, 8000000, TSTUB_DELSYS_DVBT2, &r),
		     sc);
	CHECK_EQ_INT(measure(env, 490000000, 7000000, TSTUB_DELSYS_DVBT, &r),
		     sc);
	CHECK_EQ_INT(measure(env, 546000000, 8000000, TSTUB_DELSYS_DVBT2, &r),
		     all);
	CHECK_EQ_INT(measure(env, 554000000, 8000000, TSTUB_DELSYS_DVBT2, &r),
		     sc);
	CHECK_EQ_INT(measure(env, 626000000, 8000000, TSTUB_DELSYS_DVBT, &r),
		     sc);
	CHECK_EQ_INT(measure(env, 634000000, 8000000, TSTUB_DELSYS_DVBT, &r),
		     0);
	CHECK_EQ_INT(r.carrier, 4);
	/* Analog and radio: 100 kHz of tolerance, any filter. */
	CHECK_EQ_INT(
	    measure(env, 583250000, 6000000, TSTUB_DELSYS_ANALOG_TV, &r), all);
	CHECK_EQ_INT(
	    measure(env, 583400000, 8000000, TSTUB_DELSYS_ANALOG_TV, &r),
	    TSTUB_FE_HAS_SIGNAL);
	CHECK_EQ_INT(measure(env, 88850000, 200000, TSTUB_DELSYS_RADIO, &r),
		     all);
	CHECK_EQ_INT(measure(env, 88900000, 200000, TSTUB_DELSYS_RADIO, &r),
		     all);
	/* Nothing there: the noise floor. */
	CHECK_EQ_INT(measure(env, 700000000, 8000000, TSTUB_DELSYS_DVBT, &r),
		     0);
	CHECK_EQ_INT(r.carrier, -1);
	CHECK(r.level_dbm < -100 && r.cnr_db <= 0);
	CHECK_EQ_INT(measure(NULL, 490000000, 8000000, TSTUB_DELSYS_DVBT, &r),
		     0);
	CHECK_EQ_INT(r.carrier, -1);
	sim_rf_env_free(env);
}

static void test_noise(void)
{
	struct sim_rf_env *env = measure_env();
	struct sim_rf_reading r, r2;
	uint32_t rng = 1, rng2 = 1, rng0 = 0;
	double lo = 1e9, hi = -1e9, sum = 0;
	const int n = 20000;

	if (!env)
		return;
	for (int i = 0; i < n; i++) {
		sim_rf_measure(env, 490000000, 8000000, TSTUB_DELSYS_DVBT, &rng,
			       &r);
		lo = fmin(lo, r.level_dbm);
		hi = fmax(hi, r.level_dbm);
		sum += r.level_dbm;
		CHECK(fabs(r.cnr_db - 25.0) <= 0.5);
	}
	CHECK(lo >= -60.5 && hi <= -59.5);
	CHECK(hi - lo > 0.9);
	CHECK(fabs(sum / n + 60.0) < 0.05);
	/* The same state gives the same readings. */
	rng = 99;
	rng2 = 99;
	sim_rf_measure(env, 490000000, 0, 0, &rng, &r);
	sim_rf_measure(env, 490000000, 0, 0, &rng2, &r2);
	CHECK(r.level_dbm == r2.level_dbm && rng == rng2);
	/* A zero state still moves; no state means no noise. */
	sim_rf_measure(env, 490000000, 0, 0, &rng0, &r);
	CHECK(rng0 != 0);
	sim_rf_measure(env, 490000000, 0, 0, NULL, &r);
	CHECK(r.level_dbm == -60.0 && r.cnr_db == 25.0);
	sim_rf_env_free(env);
}

static void test_status(void)
{
	struct sim_rf_reading r = {0};
	struct tstub_status st;

	r.carrier = 0;
	r.level_dbm = -60.0;
	r.cnr_db = 25.25;
	r.offset_hz = -125000;
	r.fe_status = 0x1F;
	sim_rf_status(&r, &st);
	CHECK_EQ_INT(st.valid, TSTUB_ST_FE_STATUS | TSTUB_ST_STRENGTH_DBM |
				   TSTUB_ST_STRENGTH_REL | TSTUB_ST_CNR_DB |
				   TSTUB_ST_AFC);
	CHECK_EQ_INT(st.fe_status, 0x1F);
	CHECK_EQ_INT(st.strength_mdbm, -60000);
	CHECK_EQ_INT(st.cnr_mdb, 25250);
	CHECK_EQ_INT(st.afc_hz, -125000);
	CHECK(st.strength_rel >= 32767 && st.strength_rel <= 32768);
	r.level_dbm = -120.0;
	r.fe_status = 0;
	sim_rf_status(&r, &st);
	CHECK_EQ_INT(st.strength_rel, 0);
	CHECK(!(st.valid & TSTUB_ST_AFC));
	r.level_dbm = -10.0;
	sim_rf_status(&r, &st);
	CHECK_EQ_INT(st.strength_rel, 65535);
	r.level_dbm = -20.0;
	sim_rf_status(&r, &st);
	CHECK_EQ_INT(st.strength_rel, 65535);
	r.level_dbm = -100.0;
	sim_rf_status(&r, &st);
	CHECK_EQ_INT(st.strength_rel, 0);
}

static const struct sim_carrier *find(const struct sim_rf_env *env,
				      uint32_t delsys, uint32_t f)
{
	for (size_t i = 0; i < env->count; i++)
		if (env->carriers[i].delsys == delsys &&
		    env->carriers[i].frequency == f)
			return &env->carriers[i];
	return NULL;
}

static void test_shipped(const char *path)
{
	char err[512] = "";
	struct sim_rf_env *env = sim_rf_env_load(path, err, sizeof(err));
	uint32_t rng = 7;
	int locked = 0, unlocked = 0;

	CHECK(env != NULL);
	if (!env) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK(env->count >= 12);
	CHECK(find(env, TSTUB_DELSYS_DVBT, 490000000) != NULL);
	CHECK(find(env, TSTUB_DELSYS_DVBT, 514000000) != NULL);
	CHECK(find(env, TSTUB_DELSYS_DVBT2, 545833333) != NULL);
	CHECK(find(env, TSTUB_DELSYS_RADIO, 88800000) != NULL);
	CHECK(find(env, TSTUB_DELSYS_RADIO, 100900000) != NULL);
	CHECK(find(env, TSTUB_DELSYS_ANALOG_TV, 583250000) != NULL);
	for (size_t i = 0; i < env->count; i++) {
		const struct sim_carrier *c = &env->carriers[i];
		struct sim_rf_reading r;

		CHECK(c->label[0] != '\0');
		sim_rf_measure(env, c->frequency, c->bandwidth, c->delsys, &rng,
			       &r);
		CHECK_EQ_INT(r.carrier, (int)i);
		if (r.fe_status & TSTUB_FE_HAS_LOCK)
			locked++;
		else
			unlocked++;
	}
	CHECK_EQ_INT(unlocked, 1);
	CHECK_EQ_INT(locked, (int)env->count - 1);
	sim_rf_env_free(env);
}

int main(int argc, char **argv)
{
	test_good_file();
	test_errors();
	test_too_many();
	test_load_errors();
	test_measure();
	test_noise();
	test_status();
	if (argc > 1)
		test_shipped(argv[1]);
	else
		CHECK(!"the shipped environment file's path is argv[1]");
	return check_done("test_rf_env");
}

/* SPDX-License-Identifier: MIT */
/*
 * rf_env.h - the RF environment of the simulated box: the carriers on the
 * antenna, and what a receiver tuned somewhere sees of them.
 *
 * File format, one carrier a line, '#' starts a comment:
 *   <system> <frequency Hz> <bandwidth Hz> <level dBm> <CNR dB> [label]
 * e.g.
 *   DVBT2  490000000  8000000  -52.5  31.0  "PSB1 BBC A"
 * system is a tstub_delsys_name() ("DVBT", "DVBT2", "DVBC_ANNEX_A",
 * "ANALOG_TV", "RADIO", ...).
 */
#ifndef SIM_RF_ENV_H
#define SIM_RF_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "tuner_stub.h"

#define SIM_RF_LABEL_LEN    48
#define SIM_RF_MAX_CARRIERS 512

struct sim_carrier {
	uint32_t delsys;    /* enum tstub_delsys */
	uint32_t frequency; /* Hz, centre */
	uint32_t bandwidth; /* Hz */
	double level_dbm;
	double cnr_db;
	char label[SIM_RF_LABEL_LEN];
};

struct sim_rf_env {
	size_t count;
	struct sim_carrier carriers[SIM_RF_MAX_CARRIERS];
};

/* What a receiver tuned to (frequency, bandwidth, delsys) sees. */
struct sim_rf_reading {
	int carrier;        /* index into carriers, -1: nothing there */
	double level_dbm;   /* with noise; the noise floor when nothing */
	double cnr_db;      /* with noise; <= 0 when nothing */
	int offset_hz;      /* tuned minus carrier centre (AFC) */
	uint32_t fe_status; /* TSTUB_FE_* a demodulator would report */
};

/* Parse a file.  Returns NULL and a message "file:line: reason" in err. */
struct sim_rf_env *sim_rf_env_load(const char *path, char *err, size_t errlen);
/* Parse from memory (same format); used by tests. */
struct sim_rf_env *sim_rf_env_parse(const char *text, char *err, size_t errlen);
void sim_rf_env_free(struct sim_rf_env *env);

/*
 * What a receiver sees.  *rng is a xorshift32 state the caller keeps
 * (noise: about +-0.5 dB).  delsys NONE matches any system.  Lock needs
 * the same system family, an offset within a quarter of the carrier's
 * bandwidth (analog/radio: 100 kHz), and a CNR above the system's
 * threshold (DVB-T 18 dB, DVB-T2 20, DVB-C 24, ATSC 15, analog 25,
 * FM 12 ...).
 */
void sim_rf_measure(const struct sim_rf_env *env, uint32_t frequency,
		    uint32_t bandwidth, uint32_t delsys, uint32_t *rng,
		    struct sim_rf_reading *out);

/* A demodulator's status for a reading, in ABI units. */
void sim_rf_status(const struct sim_rf_reading *r, struct tstub_status *st);

#endif /* SIM_RF_ENV_H */

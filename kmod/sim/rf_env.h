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
 *
 * A digital carrier may be followed by the lines of its multiplex (see
 * rf_mux.c for the syntax and the bitrate rules):
 *   MUX tsid=4164 onid=9018 nid=12339 modulation=QAM64 fec=2/3 guard=1/32
 *       fft=8k [symbol_rate=N] [bitrate=N] [network=NAME]
 *   SERVICE <sid> <lcn> <tv|hd|radio> <pmt pid> <video pid|-> <audio pid>
 *           "name"
 * A digital carrier without a MUX line gets its system's usual parameters.
 */
#ifndef SIM_RF_ENV_H
#define SIM_RF_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tuner_stub.h"

#define SIM_RF_LABEL_LEN    48
#define SIM_RF_MAX_CARRIERS 512
#define SIM_RF_MAX_SERVICES 2048
/* Services of one multiplex: the PAT and the SDT stay one section. */
#define SIM_RF_MUX_MAX_SERVICES 64

enum sim_service_type {
	SIM_SERVICE_TV = 1,    /* DVB service_type 0x01, digital television */
	SIM_SERVICE_RADIO = 2, /* 0x02, digital radio sound */
	SIM_SERVICE_HD = 0x19, /* 0x19, advanced codec HD television */
};

/* What the transport stream of a digital carrier carries. */
struct sim_mux_params {
	uint16_t tsid, onid,
	    nid;      /* transport stream, original network, network */
	uint8_t bits; /* per cell: 2 QPSK, 4 QAM16, 6 QAM64, 8 QAM256 */
	uint8_t fec_num, fec_den; /* inner code rate */
	uint16_t guard_den;       /* guard interval 1/N */
	uint8_t fft_k;            /* FFT size in K: 1, 2, 4, 8, 16, 32 */
	uint32_t symbol_rate;     /* Bd, DVB-C/S */
	uint32_t bitrate;         /* TS bit/s: given, or from the above */
	char network[SIM_RF_LABEL_LEN];
};

struct sim_service {
	uint16_t sid;
	uint16_t lcn; /* logical channel number, 0..1023 */
	uint8_t type; /* enum sim_service_type */
	uint16_t pmt_pid;
	uint16_t video_pid; /* 0: none (radio) */
	uint16_t audio_pid;
	char name[SIM_RF_LABEL_LEN];
};

struct sim_carrier {
	uint32_t delsys;    /* enum tstub_delsys */
	uint32_t frequency; /* Hz, centre */
	uint32_t bandwidth; /* Hz */
	double level_dbm;
	double cnr_db;
	char label[SIM_RF_LABEL_LEN];
	bool digital; /* carries a transport stream */
	struct sim_mux_params mux;
	uint32_t first_service; /* index into the env's services */
	uint32_t nservices;
};

struct sim_rf_env {
	size_t count;
	struct sim_carrier carriers[SIM_RF_MAX_CARRIERS];
	size_t nservices;
	struct sim_service services[SIM_RF_MAX_SERVICES];
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

/* ---- rf_mux.c ---- */
/* The usual parameters of a system's multiplex (and whether it has one). */
bool sim_mux_defaults(uint32_t delsys, struct sim_mux_params *m);
/* The TS bitrate the parameters give (bit/s), 0 if they give none. */
uint32_t sim_mux_bitrate(uint32_t delsys, uint32_t bandwidth,
			 const struct sim_mux_params *m);
/* A MUX line's fields after the keyword, into c->mux.  0 or -EINVAL with
 * the reason in why. */
int sim_mux_parse(char *fields, struct sim_carrier *c, char *why,
		  size_t whylen);
/* A SERVICE line's fields after the keyword, appended to c's services.
 * 0 or -EINVAL with the reason in why. */
int sim_service_parse(char *fields, struct sim_rf_env *env,
		      struct sim_carrier *c, char *why, size_t whylen);

/* The CNR (dB) a demodulator of the system needs to lock. */
double sim_rf_cnr_threshold(uint32_t delsys);

/* A demodulator's status for a reading, in ABI units. */
void sim_rf_status(const struct sim_rf_reading *r, struct tstub_status *st);

#endif /* SIM_RF_ENV_H */

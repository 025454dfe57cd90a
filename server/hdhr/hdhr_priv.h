/* SPDX-License-Identifier: MIT */
/*
 * hdhr_priv.h - the HDHomeRun face's state, shared by its files: the
 * listeners (hdhr_server.c), the control connections (hdhr_control.c),
 * the variables (hdhr_vars.c), the tuners' locks and tunes
 * (hdhr_tuner.c) and stream targets (hdhr_target.c).
 */
#ifndef TUNERD_HDHR_PRIV_H
#define TUNERD_HDHR_PRIV_H

#include <libhdhomerun/hdhomerun.h>
#include <netinet/in.h>
#include <stdint.h>

#include "command.h"
#include "hdhr.h"
#include "lease.h"
#include "stream.h"

struct api_config;
struct hdhr_conn;
struct scan_tables;

/* Control connections at once, and how long one may stay idle. */
#define HDHR_CONNS_MAX    32
#define HDHR_CONN_IDLE_MS 60000
#define HDHR_TUNERS_MAX   64
#define HDHR_VALUE_MAX    1024 /* an answer's value, bytes */
#define HDHR_TARGET_DGRAM (7 * TS_PACKET)
#define HDHR_RTP_HEADER   12
/* How long a tune for a /tunerN/channel set waits for lock before it is
 * answered: not at all, as on a device; clients poll the status for lock
 * (libhdhomerun's wait_for_lock), and a scan's empty channels then cost
 * a tune, not a lock wait. */
#define HDHR_TUNE_WAIT_MS 0
/* How long streaminfo's tables are read after a tune. */
#define HDHR_TABLES_MS 15000

struct hdhr_target {
	int fd;  /* a UDP socket connected to the target */
	int rtp; /* RTP framing (else bare UDP) */
	struct sockaddr_in to;
	struct stream_reader *reader;
	uint16_t rtp_seq;
	uint32_t rtp_ssrc;
	uint64_t datagrams, dropped; /* sent; dropped: the socket was full */
	uint64_t refused_first_ms;   /* ICMP errors since (0: none) */
	uint64_t refused_last_ms;
	uint64_t renewed_ms; /* last keyed request or status poll */
};

/* The tune a connection waits for. */
struct hdhr_conn_tune {
	struct hdhr_tuner *t;
	char channel[64];
};

struct hdhr_tuner {
	struct hdhr *h;
	unsigned int index;
	uint32_t id; /* tunerd's tuner id */
	/* The lock: key, holder and the tunerd lease behind it. */
	uint32_t lockkey; /* 0: none */
	struct in_addr lock_ip;
	char lease_id[LEASE_ID_LEN + 1];
	char channel[64];     /* as set; "none" */
	char channelmap[16];  /* as set */
	char vchannel[16];    /* "none" or the GuideNumber tuned */
	char filter[128];     /* as set; "0x0000-0x1fff" */
	unsigned int program; /* 0: none */
	struct stream_filter_spec spec;
	struct hdhr_target *target; /* NULL: none */
	char target_text[64];
	/* streaminfo: the tables of the multiplex tuned */
	struct stream_reader *tables;
	struct scan_tables *st;
	uint64_t tables_since_ms; /* the reader is closed after
				   * HDHR_TABLES_MS: a mux without NIT
				   * would keep it open */
};

struct hdhr {
	struct daemon *d;
	const struct api_config *cfg; /* the configuration at the start */
	uint32_t device_id;
	int udp_fd, tcp_fd;
	uint64_t timer;
	struct hdhr_conn *conns;
	unsigned int nconns;
	unsigned int ntuners;
	struct hdhr_tuner tuners[HDHR_TUNERS_MAX];
	char model[32];
	int stopping;
};

/* hdhr_server.c */
int hdhr_peer_allowed(const struct hdhr *h, const struct sockaddr_in *peer);
int hdhr_main_port(const struct hdhr *h);

/* hdhr_control.c */
int hdhr_control_accept(struct hdhr *h, int fd);
void hdhr_control_close_all(struct hdhr *h);
/* Answer conn's request (value or error, one NULL), resume reading. */
void hdhr_conn_answer(struct hdhr_conn *c, const char *value,
		      const char *error);
struct command_client *hdhr_conn_client(struct hdhr_conn *c);
/* The tune c waits for (hdhr_tune.c). */
struct hdhr_conn_tune *hdhr_conn_tune(struct hdhr_conn *c);
const struct sockaddr_in *hdhr_conn_peer(const struct hdhr_conn *c);

/*
 * A GETSET request as parsed from its TLVs: value NULL for a get,
 * lockkey 0 when the request carried none.
 */
struct hdhr_req {
	const char *name;
	const char *value;
	uint32_t lockkey;
};

/* hdhr_vars.c: answer req now (hdhr_conn_answer() called) or later. */
void hdhr_vars_getset(struct hdhr *h, struct hdhr_conn *c,
		      const struct hdhr_req *req);

/* hdhr_tuner.c */
void hdhr_tuners_init(struct hdhr *h);
void hdhr_tuners_fini(struct hdhr *h);
/* Every second: locks whose lease ended, targets past their time. */
void hdhr_tuners_tick(struct hdhr *h);
/* 0 when req may change tuner (its lock, a REST lease); else the error
 * text in err.  A request with the right key renews the lease. */
int hdhr_tuner_may_set(struct hdhr_tuner *t, const struct hdhr_req *req,
		       const struct sockaddr_in *peer, char *err, size_t len);
/* A request of peer on t: renews t's lock and target when peer holds
 * them (a client that polls the status keeps its stream). */
void hdhr_tuner_touch(struct hdhr_tuner *t, const struct sockaddr_in *peer);
/* Map HDHomeRun tuner indexes to the tuners attached now. */
void hdhr_tuners_refresh(struct hdhr *h);
void hdhr_tuner_lockkey_get(struct hdhr_tuner *t, char *buf, size_t len);
int hdhr_tuner_lockkey_set(struct hdhr_tuner *t, const struct hdhr_req *req,
			   const struct sockaddr_in *peer, char *err,
			   size_t len);
/* Tune for c (answered later) or answer now. */
void hdhr_tuner_channel_set(struct hdhr_tuner *t, struct hdhr_conn *c,
			    const char *value);
/* Read the tuner's status now and answer c with the status line. */
void hdhr_tuner_status_get(struct hdhr_tuner *t, struct hdhr_conn *c);
void hdhr_tuner_status(struct hdhr_tuner *t, char *buf, size_t len);
/* Stop reading the tables (streaminfo keeps what was read). */
void hdhr_tuner_tables_close(struct hdhr_tuner *t);
void hdhr_tuner_streaminfo(struct hdhr_tuner *t, char *buf, size_t len);
void hdhr_tuner_debug(struct hdhr_tuner *t, char *buf, size_t len);
int hdhr_tuner_filter_set(struct hdhr_tuner *t, const char *value,
			  const char **why);
int hdhr_tuner_program_set(struct hdhr_tuner *t, const char *value,
			   const char **why);

/* hdhr_channel.c: the status line of a tuner tuned to params (NULL:
 * none) and channel, with status st (NULL: none read). */
void hdhr_status_line(const struct tstub_status *st,
		      const struct tstub_params *params, const char *channel,
		      uint64_t bps, char *buf, size_t len);

/* hdhr_target.c */
int hdhr_target_set(struct hdhr_tuner *t, const char *value, const char **why);
void hdhr_target_stop(struct hdhr_tuner *t, const char *why);
/* Open the target's reader again (filter or program changed). */
int hdhr_target_refilter(struct hdhr_tuner *t);
/* Past its time without renewal, or refused too long: stop it. */
void hdhr_target_tick(struct hdhr_tuner *t, uint64_t now_ms);

#endif /* TUNERD_HDHR_PRIV_H */

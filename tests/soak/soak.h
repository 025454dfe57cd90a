/* SPDX-License-Identifier: MIT */
/*
 * tunerd-soak: the load of scripts/soak.sh, all through the daemon's one
 * port.  The parent (soak_main.c) forks one process per kind of client so
 * that each has a core's worth of loop to itself and none starves the
 * others' counting:
 *  - subscriber processes (soak_subs.c): WebSocket event streams on
 *    libwebsockets, each checking its sequence numbers;
 *  - the REST process (soak_rest.c): tunes at a fixed rate over
 *    keep-alive libcurl connections, and lease holders churning;
 *  - the slowloris process (soak_slow.c): request heads trickled a byte
 *    at a time on many connections.
 * Each child answers on a socketpair: one byte when it is ready, then,
 * when the parent says so, its figures as plain structs.
 */
#ifndef TUNERD_SOAK_H
#define TUNERD_SOAK_H

#include <stdint.h>

#define SOAK_TUNERS_MAX   64
#define SOAK_SUBS_MAX     5000
#define SOAK_SUB_PROCS    8
#define SOAK_STATUS_SLOTS 600 /* HTTP status 0..599 */
#define SOAK_CURLE_SLOTS  100 /* CURLcode values */

/* What the parent tells the children on their socketpair. */
#define SOAK_CMD_STOP   'S' /* REST, slowloris: stop and report */
#define SOAK_CMD_FINISH 'F' /* subscribers: + uint64_t last seq, report */
#define SOAK_READY      'R'

struct soak_opts {
	const char *host;        /* the daemon's address */
	int port;                /* the daemon's port */
	int seconds;             /* how long the load runs */
	int subscribers;         /* WebSocket event subscribers */
	int sub_procs;           /* processes they are spread over */
	int rate;                /* tunes per second */
	int tuners;              /* tuners 1..tuners get tunes */
	int rest_conns;          /* keep-alive REST connections */
	int lease_tuners;        /* tuners 1..lease_tuners have lease churn */
	int holders;             /* lease holders per leased tuner */
	int slow_conns;          /* slowloris connections held */
	const char *slow_source; /* their source address (NULL: loopback) */
	int finish_ms;           /* after the load: subscribers short of the end
			  that read nothing for this long are stuck */
};

/* The kinds of REST requests counted apart. */
enum soak_req {
	REQ_TUNE,        /* a tune on a tuner without lease churn */
	REQ_TUNE_LEASED, /* a tune on a churned tuner, carrying the lease */
	REQ_LEASE_TAKE,
	REQ_LEASE_RENEW,
	REQ_LEASE_RELEASE,
	REQ_KINDS
};

struct soak_rest_result {
	uint64_t sent[REQ_KINDS];
	/* answered: by HTTP status */
	uint64_t status[REQ_KINDS][SOAK_STATUS_SLOTS];
	/* lost: no HTTP answer, by libcurl's reason */
	uint64_t lost[REQ_KINDS][SOAK_CURLE_SLOTS];
	uint64_t not_sent_busy; /* due while every connection was busy */
	uint64_t connections;   /* TCP connections libcurl opened */
	uint64_t leases_held;   /* leases taken (201) */
	uint64_t tune_ms_max;   /* slowest answer */
	uint64_t tune_ms_sum;   /* for the mean over answered tunes */
	uint64_t tune_answers;
};

struct soak_slow_result {
	uint64_t opened;        /* connections made */
	uint64_t connect_fail;  /* connect() refused or failed */
	uint64_t closed_silent; /* closed by the daemon without an answer */
	uint64_t refused_503;   /* answered 503 (connection cap) */
	uint64_t answered;      /* any other answer (should not happen) */
	uint64_t bytes;         /* head bytes trickled */
	uint64_t life_ms_max;   /* longest life of an unanswered one */
	uint64_t life_ms_sum;   /* of those closed silently */
};

/* One subscriber's view of the event stream. */
struct soak_sub_result {
	uint64_t first_seq, last_seq; /* 0: none yet */
	uint64_t events;              /* events received (with a seq) */
	uint32_t holes;               /* seq jumps not announced by a gap */
	uint32_t dups;                /* seq not above the last one */
	uint32_t gap_msgs;            /* explicit gap messages */
	uint64_t gap_lost;            /* events they announced as lost */
	uint32_t told_slow;           /* closed after a slow_consumer message */
	uint32_t untold_close;        /* closed without a closed message */
	uint32_t connect_fail;        /* a (re)connection refused */
	uint32_t reconnects;
	uint32_t lag_ms_max;  /* publication -> receipt, sampled events */
	uint32_t lag_at_drop; /* of the last event before a slow_consumer */
	uint8_t open_at_end;
	uint8_t reached_end; /* saw the last seq the parent asked for */
};

/* soak_rest.c, soak_slow.c, soak_subs.c: one child's main loop.  ctl is
 * the child's end of its socketpair; each returns the exit status. */
int soak_rest_main(const struct soak_opts *o, int ctl);
int soak_slow_main(const struct soak_opts *o, int ctl);
int soak_subs_main(const struct soak_opts *o, int ctl, int first, int count,
		   uint64_t since);

/* soak_report.c: the figures, and how many checks failed. */
int soak_report_rest(const struct soak_rest_result *r, int seconds);
void soak_report_slow(const struct soak_slow_result *r, int conns,
		      const char *source);
int soak_report_subs(const struct soak_sub_result *r, int n, uint64_t first,
		     uint64_t last);

/* soak_main.c: helpers the children share. */
uint64_t soak_now_ms(void);
int soak_write_all(int fd, const void *buf, size_t len);
int soak_read_all(int fd, void *buf, size_t len);

#endif

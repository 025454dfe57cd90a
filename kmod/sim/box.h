/* SPDX-License-Identifier: MIT */
/*
 * box.h - the simulated box as a library: the userspace twin of the tuner
 * stub kernel module.  It serves protocol/ABI.md on an AF_UNIX
 * SOCK_SEQPACKET socket (what the daemon opens as its /dev/tuner), models
 * bridges with one I2C adapter and one chip model each, and issues the
 * kernel-side tuner requests a DVB or V4L application would cause.
 *
 * The box runs inside its host's thread: poll sim_box_fd() for at most
 * sim_box_timeout_ms() and call sim_box_run(box, 0), or call sim_box_run()
 * with a timeout.  Every callback runs from sim_box_run(); none of the
 * functions here may be called from another thread, and sim_box_free() not
 * from a callback.
 */
#ifndef SIM_BOX_H
#define SIM_BOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim_chip.h"
#include "tuner_stub.h"

#define SIM_BOX_DEADLINE_MS_DEFAULT 3000
/* Kernel-side requests waiting per client, the one in flight included. */
#define SIM_BOX_QUEUE_MAX 64
/* Tuners (bridges) a box models.  The stub ABI's own limit is its 32-bit
 * max_clients; this one bounds the box's fds (a stub channel and a stream
 * socket each) and its control channel's queue. */
#define SIM_BOX_TUNERS_MAX 1024

struct sim_box;

/* One bridge: one I2C adapter with one tuner chip; client id = index + 1. */
struct sim_box_bridge {
	const char *chip;   /* chip model, as sim_chip_find() knows it */
	uint32_t chip_id;   /* announced in LOAD_PLUGIN/ATTACH; 0: model's */
	uint32_t adapter;   /* I2C adapter number (trace, ATTACH) */
	uint16_t i2c_addr;  /* 7-bit; 0: the model's default address */
	uint32_t config;    /* board configuration word */
	uint32_t vendor_id; /* informative, as in TSTUB_LOAD_PLUGIN */
	uint32_t product_id;
	const char *name; /* NULL: "sim-bridge<index>" */
};

struct sim_box_config {
	const char *stub_path; /* the daemon's socket; required */
	const char *app_path;  /* JSON-lines socket; NULL: none */
	const struct sim_box_bridge *bridges;
	size_t nbridges;
	const char *env_path;      /* RF environment file; NULL: empty */
	const char *firmware_path; /* XC3028 firmware the chip model parses */
	unsigned int i2c_khz;      /* bus clock; 0: transfers take no time */
	double settle_scale;       /* chip settle times: 1.0 hardware, 0 none */
	unsigned int deadline_ms;  /* per request; 0: the default */
	const char *trace_path;    /* one line per I2C segment; NULL: none */
	double nak_rate;           /* box-wide NAK probability per segment */
	uint32_t seed;             /* noise and fault randomness */
	/* Test card clips (ffmpeg, made on first use): their cache directory;
	 * NULL: "tscard" beside the stub socket.  no_card: empty PES only. */
	const char *card_dir;
	bool no_card;
	int verbosity; /* 0 warnings, 1 info, 2 every message */
};

/* Returns NULL with a reason in err on failure (socket in use, unknown
 * chip, unreadable environment or firmware, ...). */
struct sim_box *sim_box_new(const struct sim_box_config *cfg, char *err,
			    size_t errlen);
/* Closes every channel and connection and unlinks the sockets.  Pending
 * requests are dropped without calling their callbacks. */
void sim_box_free(struct sim_box *box);

/*
 * For a host's poll() (lib/loop's loop_fd() and loop_next_timeout_ms()):
 * the fd is readable when a socket or a timer of the box is ready; every
 * timer of the box is in it.  The timeout is 0 while sockets or timers
 * added since the last sim_box_run() are not yet in the fd's set (the
 * next run enters them), else -1.
 */
int sim_box_fd(const struct sim_box *box);
int sim_box_timeout_ms(const struct sim_box *box);
/* Wait at most timeout_ms (-1: forever, 0: not at all), then process the
 * ready events and due timers once.  Returns the number of events
 * processed. */
int sim_box_run(struct sim_box *box, int timeout_ms);

/* One fd of the host's (a signal pipe) watched in the box's own wait,
 * so that sim_box_run(box, -1) is the host's only system call per
 * wake-up: fn(arg) runs from sim_box_run() when fd is readable.  At most
 * one; 0 or a negative errno. */
int sim_box_watch_fd(struct sim_box *box, int fd, void (*fn)(void *arg),
		     void *arg);

/*
 * Completion of a kernel-side request: err is 0 or a negative errno
 * (-ETIMEDOUT at the deadline, -ECONNABORTED when the channel or the
 * daemon went away, or what the daemon answered).  reply_body is the
 * reply's body (struct tstub_status for GET_STATUS, struct tstub_freq for
 * GET_FREQUENCY, empty otherwise), valid during the call only.
 */
typedef void (*sim_box_done_fn)(void *arg, int err, const void *reply_body,
				size_t len);

/*
 * Send a kernel-side request to the client's tuner channel:
 * TSTUB_TUNER_INIT, TSTUB_TUNER_SLEEP, TSTUB_SET_PARAMS (p required),
 * TSTUB_GET_STATUS or TSTUB_GET_FREQUENCY.  Returns 0 and calls done (may
 * be NULL) later from sim_box_run(), or returns a negative errno without
 * calling it: -ENOENT unknown client, -EINVAL bad opcode or params,
 * -ENOTCONN no daemon has completed INIT, -EBUSY queue full, -ENOMEM.
 */
int sim_box_request(struct sim_box *box, uint32_t client, uint16_t opcode,
		    const struct tstub_params *p, sim_box_done_fn done,
		    void *arg);

struct sim_box_fault {
	double nak_rate;  /* per I2C segment, 0..1; < 0: the box-wide rate */
	bool hang;        /* I2C transfers are never answered */
	bool never_lock;  /* SIM_CHIP_FAULT_NEVER_LOCK */
	bool no_firmware; /* SIM_CHIP_FAULT_NO_FIRMWARE */
};

/* client 0 sets every client.  0, -ENOENT, or -EINVAL for a rate above 1
 * or below -1. */
int sim_box_set_fault(struct sim_box *box, uint32_t client,
		      const struct sim_box_fault *f);
int sim_box_get_fault(const struct sim_box *box, uint32_t client,
		      struct sim_box_fault *f);

struct sim_box_stats {
	uint64_t requests;      /* kernel-side requests accepted */
	uint64_t completed;     /* answered by the daemon, any result */
	uint64_t timeouts;      /* ended at their deadline */
	uint64_t aborted;       /* -ECONNABORTED */
	uint64_t refused;       /* refused at submission */
	uint64_t i2c_transfers; /* I2C_XFER requests executed */
	uint64_t i2c_segments;
	uint64_t i2c_bytes; /* payload bytes written and read */
	uint64_t i2c_naks;
	uint64_t i2c_hung;        /* transfers left unanswered (hang) */
	uint64_t bridge_requests; /* BRIDGE_CTRL, DEMOD_STATUS answered */
	uint64_t bad_messages;    /* refused by validation, dropped */
	uint64_t unknown_uniques; /* replies to nothing outstanding */
	uint64_t daemon_sessions; /* INIT handshakes completed */
};

void sim_box_get_stats(const struct sim_box *box, struct sim_box_stats *st);

struct sim_box_client_info {
	uint32_t client;
	char chip[16];    /* model name */
	uint32_t chip_id; /* as announced */
	uint32_t adapter;
	uint16_t i2c_addr;
	char bridge[TSTUB_NAME_LEN];
	bool bound;                  /* a tuner channel is bound */
	bool attached;               /* the daemon answered ATTACH */
	struct tstub_chip_info info; /* the ATTACH reply, if attached */
	struct tstub_params params;  /* TSTUB_PARAMS_VALID if known */
	struct sim_tuned tuned;      /* what the chip's registers say now */
};

size_t sim_box_client_count(const struct sim_box *box);
/* 0 or -ENOENT. */
int sim_box_client_info(const struct sim_box *box, uint32_t client,
			struct sim_box_client_info *out);
/* A daemon has completed INIT on the control channel. */
bool sim_box_daemon_ready(const struct sim_box *box);

/*
 * The transport stream of each client: a SOCK_STREAM socket at
 * "<stub_path>.ts<client id>", listening from sim_box_new() until
 * sim_box_free().  Every connection gets the same 188-byte packets from
 * the moment it connects, whole packets from a packet boundary, while the
 * client's demodulator locks (nothing otherwise; the connection stays).
 * A connection that cannot keep up loses whole packets (counted); the
 * box never waits for it.  Generated only while somebody is connected.
 */
struct sim_box_stream_stats {
	uint32_t connections;
	bool locked;      /* streaming now */
	int carrier;      /* env index of the multiplex, -1: none */
	uint32_t bitrate; /* of the multiplex, bit/s */
	uint64_t packets; /* generated since the multiplex was tuned */
	uint64_t null_packets;
	uint64_t cc_errors;   /* packets lost on purpose (low CNR) */
	uint64_t tei_packets; /* TEI-marked (low CNR) */
	uint64_t dropped;     /* packets connections were too slow for */
	uint64_t lock_checks; /* demodulator looked at while connected */
	uint64_t skipped;     /* not generated: the box stalled > 100 ms */
};

/* 0 or -ENOENT. */
int sim_box_stream_stats(const struct sim_box *box, uint32_t client,
			 struct sim_box_stream_stats *out);

#endif /* SIM_BOX_H */

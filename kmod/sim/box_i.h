/* SPDX-License-Identifier: MIT */
/*
 * box_i.h - the simulated box's internal state, shared by its files
 * (internal: not part of the library's interface).
 */
#ifndef SIM_BOX_I_H
#define SIM_BOX_I_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "box.h"
#include "loop.h"
#include "rf_env.h"
#include "sim_chip.h"
#include "tstub_codec.h"

/* ---- intrusive doubly-linked lists ---- */

struct box_list {
	struct box_list *prev, *next;
};

#define box_container_of(ptr, type, member)                                    \
	((type *)((char *)(ptr)-offsetof(type, member)))

static inline void box_list_init(struct box_list *l)
{
	l->prev = l->next = l;
}

static inline bool box_list_empty(const struct box_list *l)
{
	return l->next == l;
}

static inline void box_list_add_tail(struct box_list *l, struct box_list *n)
{
	n->prev = l->prev;
	n->next = l;
	l->prev->next = n;
	l->prev = n;
}

static inline void box_list_del(struct box_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	box_list_init(n);
}

/* ---- state ---- */

enum box_chan_role {
	CHAN_NEW,          /* sent nothing yet */
	CHAN_CONTROL_INIT, /* INIT sent, not answered */
	CHAN_CONTROL,      /* INIT completed */
	CHAN_TUNER,        /* bound to a client */
	CHAN_OTHER,        /* spoke, but not bound (failed BIND, ...) */
};

struct box_out_msg {
	struct box_list link;
	size_t len;
	uint8_t data[];
};

struct box_channel {
	struct box_list link; /* box->channels, then box->dead_channels */
	struct sim_box *box;
	unsigned int id; /* for the logs */
	int fd;          /* watched in box->loop until closed, then -1 */
	enum box_chan_role role;
	bool closed;
	struct box_client *client; /* CHAN_TUNER */
	uint64_t timer;            /* INIT deadline or bind grace */
	struct box_list out;       /* messages the socket had no room for */
	size_t nout;
	struct box_list i2c_replies; /* box_i2c_reply, delayed by bus time */
	uint64_t sent_ns; /* when the message being handled was sent */
};

struct box_client {
	struct sim_box *box;
	uint32_t id;
	const struct sim_chip_ops *ops;
	struct sim_chip *chip;
	uint32_t chip_id, adapter, config, vendor_id, product_id;
	uint16_t addr;
	char bridge[TSTUB_NAME_LEN];
	struct box_channel *chan;
	struct tstub_params params;
	struct tstub_chip_info info;
	bool attached;
	struct sim_box_fault fault;
	uint32_t rng;          /* NAK decisions and RF noise */
	uint64_t bus_free_ns;  /* the adapter is busy until then */
	struct box_list queue; /* box_request: waiting, then the one sent */
	size_t nqueued;
	struct box_request *inflight; /* sent on chan, not answered */
	struct box_stream *stream;    /* the <stub>.ts<id> socket */
};

/* A request the box sends: kernel-side (client queue) or control. */
struct box_request {
	struct box_list link;
	struct sim_box *box;
	bool control; /* on the control channel, else a client's */
	uint32_t client;
	uint16_t opcode;
	uint64_t unique;
	uint64_t timer;
	struct box_channel *chan; /* sent on; NULL while queued */
	size_t body_len;
	union {
		struct tstub_params params;
		struct tstub_load load;
		struct tstub_attach attach;
	} body;
	sim_box_done_fn done;
	void *arg;
};

struct box_app;
struct box_stream;
struct ts_cards;

struct sim_box {
	/* Every timer is precise (loop_add_timer_ns): modelled bus times are
	 * below a millisecond, and precise timers are in sim_box_fd(). */
	struct loop *loop;
	int verbosity;
	int host_fd; /* sim_box_watch_fd(), -1 without */
	void (*host_fn)(void *arg);
	void *host_arg;
	char *stub_path;
	int listen_fd;
	struct box_app *app;
	struct sim_rf_env *env;
	FILE *trace;
	unsigned int i2c_khz;
	unsigned int deadline_ms; /* a request's (a coarse timer) */
	double settle_scale;
	double nak_rate;
	struct box_client *clients;
	size_t nclients;
	struct box_list channels;
	struct box_list dead_channels;
	struct box_channel *control; /* CHAN_CONTROL_INIT or CHAN_CONTROL */
	bool ready;                  /* INIT completed */
	uint64_t init_unique;
	uint32_t minor;
	uint64_t caps;
	struct box_list ctl_requests; /* control requests in flight */
	uint64_t next_unique;
	unsigned int next_chan_id;
	struct sim_box_stats stats;
	struct ts_cards *cards; /* test card clips; NULL: empty PES only */
	uint32_t seed;
};

/* ---- box.c ---- */
/* A listening AF_UNIX socket of type at path; a stale socket file left by
 * a dead process is replaced, a live one is an error.  fd or -errno. */
int box_unix_listen(const char *path, int type, char *err, size_t errlen);
void box_log(const struct sim_box *box, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
struct box_client *box_client_get(struct sim_box *box, uint32_t id);
uint64_t box_now_ns(void);
const char *box_errname(int err);

/* ---- box_channel.c ---- */
int box_listen(struct sim_box *box, const char *path, char *err, size_t errlen);
void box_channels_free(struct sim_box *box);
void box_channels_reap(struct sim_box *box);
/* Send one message; queued if the socket is full.  0 or -errno (the
 * channel is then closed). */
int box_chan_send(struct box_channel *chan, const union tstub_buf *msg);
void box_chan_reply(struct box_channel *chan, const struct tstub_hdr *req,
		    int error, const void *body, size_t len);
void box_chan_close(struct box_channel *chan, const char *why);

/* ---- box_session.c ---- */
/* Make chan the control channel and send it INIT. */
void box_session_start_init(struct box_channel *chan);
void box_session_init_reply(struct box_channel *chan,
			    const struct tstub_hdr *h);
void box_session_bind(struct box_channel *chan, const struct tstub_hdr *h);
void box_session_params_changed(struct box_channel *chan,
				const struct tstub_hdr *h);

/* ---- box_request.c ---- */
int box_request_submit(struct sim_box *box, uint32_t client, uint16_t opcode,
		       const void *body, size_t len, sim_box_done_fn done,
		       void *arg);
/* Send the next queued request of the client if nothing is in flight. */
void box_request_pump(struct box_client *c);
/* A reply on chan: 0 if it completed a request, -ENOENT if unknown. */
int box_request_reply(struct box_channel *chan, const struct tstub_hdr *h);
/* Requests sent on a closing tuner channel end with -ECONNABORTED. */
void box_request_chan_closed(struct box_channel *chan);
/* The control channel closed: everything outstanding ends with err. */
void box_request_abort_all(struct sim_box *box, int err);
int box_control_send(struct sim_box *box, uint16_t opcode, uint32_t client,
		     const void *body, size_t len, sim_box_done_fn done,
		     void *arg);
void box_requests_free(struct sim_box *box);

/* ---- box_i2c.c ---- */
void box_i2c_xfer(struct box_channel *chan, const struct tstub_hdr *h);
void box_bridge_ctrl(struct box_channel *chan, const struct tstub_hdr *h);
void box_demod_status(struct box_channel *chan, const struct tstub_hdr *h);
/* What the client's demodulator sees now (rng: noise state, NULL for
 * none); true if it locks. */
bool box_demod_measure(struct box_client *c, uint32_t *rng,
		       struct sim_rf_reading *r, struct tstub_status *st);
/* Cancel the delayed replies of a closing channel. */
void box_i2c_chan_closed(struct box_channel *chan);
void box_trace_segment(struct sim_box *box, const struct box_client *c,
		       const struct tstub_i2c_seg *seg, const uint8_t *data,
		       bool nak);

/* ---- box_stream.c ---- */
/* The stream sockets of every client and the test card cache. */
int box_streams_setup(struct sim_box *box, const struct sim_box_config *cfg,
		      char *err, size_t errlen);
void box_streams_free(struct sim_box *box);

/* ---- box_app.c ---- */
struct box_app *box_app_new(struct sim_box *box, const char *path, char *err,
			    size_t errlen);
void box_app_free(struct box_app *app);
/* Free the connections closed during this round. */
void box_app_reap(struct box_app *app);

#endif /* SIM_BOX_I_H */

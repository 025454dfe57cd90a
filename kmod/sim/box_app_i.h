/* SPDX-License-Identifier: MIT */
/*
 * box_app_i.h - the app socket's two halves (internal): the connections
 * and their JSON lines (box_app.c), and the operations (box_app_ops.c).
 */
#ifndef SIM_BOX_APP_I_H
#define SIM_BOX_APP_I_H

#include <jansson.h>
#include <stdbool.h>

#include "box_i.h"

/* Longest request line, newline included. */
#define APP_LINE_MAX 4096
#define APP_CONN_MAX 32

struct app_conn;

/*
 * Start a kernel-side request on behalf of conn.  Its reply line is
 * written when it completes; the
 * connection reads no further request until then.  0 or a negative errno,
 * in which case nothing was started.
 */
int app_call_start(struct app_conn *conn, uint32_t client, uint16_t opcode,
		   const struct tstub_params *p);

/* The reply to one request object, or NULL when a request was started. */
json_t *app_op(struct app_conn *conn, struct sim_box *box, json_t *req);
/* The reply line of a completed kernel-side request. */
json_t *app_call_reply(uint16_t opcode, uint32_t client, int err,
		       const void *body, size_t len, uint64_t elapsed_us);
/* {"ok":false,"error":err,"errname":..,"message":..} */
json_t *app_error(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* SIM_BOX_APP_I_H */

/* SPDX-License-Identifier: MIT */
/*
 * command_priv.h - private to command.c (commands) and command_lease.c
 * (leases): the command service's state and its answer helpers.
 */
#ifndef TUNERD_COMMAND_PRIV_H
#define TUNERD_COMMAND_PRIV_H

#include "command.h"
#include "json_api.h"

struct status_read;
struct channel_list;

struct command_service {
	struct daemon *d;
	struct lease_table *leases;
	struct status_read *reads;     /* shared status reads, command.c */
	struct channel_list *channels; /* tunes by channel; NULL: none */
};

/* A tune's args that name a channel ({"channel":..} or {"lcn":..},
 * command_channel.c): 1 with its params checked against chip in *out and
 * the channel (a reference) in *channel; 0 when args name none; or a
 * negative errno with e (400, 404 not_found, 422). */
int command_channel_params(struct command_service *cs, json_t *args,
			   int args_inline, const struct tstub_chip_info *chip,
			   struct tstub_params *out, json_t **channel,
			   struct api_error *e);

/* Fill res with the error in e (moves its details); returns res->err =
 * err. */
int command_fail(struct command_result *res, int err, struct api_error *e);

/* command_lease.c: cl's lease changes still waiting for their write end
 * without an answer (command_client_cancel). */
void command_lease_cancel(struct command_client *cl);

#endif /* TUNERD_COMMAND_PRIV_H */

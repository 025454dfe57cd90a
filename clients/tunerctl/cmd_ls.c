// SPDX-License-Identifier: MIT
/*
 * cmd_ls.c - every tuner of every box in one table; the boxes are asked
 * concurrently so one slow or dead box costs its timeout once, not per box.
 */
#include "http.h"
#include "show.h"
#include "tunerctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	COL_BOX,
	COL_ID,
	COL_CHIP,
	COL_STATE,
	COL_SYSTEM,
	COL_FREQ,
	COL_LOCK,
	COL_SIGNAL,
	COL_CNR,
	COL_LEASE,
	NCOLS
};

static const char *const ls_headers[NCOLS] = {
    "BOX",       "ID",   "CHIP",   "STATE", "SYSTEM",
    "FREQ(MHz)", "LOCK", "SIGNAL", "CNR",   "LEASE",
};

struct ls_row {
	char cell[NCOLS][80];
};

struct ls_table {
	struct ls_row *rows;
	size_t n;
	int width[NCOLS];
};

static void cell_str(struct ls_row *r, int col, const char *s)
{
	snprintf(r->cell[col], sizeof(r->cell[col]), "%s", s && *s ? s : "-");
}

static void fill_row(struct ls_row *r, const char *box, json_t *t)
{
	json_t *params = json_object_get(t, "params");
	json_t *status = json_object_get(t, "status");
	json_t *lock =
	    json_object_get(json_object_get(status, "fe_status"), "lock");

	cell_str(r, COL_BOX, box);
	snprintf(r->cell[COL_ID], sizeof(r->cell[COL_ID]), "%lld",
		 (long long)json_integer_value(json_object_get(t, "id")));
	cell_str(r, COL_CHIP,
		 json_string_value(
		     json_object_get(json_object_get(t, "chip"), "name")));
	cell_str(r, COL_STATE, json_string_value(json_object_get(t, "state")));
	cell_str(r, COL_SYSTEM,
		 json_string_value(json_object_get(params, "delivery_system")));
	ctl_fmt_json_mhz(json_object_get(params, "frequency"),
			 r->cell[COL_FREQ], sizeof(r->cell[COL_FREQ]));
	cell_str(r, COL_LOCK,
		 json_is_boolean(lock) ? (json_is_true(lock) ? "yes" : "no")
				       : NULL);
	ctl_fmt_quantity(json_object_get(status, "signal_strength"),
			 r->cell[COL_SIGNAL], sizeof(r->cell[COL_SIGNAL]));
	ctl_fmt_quantity(json_object_get(status, "cnr"), r->cell[COL_CNR],
			 sizeof(r->cell[COL_CNR]));
	cell_str(r, COL_LEASE,
		 json_string_value(
		     json_object_get(json_object_get(t, "lease"), "holder")));
}

static int table_add(struct ls_table *tab, const char *box, json_t *tuner)
{
	struct ls_row *rows = realloc(tab->rows, (tab->n + 1) * sizeof(*rows));

	if (!rows)
		return -1;
	tab->rows = rows;
	fill_row(&rows[tab->n++], box, tuner);
	return 0;
}

static void table_print(struct ls_table *tab)
{
	size_t i;
	int c;

	for (c = 0; c < NCOLS; c++)
		tab->width[c] = (int)strlen(ls_headers[c]);
	for (i = 0; i < tab->n; i++) {
		for (c = 0; c < NCOLS; c++) {
			int w = (int)strlen(tab->rows[i].cell[c]);

			if (w > tab->width[c])
				tab->width[c] = w;
		}
	}
	for (c = 0; c < NCOLS; c++)
		printf("%-*s%s", c == NCOLS - 1 ? 0 : tab->width[c],
		       ls_headers[c], c == NCOLS - 1 ? "\n" : "  ");
	for (i = 0; i < tab->n; i++) {
		for (c = 0; c < NCOLS; c++)
			printf("%-*s%s", c == NCOLS - 1 ? 0 : tab->width[c],
			       tab->rows[i].cell[c],
			       c == NCOLS - 1 ? "\n" : "  ");
	}
	fflush(stdout);
}

/* Adds one box's tuners to the table and to the JSON array. */
static int collect_box(const struct ctl_req *r, struct ls_table *tab,
		       json_t *all)
{
	json_t *answer = ctl_req_json(r);
	json_t *tuners = json_object_get(answer, "tuners"), *t, *labelled;
	size_t i;
	int ret = CTL_EXIT_OK;

	if (!answer)
		return CTL_EXIT_API;
	if (!json_is_array(tuners)) {
		ctl_err("%s: answer has no \"tuners\" array", r->box->name);
		ret = CTL_EXIT_API;
	}
	json_array_foreach(tuners, i, t)
	{
		/* the label goes first so a reader sees whose tuner it is */
		labelled = json_pack("{s:s}", "box", r->box->name);
		json_object_update(labelled, t);
		json_object_set_new(labelled, "box", json_string(r->box->name));
		json_array_append_new(all, labelled);
		if (table_add(tab, r->box->name, t))
			ret = CTL_EXIT_API;
	}
	json_decref(answer);
	return ret;
}

static int ls_report(struct ctl_req *reqs, size_t n, bool json)
{
	struct ls_table tab = {0};
	json_t *all = json_array();
	int ret = CTL_EXIT_OK, r;
	size_t i, answered = 0;

	for (i = 0; i < n; i++) {
		r = ctl_req_check(&reqs[i]);
		if (!r)
			r = collect_box(&reqs[i], &tab, all);
		if (!r)
			answered++;
		else if (!ret)
			ret = r; /* the first failing box decides */
	}
	if (json)
		ctl_print_json(all);
	else if (answered)
		table_print(&tab);
	json_decref(all);
	free(tab.rows);
	return ret;
}

int ctl_cmd_ls(const struct ctl_boxes *boxes, const struct ctl_opts *o)
{
	struct ctl_req *reqs = calloc(boxes->n, sizeof(*reqs));
	struct ctl_req **all = calloc(boxes->n, sizeof(*all));
	int ret = CTL_EXIT_API;
	size_t i, ready = 0;

	if (!reqs || !all)
		goto out;
	for (i = 0; i < boxes->n; i++, ready++) {
		if (ctl_req_init(&reqs[i], &boxes->v[i], "GET",
				 "/api/v1/tuners", NULL, o->timeout_ms))
			goto out;
		all[i] = &reqs[i];
	}
	ctl_req_perform_all(all, boxes->n);
	ret = ls_report(reqs, boxes->n, o->json);
out:
	if (ret == CTL_EXIT_API && ready < boxes->n)
		ctl_err("out of memory");
	for (i = 0; reqs && i < boxes->n; i++)
		ctl_req_free(&reqs[i]);
	free(reqs);
	free(all);
	return ret;
}

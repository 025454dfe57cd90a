// SPDX-License-Identifier: MIT
/*
 * trace_file.c - reading the parity traces (see trace_file.h).
 *
 * Lines, as tests/traces/trace_compare.py leaves them:
 *   0x60 W 01 6e 69 03 fb 93     segment: address, W or R, bytes
 *   0x61 C reset 0               bridge callback: name, argument
 *   ## 7 dvbt 474000000 8000000  request
 *   ## 7 = 0                     its return value
 */
#include "trace_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_LINE_MAX (16 + 3 * TRACE_DATA_MAX)

static int trace_push(struct trace_file *t, size_t *cap,
		      const struct trace_item *it)
{
	if (t->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 1024;
		struct trace_item *p = realloc(t->items, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->items = p;
		*cap = ncap;
	}
	t->items[t->n++] = *it;
	return 0;
}

static int trace_ctrl_code(const char *name, uint32_t *code)
{
	static const char *const names[] = {"reset", "clock", "flush"};

	for (uint32_t i = 0; i < 3; i++)
		if (!strcmp(name, names[i])) {
			*code = TSTUB_CTRL_TUNER_RESET + i;
			return 0;
		}
	return -1;
}

/* "0x60 W 01 02" or "0x61 C reset 0". */
static int trace_parse_bus(const char *line, struct trace_item *it)
{
	char dir = 0, name[16];
	unsigned int addr = 0, arg = 0;
	int off = 0;

	if (sscanf(line, "0x%x %c%n", &addr, &dir, &off) != 2 || addr > 0x7f)
		return -1;
	it->addr = (uint16_t)addr;
	if (dir == 'C') {
		it->kind = TRACE_CTRL;
		if (sscanf(line + off, "%15s %u", name, &arg) != 2 ||
		    trace_ctrl_code(name, &it->ctrl))
			return -1;
		it->arg = arg;
		return 0;
	}
	if (dir != 'W' && dir != 'R')
		return -1;
	it->kind = dir == 'W' ? TRACE_WRITE : TRACE_READ;
	for (const char *p = line + off; *p;) {
		unsigned int byte;
		int used = 0;

		if (!strncmp(p, " NAK", 4))
			return -1; /* the sweeps never NAK */
		if (sscanf(p, " %2x%n", &byte, &used) != 1)
			break;
		if (it->len == TRACE_DATA_MAX)
			return -1;
		it->data[it->len++] = (uint8_t)byte;
		p += used;
	}
	return 0;
}

/* "## 7 request" or "## 7 = ret"; 1 for a mark to drop (its number in
 * *seq, so that its return is dropped too). */
static int trace_parse_mark(const char *line, struct trace_item *it,
			    unsigned int *seq)
{
	int off = 0, ret;

	if (sscanf(line, "## %u %n", seq, &off) < 1 || !off)
		return -1;
	if (sscanf(line + off, "= %d", &ret) == 1) {
		it->kind = TRACE_RETURN;
		it->ret = ret;
		return 0;
	}
	if (!strncmp(line + off, "mark", 4) || !strcmp(line + off, "attach"))
		return 1;
	it->kind = TRACE_REQUEST;
	snprintf(it->req, sizeof(it->req), "%s", line + off);
	return 0;
}

int trace_load(const char *path, struct trace_file *t, char *err, size_t errlen)
{
	char line[TRACE_LINE_MAX];
	size_t cap = 0, lineno = 0;
	unsigned int seq = 0, dropped = 0;
	int r, have_request = 0;
	FILE *f = fopen(path, "r");

	memset(t, 0, sizeof(*t));
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct trace_item it = {0};

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0])
			continue;
		r = line[0] == '#' ? trace_parse_mark(line, &it, &seq)
				   : trace_parse_bus(line, &it);
		if (r < 0) {
			snprintf(err, errlen, "%s:%zu: bad line", path, lineno);
			goto fail;
		}
		if (r == 1)
			dropped = seq;
		if (r == 1 || (it.kind == TRACE_RETURN && seq == dropped))
			continue;
		if (it.kind == TRACE_REQUEST && !have_request) {
			have_request = 1;
			t->first_request = t->n;
		}
		if (trace_push(t, &cap, &it)) {
			snprintf(err, errlen, "%s: out of memory", path);
			goto fail;
		}
	}
	fclose(f);
	if (!have_request)
		t->first_request = t->n;
	return 0;
fail:
	fclose(f);
	trace_free(t);
	return -1;
}

void trace_free(struct trace_file *t)
{
	free(t->items);
	memset(t, 0, sizeof(*t));
}

uint16_t trace_chip_addr(const struct trace_file *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->items[i].kind == TRACE_WRITE ||
		    t->items[i].kind == TRACE_READ ||
		    t->items[i].kind == TRACE_CTRL)
			return t->items[i].addr;
	return 0;
}

int trace_request_params(const char *req, struct tstub_params *p)
{
	char cmd[8];
	unsigned long long a = 0, b = 0;
	int n = sscanf(req, "%7s %llu %lli", cmd, &a, &b);

	memset(p, 0, sizeof(*p));
	p->flags = TSTUB_PARAMS_VALID;
	if (n >= 1 && !strcmp(cmd, "init"))
		return TRACE_REQ_INIT;
	if (n >= 1 && !strcmp(cmd, "sleep"))
		return TRACE_REQ_SLEEP;
	if (n < 2 || a > UINT32_MAX)
		return -1;
	p->frequency = (uint32_t)a;
	if (!strcmp(cmd, "radio")) {
		/* The frontend passes 62.5 Hz units: what the chip sees. */
		p->delsys = TSTUB_DELSYS_RADIO;
		p->frequency = (uint32_t)(a * 2 / 125 * 125 / 2);
		return TRACE_REQ_TUNE;
	}
	if (n != 3)
		return -1;
	if (!strcmp(cmd, "atv")) {
		p->delsys = TSTUB_DELSYS_ANALOG_TV;
		p->frequency = (uint32_t)(a / 62500 * 62500);
		p->std = b;
		return TRACE_REQ_TUNE;
	}
	p->bandwidth = (uint32_t)b;
	if (!strcmp(cmd, "dvbt")) {
		p->delsys = TSTUB_DELSYS_DVBT;
		return TRACE_REQ_TUNE;
	}
	if (!strcmp(cmd, "dvbc")) {
		p->delsys = TSTUB_DELSYS_DVBC_A;
		p->symbol_rate = 6900000;
		return TRACE_REQ_TUNE;
	}
	return -1;
}

int trace_parity_pending(const char *readme, const char *chip)
{
	char line[512], name[32], status[16];
	int pending = 0;
	FILE *f = fopen(readme, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "| %31[a-z0-9] | %15[a-z] |", name, status) ==
			2 &&
		    !strcmp(name, chip))
			pending = !strcmp(status, "pending");
	fclose(f);
	return pending;
}

int trace_defect_listed(const char *readme, const char *id)
{
	char line[512], name[64];
	int listed = 0;
	FILE *f = fopen(readme, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "| `%63[a-z0-9-]` |", name) == 1 &&
		    !strcmp(name, id))
			listed = 1;
	fclose(f);
	return listed;
}

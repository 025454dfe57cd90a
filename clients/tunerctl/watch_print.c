// SPDX-License-Identifier: MIT
/*
 * watch_print.c - rendering of events for `tunerctl watch`.
 */
#include "watch_print.h"
#include "http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void watch_printer_init(struct watch_printer *p, bool json, int label_width)
{
	p->json = json;
	p->label_width = label_width;
}

/* A string stays bare when a reader splitting on blanks gets it back. */
static bool bare_string(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		if ((unsigned char)*s <= ' ' || *s == '"' || *s == '=' ||
		    *s == '\\' || *s == 0x7f)
			return false;
	}
	return true;
}

static void print_value(json_t *v)
{
	char *s;

	if (json_is_string(v) && bare_string(json_string_value(v))) {
		fputs(json_string_value(v), stdout);
		return;
	}
	s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | CTL_JSON_REALS);
	fputs(s ? s : "?", stdout);
	free(s);
}

static void print_text(struct watch_printer *p, const char *box, json_t *ev,
		       const char *sse_type)
{
	const char *type = json_string_value(json_object_get(ev, "type"));
	json_t *seq = json_object_get(ev, "seq");
	const char *key;
	json_t *v;
	bool first = true;

	printf("%-*s  ", p->label_width, box);
	if (json_is_integer(seq))
		printf("%lld", (long long)json_integer_value(seq));
	else
		printf("-");
	printf("  %s", type ? type : sse_type);
	json_object_foreach(ev, key, v)
	{
		if (!strcmp(key, "seq") || !strcmp(key, "time") ||
		    !strcmp(key, "box") || !strcmp(key, "type"))
			continue;
		printf("%s%s=", first ? "  " : " ", key);
		first = false;
		print_value(v);
	}
	printf("\n");
}

int watch_print_event(struct watch_printer *p, const char *box, json_t *ev,
		      const char *sse_type)
{
	/* the label is the client's name for the box, as in every command */
	json_object_set_new(ev, "box", json_string(box));
	if (!json_object_get(ev, "type"))
		json_object_set_new(ev, "type", json_string(sse_type));
	if (p->json) {
		json_dumpf(ev, stdout, JSON_COMPACT | CTL_JSON_REALS);
		fputc('\n', stdout);
	} else {
		print_text(p, box, ev, sse_type);
	}
	if (fflush(stdout) || ferror(stdout))
		return -EPIPE;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * watch_print.h - one line per event for `tunerctl watch`: text
 * ("attic  42  tuner.lock  tuner=1 locked=true") or a JSON object with the
 * box label.
 */
#ifndef TUNERCTL_WATCH_PRINT_H
#define TUNERCTL_WATCH_PRINT_H

#include <jansson.h>
#include <stdbool.h>

struct watch_printer {
	bool json;
	int label_width;
};

void watch_printer_init(struct watch_printer *p, bool json, int label_width);
/*
 * Prints ev (an event, or a gap/closed message whose SSE event name is
 * sse_type) labelled with box; sets ev's "box" to the label.  Returns 0, or
 * -EPIPE when stdout can no longer be written.
 */
int watch_print_event(struct watch_printer *p, const char *box, json_t *ev,
		      const char *sse_type);

#endif

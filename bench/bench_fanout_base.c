// SPDX-License-Identifier: MIT
/*
 * bench_fanout's baseline (bench_fanout.h): a bare libwebsockets server on
 * the daemon's libuv loop (a foreign loop, as tunerd's), fed by
 * eventbus_publish() on a bus of its own, which writes each event's
 * serialised text, the very bytes tunerd's hub sends, to every
 * connection: one lws_write() per connection per event.
 */
#include <libwebsockets.h>
#include <string.h>

#include "bench_fanout.h"
#include "eventbus.h"
#include "loop.h"

#define BASE_MSG_MAX   FANOUT_MSG_MAX
#define FREE_TURNS_MAX 64

/* ---- the baseline: a bare lws server on the daemon's loop ---- */

struct base_conn {
	struct lws *wsi;
	uint64_t sent; /* seq of the last event written */
	struct base_conn *next;
};

struct base {
	struct lws_context *ctx;
	struct lws_vhost *vh;
	struct eventbus *bus;
	const struct event *ev; /* the event being sent (a reference) */
	struct base_conn *conns;
	unsigned char buf[LWS_PRE + BASE_MSG_MAX];
};

static struct base Base;

static int base_write(struct base_conn *bc)
{
	const struct event *ev = Base.ev;

	if (!ev || bc->sent == ev->seq || ev->json_len > BASE_MSG_MAX)
		return 0;
	bc->sent = ev->seq;
	memcpy(Base.buf + LWS_PRE, ev->json, ev->json_len);
	return lws_write(bc->wsi, Base.buf + LWS_PRE, ev->json_len,
			 LWS_WRITE_TEXT) < (int)ev->json_len
		   ? -1
		   : 0;
}

static void base_forget(struct base_conn *bc)
{
	for (struct base_conn **pp = &Base.conns; *pp; pp = &(*pp)->next)
		if (*pp == bc) {
			*pp = bc->next;
			return;
		}
}

static int base_cb(struct lws *wsi, enum lws_callback_reasons reason,
		   void *user, void *in, size_t len)
{
	struct base_conn *bc = user;

	switch (reason) {
	case LWS_CALLBACK_ESTABLISHED:
		bc->wsi = wsi;
		bc->next = Base.conns;
		Base.conns = bc;
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return base_write(bc);
	case LWS_CALLBACK_CLOSED:
		base_forget(bc);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static const struct lws_protocols base_protocols[] = {
    {"tunerd.v1", base_cb, sizeof(struct base_conn), BASE_MSG_MAX, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* The bus hands over the serialised event: every connection sends it. */
static void base_on_event(const struct event *ev, void *arg)
{
	(void)arg;
	if (Base.ev)
		event_put(Base.ev);
	Base.ev = event_get(ev);
	for (struct base_conn *bc = Base.conns; bc; bc = bc->next)
		lws_callback_on_writable(bc->wsi);
}

int fanout_base_start(struct loop *l)
{
	struct lws_context_creation_info info;
	void *loops[1] = {loop_uv(l)};

	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN_SERVER;
	info.options =
	    LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_LIBUV;
	info.foreign_loops = loops;
	info.pcontext = &Base.ctx;
	info.gid = -1;
	info.uid = -1;
	Base.ctx = lws_create_context(&info);
	info.vhost_name = "baseline";
	info.protocols = base_protocols;
	Base.vh = Base.ctx ? lws_create_vhost(Base.ctx, &info) : NULL;
	Base.bus = eventbus_new(64);
	if (!Base.vh || !Base.bus || eventbus_set_box(Base.bus, "bench"))
		return -1;
	return eventbus_subscribe(Base.bus, base_on_event, NULL) < 0 ? -1 : 0;
}

static void count_closing(uv_handle_t *h, void *arg)
{
	*(int *)arg += uv_is_closing(h) != 0;
}

/* lws 4.1 on a foreign loop: destroy, let the loop close its handles,
 * destroy again to free the context. */
void fanout_base_stop(struct loop *l)
{
	if (Base.ctx)
		lws_context_destroy(Base.ctx);
	for (int i = 0; i < FREE_TURNS_MAX; i++) {
		int closing = 0;

		uv_walk(loop_uv(l), count_closing, &closing);
		if (!closing)
			break;
		loop_run_once(l, 0);
	}
	if (Base.ctx)
		lws_context_destroy(Base.ctx);
	if (Base.ev)
		event_put(Base.ev);
	eventbus_free(Base.bus);
}

int fanout_base_adopt(int fd)
{
	return lws_adopt_socket_vhost(Base.vh, fd) ? 0 : -1;
}

struct eventbus *fanout_base_bus(void)
{
	return Base.bus;
}

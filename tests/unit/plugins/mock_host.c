// SPDX-License-Identifier: MIT
#include "mock_host.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct mock_event *mock_ev_add(struct mock_events *l, int kind)
{
	struct mock_event *e;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct mock_event *ev = realloc(l->ev, cap * sizeof(*ev));

		if (!ev) {
			fprintf(stderr, "mock_host: out of memory\n");
			abort();
		}
		l->ev = ev;
		l->cap = cap;
	}
	e = &l->ev[l->n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	return e;
}

static void mock_ev_bytes(struct mock_events *l, int kind, uint16_t addr,
			  const uint8_t *data, size_t len)
{
	struct mock_event *e = mock_ev_add(l, kind);

	e->addr = addr;
	e->len = (uint16_t)len;
	memcpy(e->data, data, len < MOCK_EV_DATA_MAX ? len : MOCK_EV_DATA_MAX);
}

void mock_ev_write(struct mock_events *l, uint16_t addr, const uint8_t *data,
		   size_t len)
{
	mock_ev_bytes(l, MOCK_EV_WRITE, addr, data, len);
}

void mock_ev_read(struct mock_events *l, uint16_t addr, const uint8_t *data,
		  size_t len)
{
	mock_ev_bytes(l, MOCK_EV_READ, addr, data, len);
}

void mock_ev_ctrl(struct mock_events *l, uint32_t cmd)
{
	mock_ev_ctrl_arg(l, cmd, 0);
}

void mock_ev_ctrl_arg(struct mock_events *l, uint32_t cmd, uint32_t arg)
{
	struct mock_event *e = mock_ev_add(l, MOCK_EV_CTRL);

	e->arg = cmd;
	e->ctrl_arg = arg;
}

void mock_ev_sleep(struct mock_events *l, uint32_t ms)
{
	mock_ev_add(l, MOCK_EV_SLEEP)->arg = ms;
}

void mock_events_clear(struct mock_events *l)
{
	l->n = 0;
}

void mock_events_free(struct mock_events *l)
{
	free(l->ev);
	memset(l, 0, sizeof(*l));
}

static const char *const mock_kind_names[] = {"?", "write", "read", "ctrl",
					      "sleep"};

static void mock_ev_describe(const struct mock_event *e, char *buf, size_t len)
{
	size_t used;

	if (!e) {
		snprintf(buf, len, "(nothing)");
		return;
	}
	used = (size_t)snprintf(
	    buf, len, "%s addr 0x%02x len %u arg %u/%u:",
	    mock_kind_names[e->kind >= 1 && e->kind <= 4 ? e->kind : 0],
	    e->addr, e->len, e->arg, e->ctrl_arg);
	for (size_t i = 0; i < e->len && i < 16 && used + 4 < len; i++)
		used += (size_t)snprintf(buf + used, len - used, " %02x",
					 e->data[i]);
}

static int mock_ev_equal(const struct mock_event *a, const struct mock_event *b)
{
	size_t n = a->len < MOCK_EV_DATA_MAX ? a->len : MOCK_EV_DATA_MAX;

	if (a->kind != b->kind)
		return 0;
	if (a->kind == MOCK_EV_CTRL)
		return a->arg == b->arg && a->ctrl_arg == b->ctrl_arg;
	if (a->kind == MOCK_EV_SLEEP)
		return a->arg == b->arg;
	return a->addr == b->addr && a->len == b->len &&
	       !memcmp(a->data, b->data, n);
}

long mock_events_diff(const struct mock_events *got, size_t from,
		      const struct mock_events *want, char *why, size_t len)
{
	char g[128], w[128];

	for (size_t i = 0; i < want->n; i++) {
		const struct mock_event *ge =
		    from + i < got->n ? &got->ev[from + i] : NULL;

		if (ge && mock_ev_equal(ge, &want->ev[i]))
			continue;
		mock_ev_describe(ge, g, sizeof(g));
		mock_ev_describe(&want->ev[i], w, sizeof(w));
		snprintf(why, len, "event %zu: got %s, want %s", from + i, g,
			 w);
		return (long)i;
	}
	return -1;
}

/* ---- the host services ---- */

static int mock_i2c_limits_ok(const struct tunerd_i2c_msg *msgs, unsigned int n)
{
	size_t total = 0;

	if (n < 1 || n > TSTUB_I2C_SEGS_MAX)
		return 0;
	for (unsigned int i = 0; i < n; i++) {
		if (!msgs[i].len || !msgs[i].buf || msgs[i].addr > 0x7F ||
		    msgs[i].flags & ~TUNERD_I2C_RD)
			return 0;
		total += msgs[i].len;
	}
	return total <= TSTUB_I2C_DATA_MAX;
}

static int mock_i2c_transfer(void *ctx, struct tunerd_i2c_msg *msgs,
			     unsigned int n)
{
	struct mock_host *m = ctx;
	unsigned int xfer = ++m->xfers;
	int ret = 0;

	if (!mock_i2c_limits_ok(msgs, n)) {
		m->violations++;
		return -EINVAL;
	}
	if (m->nak_all || xfer == m->nak_at)
		return -EREMOTEIO;
	for (unsigned int i = 0; i < n && !ret; i++) {
		struct tunerd_i2c_msg *msg = &msgs[i];

		if (msg->flags & TUNERD_I2C_RD) {
			ret = m->chip.read(m->chip.ctx, msg->addr, msg->buf,
					   msg->len);
			if (!ret)
				mock_ev_read(&m->events, msg->addr, msg->buf,
					     msg->len);
		} else {
			mock_ev_write(&m->events, msg->addr, msg->buf,
				      msg->len);
			ret = m->chip.write(m->chip.ctx, msg->addr, msg->buf,
					    msg->len);
		}
		if (m->events.n)
			m->events.ev[m->events.n - 1].xfer = xfer;
	}
	return ret;
}

static void mock_sleep_ms(void *ctx, unsigned int ms)
{
	struct mock_host *m = ctx;

	m->sleep_total_ms += ms;
	mock_ev_sleep(&m->events, ms);
}

static void mock_log(void *ctx, int level, const char *fmt, ...)
{
	struct mock_host *m = ctx;
	va_list ap;

	m->log_lines++;
	if (level <= TUNERD_LOG_ERR)
		m->log_errors++;
	if (!m->verbose && level > TUNERD_LOG_ERR)
		return;
	fprintf(stderr, "  [plugin log %d] ", level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int mock_firmware_get(void *ctx, const char *name, const uint8_t **data,
			     size_t *size)
{
	struct mock_host *m = ctx;
	uint8_t *buf = NULL;
	long len;
	FILE *f;

	*data = NULL;
	*size = 0;
	if (!m->fw_path || !m->fw_name || strcmp(name, m->fw_name))
		return -ENOENT;
	f = fopen(m->fw_path, "rb");
	if (!f)
		return -ENOENT;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc(len ? (size_t)len : 1);
		if (buf && fread(buf, 1, (size_t)len, f) == (size_t)len) {
			*data = buf;
			*size = (size_t)len;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	if (!buf)
		return -EIO;
	m->fw_gets++;
	return 0;
}

static void mock_firmware_put(void *ctx, const uint8_t *data, size_t size)
{
	struct mock_host *m = ctx;

	(void)size;
	if (data)
		m->fw_puts++;
	free((void *)(uintptr_t)data);
}

static int mock_bridge_ctrl(void *ctx, uint32_t cmd, uint32_t arg)
{
	struct mock_host *m = ctx;

	mock_ev_ctrl_arg(&m->events, cmd, arg);
	return m->chip.ctrl ? m->chip.ctrl(m->chip.ctx, cmd, arg) : 0;
}

void mock_host_init(struct mock_host *m, const struct mock_chip *chip)
{
	memset(m, 0, sizeof(*m));
	m->chip = *chip;
	m->host = (struct tunerd_host){
	    .size = sizeof(struct tunerd_host),
	    .abi = TUNERD_PLUGIN_ABI,
	    .ctx = m,
	    .i2c_transfer = mock_i2c_transfer,
	    .sleep_ms = mock_sleep_ms,
	    .log = mock_log,
	    .firmware_get = mock_firmware_get,
	    .firmware_put = mock_firmware_put,
	    .bridge_ctrl = mock_bridge_ctrl,
	};
}

void mock_host_free(struct mock_host *m)
{
	mock_events_free(&m->events);
}

/* ---- plugin loading ---- */

int mock_plugin_open(const char *path, struct mock_plugin *p)
{
	static const int offered[] = {TUNERD_PLUGIN_ABI};
	tunerd_plugin_version_fn version;
	tunerd_plugin_describe_fn describe;

	memset(p, 0, sizeof(*p));
	p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!p->dl) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return -1;
	}
	version =
	    (tunerd_plugin_version_fn)dlsym(p->dl, TUNERD_PLUGIN_VERSION_SYM);
	describe =
	    (tunerd_plugin_describe_fn)dlsym(p->dl, TUNERD_PLUGIN_DESCRIBE_SYM);
	if (!version || !describe) {
		fprintf(stderr, "%s: ABI symbols missing\n", path);
		goto err;
	}
	p->abi = version(1, offered);
	if (p->abi != TUNERD_PLUGIN_ABI) {
		fprintf(stderr, "%s: picked ABI %d\n", path, p->abi);
		goto err;
	}
	p->desc = describe(p->abi);
	if (!p->desc || !p->desc->ops) {
		fprintf(stderr, "%s: no description\n", path);
		goto err;
	}
	p->ops = p->desc->ops;
	return 0;
err:
	dlclose(p->dl);
	p->dl = NULL;
	return -1;
}

void mock_plugin_close(struct mock_plugin *p)
{
	if (p->dl)
		dlclose(p->dl);
	memset(p, 0, sizeof(*p));
}

void *mock_plugin_sym(const struct mock_plugin *p, const char *name)
{
	return dlsym(p->dl, name);
}

struct tstub_params mock_params(uint32_t delsys, uint32_t freq, uint32_t bw)
{
	struct tstub_params p;

	memset(&p, 0, sizeof(p));
	p.delsys = delsys;
	p.frequency = freq;
	p.bandwidth = bw;
	p.flags = TSTUB_PARAMS_VALID;
	return p;
}

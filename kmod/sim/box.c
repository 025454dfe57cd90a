// SPDX-License-Identifier: MIT
/*
 * box.c - the simulated box's lifetime: configuration, bridges and their
 * chip models, the sockets, and the library entry points that are not
 * requests.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "box_i.h"

void box_log(const struct sim_box *box, int level, const char *fmt, ...)
{
	va_list ap;

	if (level > box->verbosity)
		return;
	va_start(ap, fmt);
	fputs("simbox: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

uint64_t box_now_ns(void)
{
	return loop_now_ns();
}

struct box_client *box_client_get(struct sim_box *box, uint32_t id)
{
	return id >= 1 && id <= box->nclients ? &box->clients[id - 1] : NULL;
}

static const struct {
	int err;
	const char *name;
} box_errnames[] = {
    {EPERM, "EPERM"},           {ENOENT, "ENOENT"},
    {EINTR, "EINTR"},           {EIO, "EIO"},
    {ENXIO, "ENXIO"},           {EAGAIN, "EAGAIN"},
    {ENOMEM, "ENOMEM"},         {EFAULT, "EFAULT"},
    {EBUSY, "EBUSY"},           {ENODEV, "ENODEV"},
    {EINVAL, "EINVAL"},         {ENOSPC, "ENOSPC"},
    {EPIPE, "EPIPE"},           {ERANGE, "ERANGE"},
    {ENOSYS, "ENOSYS"},         {ENOMSG, "ENOMSG"},
    {EPROTO, "EPROTO"},         {EBADMSG, "EBADMSG"},
    {EOVERFLOW, "EOVERFLOW"},   {EMSGSIZE, "EMSGSIZE"},
    {EOPNOTSUPP, "EOPNOTSUPP"}, {ENOBUFS, "ENOBUFS"},
    {ENOTCONN, "ENOTCONN"},     {ESHUTDOWN, "ESHUTDOWN"},
    {ETIMEDOUT, "ETIMEDOUT"},   {ECONNREFUSED, "ECONNREFUSED"},
    {ECONNRESET, "ECONNRESET"}, {ECONNABORTED, "ECONNABORTED"},
    {EREMOTEIO, "EREMOTEIO"},   {ECANCELED, "ECANCELED"},
    {EADDRINUSE, "EADDRINUSE"}, {ENAMETOOLONG, "ENAMETOOLONG"},
};

const char *box_errname(int err)
{
	if (err < 0)
		err = -err;
	for (size_t i = 0; i < sizeof(box_errnames) / sizeof(box_errnames[0]);
	     i++)
		if (box_errnames[i].err == err)
			return box_errnames[i].name;
	return err ? "EUNKNOWN" : "OK";
}

/* A socket file whose owner is gone refuses connections: replace it. */
static int unix_stale(const char *path, int type)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
		return 0;
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	strcpy(sa.sun_path, path);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return rc < 0 && errno == ECONNREFUSED;
}

int box_unix_listen(const char *path, int type, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno != EADDRINUSE || !unix_stale(path, type))
			goto fail;
		unlink(path);
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			goto fail;
	}
	/* 256 workers may open their tuner channels at once. */
	if (listen(fd, SOMAXCONN) < 0)
		goto fail;
	return fd;
fail:
	e = errno;
	snprintf(err, errlen, "%s: %s%s", path, strerror(e),
		 e == EADDRINUSE ? " (another box is running)" : "");
	if (fd >= 0)
		close(fd);
	return -e;
}

static int box_client_setup(struct sim_box *box, size_t i,
			    const struct sim_box_config *cfg, char *err,
			    size_t errlen)
{
	const struct sim_box_bridge *b = &cfg->bridges[i];
	struct box_client *c = &box->clients[i];
	struct sim_chip_setup setup = {0};
	char why[200] = "";

	c->box = box;
	c->id = (uint32_t)i + 1;
	box_list_init(&c->queue);
	c->fault.nak_rate = -1.0;
	c->ops = b->chip ? sim_chip_find(b->chip) : NULL;
	if (!c->ops) {
		snprintf(err, errlen, "bridge %zu: unknown chip model '%s'", i,
			 b->chip ? b->chip : "(none)");
		return -ENOENT;
	}
	c->chip_id = b->chip_id ? b->chip_id : c->ops->chip_id;
	c->addr = b->i2c_addr ? b->i2c_addr : c->ops->default_addr;
	c->adapter = b->adapter;
	c->config = b->config;
	c->vendor_id = b->vendor_id;
	c->product_id = b->product_id;
	if (b->name)
		snprintf(c->bridge, sizeof(c->bridge), "%s", b->name);
	else
		snprintf(c->bridge, sizeof(c->bridge), "sim-bridge%zu", i);
	c->rng = (cfg->seed ^ 0x5bd1e995u) * 2654435761u + c->id;
	setup.i2c_addr = c->addr;
	setup.config = c->config;
	setup.settle_scale = box->settle_scale;
	setup.rf = box->env;
	setup.firmware_path = cfg->firmware_path;
	setup.seed = cfg->seed + c->id;
	if (c->addr > 0x7f ||
	    !(c->chip = c->ops->create(&setup, why, sizeof(why)))) {
		snprintf(err, errlen, "client %u (%s at 0x%02x): %s", c->id,
			 c->ops->name, c->addr, why[0] ? why : "bad address");
		return -EINVAL;
	}
	return 0;
}

static int box_setup(struct sim_box *box, const struct sim_box_config *cfg,
		     char *err, size_t errlen)
{
	if (!cfg->stub_path || !cfg->bridges || !cfg->nbridges) {
		snprintf(err, errlen, "no stub socket path or no bridges");
		return -EINVAL;
	}
	if (cfg->nbridges > SIM_BOX_TUNERS_MAX) {
		snprintf(err, errlen, "%zu tuners: a box models at most %d",
			 cfg->nbridges, SIM_BOX_TUNERS_MAX);
		return -E2BIG;
	}
	if (!(cfg->nak_rate >= 0.0 && cfg->nak_rate <= 1.0) ||
	    !(cfg->settle_scale >= 0.0)) {
		snprintf(err, errlen, "NAK rate or settle scale out of range");
		return -EINVAL;
	}
	box->env = cfg->env_path ? sim_rf_env_load(cfg->env_path, err, errlen)
				 : sim_rf_env_parse("", err, errlen);
	if (!box->env)
		return -EINVAL;
	if (cfg->trace_path && !(box->trace = fopen(cfg->trace_path, "we"))) {
		snprintf(err, errlen, "%s: %s", cfg->trace_path,
			 strerror(errno));
		return -errno;
	}
	box->clients = calloc(cfg->nbridges, sizeof(*box->clients));
	if (!box->clients) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < cfg->nbridges; i++) {
		int rc = box_client_setup(box, i, cfg, err, errlen);

		box->nclients = i + 1;
		if (rc)
			return rc;
	}
	return 0;
}

struct sim_box *sim_box_new(const struct sim_box_config *cfg, char *err,
			    size_t errlen)
{
	struct sim_box *box = calloc(1, sizeof(*box));

	if (!box) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	box->listen_fd = -1;
	box->host_fd = -1;
	box->verbosity = cfg->verbosity;
	box_list_init(&box->channels);
	box_list_init(&box->dead_channels);
	box_list_init(&box->ctl_requests);
	box->i2c_khz = cfg->i2c_khz;
	box->settle_scale = cfg->settle_scale;
	box->nak_rate = cfg->nak_rate;
	box->deadline_ms =
	    cfg->deadline_ms ? cfg->deadline_ms : SIM_BOX_DEADLINE_MS_DEFAULT;
	box->loop = loop_new();
	if (!box->loop) {
		snprintf(err, errlen, "event loop: out of memory");
		goto err;
	}
	if (box_setup(box, cfg, err, errlen))
		goto err;
	box->stub_path = strdup(cfg->stub_path);
	if (!box->stub_path || box_listen(box, cfg->stub_path, err, errlen) ||
	    box_streams_setup(box, cfg, err, errlen))
		goto err;
	if (cfg->app_path &&
	    !(box->app = box_app_new(box, cfg->app_path, err, errlen)))
		goto err;
	box_log(box, 1, "%zu tuners, stub socket %s%s%s", box->nclients,
		cfg->stub_path, cfg->app_path ? ", app socket " : "",
		cfg->app_path ? cfg->app_path : "");
	return box;
err:
	sim_box_free(box);
	return NULL;
}

void sim_box_free(struct sim_box *box)
{
	if (!box)
		return;
	box_app_free(box->app);
	box_requests_free(box);
	if (box->loop) {
		box_streams_free(box);
		box_channels_free(box);
	}
	if (box->host_fd >= 0)
		loop_del_fd(box->loop, box->host_fd);
	if (box->listen_fd >= 0) {
		loop_del_fd(box->loop, box->listen_fd);
		close(box->listen_fd);
		if (box->stub_path)
			unlink(box->stub_path);
	}
	for (size_t i = 0; i < box->nclients; i++)
		if (box->clients[i].chip)
			box->clients[i].ops->destroy(box->clients[i].chip);
	free(box->clients);
	sim_rf_env_free(box->env);
	if (box->trace)
		fclose(box->trace);
	loop_free(box->loop);
	free(box->stub_path);
	free(box);
}

int sim_box_fd(const struct sim_box *box)
{
	return loop_fd(box->loop);
}

int sim_box_timeout_ms(const struct sim_box *box)
{
	return loop_next_timeout_ms(box->loop);
}

static void on_host_fd(struct loop *l, int fd, unsigned int events, void *arg)
{
	struct sim_box *box = arg;

	(void)l;
	(void)fd;
	(void)events;
	box->host_fn(box->host_arg);
}

int sim_box_watch_fd(struct sim_box *box, int fd, void (*fn)(void *arg),
		     void *arg)
{
	int err;

	if (box->host_fd >= 0 || fd < 0 || !fn)
		return -EINVAL;
	err = loop_add_fd(box->loop, fd, LOOP_READ, on_host_fd, box);
	if (err < 0)
		return err;
	box->host_fd = fd;
	box->host_fn = fn;
	box->host_arg = arg;
	return 0;
}

int sim_box_run(struct sim_box *box, int timeout_ms)
{
	int n = loop_run_once(box->loop, timeout_ms);

	box_channels_reap(box);
	box_app_reap(box->app);
	return n;
}

static void box_apply_fault(struct box_client *c, const struct sim_box_fault *f)
{
	uint32_t faults = (f->never_lock ? SIM_CHIP_FAULT_NEVER_LOCK : 0) |
			  (f->no_firmware ? SIM_CHIP_FAULT_NO_FIRMWARE : 0);

	c->fault = *f;
	c->fault.nak_rate = f->nak_rate < 0.0 ? -1.0 : f->nak_rate;
	c->ops->set_faults(c->chip, faults);
	box_log(c->box, 1,
		"client %u: faults nak_rate %g hang %d never_lock %d "
		"no_firmware %d",
		c->id, c->fault.nak_rate, f->hang, f->never_lock,
		f->no_firmware);
}

int sim_box_set_fault(struct sim_box *box, uint32_t client,
		      const struct sim_box_fault *f)
{
	if (!(f->nak_rate <= 1.0) || f->nak_rate < -1.0)
		return -EINVAL;
	if (client == 0) {
		for (size_t i = 0; i < box->nclients; i++)
			box_apply_fault(&box->clients[i], f);
		return 0;
	}
	if (!box_client_get(box, client))
		return -ENOENT;
	box_apply_fault(box_client_get(box, client), f);
	return 0;
}

int sim_box_get_fault(const struct sim_box *box, uint32_t client,
		      struct sim_box_fault *f)
{
	if (client < 1 || client > box->nclients)
		return -ENOENT;
	*f = box->clients[client - 1].fault;
	return 0;
}

void sim_box_get_stats(const struct sim_box *box, struct sim_box_stats *st)
{
	*st = box->stats;
}

size_t sim_box_client_count(const struct sim_box *box)
{
	return box->nclients;
}

int sim_box_client_info(const struct sim_box *box, uint32_t client,
			struct sim_box_client_info *out)
{
	const struct box_client *c;

	if (client < 1 || client > box->nclients)
		return -ENOENT;
	c = &box->clients[client - 1];
	memset(out, 0, sizeof(*out));
	out->client = c->id;
	snprintf(out->chip, sizeof(out->chip), "%s", c->ops->name);
	out->chip_id = c->chip_id;
	out->adapter = c->adapter;
	out->i2c_addr = c->addr;
	memcpy(out->bridge, c->bridge, sizeof(out->bridge));
	out->bound = c->chan != NULL;
	out->attached = c->attached;
	out->info = c->info;
	out->params = c->params;
	c->ops->tuned(c->chip, box_now_ns(), &out->tuned);
	return 0;
}

bool sim_box_daemon_ready(const struct sim_box *box)
{
	return box->ready;
}

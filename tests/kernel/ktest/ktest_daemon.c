// SPDX-License-Identifier: MIT
/*
 * A minimal daemon for the stub: INIT, LOAD_PLUGIN and ATTACH from a
 * small table of chips, one tuner channel per attached client (BIND, then
 * the chip's identification through I2C_XFER), and the tuner requests.
 * Only the MT2060 is really tuned (the register burst of tuner-chips.md)
 * and its lock read back; other chips report what the bridge's
 * demodulator sees.  It exercises the module without the real tunerd.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ktest.h"

#define KD_MAX_TUNERS 8

struct kd_chip {
	uint32_t id;
	const char *name, *vendor, *plugin;
	uint32_t fmin, fmax, step, ifreq;
	uint8_t id_reg[2], id_reg_len, id_len;
	uint16_t id_value;
};

static const struct kd_chip kd_chips[] = {
    {TSTUB_CHIP_MT2060,
     "MT2060",
     "Microtune",
     "mt2060",
     48000000,
     860000000,
     50000,
     36150000,
     {0x00},
     1,
     1,
     0x63},
    {TSTUB_CHIP_QT1010,
     "QT1010",
     "Quantek",
     "qt1010",
     48000000,
     860000000,
     125000,
     36125000,
     {0x29},
     1,
     1,
     0x39},
    {TSTUB_CHIP_XC3028,
     "XC3028",
     "Xceive",
     "xc3028",
     42000000,
     864000000,
     15625,
     0,
     {0x00, 0x08},
     2,
     2,
     3028},
};

struct kd_tuner {
	struct kchan ch;
	uint32_t client;
	uint16_t addr;
	const struct kd_chip *chip;
	struct tstub_params params;
};

struct kd {
	struct kchan ctl;
	struct kd_tuner tuners[KD_MAX_TUNERS];
	int ntuners;
	unsigned long interrupts;
};

static const struct kd_chip *kd_chip(uint32_t id)
{
	for (size_t i = 0; i < sizeof(kd_chips) / sizeof(kd_chips[0]); i++)
		if (kd_chips[i].id == id)
			return &kd_chips[i];
	return NULL;
}

static void kd_info(const struct kd_chip *c, struct tstub_chip_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", c->name);
	snprintf(info->vendor, sizeof(info->vendor), "%s", c->vendor);
	snprintf(info->plugin, sizeof(info->plugin), "%s", c->plugin);
	info->chip_id = c->id;
	info->delsys_mask = 1u << TSTUB_DELSYS_DVBT;
	info->bandwidth_mask = TSTUB_BW_7MHZ | TSTUB_BW_8MHZ;
	info->freq_min = c->fmin;
	info->freq_max = c->fmax;
	info->freq_step = c->step;
	info->caps = TSTUB_CHIPCAP_PLL_LOCK;
	info->if_frequency = c->ifreq;
}

/* One combined transfer: an optional write, then an optional read. */
static int kd_i2c(struct kd_tuner *t, const uint8_t *wr, uint16_t wlen,
		  uint8_t *rd, uint16_t rlen)
{
	uint8_t body[sizeof(struct tstub_i2c_xfer) + 64];
	struct tstub_i2c_xfer *x = (struct tstub_i2c_xfer *)body;
	union tstub_buf reply;
	int err;

	memset(body, 0, sizeof(body));
	if (wlen > 64)
		return -EINVAL;
	if (wlen) {
		x->segs[x->nsegs++] =
		    (struct tstub_i2c_seg){.addr = t->addr, .len = wlen};
		memcpy(body + sizeof(*x), wr, wlen);
	}
	if (rlen)
		x->segs[x->nsegs++] = (struct tstub_i2c_seg){
		    .addr = t->addr, .flags = TSTUB_I2C_RD, .len = rlen};
	err = kchan_call(&t->ch, TSTUB_I2C_XFER, t->client, body,
			 sizeof(*x) + wlen, &reply);
	if (!err && rlen) {
		if (tstub_body_len(&reply.hdr) != rlen)
			return -EPROTO;
		memcpy(rd, tstub_body(&reply.hdr), rlen);
	}
	return err;
}

static int kd_probe(struct kd_tuner *t)
{
	uint8_t id[2] = {0};
	uint16_t v;
	int err;

	err = kd_i2c(t, t->chip->id_reg, t->chip->id_reg_len, id,
		     t->chip->id_len);
	if (err)
		return err;
	v = t->chip->id_len == 2 ? (uint16_t)(id[0] << 8 | id[1]) : id[0];
	return v == t->chip->id_value ? 0 : -ENODEV;
}

static uint8_t kd_mt2060_lnaband(uint32_t mhz)
{
	static const struct {
		uint32_t max;
		uint8_t band;
	} t[] = {{95, 0xB0},  {180, 0xA0}, {260, 0x90}, {335, 0x80},
		 {425, 0x70}, {480, 0x60}, {570, 0x50}, {645, 0x40},
		 {730, 0x30}, {810, 0x20}};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (mhz <= t[i].max)
			return t[i].band;
	return 0x10;
}

/* The MT2060 synthesizer burst for rf_hz, IF1 1220 MHz, IF2 36.15 MHz. */
static int kd_mt2060_tune(struct kd_tuner *t, uint32_t rf_hz)
{
	uint32_t rf = rf_hz / 1000, lo1 = (rf + 1220000) / 250 * 250;
	uint32_t lo2 = (lo1 - rf - 36150 + 25) / 50 * 50;
	uint32_t num1t = lo1 / 250, div1 = num1t / 64, num1 = num1t & 0x3f;
	uint32_t n = (uint32_t)((uint64_t)lo2 * 64 / 125);
	uint32_t div2 = n / 8192, num2 = n & 0x1fff;
	uint8_t burst[6] = {
	    0x01,
	    (uint8_t)(kd_mt2060_lnaband(rf / 1000) | ((num1 >> 2) & 0xf)),
	    (uint8_t)div1,
	    (uint8_t)((num2 & 0xf) | ((num1 & 3) << 4)),
	    (uint8_t)((num2 >> 4) & 0xff),
	    (uint8_t)(((num2 >> 12) & 1) | (div2 << 1)),
	};
	uint8_t reg0c[2] = {0x0c, 0xff}; /* LO1B1 before every tune */

	if (kd_i2c(t, reg0c, 2, NULL, 0))
		return -EREMOTEIO;
	return kd_i2c(t, burst, sizeof(burst), NULL, 0);
}

static int kd_status(struct kd_tuner *t, struct tstub_status *st)
{
	union tstub_buf reply;
	uint8_t reg = 0x06, v = 0;
	int err;

	memset(st, 0, sizeof(*st));
	if (t->chip->id == TSTUB_CHIP_MT2060) {
		err = kd_i2c(t, &reg, 1, &v, 1);
		if (err)
			return err;
		st->valid = TSTUB_ST_PLL_LOCK;
		st->pll_locked = (v & 0x88) == 0x88;
		return 0;
	}
	err =
	    kchan_call(&t->ch, TSTUB_DEMOD_STATUS, t->client, NULL, 0, &reply);
	if (!err)
		memcpy(st, tstub_body(&reply.hdr), sizeof(*st));
	return err;
}

static void kd_tuner_request(struct kd_tuner *t, const union tstub_buf *m)
{
	const struct tstub_hdr *h = &m->hdr;
	struct tstub_status st;
	struct tstub_freq f;
	int err = 0;

	switch (h->opcode) {
	case TSTUB_TUNER_INIT:
	case TSTUB_TUNER_SLEEP:
		break;
	case TSTUB_SET_PARAMS:
		memcpy(&t->params, tstub_body(h), sizeof(t->params));
		if (t->chip->id == TSTUB_CHIP_MT2060)
			err = kd_mt2060_tune(t, t->params.frequency);
		break;
	case TSTUB_GET_STATUS:
		err = kd_status(t, &st);
		kchan_reply(&t->ch, h, err, &st, sizeof(st));
		return;
	case TSTUB_GET_FREQUENCY:
		f = (struct tstub_freq){t->params.frequency,
					t->params.bandwidth, t->chip->ifreq, 0};
		kchan_reply(&t->ch, h, 0, &f, sizeof(f));
		return;
	default:
		return; /* INTERRUPT and stray replies */
	}
	kchan_reply(&t->ch, h, err, NULL, 0);
}

static int kd_attach(struct kd *d, const union tstub_buf *m)
{
	const struct tstub_attach *a = tstub_body(&m->hdr);
	struct tstub_client cl = {.client = a->client};
	struct kd_tuner *t;
	union tstub_buf reply;
	int err;

	if (d->ntuners == KD_MAX_TUNERS)
		return -ENOSPC;
	t = &d->tuners[d->ntuners];
	memset(t, 0, sizeof(*t));
	t->chip = kd_chip(a->chip_id);
	if (!t->chip)
		return -ENOENT;
	t->client = a->client;
	t->addr = a->i2c_addr;
	err = kchan_open(&t->ch, KTEST_DEV, 0);
	if (err)
		return err;
	err =
	    kchan_call(&t->ch, TSTUB_BIND, t->client, &cl, sizeof(cl), &reply);
	if (!err)
		err = kd_probe(t);
	if (err) {
		kchan_close(&t->ch);
		return err;
	}
	d->ntuners++;
	return 0;
}

static void kd_detach(struct kd *d, uint32_t client)
{
	for (int i = 0; i < d->ntuners; i++) {
		if (d->tuners[i].client != client)
			continue;
		kchan_close(&d->tuners[i].ch);
		d->tuners[i] = d->tuners[--d->ntuners];
		return;
	}
}

static void kd_control(struct kd *d, const union tstub_buf *m)
{
	const struct tstub_hdr *h = &m->hdr;
	struct tstub_chip_info info;
	struct tstub_init init;
	const struct kd_chip *c;
	int err;

	switch (h->opcode) {
	case TSTUB_INIT:
		memcpy(&init, tstub_body(h), sizeof(init));
		init.kind = 0;
		kchan_reply(&d->ctl, h, 0, &init, sizeof(init));
		printf("ktest-daemon: INIT done, stub ABI %u.%u\n", init.major,
		       init.minor);
		break;
	case TSTUB_LOAD_PLUGIN:
		c = kd_chip(
		    ((const struct tstub_load *)tstub_body(h))->chip_id);
		if (c)
			kd_info(c, &info);
		kchan_reply(&d->ctl, h, c ? 0 : -ENOENT, &info, sizeof(info));
		break;
	case TSTUB_ATTACH:
		err = kd_attach(d, m);
		c = kd_chip(
		    ((const struct tstub_attach *)tstub_body(h))->chip_id);
		if (c)
			kd_info(c, &info);
		kchan_reply(&d->ctl, h, err, &info, sizeof(info));
		break;
	case TSTUB_DETACH:
		kd_detach(d,
			  ((const struct tstub_client *)tstub_body(h))->client);
		kchan_reply(&d->ctl, h, 0, NULL, 0);
		break;
	case TSTUB_INTERRUPT:
		d->interrupts++;
		break;
	}
	fflush(stdout);
}

/* Handle one message from fd i of the poll set (0: control). */
static int kd_step(struct kd *d, int i)
{
	struct kchan *ch = i == 0 ? &d->ctl : &d->tuners[i - 1].ch;
	union tstub_buf m;
	int n = kchan_recv(ch, &m, 0);

	if (n == -ETIMEDOUT || n == -EAGAIN)
		return 0;
	if (n <= 0) {
		fprintf(stderr, "ktest-daemon: channel %d: %s\n", i,
			n ? strerror(-n) : "closed");
		return i == 0 ? -1 : 0;
	}
	if (i == 0)
		kd_control(d, &m);
	else
		kd_tuner_request(&d->tuners[i - 1], &m);
	return 0;
}

int ktest_daemon_main(int argc, char **argv)
{
	static struct kd d;
	struct pollfd p[1 + KD_MAX_TUNERS];
	int err;

	err = kchan_open(&d.ctl, argc > 1 ? argv[1] : KTEST_DEV, 0);
	if (err) {
		fprintf(stderr, "ktest-daemon: open: %s\n", strerror(-err));
		return 1;
	}
	for (;;) {
		int n = 1 + d.ntuners, stashed = d.ctl.nstash;

		p[0] = (struct pollfd){.fd = d.ctl.fd, .events = POLLIN};
		for (int i = 0; i < d.ntuners; i++) {
			p[i + 1] =
			    (struct pollfd){d.tuners[i].ch.fd, POLLIN, 0};
			stashed += d.tuners[i].ch.nstash;
		}
		if (poll(p, (nfds_t)n, stashed ? 0 : -1) < 0 && errno != EINTR)
			return 1;
		for (int i = 0; i < n; i++) {
			struct kchan *ch = i ? &d.tuners[i - 1].ch : &d.ctl;

			if (!(p[i].revents || ch->nstash))
				continue;
			if (kd_step(&d, i))
				return 1;
			break; /* the tuner table may have changed */
		}
	}
}

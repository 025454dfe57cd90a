// SPDX-License-Identifier: MIT
/*
 * xc3028_host.c - the driver's side of the XC3028 test.
 */
#include "xc3028_host.h"

#include <errno.h>
#include <string.h>

#define HOST_IMAGES_MAX 64

uint8_t *fw_data;
size_t fw_len;
uint64_t xc_now;

static struct img host_imgs[HOST_IMAGES_MAX];
static int host_nimgs;

uint32_t host_le(const uint8_t *p, int n)
{
	uint32_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int host_walk_file(void)
{
	size_t pos = 36;
	int count;

	if (fw_len < 36)
		return -1;
	count = (int)host_le(fw_data + 34, 2);
	if (count > HOST_IMAGES_MAX)
		return -1;
	for (host_nimgs = 0; host_nimgs < count; host_nimgs++) {
		struct img *m = &host_imgs[host_nimgs];

		if (pos + 18 > fw_len)
			return -1;
		m->type = host_le(fw_data + pos, 4);
		m->std = host_le(fw_data + pos + 4, 4) |
			 (uint64_t)host_le(fw_data + pos + 8, 4) << 32;
		pos += 12;
		if (m->type & T_HAS_IF) {
			m->if_khz = (uint16_t)host_le(fw_data + pos, 2);
			pos += 2;
		}
		m->size = host_le(fw_data + pos, 4);
		m->data = fw_data + pos + 4;
		pos += 4 + m->size;
		if (pos > fw_len)
			return -1;
	}
	return pos == fw_len ? 0 : -1;
}

const struct img *host_find(uint32_t type, uint64_t std)
{
	for (int i = 0; i < host_nimgs; i++)
		if (host_imgs[i].type == type && host_imgs[i].std == std)
			return &host_imgs[i];
	return NULL;
}

const struct img *host_find_scode(uint16_t if_khz)
{
	for (int i = 0; i < host_nimgs; i++)
		if (host_imgs[i].type & T_SCODE &&
		    host_imgs[i].if_khz == if_khz)
			return &host_imgs[i];
	return NULL;
}

int host_write(struct sim_chip *chip, const void *buf, size_t len)
{
	return sim_xc3028_ops.write(chip, buf, len, xc_now);
}

int host_read_reg(struct sim_chip *chip, uint16_t reg)
{
	uint8_t addr[2] = {(uint8_t)(reg >> 8), (uint8_t)reg};
	uint8_t val[2];

	if (host_write(chip, addr, 2) ||
	    sim_xc3028_ops.read(chip, val, 2, xc_now))
		return -1;
	return val[0] << 8 | val[1];
}

/* A data record: its register byte at the head of every chunk. */
static int host_send_record(struct sim_chip *chip, const uint8_t *p,
			    uint32_t len, size_t max_len, int *sent,
			    int corrupt_at)
{
	uint8_t chunk[1024];

	for (uint32_t off = 1; off < len; off += max_len - 1) {
		size_t n = len - off < max_len - 1 ? len - off : max_len - 1;
		int ret;

		chunk[0] = p[0];
		memcpy(chunk + 1, p + off, n);
		if ((*sent)++ == corrupt_at)
			chunk[1] ^= 0x5A;
		ret = host_write(chip, chunk, n + 1);
		if (ret)
			return ret;
		xc_now += (n + 1) * 9 * 2500; /* 400 kHz bus */
	}
	return 0;
}

int host_upload(struct sim_chip *chip, const struct img *m, size_t max_len,
		int corrupt_at)
{
	const uint8_t *p, *end;
	int sent = 0, ret;

	if (!m || max_len < 2 || max_len > 1024)
		return -EINVAL;
	for (p = m->data, end = m->data + m->size; p + 2 <= end;) {
		uint32_t len = host_le(p, 2);

		p += 2;
		if (len == 0xFFFF)
			return 0;
		if (len == 0x0000 || len == 0xFF00) {
			sim_xc3028_ops.bridge_ctrl(chip,
						   len ? TSTUB_CTRL_CLK_RESET
						       : TSTUB_CTRL_TUNER_RESET,
						   0, xc_now);
			continue;
		}
		if (len & 0x8000) {
			xc_now += (len & 0x7FFF) * MS;
			continue;
		}
		if (len > (size_t)(end - p))
			return -EINVAL;
		ret =
		    host_send_record(chip, p, len, max_len, &sent, corrupt_at);
		if (ret)
			return ret;
		p += len;
	}
	return 0;
}

int host_load(struct sim_chip *chip, uint32_t base, uint32_t std_type,
	      uint64_t std, int init1, size_t max_len)
{
	int ret;

	sim_xc3028_ops.bridge_ctrl(chip, TSTUB_CTRL_TUNER_RESET, 0, xc_now);
	ret = host_upload(chip, host_find(base, 0), max_len, -1);
	if (!ret && init1)
		ret = host_upload(chip, host_find(T_INIT1, 0), max_len, -1);
	if (!ret)
		ret = host_upload(chip, host_find(std_type, std), max_len, -1);
	return ret;
}

int host_scode(struct sim_chip *chip, uint16_t if_khz, int entry)
{
	static const uint8_t head[4] = {0xA0, 0, 0, 0}, tail[2] = {0, 0x8C};
	const struct img *m = host_find_scode(if_khz);
	int ret;

	if (!m || m->size < 12u * (unsigned int)(entry + 1))
		return -EINVAL;
	ret = host_write(chip, head, 4);
	if (!ret)
		ret = host_write(chip, m->data + 12 * entry, 12);
	if (!ret)
		ret = host_write(chip, tail, 2);
	return ret;
}

int host_tune(struct sim_chip *chip, uint32_t freq, uint32_t offset)
{
	uint32_t div = (freq - offset + 7812) / 15625;
	const uint8_t cmd[4] = {0x80, 0x02, 0x00, 0x00};
	const uint8_t d[4] = {(uint8_t)(div >> 24), (uint8_t)(div >> 16),
			      (uint8_t)(div >> 8), (uint8_t)div};
	int ret = host_write(chip, cmd, 4);

	xc_now += 10 * MS;
	return ret ? ret : host_write(chip, d, 4);
}

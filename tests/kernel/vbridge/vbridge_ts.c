// SPDX-License-Identifier: GPL-2.0
/*
 * The bridge's transport stream: a software demux and its demux0/dvr0
 * devices on the DVB adapter, fed through dvb_dmx_swfilter() as a real
 * bridge feeds what its TS port received.
 *
 * While at least one feed is started and a frontend's chip has lock, a
 * delayed work feeds VB_TS_PKTS packets every VB_TS_TICK_MS: a PAT (one
 * program, PMT on VB_TS_PMT_PID) and packets on VB_TS_PID whose payload
 * starts with a 32-bit big-endian packet counter.  Both PIDs carry correct
 * continuity counters, so a reader can tell that every packet arrived.
 * 20 packets per 20 ms is 1.5 Mbit/s: enough to exercise the path, cheap
 * for a TCG guest.
 */
#include <linux/crc32.h>
#include <linux/jiffies.h>
#include <linux/string.h>
#include <asm/unaligned.h>

#include "vbridge.h"

#define VB_TS_SIZE 188
#define VB_TS_TICK_MS 20
#define VB_TS_PMT_PID 0x1000
#define VB_TS_TSID 0x0001
#define VB_TS_PROGRAM 0x0001

/* A TS header with payload only, PUSI as asked. */
static void vb_ts_header(u8 *p, u16 pid, bool pusi, u8 cc)
{
	p[0] = 0x47;
	p[1] = (pusi ? 0x40 : 0) | ((pid >> 8) & 0x1f);
	p[2] = pid & 0xff;
	p[3] = 0x10 | (cc & 0x0f);
}

/* The PAT packet: section at offset 5 (pointer field 0), stuffing after. */
static void vb_ts_pat(struct vbridge *vb, u8 *p)
{
	u8 *s = p + 5;
	u32 crc;

	vb_ts_header(p, 0, true, vb->ts_pat_cc++);
	p[4] = 0;			/* pointer field */
	s[0] = 0x00;			/* table_id: PAT */
	s[1] = 0xb0;			/* syntax, reserved, length high */
	s[2] = 13;			/* 5 header + 4 program + 4 CRC */
	s[3] = VB_TS_TSID >> 8;
	s[4] = VB_TS_TSID & 0xff;
	s[5] = 0xc1;			/* version 0, current */
	s[6] = 0;			/* section_number */
	s[7] = 0;			/* last_section_number */
	s[8] = VB_TS_PROGRAM >> 8;
	s[9] = VB_TS_PROGRAM & 0xff;
	s[10] = 0xe0 | (VB_TS_PMT_PID >> 8);
	s[11] = VB_TS_PMT_PID & 0xff;
	crc = crc32_be(~0U, s, 12);
	put_unaligned_be32(crc, s + 12);
	memset(s + 16, 0xff, VB_TS_SIZE - 5 - 16);
}

/* A counter packet: the counter, then a byte pattern derived from it. */
static void vb_ts_counter(struct vbridge *vb, u8 *p)
{
	u32 n = vb->ts_counter++;

	vb_ts_header(p, VB_TS_PID, false, vb->ts_data_cc++);
	put_unaligned_be32(n, p + 4);
	memset(p + 8, n & 0xff, VB_TS_SIZE - 8);
}

/* Whether a frontend's chip has lock, as its demodulator reports it. */
static bool vb_ts_locked(struct vbridge *vb)
{
	bool locked = false;
	unsigned int i;

	mutex_lock(&vb->chip_lock);
	for (i = 0; i < vb->nfe && !locked; i++) {
		struct vb_chip *c = vb->fes[i].chip;

		locked = c->type->locked(c) && !c->fault_nolock;
	}
	mutex_unlock(&vb->chip_lock);
	return locked;
}

/*
 * One tick: a PAT and counter packets, when there is lock.  The work
 * re-arms itself while a feed is started; vb_ts_destroy() cancels it.
 */
static void vb_ts_work(struct work_struct *work)
{
	struct vbridge *vb = container_of(to_delayed_work(work),
					  struct vbridge, ts_work);
	unsigned int i;

	if (!atomic_read(&vb->ts_feeds))
		return;
	if (vb_ts_locked(vb)) {
		vb_ts_pat(vb, vb->ts_buf);
		for (i = 1; i < VB_TS_PKTS; i++)
			vb_ts_counter(vb, vb->ts_buf + i * VB_TS_SIZE);
		dvb_dmx_swfilter(&vb->demux, vb->ts_buf, sizeof(vb->ts_buf));
	}
	schedule_delayed_work(&vb->ts_work, msecs_to_jiffies(VB_TS_TICK_MS));
}

static int vb_ts_start_feed(struct dvb_demux_feed *feed)
{
	struct vbridge *vb = feed->demux->priv;

	if (atomic_inc_return(&vb->ts_feeds) == 1)
		schedule_delayed_work(&vb->ts_work, 0);
	return 0;
}

static int vb_ts_stop_feed(struct dvb_demux_feed *feed)
{
	struct vbridge *vb = feed->demux->priv;

	/* The work sees no feed and does not re-arm. */
	atomic_dec(&vb->ts_feeds);
	return 0;
}

/**
 * vb_ts_create() - the software demux and its devices on the adapter
 * @vb: the bridge, its DVB adapter registered
 *
 * Return: 0 or a negative errno; vb_ts_destroy() undoes a partial setup.
 */
int vb_ts_create(struct vbridge *vb)
{
	int ret;

	INIT_DELAYED_WORK(&vb->ts_work, vb_ts_work);
	vb->demux.dmx.capabilities = DMX_TS_FILTERING | DMX_SECTION_FILTERING;
	vb->demux.priv = vb;
	vb->demux.filternum = 32;
	vb->demux.feednum = 32;
	vb->demux.start_feed = vb_ts_start_feed;
	vb->demux.stop_feed = vb_ts_stop_feed;
	ret = dvb_dmx_init(&vb->demux);
	if (ret)
		return ret;
	vb->ts_state = 1;
	vb->dmxdev.filternum = 32;
	vb->dmxdev.demux = &vb->demux.dmx;
	vb->dmxdev.capabilities = 0;
	ret = dvb_dmxdev_init(&vb->dmxdev, &vb->dvb);
	if (ret)
		return ret;
	vb->ts_state = 2;
	vb->dmx_fe.source = DMX_FRONTEND_0;
	ret = vb->demux.dmx.add_frontend(&vb->demux.dmx, &vb->dmx_fe);
	if (ret)
		return ret;
	vb->ts_state = 3;
	ret = vb->demux.dmx.connect_frontend(&vb->demux.dmx, &vb->dmx_fe);
	if (ret)
		return ret;
	vb->ts_state = 4;
	return 0;
}

/**
 * vb_ts_destroy() - undo vb_ts_create(), also a partial one
 * @vb: the bridge
 */
void vb_ts_destroy(struct vbridge *vb)
{
	if (vb->ts_state >= 4)
		vb->demux.dmx.disconnect_frontend(&vb->demux.dmx);
	if (vb->ts_state >= 3)
		vb->demux.dmx.remove_frontend(&vb->demux.dmx, &vb->dmx_fe);
	/* Releases demux0 and dvr0: their users are gone, no feed starts. */
	if (vb->ts_state >= 2)
		dvb_dmxdev_release(&vb->dmxdev);
	if (vb->ts_state >= 1) {
		cancel_delayed_work_sync(&vb->ts_work);
		dvb_dmx_release(&vb->demux);
	}
	vb->ts_state = 0;
}

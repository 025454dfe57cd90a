// One tuner's card: state, lock and meters, the plot, a tune form that
// follows the chip's capabilities, lease controls and the channel list.
// Controls the caller's role cannot use are not rendered at all.
import { SignalPlot, historyToColumns, statusSample } from './signal_plot.js';

// Analog standards the daemon accepts (protocol/API.md, Params).
const STANDARDS = ['PAL-BG', 'PAL-I', 'PAL-DK', 'PAL-M', 'PAL-N', 'NTSC-M', 'NTSC-M-JP',
  'SECAM-B', 'SECAM-G', 'SECAM-DK', 'SECAM-L'];
const SYMBOL_RATE_SYSTEMS = ['DVBC_ANNEX_A', 'DVBC_ANNEX_C', 'DVBS', 'DVBS2'];
const BANDWIDTH_SYSTEMS = ['DVBT', 'DVBT2', 'DVBC_ANNEX_A', 'ATSC'];

const mhz = (hz) => (hz / 1e6).toFixed(3).replace(/\.?0+$/, '') + ' MHz';
const fmtMeasure = (m) => (m ? `${m.value.toFixed(1)} ${m.unit}` : '-');

export function paramsText(p) {
  if (!p) return 'not tuned';
  let s = `${p.delivery_system} ${mhz(p.frequency)}`;
  if (p.bandwidth) s += ` / ${p.bandwidth / 1e6} MHz`;
  if (p.symbol_rate) s += ` / ${p.symbol_rate / 1000} kS/s`;
  if (p.standard) s += ` ${p.standard}`;
  return s;
}

function option(sel, value, text) {
  sel.add(new Option(text === undefined ? value : text, value));
}

export class TunerCard {
  constructor(box, t, ctx) {
    this.box = box;
    this.id = t.id;
    this.ctx = ctx; // {rangeMs(), log(msg)}
    this.el = document.getElementById('tuner-card').content.firstElementChild.cloneNode(true);
    this.el.dataset.box = box.url;
    this.el.dataset.tuner = String(t.id);
    this.$('.t-stream').href = box.streamUrl(t.id);
    if (box.canOperate()) this.buildControls(t);
    else for (const n of this.el.querySelectorAll('.op-only')) n.remove();
    this.update(t);
  }

  $(sel) { return this.el.querySelector(sel); }

  // After the card is in the document: the plot needs its width.
  attach() {
    this.plot = new SignalPlot(this.$('.t-plot'), this.ctx.rangeMs());
    const t = this.box.tuners.get(this.id);
    if (t && t.params && t.status) this.plot.add(statusSample(Date.now(), t.status));
    this.loadHistory();
  }

  buildControls(t) {
    const form = this.$('form.tune');
    const ds = form.elements.delivery_system;
    for (const d of t.delivery_systems || []) option(ds, d);
    const bw = form.elements.bandwidth;
    for (const b of t.bandwidths || []) option(bw, b, `${b / 1e6} MHz`);
    const std = form.elements.standard;
    for (const s of STANDARDS) option(std, s);
    const f = form.elements.frequency;
    if (t.frequency) {
      f.min = t.frequency.min / 1e6;
      f.max = t.frequency.max / 1e6;
      f.title = `${mhz(t.frequency.min)} .. ${mhz(t.frequency.max)}`;
    }
    ds.addEventListener('change', () => this.followSystem());
    this.followSystem();
    this.fillChannelPicker();
    form.addEventListener('submit', (ev) => { ev.preventDefault(); this.tune(this.formParams()); });
    const lease = this.$('form.lease');
    lease.addEventListener('submit', (ev) => { ev.preventDefault(); this.takeLease(); });
    this.$('.l-renew').addEventListener('click', () => this.renewLease());
    this.$('.l-release').addEventListener('click', () => this.releaseLease());
  }

  // Only the fields the chosen delivery system takes are shown.
  followSystem() {
    const form = this.$('form.tune');
    const ds = form.elements.delivery_system.value;
    const show = (name, on) => {
      form.elements[name].hidden = !on;
      form.elements[name].disabled = !on;
      const l = form.querySelector(`label[data-for=${name}]`);
      if (l) l.hidden = !on;
    };
    show('bandwidth', BANDWIDTH_SYSTEMS.includes(ds) && form.elements.bandwidth.options.length > 0);
    show('symbol_rate', SYMBOL_RATE_SYSTEMS.includes(ds));
    show('standard', ds === 'ANALOG_TV');
  }

  fillChannelPicker() {
    const sel = this.$('form.tune').elements.channel;
    sel.replaceChildren();
    option(sel, '', '(frequency)');
    for (const ch of this.box.channels) option(sel, ch.name, `${ch.lcn ?? '-'} ${ch.name}`);
    sel.hidden = this.box.channels.length === 0;
  }

  formParams() {
    const e = this.$('form.tune').elements;
    if (e.channel.value) return { channel: e.channel.value };
    const p = {
      delivery_system: e.delivery_system.value,
      frequency: Math.round(parseFloat(e.frequency.value) * 1e6),
    };
    if (!e.bandwidth.disabled && e.bandwidth.value) p.bandwidth = Number(e.bandwidth.value);
    if (!e.symbol_rate.disabled) p.symbol_rate = Math.round(parseFloat(e.symbol_rate.value) * 1000);
    if (!e.standard.disabled) p.standard = e.standard.value;
    return p;
  }

  async tune(params) {
    const held = this.box.leases.get(this.id);
    const body = held ? { ...params, lease_id: held.lease_id } : params;
    this.say('tuning...');
    try {
      const r = await this.box.call('POST', `/tuners/${this.id}/tune`, body);
      this.say('');
      this.update(await this.box.refreshTuner(this.id));
      this.status(r.status, Date.now());
    } catch (e) {
      this.say(`${e.code}: ${e.message}`);
    }
  }

  async takeLease() {
    const e = this.$('form.lease').elements;
    const body = { holder: e.holder.value, ttl_s: Number(e.ttl_s.value), priority: Number(e.priority.value) };
    await this.leaseCall('POST', '', body);
  }

  async renewLease() {
    const held = this.box.leases.get(this.id);
    if (!held) return;
    await this.leaseCall('POST', '', { lease_id: held.lease_id, ttl_s: Number(this.$('form.lease').elements.ttl_s.value) });
  }

  async releaseLease() {
    const held = this.box.leases.get(this.id);
    if (!held) return;
    await this.leaseCall('DELETE', `?lease_id=${encodeURIComponent(held.lease_id)}`);
  }

  async leaseCall(method, query, body) {
    this.say('');
    this.$('.t-notice').textContent = '';
    try {
      const r = await this.box.call(method, `/tuners/${this.id}/lease${query}`, body);
      if (method === 'DELETE') this.box.leases.delete(this.id);
      else this.box.leases.set(this.id, { lease_id: r.lease_id, holder: r.holder });
      this.update(await this.box.refreshTuner(this.id));
    } catch (e) {
      if (e.status === 404 || (method === 'DELETE' && e.status === 409)) this.box.leases.delete(this.id);
      this.say(`${e.code}: ${e.message}`);
      this.update(await this.box.refreshTuner(this.id).catch(() => this.box.tuners.get(this.id)));
    }
  }

  // A lease event: a held lease that ended elsewhere is forgotten; a
  // pre-emption is told in the card.
  leaseEvent(ev) {
    const held = this.box.leases.get(this.id);
    const ours = held && held.holder === ev.holder;
    if (ev.type === 'lease.preempted' && ours) {
      this.$('.t-notice').textContent =
        `lease pre-empted by ${ev.by} (priority ${ev.by_priority}) at ${new Date(ev.time).toLocaleTimeString()}`;
    }
    if (ours && ['lease.preempted', 'lease.expired', 'lease.released'].includes(ev.type)) {
      this.box.leases.delete(this.id);
    }
  }

  say(text) { this.$('.t-error').textContent = text; }

  update(t) {
    this.t = t;
    this.$('.t-box').textContent = this.box.name;
    this.$('.t-id').textContent = '#' + t.id;
    this.$('.t-chip').textContent = `${t.chip.vendor} ${t.chip.name}`;
    this.$('.t-state').textContent = t.state;
    this.$('.t-bridge').textContent =
      `${t.bridge.name}, I2C ${t.bridge.adapter}:0x${t.bridge.i2c_addr.toString(16)}`;
    this.$('.t-params').textContent = paramsText(t.params);
    const lc = t.last_change;
    this.$('.t-last').textContent = lc ? `last change ${new Date(lc.time).toLocaleString()} by ${lc.origin}` : '';
    this.renderLease();
    this.renderStatus(t.status);
  }

  renderLease() {
    const l = this.t.lease;
    const held = this.box.leases.get(this.id);
    this.$('.t-lease-text').textContent = l ? `leased by ${l.holder} (priority ${l.priority})` : 'no lease';
    this.el.classList.toggle('held', !!held);
    this.tick();
    const renew = this.$('.l-renew');
    if (renew) {
      renew.hidden = !held;
      this.$('.l-release').hidden = !held;
      this.$('.l-take').textContent = l && !held ? 'Pre-empt' : 'Take';
      this.$('.l-take').hidden = !!held;
    }
  }

  // The expiry countdown, called once a second.
  tick() {
    const l = this.t && this.t.lease;
    const left = l ? Math.max(0, Math.round((Date.parse(l.expires) - Date.now()) / 1000)) : null;
    this.$('.t-expiry').textContent = l ? `expires in ${left} s` : '';
  }

  // A tuner never tuned has no lock to show, whatever its chip reports.
  renderStatus(st) {
    const tuned = !!(this.t && this.t.params);
    const lock = tuned && !!(st && st.fe_status && st.fe_status.lock);
    const lockEl = this.$('.lock');
    lockEl.classList.toggle('locked', lock);
    lockEl.classList.toggle('idle', !tuned);
    this.$('.lock-text').textContent = !tuned ? 'idle' : lock ? 'lock' : 'no lock';
    const sig = tuned && st && st.signal_strength, cnr = tuned && st && st.cnr;
    this.$('.v-signal').textContent = fmtMeasure(sig);
    this.$('.v-cnr').textContent = fmtMeasure(cnr);
    this.$('.m-signal').value = sig && sig.unit === 'dBm' ? sig.value : -100;
    this.$('.m-cnr').value = cnr && cnr.unit === 'dB' ? cnr.value : 0;
  }

  // A status sample (tune answer or tuner.status event) at timeMs.
  status(st, timeMs) {
    if (!st) return;
    if (this.t) this.t.status = st;
    this.renderStatus(st);
    if (this.plot && this.t && this.t.params) this.plot.add(statusSample(timeMs, st));
  }

  setRange(ms) {
    if (!this.plot) return;
    this.plot.setRange(ms);
    this.loadHistory();
  }

  async loadHistory() {
    const note = this.$('.t-plot-note');
    if (!this.box.history) { note.textContent = 'live only: this box keeps no history'; return; }
    const to = Date.now(), from = to - this.ctx.rangeMs();
    try {
      const h = await this.box.call('GET',
        `/tuners/${this.id}/history?from=${from}&to=${to}&fields=signal,cnr`);
      this.plot.setHistory(historyToColumns(h));
      note.textContent = '';
    } catch (e) {
      // 404: a daemon without the history API; 503: no state directory.
      if (e.status === 404 || e.status === 503) this.box.history = false;
      // A box without the history API answers another origin's preflight
      // for the path with a 404 too: fetch then fails with no status.
      const why = e.status === 404 || e.status === undefined ? 'not on this box' : e.message;
      note.textContent = `live only: history ${why}`;
    }
  }

  renderChannels() {
    if (this.box.canOperate()) this.fillChannelPicker();
    const list = this.$('.t-channels');
    const channels = this.box.channels;
    list.hidden = channels.length === 0;
    this.$('.t-channel-count').textContent = `(${channels.length})`;
    const body = list.querySelector('tbody');
    body.replaceChildren();
    for (const ch of channels) body.append(this.channelRow(ch));
  }

  channelRow(ch) {
    const tr = document.createElement('tr');
    tr.innerHTML = '<td class="c-lcn"></td><td class="c-name"></td><td class="c-act"></td>' +
      '<td><a class="c-stream" target="_blank" rel="noopener">stream</a></td>';
    tr.querySelector('.c-lcn').textContent = ch.lcn ?? '-';
    tr.querySelector('.c-name').textContent = ch.name;
    tr.querySelector('.c-name').title = `${paramsText(ch.params)} · service ${ch.service_id} · ${ch.type}`;
    tr.querySelector('.c-stream').href = this.box.streamUrl(this.id, ch.service_id);
    if (this.box.canOperate()) {
      const b = document.createElement('button');
      b.className = 'c-tune';
      b.textContent = 'tune';
      b.setAttribute('aria-label', `tune ${ch.name}`);
      b.addEventListener('click', () => this.tune({ channel: ch.name }));
      tr.querySelector('.c-act').append(b);
    }
    return tr;
  }
}

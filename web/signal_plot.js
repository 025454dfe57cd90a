// A tuner's signal (dBm), CNR (dB) and lock over time, drawn by uPlot:
// the history API's points for the chosen range, then live samples from
// the event stream appended as they come.
import uPlot from './vendor/uPlot.esm.js';

// The history API's answer as columns (times in seconds, uPlot's unit).
// The one place that knows the point's shape: a field is {min,avg,max}
// or null, lock is the fraction of locked reads in the bucket.
export function historyToColumns(json) {
  const cols = { time: [], signal: [], cnr: [], lock: [] };
  for (const p of (json && json.points) || []) {
    const t = typeof p.time === 'number' ? p.time : Date.parse(p.time);
    if (!Number.isFinite(t)) continue;
    cols.time.push(t / 1000);
    cols.signal.push(p.signal ? p.signal.avg : null);
    cols.cnr.push(p.cnr ? p.cnr.avg : null);
    const lock = p.lock ?? p.lock_fraction;
    cols.lock.push(typeof lock === 'number' ? lock : null);
  }
  return cols;
}

// One live sample from a Status object (REST or a tuner.status event).
export function statusSample(timeMs, st) {
  const sig = st && st.signal_strength, cnr = st && st.cnr;
  return {
    time: timeMs / 1000,
    signal: sig && sig.unit === 'dBm' ? sig.value : null,
    cnr: cnr && cnr.unit === 'dB' ? cnr.value : null,
    lock: st && st.fe_status ? (st.fe_status.lock ? 1 : 0) : null,
  };
}

const css = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

// A live sample stands until the next one: the daemon publishes
// tuner.status only past a deadband or at its heartbeat (30 s by
// default), so the plot draws the last live value on to now, for at most
// two heartbeats, instead of leaving a steady signal's line short.
const HOLD_S = 60;
// How often the time axis moves on with no new sample.
const TICK_MS = 5000;

// xRange() gives the time axis: the chosen range ending now, whatever
// the data spans, so "15 min" shows fifteen minutes.
function options(width, xRange) {
  return {
    width, height: 140,
    legend: { live: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true, range: xRange }, dBm: {}, dB: {}, lock: { range: [0, 1.05] } },
    axes: [
      { stroke: css('--dim'), grid: { stroke: '#2a323c' }, ticks: { stroke: '#2a323c' } },
      { scale: 'dBm', stroke: css('--dim'), grid: { stroke: '#2a323c' }, size: 44 },
      { scale: 'dB', side: 1, stroke: css('--dim'), grid: { show: false }, size: 34 },
    ],
    series: [
      {},
      { label: 'signal dBm', scale: 'dBm', stroke: css('--acc'), width: 1.5, spanGaps: false },
      { label: 'CNR dB', scale: 'dB', stroke: '#d29922', width: 1.5, spanGaps: false },
      { label: 'lock', scale: 'lock', stroke: css('--ok'), fill: 'rgba(63,185,80,.12)', width: 1,
        paths: uPlot.paths.stepped({ align: 1 }) },
    ],
  };
}

export class SignalPlot {
  constructor(el, rangeMs) {
    this.el = el;
    this.rangeMs = rangeMs;
    this.cols = { time: [], signal: [], cnr: [], lock: [] };
    this.liveSince = Infinity; // time of the first live sample held
    const xRange = () => {
      const now = Date.now() / 1000;
      return [now - this.rangeMs / 1000, now];
    };
    this.plot = new uPlot(options(Math.max(el.clientWidth, 200), xRange), this.data(), el);
    new ResizeObserver(() => {
      const w = this.el.clientWidth;
      if (w > 0 && w !== this.plot.width) this.plot.setSize({ width: w, height: 140 });
    }).observe(el);
    // The axis follows the clock; a card taken off the page stops it.
    this.tick = setInterval(() => {
      if (this.el.isConnected) this.redraw();
      else clearInterval(this.tick);
    }, TICK_MS);
  }

  // The columns uPlot draws: what is held, and the last live sample
  // carried on to now (not stored, so data-points counts real samples).
  data() {
    const c = this.cols, n = c.time.length, now = Date.now() / 1000;
    const last = n ? c.time[n - 1] : -Infinity;
    if (last < this.liveSince || now - last > HOLD_S || now <= last)
      return [c.time, c.signal, c.cnr, c.lock];
    return [[...c.time, now], [...c.signal, c.signal[n - 1]],
      [...c.cnr, c.cnr[n - 1]], [...c.lock, c.lock[n - 1]]];
  }

  // History replaces what is held; live samples newer than its last point
  // are kept.
  setHistory(cols) {
    const last = cols.time.length ? cols.time[cols.time.length - 1] : -Infinity;
    const keep = this.cols.time.map((t, i) => i).filter((i) => this.cols.time[i] > last);
    for (const k of Object.keys(cols)) cols[k].push(...keep.map((i) => this.cols[k][i]));
    if (!keep.length) this.liveSince = Infinity;
    this.cols = cols;
    this.redraw();
  }

  setRange(ms) {
    this.rangeMs = ms;
    this.redraw();
  }

  add(sample) {
    const c = this.cols;
    if (c.time.length && sample.time <= c.time[c.time.length - 1]) return;
    for (const k of Object.keys(c)) c[k].push(sample[k]);
    this.liveSince = Math.min(this.liveSince, sample.time);
    this.redraw();
  }

  redraw() {
    const c = this.cols;
    const from = Date.now() / 1000 - this.rangeMs / 1000;
    let drop = 0;
    while (drop < c.time.length && c.time[drop] < from) drop++;
    if (drop) for (const k of Object.keys(c)) c[k].splice(0, drop);
    this.plot.setData(this.data());
    this.el.dataset.points = String(c.time.length);
  }
}

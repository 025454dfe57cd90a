// tunerd dashboard: the tuners of one box, live over the event stream.
// A token, if the box needs one, comes from the URL (#token=...) and is
// kept in sessionStorage; it travels as a Bearer header (REST) and as a
// "bearer.<token>" WebSocket subprotocol (browsers cannot set headers there).
'use strict';

const api = '/api/v1';
const tuners = new Map(); // id -> {data, el}
let channels = []; // the box's channel list (empty without the channels API)
let lastSeq = null;
let backoff = 500;

const hashToken = new URLSearchParams(location.hash.slice(1)).get('token');
if (hashToken) {
  sessionStorage.setItem('tunerd-token', hashToken);
  history.replaceState(null, '', location.pathname);
}
const token = sessionStorage.getItem('tunerd-token');

async function call(method, path, body) {
  const headers = { 'Accept': 'application/json' };
  if (token) headers['Authorization'] = 'Bearer ' + token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(api + path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const json = text ? JSON.parse(text) : {};
  if (!res.ok) {
    const e = json.error || { code: String(res.status), message: res.statusText };
    throw Object.assign(new Error(e.message), { code: e.code, details: e.details });
  }
  return json;
}

// A stream URL a player can open: players send no headers, so the token
// (if the page has one) goes in the query.
function streamUrl(id, service) {
  const q = new URLSearchParams();
  if (service !== undefined) q.set('service', service);
  if (token) q.set('access_token', token);
  const qs = q.toString();
  return `${location.origin}${api}/tuners/${id}/stream${qs ? '?' + qs : ''}`;
}

const mhz = (hz) => (hz / 1e6).toFixed(3).replace(/\.?0+$/, '') + ' MHz';
const fmtMeasure = (m) => (m ? `${m.value.toFixed(1)} ${m.unit}` : '-');

function paramsText(p) {
  if (!p) return 'not tuned';
  let s = `${p.delivery_system} ${mhz(p.frequency)}`;
  if (p.bandwidth) s += ` / ${p.bandwidth / 1e6} MHz`;
  if (p.symbol_rate) s += ` / ${p.symbol_rate / 1000} kS/s`;
  if (p.standard) s += ` ${p.standard}`;
  return s;
}

function makeCard(t) {
  const el = document.getElementById('tuner-card').content.firstElementChild.cloneNode(true);
  const sel = el.querySelector('select[name=delivery_system]');
  for (const ds of t.delivery_systems || []) sel.add(new Option(ds, ds));
  el.querySelector('form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    tune(t.id, new FormData(ev.target), el);
  });
  el.querySelector('.t-stream').href = streamUrl(t.id);
  renderChannels(el, t.id);
  document.getElementById('tuners').append(el);
  return el;
}

// The channel list of one card: name, LCN, a tune button, a stream link
// per service.  Hidden while the box has no channels.
function renderChannels(el, id) {
  const box = el.querySelector('.t-channels');
  box.hidden = channels.length === 0;
  el.querySelector('.t-channel-count').textContent = `(${channels.length})`;
  const body = box.querySelector('tbody');
  body.replaceChildren();
  for (const ch of channels) {
    const tr = document.createElement('tr');
    tr.innerHTML = '<td class="c-lcn"></td><td class="c-name"></td><td><button class="c-tune">tune</button></td>' +
      '<td><a class="c-stream" target="_blank" rel="noopener">stream</a></td>';
    tr.querySelector('.c-lcn').textContent = ch.lcn ?? '-';
    tr.querySelector('.c-name').textContent = ch.name;
    tr.querySelector('.c-name').title = `${paramsText(ch.params)} · service ${ch.service_id} · ${ch.type}`;
    tr.querySelector('.c-stream').href = streamUrl(id, ch.service_id);
    tr.querySelector('.c-tune').addEventListener('click', () => tuneChannel(id, ch.name, el));
    body.append(tr);
  }
}

async function loadChannels() {
  try {
    channels = (await call('GET', '/channels')).channels || [];
  } catch (e) {
    channels = []; // a box without the channels API, or no right to read it
  }
  for (const [id, entry] of tuners) renderChannels(entry.el, id);
}

async function tuneChannel(id, name, el) {
  const err = el.querySelector('.t-error');
  err.textContent = `tuning to ${name}...`;
  try {
    const r = await call('POST', `/tuners/${id}/tune`, { channel: name });
    err.textContent = '';
    refreshTuner(id);
    renderStatus(el, r.status);
  } catch (e) {
    err.textContent = `${e.code}: ${e.message}`;
  }
}

function renderStatus(el, st) {
  const lock = !!(st && st.fe_status && st.fe_status.lock);
  el.querySelector('.lock').classList.toggle('locked', lock);
  el.querySelector('.lock-text').textContent = lock ? 'lock' : 'no lock';
  const sig = st && st.signal_strength, cnr = st && st.cnr;
  el.querySelector('.v-signal').textContent = fmtMeasure(sig);
  el.querySelector('.v-cnr').textContent = fmtMeasure(cnr);
  el.querySelector('.m-signal').value = sig && sig.unit === 'dBm' ? sig.value : -100;
  el.querySelector('.m-cnr').value = cnr && cnr.unit === 'dB' ? cnr.value : 0;
}

function render(t) {
  let entry = tuners.get(t.id);
  if (!entry) entry = { el: makeCard(t) };
  entry.data = t;
  tuners.set(t.id, entry);
  const el = entry.el;
  el.querySelector('.t-id').textContent = '#' + t.id;
  el.querySelector('.t-chip').textContent = `${t.chip.vendor} ${t.chip.name}`;
  el.querySelector('.t-state').textContent = t.state + (t.lease ? ` · leased by ${t.lease.holder}` : '');
  el.querySelector('.t-bridge').textContent = `${t.bridge.name}, I2C ${t.bridge.adapter}:0x${t.bridge.i2c_addr.toString(16)}`;
  el.querySelector('.t-params').textContent = paramsText(t.params);
  const lc = t.last_change;
  el.querySelector('.t-last').textContent = lc ? `last change ${lc.time} by ${lc.origin}` : '';
  renderStatus(el, t.status);
}

async function tune(id, form, el) {
  const body = {
    delivery_system: form.get('delivery_system'),
    frequency: Math.round(parseFloat(form.get('frequency')) * 1e6),
  };
  if (form.get('bandwidth')) body.bandwidth = Number(form.get('bandwidth'));
  const err = el.querySelector('.t-error');
  err.textContent = 'tuning...';
  try {
    const r = await call('POST', `/tuners/${id}/tune`, body);
    err.textContent = '';
    refreshTuner(id);
    renderStatus(el, r.status);
  } catch (e) {
    err.textContent = `${e.code}: ${e.message}`;
  }
}

const pending = new Set();
function refreshTuner(id) {
  if (pending.has(id)) return;
  pending.add(id);
  setTimeout(async () => {
    pending.delete(id);
    try { render(await call('GET', `/tuners/${id}`)); } catch (e) { /* next event retries */ }
  }, 150);
}

function logEvent(ev) {
  const li = document.createElement('li');
  const rest = Object.entries(ev)
    .filter(([k]) => !['seq', 'time', 'type', 'box'].includes(k))
    .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' ');
  li.innerHTML = '<span class="seq"></span> <span class="type"></span> <span class="rest"></span>';
  li.querySelector('.seq').textContent = ev.seq ?? '';
  li.querySelector('.type').textContent = ev.type;
  li.querySelector('.rest').textContent = rest;
  li.title = JSON.stringify(ev);
  const log = document.getElementById('log');
  log.prepend(li);
  while (log.children.length > 300) log.lastChild.remove();
}

function onEvent(ev) {
  if (typeof ev.seq === 'number') lastSeq = ev.seq;
  if (ev.type === 'gap') { logEvent(ev); load(); return; }
  if (ev.type === 'scan.done') loadChannels();
  if (ev.type !== 'tuner.status') logEvent(ev);
  if (ev.tuner === undefined) return;
  const entry = tuners.get(ev.tuner);
  if (ev.type === 'tuner.status' && entry && ev.status && ev.status.fe_status) {
    renderStatus(entry.el, ev.status);
  } else {
    refreshTuner(ev.tuner);
  }
}

function connect() {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const q = lastSeq === null ? '' : `?since=${lastSeq}`;
  const protocols = ['tunerd.v1'];
  if (token) protocols.push('bearer.' + token);
  const ws = new WebSocket(`${proto}//${location.host}${api}/events${q}`, protocols);
  const conn = document.getElementById('conn');
  ws.onopen = () => { conn.className = 'conn up'; conn.textContent = 'events: live'; backoff = 500; };
  ws.onmessage = (m) => { try { onEvent(JSON.parse(m.data)); } catch (e) { /* ignore */ } };
  ws.onclose = () => {
    conn.className = 'conn down';
    conn.textContent = 'events: reconnecting';
    setTimeout(connect, backoff);
    backoff = Math.min(backoff * 2, 10000);
  };
}

async function load() {
  try {
    const box = await call('GET', '/box');
    document.getElementById('box-name').textContent = box.name;
    document.getElementById('box-info').textContent =
      `${box.tuners} tuners · stub ${box.stub.kind} (ABI ${box.stub.abi}, ${box.stub.connected ? 'connected' : 'disconnected'}) · v${box.version}`;
    if (lastSeq === null && box.events) lastSeq = box.events.next_seq - 1;
    for (const t of (await call('GET', '/tuners')).tuners) render(t);
    await loadChannels();
  } catch (e) {
    document.getElementById('box-info').textContent = `cannot reach the box: ${e.message}`;
  }
}

load().then(connect);

// tunerd console: the tuners of every box the user added, in one grid,
// with live and historical plots, tune and lease controls the caller's
// role allows, and one event log.  Boxes (URL and token) are kept in
// localStorage; the box serving the page is the first one by default.
// A link may carry a token as #token=... (a fragment never reaches a
// server or its log): it becomes this box's token and leaves the URL.
import { BoxClient, STATES } from './box_client.js';
import { TunerCard } from './tuner_card.js';
import { EventLog } from './event_log.js';

const STORE = 'tunerd-console-boxes';
const boxes = []; // BoxClient, in the order shown
const cards = new Map(); // `${box.url}#${id}` -> TunerCard
const log = new EventLog();
const rangeSel = document.getElementById('range');
const rangeMs = () => Number(rangeSel.value) * 1000;

function saved() {
  try { return JSON.parse(localStorage.getItem(STORE)) || null; } catch (e) { return null; }
}

function save() {
  localStorage.setItem(STORE, JSON.stringify(boxes.map((b) => ({ url: b.url, token: b.token }))));
}

// The fragment may also name more boxes, #box=http://box2:8080 (repeated):
// added without a token unless already kept (a demo's link).
function initialBoxes() {
  const hash = new URLSearchParams(location.hash.slice(1));
  const hashToken = hash.get('token');
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  const own = location.protocol.startsWith('http') ? location.origin : null;
  let list = saved();
  if (!list) list = own ? [{ url: own, token: '' }] : [];
  if (hashToken && own) {
    const mine = list.find((b) => b.url === own);
    if (mine) mine.token = hashToken;
    else list.unshift({ url: own, token: hashToken });
  }
  for (const u of hash.getAll('box')) {
    let url;
    try { url = new URL(u).origin; } catch (e) { continue; }
    if (!list.some((b) => b.url === url)) list.push({ url, token: '' });
  }
  return list;
}

// A box removed (or logged in again) while its load was under way must
// not bring its cards back.
const hooks = {
  onChange: () => renderBoxes(),
  onLoad: (box) => { if (boxes.includes(box)) { renderBoxCards(box); renderBoxes(); } },
  onEvent: (box, ev) => onEvent(box, ev),
};

function addBox(url, token) {
  const box = new BoxClient(url, token, hooks);
  boxes.push(box);
  box.start();
  return box;
}

function removeBox(box) {
  box.stop();
  boxes.splice(boxes.indexOf(box), 1);
  for (const [key, c] of cards) if (c.box === box) { c.el.remove(); cards.delete(key); }
  save();
  renderBoxes();
}

// A new token for a box: its client starts over, so that the role and
// what the cards offer follow the token.
function login(box, token) {
  const i = boxes.indexOf(box);
  removeBox(box);
  const fresh = new BoxClient(box.url, token, hooks);
  boxes.splice(i, 0, fresh);
  save();
  fresh.start();
}

function renderBoxCards(box) {
  for (const [key, c] of cards) if (c.box === box) { c.el.remove(); cards.delete(key); }
  const grid = document.getElementById('tuners');
  // Cards keep the order of the boxes, then of the tuner ids.
  const next = boxes.slice(boxes.indexOf(box) + 1).map((b) => grid.querySelector(`[data-box="${CSS.escape(b.url)}"]`)).find(Boolean);
  for (const t of [...box.tuners.values()].sort((a, b) => a.id - b.id)) {
    const card = new TunerCard(box, t, { rangeMs });
    cards.set(`${box.url}#${t.id}`, card);
    grid.insertBefore(card.el, next || null);
    card.attach();
    card.renderChannels();
  }
}

// Rows are kept and updated in place: a token being typed into one box's
// login form survives another box's state change.
const rows = new Map(); // BoxClient -> li
function renderBoxes() {
  const ul = document.getElementById('box-list');
  for (const [box, li] of rows) if (!boxes.includes(box)) { li.remove(); rows.delete(box); }
  for (const box of boxes) {
    if (!rows.has(box)) rows.set(box, boxRow(box));
    const li = rows.get(box);
    updateRow(box, li);
    ul.append(li); // in the boxes' order
  }
  const live = boxes.filter((b) => b.state === 'live').length;
  const conn = document.getElementById('conn');
  conn.className = 'conn ' + (boxes.length && live === boxes.length ? 'up' : 'down');
  conn.textContent = boxes.length && live === boxes.length ? 'events: live' : `events: ${live}/${boxes.length} live`;
  document.getElementById('box-name').textContent = boxes.map((b) => b.name).join(' · ');
  log.setBoxes(boxes);
  const needs = boxes.find((b) => b.state === 'login');
  if (needs) document.getElementById('boxes').open = true;
}

function updateRow(box, li) {
  li.querySelector('.b-name').textContent = box.name;
  const st = li.querySelector('.b-state');
  st.textContent = STATES[box.state] || box.state;
  st.dataset.state = box.state;
  st.title = box.detail || '';
  li.querySelector('.b-role').textContent = box.role ? `role: ${box.role}` : '';
}

function boxRow(box) {
  const li = document.getElementById('box-row').content.firstElementChild.cloneNode(true);
  li.dataset.box = box.url;
  li.querySelector('.b-url').textContent = box.url;
  const form = li.querySelector('form.b-login');
  form.addEventListener('submit', (ev) => { ev.preventDefault(); login(box, form.elements.token.value.trim()); });
  li.querySelector('.b-remove').addEventListener('click', () => removeBox(box));
  li.querySelector('.b-remove').setAttribute('aria-label', `remove box ${box.url}`);
  return li;
}

function onEvent(box, ev) {
  if (ev.type === 'gap') { log.add(box, ev); box.load(); return; }
  if (ev.type === 'scan.done') box.loadChannels().then(() => { for (const c of cards.values()) if (c.box === box) c.renderChannels(); });
  log.add(box, ev);
  if (ev.tuner === undefined) return;
  const card = cards.get(`${box.url}#${ev.tuner}`);
  if (!card) return;
  if (ev.type.startsWith('lease.')) card.leaseEvent(ev);
  if (ev.type === 'tuner.status') card.status(ev.status, Date.parse(ev.time) || Date.now());
  else refresh(card);
}

// Several events of one tuner close together: one GET after them.
const pending = new Set();
function refresh(card) {
  if (pending.has(card)) return;
  pending.add(card);
  setTimeout(async () => {
    pending.delete(card);
    try { card.update(await card.box.refreshTuner(card.id)); } catch (e) { /* the next event retries */ }
  }, 150);
}

document.getElementById('add-box').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const e = ev.target.elements;
  let url;
  try { url = new URL(e.url.value.trim()).origin; } catch (err) {
    document.getElementById('add-error').textContent = 'not a URL: ' + e.url.value;
    return;
  }
  if (boxes.some((b) => b.url === url)) {
    document.getElementById('add-error').textContent = 'already added: ' + url;
    return;
  }
  document.getElementById('add-error').textContent = '';
  addBox(url, e.token.value.trim());
  save();
  ev.target.reset();
  renderBoxes();
});

rangeSel.addEventListener('change', () => { for (const c of cards.values()) c.setRange(rangeMs()); });
setInterval(() => { for (const c of cards.values()) c.tick(); }, 1000);

// For the browser tests and the devtools console: the boxes' clients.
window.tunerdConsole = { boxes };

for (const b of initialBoxes()) addBox(b.url, b.token);
save();
renderBoxes();

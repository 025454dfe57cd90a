// The event log of every box: one line per event (local time, box, type,
// tuner, a summary) that opens to the event's whole JSON; filtered by
// type (a prefix with "*"), tuner and box.  Status samples are hidden
// unless asked for (and then kept from that moment): they would drown the
// rest.
const MAX_LINES = 500;
const SKIP = new Set(['seq', 'time', 'type', 'box', 'tuner', 'status']);

function summary(ev) {
  return Object.entries(ev)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => {
      if (v && typeof v === 'object') {
        if (k === 'params' && v.frequency) return `${v.delivery_system} ${v.frequency / 1e6} MHz`;
        return `${k}={…}`;
      }
      return `${k}=${v}`;
    }).join(' ');
}

export function typeMatches(filter, type) {
  if (!filter) return true;
  return filter.split(',').map((f) => f.trim()).filter(Boolean).some((f) =>
    (f.endsWith('*') ? type.startsWith(f.slice(0, -1)) : type === f));
}

export class EventLog {
  constructor() {
    this.list = document.getElementById('log');
    this.form = document.getElementById('log-filters');
    this.form.addEventListener('input', () => this.applyAll());
    this.form.addEventListener('submit', (e) => e.preventDefault());
  }

  filters() {
    const e = this.form.elements;
    return { type: e.type.value.trim(), tuner: e.tuner.value.trim(), box: e.box.value, status: e.status.checked };
  }

  // The box filter's choices follow the list of boxes.
  setBoxes(boxes) {
    const sel = this.form.elements.box;
    const was = sel.value;
    sel.replaceChildren(new Option('all boxes', ''));
    for (const b of boxes) sel.add(new Option(b.name, b.url));
    sel.value = boxes.some((b) => b.url === was) ? was : '';
  }

  matches(li, f) {
    const d = li.dataset;
    if (d.type === 'tuner.status' && !f.status && !f.type.startsWith('tuner.status')) return false;
    if (!typeMatches(f.type, d.type)) return false;
    if (f.tuner && d.tuner !== f.tuner) return false;
    if (f.box && d.box !== f.box) return false;
    return true;
  }

  applyAll() {
    const f = this.filters();
    for (const li of this.list.children) li.hidden = !this.matches(li, f);
  }

  add(box, ev) {
    // Status samples are not kept unless shown: hidden lines would push
    // the other events out of the bounded log.
    const f = this.filters();
    if (ev.type === 'tuner.status' && !f.status && !f.type.startsWith('tuner.status')) return;
    const li = document.createElement('li');
    li.dataset.type = ev.type || '';
    li.dataset.tuner = ev.tuner === undefined ? '' : String(ev.tuner);
    li.dataset.box = box.url;
    li.dataset.seq = ev.seq === undefined ? '' : String(ev.seq);
    const d = document.createElement('details');
    const s = document.createElement('summary');
    const time = document.createElement('time');
    const when = ev.time ? new Date(ev.time) : new Date();
    time.dateTime = when.toISOString();
    time.textContent = when.toLocaleTimeString();
    const parts = [time];
    for (const [cls, text] of [['e-box', ev.box || box.name], ['type', ev.type],
      ['e-tuner', ev.tuner === undefined ? '' : '#' + ev.tuner], ['rest', summary(ev)]]) {
      const span = document.createElement('span');
      span.className = cls;
      span.textContent = text;
      parts.push(' ', span);
    }
    s.append(...parts);
    const pre = document.createElement('pre');
    // The JSON is written when the line is opened: most never are.
    d.addEventListener('toggle', () => { if (d.open && !pre.textContent) pre.textContent = JSON.stringify(ev, null, 2); });
    d.append(s, pre);
    li.append(d);
    li.hidden = !this.matches(li, f);
    this.list.prepend(li);
    while (this.list.children.length > MAX_LINES) this.list.lastChild.remove();
  }
}

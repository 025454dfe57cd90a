// SPDX-License-Identifier: MIT
// Drives the console in headless Chromium (puppeteer-core) against two
// daemons: adds the second box, tunes from the UI (DVB-T, DVB-C with a
// symbol rate, analog with a standard), takes, uses and releases a lease,
// sees a pre-emption, filters and opens the event log, and checks that a
// viewer gets no controls.  Every wait is for a DOM condition or an API
// state; nothing asserts on pixels.  Prints one JSON line per step.
// Input: the environment (CONSOLE_SPEC: JSON with url1, url2, op, viewer,
// shots, chromium, modules).
import { createRequire } from 'node:module';
import path from 'node:path';

const spec = JSON.parse(process.env.CONSOLE_SPEC);
const require = createRequire(path.join(spec.modules, 'package.json'));
const puppeteer = require('puppeteer-core');
const WAIT = { timeout: 30000, polling: 'mutation' };

function step(name, extra = {}) {
  console.log(JSON.stringify({ step: name, ...extra }));
}

function check(cond, what) {
  if (!cond) throw new Error('check failed: ' + what);
}

async function api(url, method, p, body) {
  const res = await fetch(url + '/api/v1' + p, {
    method,
    headers: { Authorization: 'Bearer ' + spec.op, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

// Waits until the API answers what pred accepts (an API state, not a time).
async function apiUntil(page, url, p, pred, what) {
  for (let i = 0; i < 300; i++) {
    const r = await api(url, 'GET', p);
    if (pred(r.json)) return r.json;
    // the next try after the page's next frame: paced, not a timed guess
    await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => ok())));
  }
  throw new Error('API never reached: ' + what);
}

const card = (box, id) => `article.tuner[data-box="${box}"][data-tuner="${id}"]`;

async function fillTune(page, sel, values) {
  await page.select(`${sel} select[name=delivery_system]`, values.ds);
  await page.$eval(`${sel} input[name=frequency]`, (e, v) => { e.value = v; }, values.mhz);
  if (values.bw) await page.select(`${sel} select[name=bandwidth]`, values.bw);
  if (values.std) await page.select(`${sel} select[name=standard]`, values.std);
  if (values.sr) await page.$eval(`${sel} input[name=symbol_rate]`, (e, v) => { e.value = v; }, values.sr);
}

async function waitCards(page, box, n) {
  await page.waitForFunction((b, k) => document.querySelectorAll(`article.tuner[data-box="${b}"]`).length === k,
    WAIT, box, n);
}

async function addSecondBox(page) {
  await page.click('#boxes > summary');
  await page.type('#add-box input[name=url]', spec.url2);
  await page.type('#add-box input[name=token]', spec.op);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('#box-list .b-state[data-state=live]').length === 2, WAIT);
  const roles = await page.$$eval('#box-list .b-role', (l) => l.map((e) => e.textContent));
  check(roles.every((r) => r === 'role: operator'), 'both boxes operator: ' + roles);
  const names = await page.$$eval('#box-list .b-name', (l) => l.map((e) => e.textContent));
  check(names.join() === 'console-a,console-b', 'box names: ' + names);
  await waitCards(page, spec.url2, 2);
  step('second box added', { names });
}

async function tuneAndLock(page) {
  const sel = card(spec.url2, 1);
  check(await page.$eval(`${sel} .t-box`, (e) => e.textContent) === 'console-b', 'card names its box');
  // the QT1010 of box 2, never tuned: no green lock beside "not tuned"
  const idle = card(spec.url2, 2);
  check(await page.$eval(`${idle} .t-params`, (e) => e.textContent) === 'not tuned', 'qt1010 not tuned');
  check(!(await page.$(`${idle} .lock.locked`)), 'an untuned tuner shows no lock');
  const before = Number(await page.$eval(`${sel} .t-plot`, (e) => e.dataset.points || '0'));
  await fillTune(page, sel, { ds: 'DVBT', mhz: '474', bw: '8000000' });
  await page.click(`${sel} .t-tune`);
  await page.waitForSelector(`${sel} .lock.locked`, WAIT);
  await page.waitForFunction((s, b) => Number(document.querySelector(`${s} .t-plot`).dataset.points) > b + 1,
    WAIT, sel, before);
  const t = (await api(spec.url2, 'GET', '/tuners/1')).json;
  check(t.params && t.params.frequency === 474000000, 'box 2 tuner 1 tuned by the UI');
  step('tuned from the UI, locked, plot grew', { before });
}

async function leases(page) {
  const sel = card(spec.url1, 1);
  await page.$eval(`${sel} input[name=holder]`, (e) => { e.value = 'console-test'; });
  await page.click(`${sel} .l-take`);
  await page.waitForSelector(`${sel} .l-release:not([hidden])`, WAIT);
  await page.waitForFunction((s) => /expires in \d+ s/.test(document.querySelector(`${s} .t-expiry`).textContent),
    WAIT, sel);
  let t = (await api(spec.url1, 'GET', '/tuners/1')).json;
  check(t.lease && t.lease.holder === 'console-test', 'the lease is on the box');
  // a tune of a leased tuner goes through only with the lease id
  await fillTune(page, sel, { ds: 'DVBT', mhz: '474', bw: '8000000' });
  await page.click(`${sel} .t-tune`);
  await apiUntil(page, spec.url1, '/tuners/1', (j) => j.params && j.params.frequency === 474000000, 'leased tune');
  await page.click(`${sel} .l-renew`);
  await page.waitForFunction(() => [...document.querySelectorAll('#log li')]
    .some((li) => li.dataset.type === 'lease.renewed'), WAIT);
  await page.click(`${sel} .l-release`);
  await page.waitForSelector(`${sel} .l-take:not([hidden])`, WAIT);
  t = await apiUntil(page, spec.url1, '/tuners/1', (j) => j.lease === null, 'lease released');
  step('lease taken, used, renewed, released');
  // taken again, then pre-empted by a higher priority elsewhere
  await page.click(`${sel} .l-take`);
  await page.waitForSelector(`${sel} .l-release:not([hidden])`, WAIT);
  const r = await api(spec.url1, 'POST', '/tuners/1/lease', { holder: 'recorder', ttl_s: 30, priority: 500 });
  check(r.status === 201, 'pre-empting lease: ' + r.status);
  await page.waitForFunction((s) => document.querySelector(`${s} .t-notice`).textContent.includes('pre-empted by recorder'),
    WAIT, sel);
  await page.waitForSelector(`${sel} .l-take:not([hidden])`, WAIT);
  await api(spec.url1, 'DELETE', `/tuners/1/lease?lease_id=${r.json.lease_id}`);
  step('pre-emption shown');
}

async function formFollowsChip(page) {
  const xc = card(spec.url1, 3); // XC3028: analog
  await page.select(`${xc} select[name=delivery_system]`, 'ANALOG_TV');
  check(await page.$eval(`${xc} select[name=standard]`, (e) => !e.hidden), 'standard shown for analog');
  check(await page.$eval(`${xc} input[name=symbol_rate]`, (e) => e.hidden), 'no symbol rate for analog');
  await fillTune(page, xc, { ds: 'ANALOG_TV', mhz: '175.25', std: 'PAL-BG' });
  await page.click(`${xc} .t-tune`);
  await page.waitForFunction((s) => document.querySelector(`${s} .t-params`).textContent.includes('PAL-BG'), WAIT, xc);
  const a = (await api(spec.url1, 'GET', '/tuners/3')).json;
  check(a.params.standard === 'PAL-BG' && a.params.delivery_system === 'ANALOG_TV', 'analog tune with a standard');
  const mt = card(spec.url1, 4); // MT2060: DVB-C
  await page.select(`${mt} select[name=delivery_system]`, 'DVBC_ANNEX_A');
  check(await page.$eval(`${mt} input[name=symbol_rate]`, (e) => !e.hidden), 'symbol rate shown for DVB-C');
  check(await page.$eval(`${mt} select[name=standard]`, (e) => e.hidden), 'no standard for DVB-C');
  await fillTune(page, mt, { ds: 'DVBC_ANNEX_A', mhz: '474', sr: '6900', bw: '8000000' });
  await page.click(`${mt} .t-tune`);
  await page.waitForFunction((s) => document.querySelector(`${s} .t-params`).textContent.includes('6900 kS/s'), WAIT, mt);
  const c = (await api(spec.url1, 'GET', '/tuners/4')).json;
  check(c.params.symbol_rate === 6900000, 'DVB-C symbol rate sent');
  const xcSystems = await page.$$eval(`${xc} select[name=delivery_system] option`, (l) => l.map((o) => o.value));
  check(!xcSystems.includes('DVBC_ANNEX_A'), 'the XC3028 offers no DVB-C');
  step('tune form follows the chip', { xcSystems });
}

async function eventLog(page) {
  await page.waitForFunction((b) => [...document.querySelectorAll('#log li')]
    .some((li) => li.dataset.type === 'tuner.tune' && li.dataset.box === b), WAIT, spec.url2);
  await page.type('#log-filters input[name=type]', 'lease.*');
  const shown = await page.$$eval('#log li:not([hidden])', (l) => l.map((li) => li.dataset.type));
  check(shown.length > 0 && shown.every((t) => t.startsWith('lease.')), 'type filter: ' + shown);
  // keyboard: the first line opens with Enter and shows the event's JSON
  // (the details' toggle event comes after the key: wait for the JSON)
  const line = await page.$('#log li:not([hidden])');
  await line.$eval('summary', (e) => e.focus());
  await page.keyboard.press('Enter');
  await page.waitForFunction((li) => li.querySelector('pre').textContent !== '', WAIT, line);
  const json = await line.$eval('pre', (e) => e.textContent);
  check(JSON.parse(json).type.startsWith('lease.'), 'expanded JSON');
  await page.$eval('#log-filters input[name=type]', (e) => { e.value = ''; e.dispatchEvent(new Event('input', { bubbles: true })); });
  await page.select('#log-filters select[name=box]', spec.url2);
  const boxes = await page.$$eval('#log li:not([hidden])', (l) => l.map((li) => li.dataset.box));
  check(boxes.length > 0 && boxes.every((b) => b === spec.url2), 'box filter');
  await page.select('#log-filters select[name=box]', '');
  step('event log filters and JSON view', { shown: shown.length });
}

// The event stream of box 2 is cut while a tune happens there: the
// reconnect asks since= the last event seen, and the log gets the tune
// once, from the replay.
async function resume(page) {
  const seen = await page.evaluate(() => {
    const b = window.tunerdConsole.boxes[1];
    b.stopped = true; // no reconnect until the test says so
    b.ws.close();
    return b.lastSeq;
  });
  await page.waitForFunction(() => window.tunerdConsole.boxes[1].ws.readyState === WebSocket.CLOSED, WAIT);
  const r = await api(spec.url2, 'POST', '/tuners/1/tune', { delivery_system: 'DVBT', frequency: 490000000, bandwidth: 8000000 });
  check(r.status === 200, 'tune while the page is away: ' + r.status);
  const since = await page.evaluate(() => {
    const b = window.tunerdConsole.boxes[1];
    b.stopped = false;
    b.connect();
    return b.eventsQuery;
  });
  check(since === `?since=${seen}`, `reconnect resumes with since=${seen}: ${since}`);
  await page.waitForFunction((u) => [...document.querySelectorAll('#log li')].some((li) =>
    li.dataset.box === u && li.dataset.type === 'tuner.tune' && li.textContent.includes('490 MHz')), WAIT, spec.url2);
  const seqs = await page.$$eval('#log li', (l, u) => l.filter((li) => li.dataset.box === u).map((li) => li.dataset.seq), spec.url2);
  check(new Set(seqs).size === seqs.length, 'no event logged twice');
  await page.waitForSelector('#box-list .box:nth-child(2) .b-state[data-state=live]', WAIT);
  step('event stream resumed', { since: seen });
}

// With the history API the plot starts from the box's history; without
// it (404) the plot stays live-only and says so.
async function history(page) {
  const r = await api(spec.url2, 'GET', '/tuners/1/history');
  const note = await page.$eval(`${card(spec.url2, 1)} .t-plot-note`, (e) => e.textContent);
  if (r.status === 404) check(note.includes('live only'), 'no history: live only: ' + note);
  else check(r.status === 200 && note === '', `history ${r.status}: note "${note}"`);
  await page.select('#range', '900');
  await page.waitForFunction((s) => Number(document.querySelector(`${s} .t-plot`).dataset.points) > 0, WAIT, card(spec.url2, 1));
  step('history', { status: r.status, note });
}

async function shots(page) {
  await page.$eval('#boxes', (d) => { d.open = false; });
  await page.screenshot({ path: path.join(spec.shots, 'console-desktop.png') });
  await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 1 });
  await page.waitForFunction(() => innerWidth === 390, WAIT);
  const over = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  check(over <= 0, `no sideways scroll at phone width (${over} px over)`);
  await page.screenshot({ path: path.join(spec.shots, 'console-phone.png'), fullPage: false });
  await page.setViewport({ width: 1280, height: 720, deviceScaleFactor: 1 });
  step('screenshots', { dir: spec.shots });
}

async function viewer(browser) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport({ width: 1280, height: 720 });
  // no token yet: the box asks for one and the login form takes it
  await page.goto(spec.url1 + '/');
  await page.waitForSelector('#box-list .b-state[data-state=login]', WAIT);
  check(await page.$eval('#boxes', (d) => d.open), 'the login form is shown');
  await page.type('#box-list form.b-login input[name=token]', spec.viewer);
  await page.keyboard.press('Enter');
  await waitCards(page, spec.url1, 4);
  await page.waitForSelector('#box-list .b-state[data-state=live]', WAIT);
  check(await page.$eval('#box-list .b-role', (e) => e.textContent) === 'role: viewer', 'viewer role shown');
  const controls = await page.$$('form.tune, .t-tune, form.lease, .c-tune');
  check(controls.length === 0, 'a viewer gets no controls: ' + controls.length);
  const stored = await page.evaluate(() => localStorage.getItem('tunerd-console-boxes'));
  check(JSON.parse(stored)[0].token === spec.viewer, 'the token is kept in localStorage');
  await ctx.close();
  step('viewer sees no controls');
}

async function main() {
  const browser = await puppeteer.launch({
    executablePath: spec.chromium, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => step('pageerror', { message: String(e) }));
    await page.setViewport({ width: 1280, height: 720, deviceScaleFactor: 1 });
    await page.goto(`${spec.url1}/#token=${spec.op}`);
    await waitCards(page, spec.url1, 4);
    await page.waitForSelector('#box-list .b-state[data-state=live]', WAIT);
    step('first box live');
    await addSecondBox(page);
    await tuneAndLock(page);
    await leases(page);
    await formFollowsChip(page);
    await eventLog(page);
    await resume(page);
    await history(page);
    await shots(page);
    await viewer(browser);
  } finally {
    await browser.close();
  }
}

main().then(() => step('done')).catch((e) => {
  console.log(JSON.stringify({ step: 'failed', message: String(e && e.stack || e) }));
  process.exit(1);
});

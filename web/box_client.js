// One tunerd box seen from the console: its REST calls (token as a
// Bearer header), the caller's role, its tuners and channels, and its
// event stream over WebSocket (token as the "bearer.<token>" subprotocol,
// never in a URL), resumed with since= after a reconnect.
const API = '/api/v1';

export class ApiError extends Error {
  constructor(status, e) {
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || String(status);
    this.details = e.details;
  }
}

// Connection states shown per box.
export const STATES = {
  connecting: 'connecting', live: 'live', reconnecting: 'reconnecting',
  login: 'token needed', refused: 'refused', unreachable: 'unreachable',
};

export class BoxClient {
  constructor(url, token, hooks) {
    this.url = url.replace(/\/+$/, '');
    this.token = token || '';
    this.hooks = hooks; // {onChange(box), onEvent(box, ev), onLoad(box)}
    this.name = this.url.replace(/^https?:\/\//, '');
    this.state = 'connecting';
    this.detail = '';
    this.role = null;
    this.tuners = new Map(); // id -> Tuner object
    this.channels = [];
    this.leases = new Map(); // tuner id -> {lease_id, holder}: leases held here
    this.lastSeq = null;
    this.backoff = 500;
    this.ws = null;
    this.stopped = false;
    this.history = true; // false once the box answers 404: live-only plots
  }

  async call(method, path, body) {
    const headers = { Accept: 'application/json' };
    if (this.token) headers.Authorization = 'Bearer ' + this.token;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(this.url + API + path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json = {};
    try { json = text ? JSON.parse(text) : {}; } catch (e) { json = {}; }
    if (!res.ok) throw new ApiError(res.status, json.error || { message: res.statusText });
    return json;
  }

  // The API names no role for the caller, but an admin-only read answers
  // 200 to an admin and 403 with details.role to anyone else: a probe
  // without side effects.
  async probeRole() {
    try {
      await this.call('GET', '/plugins');
      return 'admin';
    } catch (e) {
      if (e.status === 403 && e.details && e.details.role) return e.details.role;
      return 'viewer';
    }
  }

  setState(state, detail = '') {
    this.state = state;
    this.detail = detail;
    this.hooks.onChange(this);
  }

  async start() {
    if (await this.load()) this.connect();
  }

  stop() {
    this.stopped = true;
    if (this.ws) this.ws.close();
  }

  async load() {
    try {
      const box = await this.call('GET', '/box');
      this.name = box.name || this.name;
      this.info = box;
      if (this.lastSeq === null && box.events) this.lastSeq = box.events.next_seq - 1;
      this.role = await this.probeRole();
      const list = (await this.call('GET', '/tuners')).tuners;
      this.tuners = new Map(list.map((t) => [t.id, t]));
      await this.loadChannels();
      this.hooks.onLoad(this);
      return true;
    } catch (e) {
      if (e.status === 401) this.setState('login', e.message);
      else if (e.status === 403) this.setState('refused', e.message);
      else {
        this.setState('unreachable', e.message);
        this.retry(() => this.start());
      }
      return false;
    }
  }

  async loadChannels() {
    try {
      this.channels = (await this.call('GET', '/channels')).channels || [];
    } catch (e) {
      this.channels = []; // no channels API on this box, or no channels
    }
  }

  async refreshTuner(id) {
    const t = await this.call('GET', `/tuners/${id}`);
    this.tuners.set(id, t);
    return t;
  }

  retry(fn) {
    if (this.stopped) return;
    setTimeout(fn, this.backoff);
    this.backoff = Math.min(this.backoff * 2, 10000);
  }

  connect() {
    if (this.stopped) return;
    const q = this.lastSeq === null ? '' : `?since=${this.lastSeq}`;
    const protocols = ['tunerd.v1'];
    if (this.token) protocols.push('bearer.' + this.token);
    const ws = new WebSocket(`${this.url.replace(/^http/, 'ws')}${API}/events${q}`, protocols);
    this.eventsQuery = q;
    this.ws = ws;
    ws.onopen = () => { this.backoff = 500; this.setState('live'); };
    ws.onmessage = (m) => {
      let ev;
      try { ev = JSON.parse(m.data); } catch (e) { return; }
      if (typeof ev.seq === 'number') this.lastSeq = ev.seq;
      this.hooks.onEvent(this, ev);
    };
    ws.onclose = () => {
      if (this.stopped) return;
      this.setState('reconnecting');
      this.retry(() => this.connect());
    };
  }

  // A stream URL a player can open: players send no headers, so the
  // token goes in the query (the daemon never logs it).
  streamUrl(id, service) {
    const q = new URLSearchParams();
    if (service !== undefined) q.set('service', service);
    if (this.token) q.set('access_token', this.token);
    const qs = q.toString();
    return `${this.url}${API}/tuners/${id}/stream${qs ? '?' + qs : ''}`;
  }

  canOperate() {
    return this.role === 'operator' || this.role === 'admin';
  }
}

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench_scale: one box with 64, 128 and 256 tuners (MT2060, QT1010 and
XC3028 in turn), a real tunerd on a real port.  Per size: the time from
the daemon's start until every tuner is ready, PSS of the daemon (with its
worker zygote), the workers and the box, GET /api/v1/tuners p50/p99 from
one keep-alive client (alone, then with --subscribers WebSocket event
subscribers connected), and the tune-event latency (REST request sent to
its tuner.tune event received by a WebSocket subscriber) while every tuner
is retuned once.  Each figure is the median of --runs runs with its spread
(min..max), and its ratio to the 64-tuner median.

The programs come from the build tree this file was installed to (or
TUNERD_BIN / TUNERD_PLUGINS); the processes are started with the
integration tests' harness.
"""
import argparse
import http.client
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, "@TUNERD_IT_DIR@")
os.environ.setdefault("TUNERD_BIN", HERE)
os.environ.setdefault("TUNERD_PLUGINS", os.path.join(HERE, "..", "plugins"))
import harness  # noqa: E402
from events_util import ws_connect, ws_next  # noqa: E402

CHIPS = ("mt2060", "qt1010", "xc3028")
TUNES = ({"delivery_system": "DVBT", "frequency": 474000000,
          "bandwidth": 8000000},
         {"delivery_system": "DVBT", "frequency": 482000000,
          "bandwidth": 8000000})


def pss_kib(pid):
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


def children(pid):
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        return [int(p) for p in f.read().split()]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))]


class Run:
    """One box and one daemon with n tuners."""

    def __init__(self, n, args):
        self.n = n
        self.dir = tempfile.mkdtemp(prefix="bench-scale-")
        chips = ",".join(CHIPS[i % len(CHIPS)] for i in range(n))
        self.box = harness.Box(self.dir, tuners=chips, i2c_khz=args.i2c_khz,
                               settle=args.settle)
        self.port = harness.free_port()
        self.t0 = time.monotonic()
        self.daemon = harness.Daemon(
            self.box, extra=["--listen", "127.0.0.1:%d" % self.port])
        self.conn = None

    def get(self, path):
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                   timeout=30)
        self.conn.request("GET", path)
        r = self.conn.getresponse()
        return r.status, r.read()

    def ready(self):
        try:
            st, body = self.get("/api/v1/tuners")
        except OSError:
            self.conn = None
            return False
        ts = json.loads(body)["tuners"] if st == 200 else []
        return len(ts) == self.n and all(t["state"] == "ready" for t in ts)

    def time_to_ready(self):
        harness.wait_for(self.ready, timeout=120, step=0.01,
                         what="every tuner ready")
        return time.monotonic() - self.t0

    def pss(self):
        dpid, bpid = self.daemon.proc.pid, self.box.proc.pid
        kids = children(dpid)
        # the oldest child is the worker zygote: the daemon's share
        zygote = min(kids) if kids else None
        workers = [k for k in kids if k != zygote]
        return {"daemon": pss_kib(dpid) + (pss_kib(zygote) if zygote
                                           else 0),
                "workers": sum(pss_kib(k) for k in workers),
                "box": pss_kib(bpid)}

    def get_latency(self, count):
        lat = []
        for _ in range(count):
            t = time.perf_counter()
            st, body = self.get("/api/v1/tuners")
            lat.append(time.perf_counter() - t)
            assert st == 200, body
        return lat

    def subscribe(self, count):
        """count WebSocket subscribers to tuner.tune through the port."""
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < count + 256:
            resource.setrlimit(resource.RLIMIT_NOFILE,
                               (min(count + 256, hard), hard))
        return [ws_connect(self.port, "types=tuner.tune", timeout=120)
                for _ in range(count)]

    def tune_latency(self, nclients, which):
        ws = ws_connect(self.port, "types=tuner.tune", timeout=60)
        sent, got = {}, {}

        def client(k):
            c = http.client.HTTPConnection("127.0.0.1", self.port,
                                           timeout=60)
            body = json.dumps(TUNES[which]).encode()
            for i in range(k + 1, self.n + 1, nclients):
                sent[i] = time.perf_counter()
                c.request("POST", "/api/v1/tuners/%d/tune" % i, body=body,
                          headers={"Content-Type": "application/json"})
                r = c.getresponse()
                r.read()
                assert r.status == 200, r.status
            c.close()

        threads = [threading.Thread(target=client, args=(k,))
                   for k in range(nclients)]
        for t in threads:
            t.start()
        while len(got) < self.n:
            m = ws_next(ws, lambda m: m["type"] == "tuner.tune"
                        and m["origin"] == "api", timeout=60)
            got[m["tuner"]] = time.perf_counter()
        for t in threads:
            t.join()
        ws.close()
        return [got[i] - sent[i] for i in got]

    def stop(self):
        if self.conn:
            self.conn.close()
        self.daemon.stop()
        self.box.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def measure(n, args, run_no):
    r = Run(n, args)
    try:
        fig = {"ready_s": r.time_to_ready()}
        time.sleep(0.5)  # let the last probes settle before PSS
        p = r.pss()
        fig.update({"pss_daemon_mib": p["daemon"] / 1024.0,
                    "pss_workers_mib": p["workers"] / 1024.0,
                    "pss_box_mib": p["box"] / 1024.0,
                    "pss_total_mib": sum(p.values()) / 1024.0})
        lat = r.get_latency(args.gets)
        fig["get_p50_ms"] = pct(lat, 50) * 1e3
        fig["get_p99_ms"] = pct(lat, 99) * 1e3
        if args.subscribers:
            subs = r.subscribe(args.subscribers)
            try:
                lat = r.get_latency(args.gets)
            finally:
                for ws in subs:
                    ws.close()
            fig["get_subs_p50_ms"] = pct(lat, 50) * 1e3
            fig["get_subs_p99_ms"] = pct(lat, 99) * 1e3
        tl = r.tune_latency(args.clients, run_no % 2)
        fig["tune_event_p50_ms"] = pct(tl, 50) * 1e3
        fig["tune_event_p99_ms"] = pct(tl, 99) * 1e3
        return fig
    finally:
        r.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="64,128,256")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gets", type=int, default=500,
                    help="GET /api/v1/tuners per run")
    ap.add_argument("--subscribers", type=int, default=1000,
                    help="WebSocket subscribers during the second GETs")
    ap.add_argument("--clients", type=int, default=8,
                    help="REST clients retuning at once")
    ap.add_argument("--i2c-khz", type=int, default=0)
    ap.add_argument("--settle", type=float, default=0.0)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    res = {n: [] for n in sizes}
    for run_no in range(args.runs):  # sizes interleaved: noise spreads
        for n in sizes:
            res[n].append(measure(n, args, run_no))
    keys = list(res[sizes[0]][0].keys())
    base = {k: statistics.median(f[k] for f in res[sizes[0]])
            for k in keys}
    print("bench_scale: %d runs, box i2c %d kHz settle %.2f; median "
          "[min..max] (x the %d-tuner median)" %
          (args.runs, args.i2c_khz, args.settle, sizes[0]))
    for k in keys:
        cells = []
        for n in sizes:
            v = [f[k] for f in res[n]]
            med = statistics.median(v)
            cells.append("%4d: %8.2f [%.2f..%.2f] (%.2fx)" %
                         (n, med, min(v), max(v),
                          med / base[k] if base[k] else 0))
        print("%-18s %s" % (k, "   ".join(cells)))


if __name__ == "__main__":
    main()

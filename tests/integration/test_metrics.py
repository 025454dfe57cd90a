# SPDX-License-Identifier: MIT
"""GET /metrics: the Prometheus text format (checked by Debian's promtool),
the roles and the scrape token, and the counters a tune moves."""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import unittest

from events_util import EventsFromNow, ws_connect, ws_next
from harness import ApiBoxTest, TsSource, start_refused, wait_for

DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000}
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
PROMTOOL = shutil.which("promtool")

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def parse_metrics(text):
    """{(name, frozenset of (label, value)): value} of every sample."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise AssertionError("not a sample line: %r" % line)
        labels = frozenset(LABEL.findall(m.group(3) or ""))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def sample(samples, name, **labels):
    """The value of the one series of name whose labels include labels."""
    want = set(labels.items())
    found = [v for (n, ls), v in samples.items()
             if n == name and want <= set(ls)]
    if len(found) != 1:
        raise AssertionError("%d series %s%r" % (len(found), name, labels))
    return found[0]


def promtool_check(text):
    """promtool check metrics: the format and Prometheus's naming lint."""
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=text,
                       capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout + p.stderr


class MetricsTest(ApiBoxTest):
    config = {"name": "metrics-box"}

    def scrape(self, **kw):
        r = self.api("GET", "/metrics", **kw)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.headers.get("content-type"), CONTENT_TYPE)
        return r.body.decode(), parse_metrics(r.body.decode())


class MetricsLoopback(MetricsTest):
    """No tokens: the loopback rule, as for the rest of the API."""

    @unittest.skipUnless(PROMTOOL, "promtool (Debian prometheus) missing")
    def test_format_is_valid(self):
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        self.api("GET", "/api/v1/tuners")
        text, _ = self.scrape()
        rc, out = promtool_check(text)
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.strip(), "")

    def test_a_tune_moves_the_counters(self):
        _, before = self.scrape()
        labels = dict(tuner="1", box="metrics-box")
        tunes0 = sample(before, "tunerd_tunes_total", origin="api",
                        result="ok", **labels)
        i2c0 = sample(before, "tunerd_tuner_i2c_transfers_total", **labels)
        hist0 = sample(before, "tunerd_tune_duration_seconds_count",
                       **labels)
        r = self.api("POST", "/api/v1/tuners/1/tune",
                     dict(DVBT_474, wait_lock_ms=2000))
        self.assertEqual(r.status, 200, r)
        self.assertTrue(r.json["locked"], r)
        _, after = self.scrape()
        self.assertEqual(sample(after, "tunerd_tunes_total", origin="api",
                                result="ok", **labels), tunes0 + 1)
        self.assertGreater(sample(after, "tunerd_tuner_i2c_transfers_total",
                                  **labels), i2c0)
        self.assertEqual(sample(after, "tunerd_tune_duration_seconds_count",
                                **labels), hist0 + 1)
        self.assertEqual(sample(after, "tunerd_tuner_locked", **labels), 1)
        chip = self.api("GET", "/api/v1/tuners/1").json["chip"]["name"]
        self.assertEqual(sample(after, "tunerd_tuner_locked", chip=chip,
                                **labels), 1)
        # the box's test environment: MUX A at -50 dBm, 30 dB
        self.assertAlmostEqual(sample(after, "tunerd_tuner_signal_dbm",
                                      **labels), -50.0, delta=3.0)
        self.assertAlmostEqual(sample(after, "tunerd_tuner_cnr_db",
                                      **labels), 30.0, delta=3.0)
        self.assertGreaterEqual(
            sample(after, "tunerd_http_requests_total",
                   route="/api/v1/tuners/{id}/tune", status="200"), 1)
        self.assertGreaterEqual(
            sample(after, "tunerd_http_request_duration_seconds_count",
                   route="/api/v1/tuners/{id}/tune"), 1)

    def test_routes_are_templates(self):
        for path in ("/api/v1/tuners/7", "/api/v1/tuners/8",
                     "/api/v1/nothing/%d" % os.getpid()):
            self.api("GET", path)
        _, m = self.scrape()
        self.assertEqual(sample(m, "tunerd_http_requests_total",
                                route="/api/v1/tuners/{id}", status="404"),
                         2)
        self.assertGreaterEqual(sample(m, "tunerd_http_requests_total",
                                       route="other", status="404"), 1)
        routes = {dict(ls).get("route") for (n, ls) in m
                  if n == "tunerd_http_requests_total"}
        self.assertFalse([x for x in routes if re.search(r"/\d", x)],
                         routes)

    def test_losses_and_workers_are_exposed(self):
        _, m = self.scrape()
        version = self.api("GET", "/api/v1/box").json["version"]
        self.assertEqual(sample(m, "tunerd_build_info", version=version,
                                box="metrics-box"), 1)
        self.assertGreater(sample(m, "tunerd_start_time_seconds"),
                           1.5e9)
        for kind in ("events", "stream"):
            self.assertEqual(sample(m, "tunerd_slow_consumers_total",
                                    kind=kind), 0)
        for reason in ("slow_consumer", "gap"):
            self.assertEqual(sample(m, "tunerd_events_dropped_total",
                                    reason=reason), 0)
        for name in ("tunerd_worker_restarts_total",
                     "tunerd_worker_hangs_total"):
            self.assertEqual(sample(m, name, tuner="2"), 0)

    def test_the_grafana_dashboard_names_real_series(self):
        """Every metric docs/grafana-tunerd.json queries is one /metrics
        has (a histogram's by its _bucket series)."""
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "..", "..", "docs",
                               "grafana-tunerd.json")) as f:
            dash = json.load(f)
        exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
        exprs += [v["definition"] for v in dash["templating"]["list"]]
        used = set(re.findall(r"\b(tunerd_[a-z0-9_]+)", " ".join(exprs)))
        text, _ = self.scrape()
        types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
        names = set(types)
        names |= {n + "_bucket" for n, t in types.items()
                  if t == "histogram"}
        self.assertGreaterEqual(len(used), 10, used)
        self.assertEqual(used - names, set())

    def test_head_and_methods(self):
        r = self.api("HEAD", "/metrics")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.body, b"")
        r = self.api("POST", "/metrics", {})
        self.assertError(r, 405, "method_not_allowed")
        self.assertEqual(r.headers["allow"], "GET, HEAD")
        self.assertError(self.api("GET", "/metrics?x=1"), 400,
                         "bad_request")


class MetricsWorkerHang(MetricsTest):
    """A stopped worker: its hang, restart, the lost tune and the 504."""
    power_up_wait = True
    deadline_ms = 1000
    # no status sampling: the tune is the one command that times out
    daemon_extra = ("--deadline-ms", "1000", "--status-interval-ms", "0")

    def test_a_hang_counts(self):
        ws = ws_connect(self.port, "since=0&tuner=2")
        self.addCleanup(ws.close)
        pid = ws_next(ws, lambda m: m.get("type") == "tuner.ready")["pid"]
        events = EventsFromNow(self, "tuner=2")
        os.kill(pid, signal.SIGSTOP)
        r = self.api("POST", "/api/v1/tuners/2/tune", DVBT_474)
        self.assertError(r, 504, "deadline")
        events.wait("worker.hang")
        events.wait("tuner.ready")
        _, m = self.scrape()
        t2 = dict(tuner="2")
        self.assertEqual(sample(m, "tunerd_worker_hangs_total", **t2), 1)
        self.assertEqual(sample(m, "tunerd_worker_restarts_total", **t2), 1)
        self.assertEqual(sample(m, "tunerd_tuner_timeouts_total", **t2), 1)
        # the worker never began it: a timeout, not a tune that ran
        self.assertEqual(sample(m, "tunerd_tunes_total", origin="api",
                                result="ok", **t2), 0)
        self.assertEqual(sample(m, "tunerd_http_requests_total",
                                route="/api/v1/tuners/{id}/tune",
                                status="504"), 1)
        for name in ("tunerd_worker_hangs_total",
                     "tunerd_worker_restarts_total"):
            self.assertEqual(sample(m, name, tuner="1"), 0)


class MetricsLosses(MetricsTest):
    """Events lost to a gap and to a slow consumer, and a stream read."""
    # 4 tuners x 100 status events a second through a ring of 16 (a
    # heartbeat as short as the interval publishes every read)
    daemon_extra = ("--status-interval-ms", "10", "--status-heartbeat-ms",
                    "10", "--event-ring", "16")

    def test_a_gap_counts(self):
        wait_for(lambda: self.api("GET", "/api/v1/box").json["events"]
                 ["oldest_seq"] > 2, what="the ring to pass event 2")
        ws = ws_connect(self.port, "since=1")
        self.addCleanup(ws.close)
        gap = ws_next(ws)
        self.assertEqual(gap["type"], "gap", gap)
        _, m = self.scrape()
        self.assertGreaterEqual(sample(m, "tunerd_events_dropped_total",
                                       reason="gap"),
                                gap["to"] - gap["from"] + 1)

    def test_a_slow_consumer_counts(self):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", self.port))
        conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=30)
        conn.sock = s
        self.addCleanup(conn.close)
        conn.request("GET", "/api/v1/events?types=tuner.status",
                     headers={"Accept": "text/event-stream"})
        wait_for(lambda: sample(self.scrape()[1],
                                "tunerd_slow_consumers_total",
                                kind="events") == 1,
                 timeout=60, step=0.2, what="the slow consumer counted")
        _, m = self.scrape()
        self.assertGreater(sample(m, "tunerd_events_dropped_total",
                                  reason="slow_consumer"), 0)
        self.assertEqual(sample(m, "tunerd_slow_consumers_total",
                                kind="stream"), 0)

    def test_a_stream_read_counts(self):
        source = TsSource(self.box)
        self.addCleanup(source.stop)
        conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=20)
        self.addCleanup(conn.close)
        conn.request("GET", "/api/v1/tuners/1/stream")
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        want = 2000 * 188
        got = 0
        while got < want:
            chunk = resp.read(want - got)
            self.assertTrue(chunk, "the stream ended early")
            got += len(chunk)
        _, m = self.scrape()
        self.assertGreaterEqual(sample(m, "tunerd_tuner_stream_bytes_total",
                                       tuner="1"), want)
        self.assertEqual(sample(m, "tunerd_tuner_stream_bytes_total",
                                tuner="2"), 0)
        resp.close()

    def test_a_slow_stream_reader_counts(self):
        source = TsSource(self.box)
        self.addCleanup(source.stop)
        events = EventsFromNow(self, "types=stream.*&tuner=1")
        slow = socket.socket()
        self.addCleanup(slow.close)
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.connect(("127.0.0.1", self.port))
        slow.sendall(b"GET /api/v1/tuners/1/stream HTTP/1.1\r\n"
                     b"Host: x\r\n\r\n")
        stop = events.wait("stream.stop")
        self.assertEqual(stop["reason"], "slow_reader", stop)
        _, m = self.scrape()
        self.assertEqual(sample(m, "tunerd_slow_consumers_total",
                                kind="stream"), 1)
        self.assertEqual(sample(m, "tunerd_slow_consumers_total",
                                kind="events"), 0)


class MetricsHdhr(MetricsTest):
    """The HDHomeRun face's paths on the main port: one route label."""
    # control_port 0: the fixed TCP port 65001 stays free for its tests
    config = {"name": "metrics-box",
              "hdhomerun": {"enabled": True, "allow": ["127.0.0.0/8"],
                            "control_port": 0}}

    def test_the_hdhomerun_face_is_one_route(self):
        for path in ("/discover.json", "/lineup.json", "/discover.json"):
            self.assertEqual(self.api("GET", path).status, 200, path)
        _, m = self.scrape()
        self.assertEqual(sample(m, "tunerd_http_requests_total",
                                route="hdhomerun", status="200"), 3)
        self.assertFalse([ls for (n, ls) in m
                          if n.startswith("tunerd_http_request_duration")
                          and ("route", "hdhomerun") in ls])


SCRAPE = "scrape-token-0123"
VIEWER = "view-token-0123"
OPERATOR = "oper-token-4567"


class MetricsTokens(ApiBoxTest):
    config = {"name": "metrics-box",
              "tokens": [{"name": "tv", "token": VIEWER, "role": "viewer"},
                         {"name": "ops", "token": OPERATOR,
                          "role": "operator"}],
              "metrics": {"token": SCRAPE}}

    def test_roles_and_the_scrape_token(self):
        for token in (None, "nope-nope-nope", SCRAPE + "x"):
            with self.subTest(token=token):
                r = self.api("GET", "/metrics", token=token)
                self.assertError(r, 401, "unauthorized")
        for token in (VIEWER, OPERATOR, SCRAPE):
            with self.subTest(token=token):
                r = self.api("GET", "/metrics", token=token)
                self.assertEqual(r.status, 200, r)
                self.assertIn(b"# TYPE tunerd_tuner_locked gauge", r.body)
        # the scrape token reads /metrics and nothing else
        self.assertError(self.api("GET", "/api/v1/box", token=SCRAPE), 401,
                         "unauthorized")
        m = parse_metrics(self.api("GET", "/metrics", token=VIEWER)
                          .body.decode())
        self.assertGreaterEqual(sample(m, "tunerd_http_requests_total",
                                       route="/metrics", status="401"), 3)
        self.assertNotIn(SCRAPE, self.daemon.logtext())

    def test_bad_metrics_sections_stop_the_daemon(self):
        for section, words in (({"token": "short"}, "metrics.token"),
                               ({"token": "has space 123"}, "metrics.token"),
                               ({"tokn": SCRAPE}, "unknown key"),
                               ("x", "must be an object")):
            with self.subTest(section=section):
                path = os.path.join(self.dir, "bad.json")
                with open(path, "w") as f:
                    json.dump({"metrics": section}, f)
                rc, out = start_refused(self.box, path)
                self.assertNotEqual(rc, 0, out)
                self.assertIn(words, out)


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: MIT
"""Debian's real Prometheus server scrapes two daemons on two simulated
boxes (one with its scrape token, one by the loopback rule) and its HTTP
API answers with their series."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import unittest
import urllib.parse
import urllib.request

from harness import ApiBoxTest, Box, Daemon, free_port, http_request, \
    wait_for

PROMETHEUS = shutil.which("prometheus")
SCRAPE = "scrape-token-0123"
VIEWER = "view-token-0123"
DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000, "wait_lock_ms": 2000}
# Prometheus starts, scrapes every second and evaluates at once; the
# bound only ends a run that would otherwise hang.
PROM_WAIT_S = 60.0
SANITIZER_MARKS = ApiBoxTest.SANITIZER_MARKS

CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: tunerd-token
    authorization:
      type: Bearer
      credentials: %(token)s
    static_configs:
      - targets: ["127.0.0.1:%(port_a)d"]
  - job_name: tunerd-loopback
    static_configs:
      - targets: ["127.0.0.1:%(port_b)d"]
"""


@unittest.skipUnless(PROMETHEUS, "prometheus (Debian package) missing")
class PrometheusScrapesTwoBoxes(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tunerd-prom-")
        self.procs, self.boxes, self.daemons = [], [], []
        self.port_a = self.start_box("box-a", {
            "tokens": [{"name": "tv", "token": VIEWER, "role": "viewer"}],
            "metrics": {"token": SCRAPE}})
        self.port_b = self.start_box("box-b", {})
        self.prom_port = free_port()
        self.start_prometheus()

    def start_box(self, name, config):
        workdir = os.path.join(self.dir, name)
        os.makedirs(workdir)
        box = Box(workdir, tuners="mt2060,qt1010")
        self.boxes.append(box)
        port = free_port()
        path = os.path.join(workdir, "tunerd.json")
        with open(path, "w") as f:
            json.dump(dict(config, name=name), f)
        self.daemons.append(Daemon(box, extra=[
            "--listen", "127.0.0.1:%d" % port, "--config", path]))
        wait_for(box.all_bound, what=name + ": every tuner bound")
        wait_for(lambda: self.api_up(port), what=name + ": the API")
        return port

    @staticmethod
    def api_up(port):
        try:
            http_request(port, "GET", "/metrics", timeout=2)
            return True
        except OSError:
            return False

    def start_prometheus(self):
        conf = os.path.join(self.dir, "prometheus.yml")
        with open(conf, "w") as f:
            f.write(CONFIG % {"token": SCRAPE, "port_a": self.port_a,
                              "port_b": self.port_b})
        self.prom_log = open(os.path.join(self.dir, "prometheus.log"), "w")
        self.prom = subprocess.Popen(
            [PROMETHEUS, "--config.file", conf,
             "--storage.tsdb.path", os.path.join(self.dir, "tsdb"),
             "--web.listen-address", "127.0.0.1:%d" % self.prom_port],
            stdout=self.prom_log, stderr=subprocess.STDOUT)

    def tearDown(self):
        if self.prom.poll() is None:
            self.prom.send_signal(signal.SIGTERM)
            try:
                self.prom.wait(30)
            except subprocess.TimeoutExpired:
                self.prom.kill()
                self.prom.wait()
        self.prom_log.close()
        for d in self.daemons:
            d.stop()
        for b in self.boxes:
            b.stop()
        # a sanitizer build reports at the daemon's exit
        reports = [d.logpath for d in self.daemons
                   if any(m in d.logtext() for m in SANITIZER_MARKS)]
        if not reports:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.assertEqual(reports, [], "sanitizer reports in these logs")

    def query(self, expr):
        """The instant vector of expr: [(labels, value)]; [] while
        Prometheus is not up yet."""
        url = "http://127.0.0.1:%d/api/v1/query?%s" % (
            self.prom_port, urllib.parse.urlencode({"query": expr}))
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                body = json.load(r)
        except OSError:
            return []
        self.assertEqual(body["status"], "success", body)
        return [(s["metric"], float(s["value"][1]))
                for s in body["data"]["result"]]

    def wait_query(self, expr, pred, what):
        def check():
            result = self.query(expr)
            return result if pred(result) else None
        return wait_for(check, timeout=PROM_WAIT_S, step=0.2, what=what)

    def test_prometheus_sees_both_boxes(self):
        up = self.wait_query(
            "up", lambda r: len(r) == 2 and all(v == 1 for _, v in r),
            "up == 1 for both daemons")
        self.assertEqual({m["job"] for m, _ in up},
                         {"tunerd-token", "tunerd-loopback"})

        r = http_request(self.port_a, "POST", "/api/v1/tuners/1/tune",
                         DVBT_474,
                         headers={"Authorization": "Bearer " + VIEWER})
        self.assertEqual(r.status, 403, r)  # a viewer may not tune
        r = http_request(self.port_b, "POST", "/api/v1/tuners/1/tune",
                         DVBT_474)
        self.assertEqual(r.status, 200, r)
        self.assertTrue(r.json["locked"], r)

        locked = self.wait_query(
            'tunerd_tuner_locked{box="box-b",tuner="1"}',
            lambda r: r and r[0][1] == 1, "box-b tuner 1 locked")
        self.assertEqual(locked[0][0]["chip"], "MT2060")
        self.wait_query(
            'tunerd_tunes_total{box="box-b",tuner="1",origin="api",'
            'result="ok"}', lambda r: r and r[0][1] == 1,
            "box-b's API tune counted")
        self.wait_query(
            'tunerd_http_requests_total{job="tunerd-token",'
            'route="/api/v1/tuners/{id}/tune",status="403"}',
            lambda r: r and r[0][1] == 1, "box-a's refused tune counted")
        # every tuner of both boxes, by box
        series = self.wait_query(
            "count by (box) (tunerd_worker_restarts_total)",
            lambda r: len(r) == 2, "both boxes' tuners")
        self.assertEqual({m["box"]: v for m, v in series},
                         {"box-a": 2, "box-b": 2})


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: MIT
"""scripts/fleet.sh with 4 boxes of 2 tuners: `tunerctl --discover ls` in
the fleet's ops namespace finds the 4 boxes and their tuners, Prometheus
has up == 1 for all 4 (it scrapes /metrics), the broker holds a retained
state for every tuner of every box, every box answers from the host, and
--stop removes the namespaces, the host's interface and the run directory.
Each check waits for its condition, within a bound."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import urllib.parse
import urllib.request

from avahi_ns import missing_tools
from harness import BIN, wait_for

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FLEET = os.path.join(TOP, "scripts", "fleet.sh")
BOXES, TUNERS = 4, "mt2060,qt1010"
WAIT = 45.0


def needs():
    missing = missing_tools() + [p for p in ("/usr/sbin/mosquitto",
                                             "/usr/bin/prometheus",
                                             "/usr/bin/mosquitto_sub")
                                 if not os.path.exists(p)]
    if os.geteuid() != 0:
        missing.append("root")
    return missing


@unittest.skipIf(needs(), "needs %s (scripts/deps.sh test)"
                 % ", ".join(needs()))
class Fleet(unittest.TestCase):
    def setUp(self):
        pid = os.getpid()
        self.tag = "tfit%d" % (pid % 100000)
        self.net = "10.78.%d" % (pid % 250)
        base = tempfile.mkdtemp(prefix="tunerd-fleet-it-")
        self.addCleanup(shutil.rmtree, base, ignore_errors=True)
        self.run_dir = os.path.join(base, "run")
        self.args = ["--tag", self.tag, "--run-dir", self.run_dir]
        self.stopped = False
        self.addCleanup(self.stop)
        r = self.fleet("--boxes", str(BOXES), "--tuners", TUNERS,
                       "--net", self.net, "--scrape-interval", "1s",
                       "--timeout", "90", "--detach", timeout=150)
        self.assertEqual(r.returncode, 0, "fleet.sh: %s%s"
                         % (r.stderr, self.log()))
        self.summary = r.stdout
        with open(os.path.join(self.run_dir, "fleet.json")) as f:
            self.info = json.load(f)
        self.viewer = self.info["tokens"]["viewer"]

    def fleet(self, *args, timeout=90):
        return subprocess.run(["bash", FLEET] + self.args + list(args),
                              capture_output=True, text=True,
                              timeout=timeout)

    def log(self):
        try:
            with open(os.path.join(self.run_dir, "fleet.log")) as f:
                return "\nfleet.log:\n" + f.read()[-3000:]
        except OSError:
            return ""

    def stop(self):
        if not self.stopped:
            self.fleet("--stop")
            self.stopped = True

    def get(self, url, token=None):
        req = urllib.request.Request(url)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)

    def in_ops(self, argv, timeout=30):
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS="unix:path=" +
                   self.info["ops_bus"])
        return subprocess.run(["ip", "netns", "exec",
                               self.info["ops_namespace"]] + argv, env=env,
                              capture_output=True, text=True,
                              timeout=timeout)

    def tuners_by_box(self):
        """{box: [tuner ids]} asked of every box from the host."""
        return {b["name"]: sorted(t["id"] for t in self.get(
                    b["url"] + "api/v1/tuners", self.viewer)["tuners"])
                for b in self.info["boxes"]}

    def check_discovery(self, want):
        seen, err = {}, []

        def match():
            r = self.in_ops([os.path.join(BIN, "tunerctl"), "--discover",
                             "--timeout", "5", "--token", self.viewer,
                             "--json", "ls"])
            if r.returncode:
                err[:] = [r.stderr]
                return False
            seen.clear()
            for t in json.loads(r.stdout):
                seen.setdefault(t["box"], []).append(t["id"])
            return {b: sorted(ids) for b, ids in seen.items()} == want
        try:
            wait_for(match, timeout=WAIT, what="discovery of %s" % want)
        except AssertionError as e:
            raise AssertionError("%s; saw %s %s" % (e, seen, err)) from None

    def check_prometheus(self):
        query = self.info["prometheus"] + "api/v1/query?" + \
            urllib.parse.urlencode({"query": 'up{job="tunerd"}'})
        result = []

        def all_up():
            result[:] = self.get(query)["data"]["result"]
            return len(result) == BOXES and \
                all(r["value"][1] == "1" for r in result)
        try:
            wait_for(all_up, timeout=WAIT, step=0.25,
                     what="up == 1 for %d targets" % BOXES)
        except AssertionError as e:
            raise AssertionError("%s; got %s" % (e, result)) from None
        self.assertEqual(sorted(r["metric"]["fleet_box"] for r in result),
                         sorted(b["name"] for b in self.info["boxes"]))

    def check_retained(self, want):
        host, port = self.info["broker"].split(":")
        topics = {"tunerd/%s/tuner/%d/state" % (b, i)
                  for b, ids in want.items() for i in ids}
        seen = {}

        def all_retained():
            # A fresh subscription gets the retained messages at once; -W
            # bounds the wait when some are not there yet.
            r = subprocess.run(
                ["mosquitto_sub", "-h", host, "-p", port, "-v",
                 "--retained-only", "-C", str(len(topics)), "-W", "3",
                 "-t", "tunerd/+/tuner/+/state"],
                capture_output=True, text=True, timeout=30)
            for line in r.stdout.splitlines():
                topic, _, payload = line.partition(" ")
                seen[topic] = json.loads(payload)
            return topics <= set(seen)
        try:
            wait_for(all_retained, timeout=WAIT, what="retained states")
        except AssertionError as e:
            raise AssertionError("%s; missing %s"
                                 % (e, topics - set(seen))) from None
        for topic in topics:
            self.assertEqual(seen[topic]["id"], int(topic.split("/")[3]))

    def test_fleet(self):
        self.assertIn(self.info["prometheus"], self.summary)
        want = self.tuners_by_box()
        self.assertEqual(want, {"box-%02d" % i: [1, 2]
                                for i in range(1, BOXES + 1)})
        self.check_discovery(want)
        self.check_retained(want)
        self.check_prometheus()

        r = self.fleet("--stop")
        self.stopped = True
        self.assertEqual(r.returncode, 0, r.stderr)
        left = subprocess.run(["ip", "netns", "list"], capture_output=True,
                              text=True).stdout
        self.assertNotIn(self.tag + "-", left)
        self.assertNotEqual(subprocess.run(
            ["ip", "link", "show", self.tag + "-h"],
            capture_output=True).returncode, 0, "the host's veth is gone")
        self.assertFalse(os.path.exists(self.run_dir))


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: MIT
"""The console in a real headless Chromium driven by puppeteer-core
(browser/console_drive.mjs) against two daemons on two simulated boxes:
the second box is added from the page (CORS allow-list), tuners are tuned
from the UI (lock dot, plot points), a lease is taken, used, released and
pre-empted, analog and DVB-C tunes carry a standard and a symbol rate, the
event log filters and opens, and a viewer token gets no controls.
Afterwards the boxes' API state is checked here too.  Screenshots at
desktop and phone width go to the build tree (console-shots/).

puppeteer-core is installed with npm ci from browser/package-lock.json into
the build tree (node-cache/), once per lock file."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from harness import ApiBoxTest, Box, Daemon, free_port, http_request, \
    wait_for, BIN

HERE = os.path.dirname(os.path.abspath(__file__))
WEB = os.path.normpath(os.path.join(HERE, "..", "..", "web"))
BROWSER_DIR = os.path.join(HERE, "browser")
BUILD = os.path.dirname(os.path.abspath(BIN))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NODE = shutil.which("node")
NPM = shutil.which("npm")
OP = "console-operator-token-1"
VIEWER = "console-viewer-token-1"
TOKENS = [{"name": "ops", "token": OP, "role": "operator"},
          {"name": "wall", "token": VIEWER, "role": "viewer"}]


def node_modules():
    """puppeteer-core at the locked version, installed once into the build
    tree: the lock file copied beside node_modules says which."""
    cache = os.path.join(BUILD, "node-cache")
    lock = os.path.join(BROWSER_DIR, "package-lock.json")
    have = os.path.join(cache, "package-lock.json")
    with open(lock) as f:
        want = f.read()
    if os.path.exists(have) and open(have).read() == want and \
            os.path.isdir(os.path.join(cache, "node_modules",
                                       "puppeteer-core")):
        return cache
    os.makedirs(cache, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(BROWSER_DIR, name), cache)
    out = subprocess.run([NPM, "ci", "--ignore-scripts", "--no-audit",
                          "--no-fund"], cwd=cache, capture_output=True,
                         text=True, timeout=600,
                         env=dict(os.environ,
                                  PUPPETEER_SKIP_DOWNLOAD="1"))
    if out.returncode != 0:
        raise AssertionError("npm ci failed:\n" + out.stdout + out.stderr)
    return cache


@unittest.skipUnless(CHROMIUM and NODE and NPM,
                     "chromium, node or npm is not installed")
class ConsoleTwoBoxes(ApiBoxTest):
    web_root = WEB
    daemon_extra = ("--status-interval-ms", "200")
    config = {"name": "console-a", "tokens": TOKENS}

    def setUp(self):
        super().setUp()
        self.dir2 = tempfile.mkdtemp(prefix="tunerd-it-b-")
        self.box2 = Box(self.dir2, tuners="mt2060,qt1010")
        self.port2 = free_port()
        path = os.path.join(self.dir2, "tunerd.json")
        with open(path, "w") as f:
            json.dump({"name": "console-b", "tokens": TOKENS,
                       "cors": {"origins": [
                           "http://127.0.0.1:%d" % self.port]}}, f)
        self.daemon2 = Daemon(self.box2, name="b", extra=(
            "--listen", "127.0.0.1:%d" % self.port2, "--config", path,
            "--status-interval-ms", "200"))
        wait_for(self.box2.all_bound, what="box 2 bound")
        wait_for(lambda: self._up(self.port2), what="box 2 API")

    def _up(self, port):
        try:
            http_request(port, "GET", "/api/v1/box", timeout=2)
            return True
        except OSError:
            return False

    def tearDown(self):
        self.daemon2.stop()
        self.box2.stop()
        shutil.rmtree(self.dir2, ignore_errors=True)
        super().tearDown()

    def get(self, port, path):
        r = http_request(port, "GET", path,
                         headers={"Authorization": "Bearer " + OP},
                         timeout=10)
        self.assertEqual(r.status, 200, r)
        return r.json

    def test_two_boxes_from_the_page(self):
        modules = node_modules()
        shots = os.path.join(BUILD, "console-shots")
        os.makedirs(shots, exist_ok=True)
        spec = {"url1": "http://127.0.0.1:%d" % self.port,
                "url2": "http://127.0.0.1:%d" % self.port2,
                "op": OP, "viewer": VIEWER, "shots": shots,
                "chromium": CHROMIUM, "modules": modules}
        out = subprocess.run(
            [NODE, os.path.join(BROWSER_DIR, "console_drive.mjs")],
            env=dict(os.environ, CONSOLE_SPEC=json.dumps(spec)),
            capture_output=True, text=True, timeout=200)
        steps = [json.loads(line) for line in out.stdout.splitlines()
                 if line.startswith("{")]
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        for s in steps:
            print("  browser:", json.dumps(s), file=sys.stderr)
        names = [s["step"] for s in steps]
        self.assertEqual(names[-1], "done", names)
        self.assertNotIn("pageerror", names, steps)
        # the boxes' own state after the page's work
        t1 = self.get(self.port2, "/api/v1/tuners/1")
        # tuned at 474 MHz from the UI, then at 490 MHz while the page's
        # event stream was cut (the resume step)
        self.assertEqual(t1["params"]["frequency"], 490000000)
        self.assertEqual(t1["last_change"]["origin"], "api")
        analog = self.get(self.port, "/api/v1/tuners/3")["params"]
        self.assertEqual((analog["delivery_system"], analog["standard"]),
                         ("ANALOG_TV", "PAL-BG"))
        cable = self.get(self.port, "/api/v1/tuners/4")["params"]
        self.assertEqual(cable["symbol_rate"], 6900000)
        self.assertIsNone(self.get(self.port, "/api/v1/tuners/1")["lease"])
        for name in ("console-desktop.png", "console-phone.png"):
            self.assertGreater(os.path.getsize(os.path.join(shots, name)),
                               0)


if __name__ == "__main__":
    unittest.main()

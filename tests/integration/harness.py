# SPDX-License-Identifier: MIT
"""Processes for integration tests: a simulated box, daemons, and a client
for the box's app socket (what a DVB or V4L application on the box does).

Paths of the built programs come from the environment ctest sets:
TUNERD_BIN (bin dir), TUNERD_PLUGINS, TUNERD_TEST_PLUGINS.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

BIN = os.environ.get("TUNERD_BIN", "build/bin")
PLUGINS = os.environ.get("TUNERD_PLUGINS", "build/plugins")
TEST_PLUGINS = os.environ.get("TUNERD_TEST_PLUGINS", "build/test-plugins")

# A small RF environment the tests reason about.
TEST_ENV = """\
# system freq bandwidth level_dBm cnr_dB label
DVBT   474000000 8000000 -50.0 30.0 "MUX A"
DVBT2  490000000 8000000 -55.0 28.0 "MUX B"
DVBT   506000000 8000000 -88.0  4.0 "weak"
RADIO   88800000  200000 -45.0 40.0 "FM"
"""


def wait_for(pred, timeout=10.0, step=0.02, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = pred()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("timed out waiting for " + what)


class Box:
    """A tunerd-simbox process with its sockets in a private directory."""

    def __init__(self, workdir, tuners="mt2060,qt1010,xc3028,mt2060",
                 deadline_ms=3000, i2c_khz=0, settle=0.0, extra=()):
        self.dir = workdir
        self.sock = os.path.join(workdir, "sim.sock")
        self.app = os.path.join(workdir, "app.sock")
        self.env = os.path.join(workdir, "test.env")
        self.fw_dir = os.path.join(workdir, "fw")
        self.trace = os.path.join(workdir, "i2c.trace")
        os.makedirs(self.fw_dir, exist_ok=True)
        self.firmware = os.path.join(self.fw_dir, "xc3028-v27.fw")
        with open(self.env, "w") as f:
            f.write(TEST_ENV)
        if not os.path.exists(self.firmware):
            subprocess.run([os.path.join(BIN, "tunerd-mkfw-xc3028"),
                            self.firmware], check=True)
        self.args = [os.path.join(BIN, "tunerd-simbox"),
                     "--socket", self.sock, "--app-socket", self.app,
                     "--tuners", tuners, "--env", self.env,
                     "--firmware", self.firmware, "--i2c-khz", str(i2c_khz),
                     "--settle-scale", str(settle),
                     "--deadline-ms", str(deadline_ms),
                     "--trace", self.trace, *extra]
        self.log = open(os.path.join(workdir, "box.log"), "w")
        self.proc = subprocess.Popen(self.args, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        wait_for(lambda: os.path.exists(self.app), what="box app socket")

    def call(self, req, timeout=15.0):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(self.app)
        s.sendall(json.dumps(req).encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        s.close()
        return json.loads(buf)

    def tune(self, client, system, freq, bandwidth=0, **kw):
        req = {"op": "set_params", "client": client,
               "delivery_system": system, "frequency": freq,
               "bandwidth": bandwidth}
        req.update(kw)
        return self.call(req)

    def status(self, client):
        return self.call({"op": "get_status", "client": client})

    def tuners(self):
        return self.call({"op": "list"})["tuners"]

    def all_bound(self):
        t = self.tuners()
        return t if t and all(x.get("bound") for x in t) else None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Daemon:
    """A tunerd process on a box."""

    def __init__(self, box, extra=(), plugin_dirs=(PLUGINS,), name="log"):
        args = [os.path.join(BIN, "tunerd"), "--stub", "sim:" + box.sock,
                "--firmware-dir", box.fw_dir]
        for d in plugin_dirs:
            args += ["--plugin-dir", d]
        args += list(extra)
        self.logpath = os.path.join(box.dir, "tunerd-%s.txt" % name)
        self.log = open(self.logpath, "w")
        self.proc = subprocess.Popen(args, stdout=self.log,
                                     stderr=subprocess.STDOUT)

    def logtext(self):
        with open(self.logpath) as f:
            return f.read()

    def kill(self, sig=signal.SIGKILL):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)

    def stop(self):
        self.kill(signal.SIGTERM)
        self.log.close()


class BoxTest(unittest.TestCase):
    """One box and one daemon per test, torn down whatever happens."""

    tuners = "mt2060,qt1010,xc3028,mt2060"
    deadline_ms = 3000
    box_extra = ()
    daemon_extra = ()
    plugin_dirs = (PLUGINS,)

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tunerd-it-")
        self.box = Box(self.dir, tuners=self.tuners,
                       deadline_ms=self.deadline_ms, extra=self.box_extra)
        self.daemons = []
        self.daemon = self.start_daemon()

    def start_daemon(self, wait=True):
        d = Daemon(self.box, extra=self.daemon_extra,
                   plugin_dirs=self.plugin_dirs,
                   name=str(len(self.daemons)))
        self.daemons.append(d)
        if wait:
            wait_for(self.box.all_bound, what="every tuner bound")
        return d

    def tearDown(self):
        for d in self.daemons:
            d.stop()
        self.box.stop()
        if getattr(self, "_outcome", None) and self._failed():
            print("kept for inspection:", self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _failed(self):
        result = self._outcome.result
        return any(t is self for t, _ in result.failures + result.errors)

    def assertOk(self, reply):
        self.assertTrue(reply.get("ok"), reply)
        return reply

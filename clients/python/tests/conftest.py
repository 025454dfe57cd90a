# SPDX-License-Identifier: MIT
"""Fixtures of the tunerd package's tests: real daemons on simulated boxes,
started by the integration tests' harness (tests/integration/harness.py).

The package is imported from the source tree (clients/python), Debian's
modules (requests, websocket) from /usr/lib/python3/dist-packages.  Under
CI=true a skipped test fails the session (CI must run every test)."""
import json
import os
import shutil
import signal
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(PKG_ROOT))
sys.path.insert(0, PKG_ROOT)
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
if "/usr/lib/python3/dist-packages" not in sys.path:
    sys.path.append("/usr/lib/python3/dist-packages")

import harness  # noqa: E402

OPERATOR = "test-operator-token"
VIEWER = "test-viewer-token-1"
ADMIN = "test-admin-token-01"
ENV_UK = os.path.join(REPO, "kmod", "sim", "env", "uk-crystal-palace.env")
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                   "runtime error:")


class LiveBox:
    """A simulated box with one tunerd serving the API on a fixed port (a
    restarted daemon listens where the old one did, as a real box's
    would).  url, port, token (operator), daemon (the running one)."""

    def __init__(self, workdir, name="box1", env_text=harness.TEST_ENV,
                 tuners="mt2060,qt1010,xc3028,mt2060", box_extra=(),
                 daemon_extra=()):
        os.makedirs(workdir, exist_ok=True)
        self.dir = workdir
        self.name = name
        self.sim = harness.Box(workdir, tuners=tuners, env_text=env_text,
                               extra=box_extra)
        self.port = harness.free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.token = OPERATOR
        self.config = os.path.join(workdir, "tunerd.json")
        with open(self.config, "w") as f:
            json.dump({"name": name, "tokens": [
                {"name": "ops", "token": OPERATOR, "role": "operator"},
                {"name": "dash", "token": VIEWER, "role": "viewer"},
                {"name": "me", "token": ADMIN, "role": "admin"}]}, f)
        self.daemon_extra = tuple(daemon_extra)
        self.daemons = []
        self.daemon = None
        self.start()

    def start(self, extra=()):
        """A new daemon (after the last one stopped); waits for its API."""
        args = ["--listen", "127.0.0.1:%d" % self.port, "--config",
                self.config, *self.daemon_extra, *extra]
        self.daemon = harness.Daemon(self.sim, extra=args,
                                     name=str(len(self.daemons)))
        self.daemons.append(self.daemon)
        harness.wait_for(self.sim.all_bound, what="every tuner bound")
        harness.wait_for(self._api_up, what="the network API")
        return self.daemon

    def _api_up(self):
        try:
            r = harness.http_request(self.port, "GET", "/api/v1/box",
                                     timeout=2)
            return r.status in (200, 401)
        except OSError:
            return False

    def kill(self, sig=signal.SIGKILL):
        self.daemon.kill(sig)

    def client(self, token=OPERATOR, **kw):
        from tunerd import Box
        return Box(self.url, token=token, **kw)

    def stop(self):
        for d in self.daemons:
            d.kill(signal.SIGTERM)
        reports = []
        for d in self.daemons:
            d.log.close()
            text = d.logtext()
            for m in SANITIZER_MARKS:
                if m in text:
                    reports.append(text[text.index(m):][:3000])
                    break
        self.sim.stop()
        return reports


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="tunerd-py-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def make_box(workdir):
    """make_box(name=..., **LiveBox options) -> a started LiveBox, stopped
    at the end of the test (a sanitizer report in its log fails it)."""
    boxes = []

    def make(name="box1", **kw):
        b = LiveBox(os.path.join(workdir, name), name=name, **kw)
        boxes.append(b)
        return b
    yield make
    reports = []
    for b in boxes:
        reports += b.stop()
    assert reports == [], "sanitizer reports in a daemon log"


@pytest.fixture
def live(make_box):
    """One box with the small test environment."""
    return make_box()


_skipped = []


def pytest_runtest_logreport(report):
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    if _skipped and os.environ.get("CI") == "true":
        for s in _skipped:
            print("CI=true: skipped counts as failed: " + s, file=sys.stderr)
        session.exitstatus = 1

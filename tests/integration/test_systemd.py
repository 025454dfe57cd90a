# SPDX-License-Identifier: MIT
"""The daemon under systemd, without systemd: a notify socket stands in
for the service manager (Type=notify: READY=1 only once the stub is
connected and the API listens, STATUS= lines, WATCHDOG=1 pings at half
of $WATCHDOG_USEC, RELOADING=1 around a SIGHUP, STOPPING=1), and a file
whose device:inode is in $JOURNAL_STREAM stands in for the journal
(lines with "<N>" syslog priorities, never a token)."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

from events_util import ws_connect
from harness import (BIN, PLUGINS, ApiBoxTest, Box, free_port, http_request,
                     wait_for)

TOKEN = "journal-secret-0123456789"
BAD_TOKEN = "not-a-token-9876543210"
# The watchdog period the test asks for: pings every 150 ms.
WATCHDOG_USEC = 300000


class NotifySocket:
    """An AF_UNIX datagram socket as $NOTIFY_SOCKET; each datagram is one
    notification of newline-separated KEY=VALUE assignments."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.seen = []  # every datagram, as a dict, in order

    def next(self, timeout=15.0):
        self.sock.settimeout(timeout)
        data = self.sock.recv(4096).decode()
        msg = dict(line.split("=", 1) for line in data.split("\n") if line)
        self.seen.append(msg)
        return msg

    def until(self, pred, what, timeout=15.0):
        """The first notification pred accepts; fails after timeout."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError("no %s within %.0f s; seen %r"
                                     % (what, timeout, self.seen))
            try:
                msg = self.next(left)
            except socket.timeout:
                continue
            if pred(msg):
                return msg

    def pending(self):
        """What is already queued, without waiting."""
        got = []
        try:
            while True:
                got.append(self.next(0))
        except BlockingIOError:
            pass
        return got

    def close(self):
        self.sock.close()


def api_up(port):
    try:
        http_request(port, "GET", "/api/v1/box", timeout=2)
        return True
    except OSError:
        return False


class SystemdTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tunerd-sd-")
        self.box = None
        self.proc = None
        self.config = os.path.join(self.dir, "tunerd.json")
        self.write_config({"name": "sd-box", "tokens": [
            {"name": "ops", "token": TOKEN, "role": "operator"}]})
        self.port = free_port()
        os.makedirs(os.path.join(self.dir, "fw"))

    def tearDown(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.box:
            self.box.stop()
        reports = []
        for name in os.listdir(self.dir):
            if name.endswith(".log") and name != "box.log":
                with open(os.path.join(self.dir, name)) as f:
                    text = f.read()
                reports += [name for m in ApiBoxTest.SANITIZER_MARKS
                            if m in text]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.assertEqual(reports, [], "sanitizer reports in the daemon log")

    def write_config(self, doc):
        text = doc if isinstance(doc, str) else json.dumps(doc)
        with open(self.config + ".new", "w") as f:
            f.write(text)
        os.rename(self.config + ".new", self.config)

    def start_daemon(self, env, stderr, extra=()):
        args = [os.path.join(BIN, "tunerd"),
                "--stub", "sim:" + os.path.join(self.dir, "sim.sock"),
                "--plugin-dir", PLUGINS,
                "--firmware-dir", os.path.join(self.dir, "fw"),
                "--state-dir", os.path.join(self.dir, "state"),
                "--listen", "127.0.0.1:%d" % self.port,
                "--config", self.config, *extra]
        full = {k: v for k, v in os.environ.items()
                if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC",
                             "WATCHDOG_PID", "JOURNAL_STREAM")}
        full.update(env)
        self.proc = subprocess.Popen(args, stdout=stderr, stderr=stderr,
                                     env=full)

    def stop_daemon(self):
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(20), 0)

    def test_ready_after_stub_and_api_then_watchdog_reload_stop(self):
        notify = NotifySocket(os.path.join(self.dir, "notify.sock"))
        self.addCleanup(notify.close)
        log = open(os.path.join(self.dir, "tunerd.log"), "w")
        self.addCleanup(log.close)
        # The daemon first, the box later: the API listens before the
        # stub is there, and READY=1 must wait for the stub.
        self.start_daemon({"NOTIFY_SOCKET": notify.path,
                           "WATCHDOG_USEC": str(WATCHDOG_USEC)}, log)
        first = notify.until(lambda m: "STATUS" in m, "first STATUS")
        self.assertNotIn("READY", first)
        self.assertIn("waiting for the stub", first["STATUS"])
        wait_for(lambda: api_up(self.port), what="the API listening")
        self.assertFalse([m for m in notify.pending() if "READY" in m],
                         "READY=1 before the stub connected")

        self.box = Box(self.dir)
        ready = notify.until(lambda m: m.get("READY") == "1", "READY=1")
        # The API listened before READY=1 was sent, so it answers now.
        self.assertEqual(http_request(self.port, "GET", "/api/v1/box",
                                      timeout=5).status, 401)
        self.assertIn("serving: stub connected (simulated box)",
                      ready.get("STATUS", ""))
        self.assertIn("127.0.0.1:%d" % self.port, ready["STATUS"])

        # The watchdog: at least two pings after READY=1.
        for _ in range(2):
            notify.until(lambda m: m.get("WATCHDOG") == "1",
                         "WATCHDOG=1", timeout=10)

        # SIGHUP (the unit's ExecReload): RELOADING=1, then READY=1.
        self.proc.send_signal(signal.SIGHUP)
        notify.until(lambda m: m.get("RELOADING") == "1", "RELOADING=1")
        again = notify.until(lambda m: m.get("READY") == "1",
                             "READY=1 after the reload")
        self.assertIn("serving", again.get("STATUS", ""))
        # A broken file: still READY=1, and the status says so.
        self.write_config("{")
        self.proc.send_signal(signal.SIGHUP)
        notify.until(lambda m: m.get("RELOADING") == "1", "RELOADING=1")
        refused = notify.until(lambda m: m.get("READY") == "1",
                               "READY=1 after a refused reload")
        self.assertIn("refused", refused.get("STATUS", ""))

        self.proc.send_signal(signal.SIGTERM)
        stopping = notify.until(lambda m: m.get("STOPPING") == "1",
                                "STOPPING=1")
        self.assertIn("shutting down", stopping.get("STATUS", ""))
        self.assertEqual(self.proc.wait(20), 0)

    def test_journal_priorities_and_no_token(self):
        self.box = Box(self.dir)
        path = os.path.join(self.dir, "journal.log")
        log = open(path, "w")
        self.addCleanup(log.close)
        st = os.fstat(log.fileno())
        self.start_daemon({"JOURNAL_STREAM": "%d:%d" % (st.st_dev,
                                                        st.st_ino)},
                          log, extra=["--log-level", "debug"])
        wait_for(self.box.all_bound, what="every tuner bound")
        wait_for(lambda: api_up(self.port), what="the API listening")
        # Tokens in every place a client puts one, right and wrong.
        for token in (TOKEN, BAD_TOKEN):
            auth = {"Authorization": "Bearer " + token}
            http_request(self.port, "GET", "/api/v1/tuners", headers=auth)
            http_request(self.port, "GET",
                         "/api/v1/tuners/1/stream?access_token=" + token +
                         "&pids=nope")
            try:
                ws_connect(self.port, "types=none.none",
                           subprotocol_token=token).close()
            except Exception:  # the wrong one is refused: expected
                pass
        # A file that breaks in the middle of a token: the reload is
        # refused with an error line that must not quote it.
        self.write_config('{"tokens":[{"name":"x","token":"%s\x01"}]}'
                          % TOKEN)
        self.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: "reload refused" in open(path).read(),
                 what="the refused reload's line")
        self.stop_daemon()

        text = open(path).read()
        lines = [line for line in text.split("\n") if line]
        self.assertTrue(lines)
        for line in lines:
            self.assertRegex(line, r"^<[0-7]>", "no priority prefix")
        self.assertTrue(any(re.match(r"^<3>.*reload refused", line)
                            for line in lines), text)
        self.assertTrue(any(line.startswith("<6>") for line in lines))
        self.assertTrue(any(line.startswith("<7>") for line in lines))
        self.assertNotIn(TOKEN, text)
        self.assertNotIn(BAD_TOKEN, text)

    def test_no_prefix_when_stderr_is_not_the_journal_stream(self):
        self.box = Box(self.dir)
        path = os.path.join(self.dir, "plain.log")
        log = open(path, "w")
        self.addCleanup(log.close)
        st = os.fstat(log.fileno())
        # The stream systemd named is another file (stderr redirected).
        self.start_daemon({"JOURNAL_STREAM": "%d:%d" % (st.st_dev,
                                                        st.st_ino + 1)},
                          log)
        wait_for(lambda: api_up(self.port), what="the API listening")
        self.stop_daemon()
        lines = [line for line in open(path).read().split("\n") if line]
        self.assertTrue(lines)
        for line in lines:
            self.assertRegex(line, r"^\d{4}-\d\d-\d\dT", "not a plain line")


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: MIT
"""The network API under faults and load: hung chips, a gone box, full
queues, too many connections, idle clients.  The daemon must answer each
with the right error and keep serving."""
import os
import signal
import socket
import subprocess
import threading
import time
import unittest

from events_util import EventsFromNow
from harness import ApiBoxTest, read_to_close, wait_for

def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000}


class HungChip(ApiBoxTest):
    power_up_wait = True
    deadline_ms = 2000
    daemon_extra = ("--deadline-ms", "2000")

    def hang(self, client, on=True):
        self.assertOk(self.box.call({"op": "fault", "client": client,
                                     "hang": on}))

    def tune_started(self, events, tuner):
        """Wait until the worker of tuner began an API tune."""
        events.wait("tuner.tune_started", tuner=tuner, origin="api")

    def test_504_and_recovery(self):
        events = EventsFromNow(self, "tuner=2")
        self.hang(2)
        r = self.api("POST", "/api/v1/tuners/2/tune", DVBT_474)
        self.assertError(r, 504, "deadline")
        # The worker's command ends: the box fails the I2C transfer at its
        # own deadline (tuner.tune with an error), or the daemon kills the
        # worker first (worker.hang) and a new one probes the chip once
        # it answers again.
        end = events.wait(("tuner.tune", "worker.hang"))
        self.hang(2, False)
        if end["type"] == "worker.hang":
            events.wait("tuner.ready")
        else:
            self.assertNotEqual(end["result"], "ok", end)
        r = self.api("POST", "/api/v1/tuners/2/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)

    def test_429_when_the_queue_is_full(self):
        self.hang(2)
        replies = []
        lock = threading.Lock()

        def tune():
            r = self.api("POST", "/api/v1/tuners/2/tune", DVBT_474,
                         timeout=60)
            with lock:
                replies.append(r)

        threads = [threading.Thread(target=tune) for _ in range(24)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(90)
        busy = [r for r in replies if r.status == 429]
        self.assertTrue(busy, [r.status for r in replies])
        self.assertEqual(busy[0].error["code"], "too_many_requests")
        self.assertEqual(len(replies), 24)
        for r in replies:
            self.assertIn(r.status, (429, 503, 504), r)


    def test_status_polls_share_reads(self):
        # 30 pollers of a hung tuner: their reads are shared, so the
        # tuner's queue (16) never fills and nobody gets a 429.  (The
        # MT2060 reads its lock register for a status, over I2C.)
        self.hang(1)
        replies = []
        lock = threading.Lock()

        def poll():
            r = self.api("GET", "/api/v1/tuners/1/status", timeout=60)
            with lock:
                replies.append(r)

        threads = [threading.Thread(target=poll) for _ in range(30)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(90)
        self.assertEqual(len(replies), 30)
        for r in replies:
            self.assertIn(r.status, (503, 504), r)

    def test_shutdown_with_a_request_waiting(self):
        self.hang(2)
        result = {}

        def hung():
            try:
                result["reply"] = self.api("POST", "/api/v1/tuners/2/tune",
                                           DVBT_474)
            except OSError as exc:
                result["error"] = exc

        events = EventsFromNow(self, "tuner=2")
        th = threading.Thread(target=hung)
        th.start()
        self.tune_started(events, 2)
        self.daemon.kill(signal.SIGTERM)
        th.join(10)
        self.assertFalse(th.is_alive(), "no answer after the daemon ended")
        self.assertEqual(self.daemon.proc.returncode, 0)
        self.assertIn("reply", result, result)
        self.assertError(result["reply"], 503, "unavailable")


class LongHang(ApiBoxTest):
    # The hung tune outlives everything the test does by far; the daemon's
    # stop ends it.
    power_up_wait = True
    deadline_ms = 20000
    daemon_extra = ("--deadline-ms", "20000")

    def test_a_hung_tune_holds_no_thread(self):
        self.assertOk(self.box.call({"op": "fault", "client": 2,
                                     "hang": True}))
        result = {}

        def hung():
            result["reply"] = self.api("POST", "/api/v1/tuners/2/tune",
                                       DVBT_474, timeout=60)

        events = EventsFromNow(self, "tuner=2")
        th = threading.Thread(target=hung)
        th.start()
        events.wait("tuner.tune_started", origin="api")
        # answered while the tune hangs: the loop is not held by it
        for i in range(20):
            r = self.api("GET", "/api/v1/tuners/%d" % (1 + i % 4))
            self.assertEqual(r.status, 200, r)
        # another tuner tunes meanwhile
        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)
        self.assertTrue(th.is_alive(), ("the hung tune ended first", result))
        self.daemon.kill(signal.SIGTERM)
        th.join(15)
        self.assertError(result["reply"], 503, "unavailable")


class BoxGone(ApiBoxTest):
    def test_503_when_the_stub_is_gone(self):
        self.box.stop()
        wait_for(lambda: not self.api("GET", "/api/v1/box").json
                 ["stub"]["connected"], what="stub disconnected")
        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_474)
        self.assertError(r, 503, "unavailable")
        r = self.api("GET", "/api/v1/tuners/1/status")
        self.assertError(r, 503, "unavailable")
        self.assertEqual(self.api("GET", "/api/v1/tuners").status, 200)


class Connections(ApiBoxTest):
    def test_connection_cap(self):
        idle = []
        try:
            for _ in range(256):
                idle.append(socket.create_connection(
                    ("127.0.0.1", self.port), timeout=10))
            # The kernel hands connections to accept() in the order they
            # came: this one is accepted after the 256 above, whenever
            # the daemon gets to them.
            s = socket.create_connection(("127.0.0.1", self.port),
                                         timeout=10)
            s.sendall(b"GET /api/v1/box HTTP/1.1\r\nHost: x\r\n\r\n")
            data = read_to_close(s)
            s.close()
            self.assertTrue(data.startswith(b"HTTP/1.1 503"), data)
            self.assertIn(b'"code":"unavailable"', data)
        finally:
            for s in idle:
                s.close()
        wait_for(lambda: self.api("GET", "/api/v1/box").status == 200,
                 timeout=10, what="served again")

    def test_out_of_file_descriptors(self):
        pid = self.daemon.proc.pid
        try:
            subprocess.run(["prlimit", "--pid", str(pid), "--nofile=64:64"],
                           check=True, capture_output=True, timeout=10)
        except (OSError, subprocess.SubprocessError) as exc:
            self.skipTest("cannot lower the daemon's fd limit: %s" % exc)
        socks = []
        try:
            for _ in range(80):
                socks.append(socket.create_connection(
                    ("127.0.0.1", self.port), timeout=10))
            wait_for(lambda: "pausing" in self.daemon.logtext(),
                     what="accept paused")
            # A measurement window, not a wait: a loop that spins on the
            # listening socket it cannot accept from burns the whole second.
            cpu0 = cpu_seconds(pid)
            time.sleep(1.0)
            self.assertLess(cpu_seconds(pid) - cpu0, 0.5, "busy loop")
        finally:
            for s in socks:
                s.close()
        wait_for(lambda: self.api("GET", "/api/v1/box").status == 200,
                 timeout=10, what="served again")

    def test_idle_connection_is_closed(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        s.sendall(b"GET /api/v1/box HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(5)
        first = s.recv(65536)
        self.assertTrue(first.startswith(b"HTTP/1.1 200"), first)
        # The daemon closes the idle keep-alive connection (its 30 s idle
        # limit); the 60 s socket timeout only fails a daemon that never
        # does.  How long it took is for bench/, not for a test.
        s.settimeout(60)
        rest = read_to_close(s)
        s.close()
        self.assertEqual((first + rest).count(b"HTTP/1.1 "), 1, first + rest)


if __name__ == "__main__":
    unittest.main()

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

from harness import ApiBoxTest, wait_for

def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000}


class HungChip(ApiBoxTest):
    deadline_ms = 2000
    daemon_extra = ("--deadline-ms", "2000")

    def hang(self, client, on=True):
        self.assertOk(self.box.call({"op": "fault", "client": client,
                                     "hang": on}))

    def test_504_and_recovery(self):
        self.hang(2)
        t0 = time.monotonic()
        r = self.api("POST", "/api/v1/tuners/2/tune", DVBT_474)
        self.assertError(r, 504, "deadline")
        self.assertLess(time.monotonic() - t0, 8)
        self.hang(2, False)
        wait_for(lambda: self.api("POST", "/api/v1/tuners/2/tune",
                                  DVBT_474).status == 200,
                 timeout=20, what="tuner 2 recovered")

    def test_a_hung_tune_holds_no_thread(self):
        self.hang(2)
        result = {}

        def hung():
            result["reply"] = self.api("POST", "/api/v1/tuners/2/tune",
                                       DVBT_474)

        th = threading.Thread(target=hung)
        th.start()
        time.sleep(0.2)
        t0 = time.monotonic()
        slowest = 0.0
        for i in range(20):
            t = time.monotonic()
            r = self.api("GET", "/api/v1/tuners/%d" % (1 + i % 4))
            self.assertEqual(r.status, 200, r)
            slowest = max(slowest, time.monotonic() - t)
        elapsed = time.monotonic() - t0
        self.assertTrue(th.is_alive(), "the hung tune ended too early")
        self.assertLess(slowest, 0.5)
        self.assertLess(elapsed, 1.5)
        # another tuner tunes meanwhile
        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)
        th.join(15)
        self.assertIn(result["reply"].status, (503, 504), result["reply"])

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

        th = threading.Thread(target=hung)
        th.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        self.daemon.kill(signal.SIGTERM)
        th.join(10)
        self.assertLess(time.monotonic() - t0, 5)
        self.assertEqual(self.daemon.proc.returncode, 0)
        self.assertIn("reply", result, result)
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
            time.sleep(0.3)
            s = socket.create_connection(("127.0.0.1", self.port),
                                         timeout=10)
            s.sendall(b"GET /api/v1/box HTTP/1.1\r\nHost: x\r\n\r\n")
            data = b""
            while True:
                try:
                    chunk = s.recv(65536)
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                data += chunk
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
        t0 = time.monotonic()
        s.settimeout(60)
        while True:
            try:
                if not s.recv(65536):
                    break
            except ConnectionResetError:
                break
        waited = time.monotonic() - t0
        s.close()
        self.assertGreater(waited, 25)
        self.assertLess(waited, 45)


if __name__ == "__main__":
    unittest.main()

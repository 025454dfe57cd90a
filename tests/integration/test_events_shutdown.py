# SPDX-License-Identifier: MIT
"""SIGTERM while clients wait: event streams (SSE and WebSocket) open, an
EventSource-style reconnect queued on a kept-alive connection, a REST
tune and a status waiting for a hung chip, a WebSocket tune request
behind them.  The daemon must end cleanly: exit code 0, no abort (MHD
must not stop with a suspended connection), no sanitizer report, and
every client told."""
import http.client
import json
import signal
import socket
import threading
import unittest

from events_util import SseStream, ws_connect, ws_drain_to_close, \
    ws_request
from harness import ApiBoxTest, Reply, wait_server_read

DVBT_A = {"delivery_system": "DVBT", "frequency": 474000000,
          "bandwidth": 8000000}
SSE_GET = (b"GET /api/v1/events HTTP/1.1\r\nHost: t\r\n"
           b"Accept: text/event-stream\r\n\r\n")


def read_until_closed(sock, timeout=20.0):
    """Every byte the server sends until it closes the connection."""
    sock.settimeout(timeout)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            raise AssertionError("the server kept the connection open: %r"
                                 % data[-300:])
        if not chunk:
            return data
        data += chunk


class ShutdownWithClients(ApiBoxTest):
    # The hung tune outlives the SIGTERM by far.  No status sampler: its
    # read of tuner 2, due any second, would take the hang the tune is
    # meant to meet, and the tune would wait behind it unstarted.
    deadline_ms = 20000
    daemon_extra = ("--deadline-ms", "20000", "--status-interval-ms", "0")

    def test_sigterm_with_streams_and_waiting_requests(self):
        sse = SseStream(self.port, "types=tuner.*,stub.*&since=0",
                        timeout=20)
        self.addCleanup(sse.close)
        self.assertEqual(sse.status, 200)
        # The worker powers the chip up after its probe (a QT1010's init
        # is 162 transfers): the hang is for the tune, not for that.
        sse.next_matching(
            lambda m: m["event"] == "tuner.init" and
            m["data"]["tuner"] == 2 and m["data"]["origin"] == "restore",
            timeout=10)
        self.assertOk(self.box.call({"op": "fault", "client": 2,
                                     "hang": True}))
        ws = ws_connect(self.port, "types=tuner.tune", timeout=20)
        self.addCleanup(ws.close)
        # An EventSource that reconnects at once on the same kept-alive
        # connection: the second request is read when the first stream
        # ends, i.e. while the daemon stops.
        raw = socket.create_connection(("127.0.0.1", self.port))
        self.addCleanup(raw.close)
        raw.sendall(SSE_GET + SSE_GET)

        answers = {}

        def call(name, method, path, body=None):
            answers[name] = self.api(method, path, body, timeout=30)

        def answer(name, sock):
            r = http.client.HTTPResponse(sock, method="GET")
            r.begin()
            answers[name] = Reply(r.status, {k.lower(): v for k, v in
                                             r.getheaders()}, r.read())

        # the status request is sent here, its answer read in a thread
        status = socket.create_connection(("127.0.0.1", self.port),
                                          timeout=30)
        self.addCleanup(status.close)
        waiters = [threading.Thread(target=call, args=(
                       "tune", "POST", "/api/v1/tuners/2/tune", DVBT_A)),
                   threading.Thread(target=answer, args=("status", status))]
        waiters[0].start()
        # the worker began the tune (and hangs in it)
        started = sse.next_matching(
            lambda m: m["event"] == "tuner.tune_started" and
            m["data"]["tuner"] == 2, timeout=10)
        self.assertEqual(started["data"]["origin"], "api")
        head = b"GET /api/v1/tuners/2/status HTTP/1.1\r\nHost: t\r\n\r\n"
        status.sendall(head)
        waiters[1].start()
        # the daemon holds the status request once it has read it
        wait_server_read(status, self.port, len(head))
        # WebSocket messages are handled in order: the reply to a bad
        # request sent after w1 means w1 is queued
        ws.send(json.dumps({"id": "w1", "op": "tune", "tuner": 2,
                            "params": DVBT_A}))
        seen = []
        probe = ws_request(ws, {"id": "probe", "op": "no-such-op"},
                           seen=seen)
        self.assertFalse(probe["ok"], probe)
        self.assertNotIn("reply", [m.get("type") for m in seen], seen)
        self.assertTrue(all(t.is_alive() for t in waiters), answers)

        self.stop_cleanly()
        for t in waiters:
            t.join(15)

        # the waiting requests were answered
        for name in ("tune", "status"):
            self.assertIn(name, answers)
            self.assertError(answers[name], 503, "unavailable")
        # the SSE stream ended with its closed message
        last = None
        while True:
            try:
                last = sse.next(timeout=10)
            except EOFError:
                break
        self.assertEqual(last["event"], "closed", last)
        self.assertEqual(last["data"], {"type": "closed",
                                        "reason": "shutdown"})
        # the WebSocket was closed going away, with no reply to w1
        texts, code = ws_drain_to_close(ws, timeout=10)
        self.assertEqual(code, 1001, texts)
        msgs = [json.loads(t) for t in texts]
        self.assertEqual(msgs[-1], {"type": "closed", "reason": "shutdown"})
        self.assertNotIn("reply", [m["type"] for m in msgs])
        # the pipelined stream: the first ended, the reconnect was refused
        data = read_until_closed(raw).decode(errors="replace")
        self.assertIn('"reason":"shutdown"', data)
        second = data[data.index('"reason":"shutdown"'):]
        self.assertIn("HTTP/1.1 503", second)
        self.assertIn('"code":"unavailable"', second)

    def stop_cleanly(self):
        self.daemon.proc.send_signal(signal.SIGTERM)
        rc = self.daemon.proc.wait(15)
        log = self.daemon.logtext()
        self.assertEqual(rc, 0, log[-3000:])
        self.assertNotIn("Fatal error", log)
        for mark in self.SANITIZER_MARKS:
            self.assertNotIn(mark, log)

    def test_a_reconnect_queued_behind_a_stream(self):
        # Nothing else going on: the reconnect is read in the very first
        # runs of the stop.
        raw = socket.create_connection(("127.0.0.1", self.port))
        self.addCleanup(raw.close)
        raw.sendall(SSE_GET + SSE_GET)
        ws = ws_connect(self.port, timeout=20)
        self.addCleanup(ws.close)
        # the first stream is open once its head came
        raw.settimeout(20)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = raw.recv(65536)
            self.assertTrue(chunk, head)
            head += chunk
        self.stop_cleanly()
        data = (head + read_until_closed(raw)).decode(errors="replace")
        self.assertEqual(data.count("HTTP/1.1 200"), 1, data[-500:])
        self.assertIn("HTTP/1.1 503", data)
        _, code = ws_drain_to_close(ws, timeout=10)
        self.assertEqual(code, 1001)

    def test_sigterm_right_after_a_stream_opened(self):
        sse = SseStream(self.port, timeout=20)
        self.addCleanup(sse.close)
        self.stop_cleanly()
        msgs = []
        while True:
            try:
                msgs.append(sse.next(timeout=10))
            except EOFError:
                break
        self.assertEqual(msgs[-1]["data"]["reason"], "shutdown", msgs)

if __name__ == "__main__":
    unittest.main()

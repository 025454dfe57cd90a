# SPDX-License-Identifier: MIT
"""Bounded memory of the event stream: a client that does not read is
closed as a slow consumer; a client that comes back later than the ring
reaches is told about the gap."""
import http.client
import json
import socket
import time
import unittest

from events_util import (SseStream, ws_collect, ws_connect,
                         ws_drain_to_close, ws_next)
from harness import ApiBoxTest, wait_for


class SlowConsumer(ApiBoxTest):
    # 4 tuners x 100 status events a second (a 1 ms heartbeat publishes
    # every read, steady or not)
    daemon_extra = ("--status-interval-ms", "10", "--status-heartbeat-ms",
                    "1")

    def test_a_client_that_never_reads_is_closed_with_a_reason(self):
        ws = ws_connect(self.port, "types=tuner.status", rcvbuf=4096,
                        timeout=60)
        self.addCleanup(ws.close)
        # a well-behaved client beside it keeps its stream
        good = ws_connect(self.port, "types=tuner.status")
        self.addCleanup(good.close)
        wait_for(lambda: ("slow consumer" in self.daemon.logtext()) or
                 ws_collect(good, 0.2) is None, timeout=60, step=0.2,
                 what="the daemon to close the slow consumer")
        texts, code = ws_drain_to_close(ws, timeout=30)
        self.assertEqual(code, 1008)
        last = json.loads(texts[-1])
        self.assertEqual(last, {"type": "closed",
                                "reason": "slow_consumer"})
        # what came before it were events in order
        seqs = [json.loads(t)["seq"] for t in texts[:-1]]
        self.assertTrue(seqs)
        self.assertEqual(seqs, sorted(seqs))
        # the other stream and the daemon carry on
        m = ws_next(good, lambda m: m["type"] == "tuner.status")
        self.assertGreater(m["seq"], seqs[-1])
        self.assertEqual(self.api("GET", "/api/v1/box").status, 200)

    def test_an_sse_client_that_never_reads_is_closed(self):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", self.port))
        conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=30)
        conn.sock = s
        self.addCleanup(conn.close)
        conn.request("GET", "/api/v1/events?types=tuner.status",
                     headers={"Accept": "text/event-stream"})
        wait_for(lambda: "slow consumer" in self.daemon.logtext(),
                 timeout=60, step=0.2, what="the slow SSE consumer")
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        body = resp.read().decode()
        messages = [m for m in body.split("\n\n") if m]
        self.assertEqual(messages[-1],
                         'event: closed\n'
                         'data: {"type":"closed","reason":"slow_consumer"}')
        self.assertTrue(messages[0].startswith("id: "), messages[0])


class Gap(ApiBoxTest):
    daemon_extra = ("--event-ring", "16")

    def make_events(self, n):
        for i in range(n):
            freq = 474000000 if i % 2 == 0 else 530000000
            self.assertOk(self.box.tune(1, "DVBT", freq, 8000000))

    def test_since_older_than_the_ring_starts_with_a_gap(self):
        self.make_events(12)
        box = self.api("GET", "/api/v1/box").json
        oldest = box["events"]["oldest_seq"]
        self.assertGreater(oldest, 3, box)
        ws = ws_connect(self.port, "since=2")
        self.addCleanup(ws.close)
        gap = ws_next(ws, lambda m: True)
        self.assertEqual(gap["type"], "gap", gap)
        self.assertEqual(gap["from"], 3)
        self.assertGreaterEqual(gap["to"], oldest - 1)
        self.assertTrue(gap["message"])
        nxt = ws_next(ws, lambda m: True)
        self.assertEqual(nxt["seq"], gap["to"] + 1, nxt)

    def test_sse_gap_and_last_event_id(self):
        self.make_events(12)
        s = SseStream(self.port, headers={"Last-Event-ID": "1"})
        self.addCleanup(s.close)
        self.assertEqual(s.status, 200)
        gap = s.next()
        self.assertEqual(gap["event"], "gap")
        self.assertEqual(gap["data"]["from"], 2)
        self.assertEqual(int(gap["id"]), gap["data"]["to"])
        ev = s.next()
        self.assertEqual(int(ev["id"]), gap["data"]["to"] + 1)
        self.assertEqual(ev["event"], ev["data"]["type"])

    def test_a_recent_since_has_no_gap(self):
        self.make_events(4)
        last = self.api("GET", "/api/v1/box").json["events"]["next_seq"] - 1
        ws = ws_connect(self.port, "since=%d" % (last - 2))
        self.addCleanup(ws.close)
        got = ws_collect(ws, 0.5)
        # (status samples may follow)
        self.assertEqual([m.get("seq") for m in got[:2]], [last - 1, last])
        self.assertNotIn("gap", [m["type"] for m in got])


if __name__ == "__main__":
    unittest.main()

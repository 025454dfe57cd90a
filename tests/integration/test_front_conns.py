# SPDX-License-Identifier: MIT
"""Connection classes (protocol/API.md, "Limits"): event streams
(WebSocket and SSE) and request/response connections have a cap each
(--max-request-conns, --max-stream-conns).  Streams never take the
slots commands need: with every stream slot taken, REST still answers,
and the stream past the cap is refused with the JSON 503 once its head
is read.  The counts go back down exactly as connections close (neither
counted twice nor forgotten), also for a stream that moved from a
kept-alive connection."""
import http.client
import json
import resource
import socket
import unittest

from events_util import SseStream, websocket, ws_connect, ws_next
from harness import ApiBoxTest, read_to_close, wait_for
from test_front_routing import Reader, upgrade_head

REQS = 24
STREAMS = 12
DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000}


def keep_alive(port):
    """A kept-alive HTTP connection that was served once: (conn, reply)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/api/v1/box")
    r = conn.getresponse()
    return conn, (r.status, r.read())


def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(n, hard), hard))


class ConnectionClasses(ApiBoxTest):
    daemon_extra = ("--max-request-conns", str(REQS),
                    "--max-stream-conns", str(STREAMS))

    def open_streams(self, n_ws, n_sse):
        ws = [ws_connect(self.port, "types=none.none") for _ in range(n_ws)]
        self.addCleanup(lambda: [w.close() for w in ws])
        sse = []
        self.addCleanup(lambda: [s.close() for s in sse])
        for _ in range(n_sse):
            sse.append(SseStream(self.port, "types=none.none"))
            self.assertEqual(sse[-1].status, 200)
        return ws, sse

    def assertFull(self, status, body, key, cap):
        self.assertEqual(status, 503, body)
        err = json.loads(body)["error"]
        self.assertEqual(err["code"], "unavailable", err)
        self.assertEqual(err["details"], {key: cap}, err)

    def stream_refused(self):
        """A WebSocket and an SSE stream past the cap: both 503."""
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        with sock:
            sock.sendall(upgrade_head(b"dGhlIHNhbXBsZSBub25jZQ=="))
            reader = Reader(sock)
            status, _ = reader.head()
            if status == 101:
                return False
            body = reader.buf + read_to_close(sock)
        self.assertFull(status, body, "max_event_streams", STREAMS)
        s = SseStream(self.port, "types=none.none")
        body = s.resp.read()
        s.close()
        self.assertFull(s.status, body, "max_event_streams", STREAMS)
        return True

    def requests_served(self, n):
        """n kept-alive connections served at once, the next refused."""
        conns = []
        try:
            for _ in range(n):
                conn, (status, _) = keep_alive(self.port)
                conns.append(conn)
                if status != 200:
                    return False
            conn, (status, body) = keep_alive(self.port)
            conn.close()
            self.assertFull(status, body, "max_connections", REQS)
            return True
        finally:
            for c in conns:
                c.close()

    def test_full_streams_leave_requests_their_slots(self):
        ws, sse = self.open_streams(STREAMS // 2, STREAMS // 2)
        self.assertTrue(self.stream_refused())
        # every request slot is still there, commands included
        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)
        wait_for(lambda: self.requests_served(REQS), timeout=30,
                 what="every request slot served while streams are full")
        # a stream that ends frees its slot, of either kind
        ws.pop().close()
        wait_for(lambda: not self.stream_refused(), what="a WebSocket slot")
        sse.pop().close()
        wait_for(lambda: not self.stream_refused(), what="an SSE slot")

    def test_stream_on_a_kept_alive_connection_moves_class(self):
        """An upgrade after a plain request moves its connection to the
        streams; its close gives the stream slot back."""
        ws, sse = self.open_streams(STREAMS - 1, 0)
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        self.addCleanup(s.close)
        conn = http.client.HTTPConnection("127.0.0.1", self.port)
        conn.sock = s
        conn.request("GET", "/api/v1/box")
        self.assertEqual(conn.getresponse().read() != b"", True)
        last = websocket.create_connection(
            "ws://127.0.0.1:%d/api/v1/events?types=none.none" % self.port,
            socket=s, subprotocols=["tunerd.v1"], timeout=10)
        self.assertTrue(self.stream_refused())
        wait_for(lambda: self.requests_served(REQS), timeout=30,
                 what="the moved connection no longer a request")
        last.close()
        wait_for(lambda: not self.stream_refused(), what="its stream slot")


class ThousandsOfSubscribers(ApiBoxTest):
    """1,000 WebSocket and 1,000 SSE subscribers on the default caps, REST
    answering meanwhile, and every subscriber gets the tune event."""

    N = 1000

    def test_thousand_ws_and_thousand_sse(self):
        raise_nofile(2 * self.N + 256)
        since = self.api("GET", "/api/v1/box").json["events"]["next_seq"] - 1
        q = "types=tuner.tune&since=%d" % since
        ws = []
        self.addCleanup(lambda: [w.close() for w in ws])
        sse = []
        self.addCleanup(lambda: [s.close() for s in sse])
        for _ in range(self.N):
            ws.append(ws_connect(self.port, q, timeout=30))
            sse.append(SseStream(self.port, q, timeout=30))
            self.assertEqual(sse[-1].status, 200)
        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)
        for w in ws:
            m = ws_next(w, lambda m: m.get("type") == "tuner.tune", 60)
            self.assertEqual(m["tuner"], 1, m)
        for s in sse:
            m = s.next_matching(lambda m: m.get("event") == "tuner.tune", 60)
            self.assertEqual(m["data"]["tuner"], 1, m)
        self.assertEqual(self.api("GET", "/api/v1/tuners/1").status, 200)


if __name__ == "__main__":
    unittest.main()

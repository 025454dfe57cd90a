# SPDX-License-Identifier: MIT
"""A WebSocket upgrade is served the same wherever it sits on its
connection (libmicrohttpd reads them all): a plain GET pipelined with
an upgrade, an upgrade on a kept-alive connection after a plain
request, and an upgrade whose head comes slowly each get the GET
answered, then 101 and a working event stream (a request over it is
answered)."""
import base64
import hashlib
import json
import os
import socket
import time
import unittest

from events_util import websocket
from harness import ApiBoxTest

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
GET = b"GET /api/v1/box HTTP/1.1\r\nHost: x\r\n\r\n"


def upgrade_head(key, path=b"/api/v1/events?types=none.none"):
    return (b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n"
            b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Key: " + key + b"\r\n"
            b"Sec-WebSocket-Version: 13\r\n"
            b"Sec-WebSocket-Protocol: tunerd.v1\r\n\r\n")


class Reader:
    """HTTP answers and WebSocket frames off one raw socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def fill(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("closed after %r" % self.buf[:300])
            self.buf += chunk

    def take(self, n):
        self.fill(n)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def head(self):
        """(status, headers) of the next answer; its body stays."""
        while b"\r\n\r\n" not in self.buf:
            self.fill(len(self.buf) + 1)
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in lines[1:])}
        return int(lines[0].split(" ")[1]), headers

    def answer(self):
        """(status, JSON body) of a Content-Length answer."""
        status, headers = self.head()
        return status, json.loads(self.take(int(headers["content-length"])))

    def frame(self):
        """(opcode, payload) of the next server frame (never masked)."""
        b0, b1 = self.take(2)
        n = b1 & 0x7f
        if n == 126:
            n = int.from_bytes(self.take(2), "big")
        elif n == 127:
            n = int.from_bytes(self.take(8), "big")
        return b0 & 0x0f, self.take(n)


class UpgradeRouting(ApiBoxTest):
    def connect(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        self.addCleanup(s.close)
        return s, Reader(s)

    def assertStreamWorks(self, sock, reader, key):
        """101 with the RFC 6455 accept key, then a request over the stream is
        answered on it."""
        status, headers = reader.head()
        self.assertEqual(status, 101, headers)
        accept = base64.b64encode(hashlib.sha1(key + GUID).digest())
        self.assertEqual(headers.get("sec-websocket-accept"),
                         accept.decode())
        self.assertEqual(headers.get("sec-websocket-protocol"), "tunerd.v1")
        req = json.dumps({"id": 7, "op": "nonsense"})
        sock.sendall(websocket.ABNF.create_frame(
            req, websocket.ABNF.OPCODE_TEXT).format())
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            op, payload = reader.frame()
            if op != websocket.ABNF.OPCODE_TEXT:
                continue
            msg = json.loads(payload)
            if msg.get("type") == "reply":
                self.assertEqual(msg["id"], 7, msg)
                self.assertEqual(msg["error"]["code"], "bad_request", msg)
                return
        self.fail("no reply on the stream")

    def key(self):
        return base64.b64encode(os.urandom(16))

    def test_get_pipelined_with_an_upgrade(self):
        sock, reader = self.connect()
        key = self.key()
        sock.sendall(GET + upgrade_head(key))
        status, body = reader.answer()
        self.assertEqual(status, 200, body)
        self.assertIn("name", body)
        self.assertStreamWorks(sock, reader, key)

    def test_upgrade_on_a_kept_alive_connection(self):
        sock, reader = self.connect()
        for _ in range(2):
            sock.sendall(GET)
            status, body = reader.answer()
            self.assertEqual(status, 200, body)
        key = self.key()
        sock.sendall(upgrade_head(key))
        self.assertStreamWorks(sock, reader, key)

    def test_upgrade_refused_on_a_kept_alive_connection(self):
        """A refusal there is the API's JSON error, as on a first head."""
        sock, reader = self.connect()
        sock.sendall(GET)
        self.assertEqual(reader.answer()[0], 200)
        sock.sendall(upgrade_head(self.key(),
                                  b"/api/v1/events?since=abc"))
        status, body = reader.answer()
        self.assertEqual(status, 400, body)
        self.assertEqual(body["error"]["code"], "bad_request", body)

    def test_slow_upgrade_head(self):
        sock, reader = self.connect()
        key = self.key()
        head = upgrade_head(key)
        sock.sendall(head[:20])
        # The scenario itself: the head's second half comes after the
        # 2 s that the peek used to wait (not a synchronisation).
        time.sleep(2.5)
        sock.sendall(head[20:])
        self.assertStreamWorks(sock, reader, key)


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: MIT
"""The front's limits against hostile clients: a request head must be
complete within its deadline (--head-timeout-ms), so clients trickling
their heads (slowloris) are closed and the API answers again; and one
non-loopback address holds at most 32 connections, the one past it
refused with the API's 503 while loopback clients still get in."""
import http.client
import json
import select
import socket
import unittest

from harness import ApiBoxTest, global_ipv4, http_request, wait_for

CAP = 256
PER_ADDR = 32
TOKEN = "limits-token-0123"


class HeadDeadline(ApiBoxTest):
    daemon_extra = ("--head-timeout-ms", "1000")

    def test_trickling_heads_are_closed(self):
        socks = []
        self.addCleanup(lambda: [s.close() for s in socks])
        for _ in range(CAP):
            s = socket.create_connection(("127.0.0.1", self.port),
                                         timeout=10)
            s.sendall(b"GET /api/v1/box HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            socks.append(s)
        # Every slot is held by a trickling head; each gets one more byte
        # whenever nothing came from the server for a while, until the
        # server closes them all (the bound fails a daemon that never does).
        open_ = list(socks)
        answers = []

        def all_closed():
            readable, _, _ = select.select(open_, [], [], 0.1)
            for s in readable:
                try:
                    data = s.recv(65536)
                except ConnectionResetError:
                    data = b""
                if data:
                    answers.append(data)
                open_.remove(s)
            for s in open_:
                try:
                    s.send(b"a")
                except (BrokenPipeError, ConnectionResetError):
                    pass  # closed: select sees it next round
            return not open_

        wait_for(all_closed, timeout=30, step=0,
                 what="every trickling connection closed")
        self.assertEqual(answers, [])
        r = self.api("GET", "/api/v1/box")
        self.assertEqual(r.status, 200, r)

    def test_a_complete_head_is_served(self):
        # the deadline is for the head only: a head sent in pieces that
        # completes is answered
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        self.addCleanup(s.close)
        s.sendall(b"GET /api/v1/box HTTP/1.1\r\n")
        s.sendall(b"Host: x\r\n\r\n")
        self.assertTrue(s.recv(65536).startswith(b"HTTP/1.1 200"))


class PerAddressCap(ApiBoxTest):
    listen_host = "0.0.0.0"
    config = {"tokens": [{"name": "ops", "token": TOKEN,
                          "role": "viewer"}]}

    def served(self, host, source=None):
        """A kept-alive connection from source, served once."""
        conn = http.client.HTTPConnection(
            host, self.port, timeout=10,
            source_address=(source, 0) if source else None)
        conn.request("GET", "/api/v1/box",
                     headers={"Authorization": "Bearer " + TOKEN})
        r = conn.getresponse()
        body = r.read()
        return conn, r.status, body

    def test_one_address_cannot_take_every_slot(self):
        addr = global_ipv4()
        if not addr:
            self.skipTest("this machine has no non-loopback IPv4 address")
        conns = []
        self.addCleanup(lambda: [c.close() for c in conns])
        for _ in range(PER_ADDR):
            conn, status, _ = self.served(addr, addr)
            conns.append(conn)
            self.assertEqual(status, 200)
        conn, status, body = self.served(addr, addr)
        conn.close()
        self.assertEqual(status, 503)
        self.assertEqual(json.loads(body), {"error": {
            "code": "unavailable",
            "message": "too many connections from this address: try "
                       "again later",
            "details": {"max_connections_per_address": PER_ADDR}}})
        # loopback still gets in
        r = http_request(self.port, "GET", "/api/v1/box",
                         headers={"Authorization": "Bearer " + TOKEN})
        self.assertEqual(r.status, 200, r)
        # a closed connection gives its address's slot back
        conns.pop().close()

        def one_more():
            conn, status, _ = self.served(addr, addr)
            conns.append(conn)
            return status == 200
        wait_for(one_more, what="the address's slot back")


if __name__ == "__main__":
    unittest.main()

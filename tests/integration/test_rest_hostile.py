# SPDX-License-Identifier: MIT
"""Hostile input that must neither freeze the daemon, flood its log nor
get an answer outside the API's JSON error shape."""
import base64
import json
import os
import shutil
import socket
import tempfile
import unittest

from harness import ApiBoxTest, start_refused

LEASE = "/api/v1/tuners/1/lease"
TOKEN = "good-token-0123"


def raw_exchange(port, request, timeout=15.0):
    """Send request bytes on a new connection; everything until close."""
    with socket.create_connection(("127.0.0.1", port),
                                  timeout=timeout) as s:
        s.sendall(request)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk


class NonRegularFiles(ApiBoxTest):
    """A FIFO under --web-root: opening it for reading would wait for a
    writer, and the daemon has one loop."""

    def setUp(self):
        self.web_root = tempfile.mkdtemp(prefix="tunerd-web-")
        with open(os.path.join(self.web_root, "index.html"), "w") as f:
            f.write("<p>dashboard</p>")
        os.mkfifo(os.path.join(self.web_root, "pipe.js"))
        os.mkdir(os.path.join(self.web_root, "sub"))
        os.mkfifo(os.path.join(self.web_root, "sub", "index.html"))
        super().setUp()

    def tearDown(self):
        super().tearDown()
        shutil.rmtree(self.web_root, ignore_errors=True)

    def test_a_fifo_is_not_found_and_the_daemon_goes_on(self):
        for path in ("/pipe.js", "/sub/", "/sub"):
            with self.subTest(path=path):
                # a frozen daemon would leave this request unanswered
                # until the timeout fails it
                r = self.api("GET", path, timeout=10)
                self.assertError(r, 404, "not_found")
                self.assertEqual(self.api("GET", "/api/v1/box").status,
                                 200)
        self.assertEqual(self.api("GET", "/").status, 200)


class RefusedUpgrades(ApiBoxTest):
    config = {"tokens": [{"name": "tv", "token": TOKEN, "role": "viewer"}]}
    REFUSALS = 200

    def test_refused_upgrades_do_not_flood_the_log(self):
        key = base64.b64encode(os.urandom(16)).decode()
        req = ("GET /api/v1/events HTTP/1.1\r\nHost: x\r\n"
               "Upgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n"
               "\r\n" % key).encode()
        for _ in range(self.REFUSALS):
            answer = raw_exchange(self.port, req)
            self.assertRegex(answer, rb"^HTTP/1\.[01] 401 ", answer)
        # every refusal was answered, so each was logged or counted before
        lines = [ln for ln in self.daemon.logtext().splitlines()
                 if "refused an event stream" in ln]
        self.assertGreaterEqual(len(lines), 1)
        # a few log windows at most, each with its own budget
        self.assertLess(len(lines), self.REFUSALS // 2, lines[-3:])


class ErrorShapes(ApiBoxTest):
    def test_undecodable_path_is_the_json_404(self):
        for path in ("/api/v1/%ff", "/api/v1/tuners/%ff", "/%ff"):
            with self.subTest(path=path):
                self.assertError(self.api("GET", path), 404, "not_found")

    def test_head_on_the_event_stream_has_no_body(self):
        answer = raw_exchange(
            self.port, b"HEAD /api/v1/events HTTP/1.1\r\nHost: x\r\n"
            b"Connection: close\r\n\r\n")
        head, _, body = answer.partition(b"\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.1 200"), answer)
        self.assertIn(b"text/event-stream", head.lower())
        self.assertEqual(body, b"")
        # and a bad query gets the same status a GET gets
        answer = raw_exchange(
            self.port, b"HEAD /api/v1/events?since=x HTTP/1.1\r\n"
            b"Host: x\r\nConnection: close\r\n\r\n")
        self.assertTrue(answer.startswith(b"HTTP/1.1 400"), answer)

    def test_413_for_a_chunked_body_of_any_size(self):
        # over the 64 KiB limit and over the 4 MiB after which the body
        # used to be cut off by a closed connection
        with socket.create_connection(("127.0.0.1", self.port),
                                      timeout=30) as s:
            s.sendall(b"POST /api/v1/tuners/1/tune HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Type: application/json\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n")
            chunk = b"y" * 65536
            for _ in range(80):                 # 5 MiB
                s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            s.sendall(b"0\r\n\r\n")
            answer = b""
            while b"body_too_large" not in answer:
                data = s.recv(65536)
                if not data:
                    break
                answer += data
        self.assertRegex(answer, rb"^HTTP/1\.1 413 ", answer[:300])
        self.assertIn(b"application/json", answer)
        self.assertIn(b"body_too_large", answer)
        self.assertEqual(self.api("GET", "/api/v1/box").status, 200)

    def test_delivery_system_names_are_case_sensitive(self):
        r = self.api("POST", "/api/v1/tuners/1/tune",
                     body={"delivery_system": "dvbt",
                           "frequency": 474000000, "bandwidth": 8000000})
        self.assertError(r, 400, "bad_request")
        self.assertEqual(r.error["details"]["field"], "delivery_system")

    def test_holder_limit_counts_characters(self):
        holder = "\u00e9" * 64          # 64 characters, 128 bytes
        r = self.api("POST", LEASE, body={"holder": holder})
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json["holder"], holder)
        r = self.api("GET", "/api/v1/tuners/1")
        self.assertEqual(r.json["lease"]["holder"], holder)
        r = self.api("POST", "/api/v1/tuners/2/lease",
                     body={"holder": "\u00e9" * 65})
        self.assertError(r, 400, "bad_request")
        self.assertEqual(r.error["details"]["field"], "holder")


class TokenCharacters(ApiBoxTest):
    def start_daemon(self, wait=True):
        return None

    def test_a_token_that_can_never_match_is_refused(self):
        for secret in ("has space-123", "tab\tinside-1", "comma,token-1",
                       "caf\u00e9-token", " leading-space"):
            with self.subTest(secret=secret):
                path = os.path.join(self.dir, "bad.json")
                with open(path, "w") as f:
                    f.write('{"tokens":[{"name":"odd","token":%s,'
                            '"role":"viewer"}]}' % json.dumps(secret))
                rc, log = start_refused(self.box, path)
                self.assertNotEqual(rc, 0)
                self.assertIn('tokens[0] ("odd")', log)
                self.assertNotIn(secret, log)


if __name__ == "__main__":
    unittest.main()

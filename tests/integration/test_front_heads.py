# SPDX-License-Identifier: MIT
"""Request heads the front refuses before libmicrohttpd sees them: a bad
request line, an HTTP version other than 1.0 and 1.1, a URI or a head
over its bound, a Content-Length that is no number or overflows, and the
request smuggling surface (two different Content-Lengths, Content-Length
with Transfer-Encoding).  Each gets one answer with the API's JSON error
object (not libmicrohttpd's HTML page) and the connection is closed."""
import json
import socket
import unittest

from harness import ApiBoxTest, read_to_close

GET = b"GET /api/v1/box HTTP/1.1\r\nHost: x\r\n"


class RefusedHeads(ApiBoxTest):
    def exchange(self, data):
        """Send data, read until the server closes; the raw answer."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        self.addCleanup(s.close)
        s.sendall(data)
        return read_to_close(s)

    def assertRefused(self, data, status, code):
        """One JSON error answer with that status and code, then EOF."""
        raw = self.exchange(data)
        head, sep, body = raw.partition(b"\r\n\r\n")
        self.assertTrue(sep, raw[:300])
        lines = head.decode("latin-1").split("\r\n")
        self.assertEqual(lines[0].split(" ")[:2], ["HTTP/1.1", str(status)],
                         raw[:300])
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in lines[1:])}
        self.assertEqual(headers.get("content-type"), "application/json")
        self.assertEqual(headers.get("connection"), "close")
        # the whole rest is the body: one answer, no second status line
        self.assertEqual(int(headers["content-length"]), len(body), raw)
        err = json.loads(body)["error"]
        self.assertEqual(err["code"], code, err)
        self.assertTrue(err["message"])
        return err

    def test_uri_over_the_api_limit(self):
        for size in (2049, 40000):
            err = self.assertRefused(
                b"GET /api/v1/" + b"a" * size + b" HTTP/1.1\r\n\r\n",
                414, "uri_too_long")
            self.assertEqual(err["details"], {"max": 2048})

    def test_head_over_the_peek_bound(self):
        err = self.assertRefused(
            GET + b"X-Big: " + b"b" * 40000 + b"\r\n\r\n",
            431, "bad_request")
        self.assertEqual(err["details"], {"max": 8192})

    def test_other_http_versions(self):
        for version in (b"HTTP/2.0", b"HTTP/0.9", b"HTTP/3.0"):
            self.assertRefused(b"GET /api/v1/box " + version +
                               b"\r\nHost: x\r\n\r\n", 505, "bad_request")

    def test_bad_request_lines(self):
        for line in (b"GET", b"GET /api/v1/box", b"GET  /api/v1/box HTTP/1.1",
                     b"GET /api/v1/box HTTP/1.1 x", b"GET /a\x01b HTTP/1.1",
                     b"G(T /api/v1/box HTTP/1.1", b"GET /api/v1/box HTTPS/1.1"):
            with self.subTest(line=line):
                self.assertRefused(line + b"\r\nHost: x\r\n\r\n",
                                   400, "bad_request")

    def test_bad_header_lines(self):
        for line in (b"no colon here", b"Content-Length : 4", b": empty"):
            with self.subTest(line=line):
                self.assertRefused(GET + line + b"\r\n\r\n",
                                   400, "bad_request")

    def test_content_length_overflow(self):
        self.assertRefused(b"POST /api/v1/tuners/1/tune HTTP/1.1\r\n"
                           b"Host: x\r\nContent-Type: application/json\r\n"
                           b"Content-Length: 99999999999999999999999\r\n\r\n",
                           413, "body_too_large")

    def test_content_length_not_a_number(self):
        # libmicrohttpd refuses blanks after the number too
        for value in (b"abc", b"-1", b"4, 4", b"0x10", b"", b"0 ", b"0\t"):
            with self.subTest(value=value):
                self.assertRefused(GET + b"Content-Length: " + value +
                                   b"\r\n\r\n", 400, "bad_request")

    def test_conflicting_content_lengths(self):
        self.assertRefused(b"POST /api/v1/tuners/1/tune HTTP/1.1\r\n"
                           b"Host: x\r\nContent-Type: application/json\r\n"
                           b"Content-Length: 2\r\nContent-Length: 7\r\n\r\n"
                           b"{}", 400, "bad_request")

    def test_content_length_with_transfer_encoding(self):
        for first, second in ((b"Content-Length: 2", b"Transfer-Encoding: "
                               b"chunked"),
                              (b"transfer-encoding: chunked",
                               b"content-length: 2")):
            with self.subTest(first=first):
                self.assertRefused(
                    b"POST /api/v1/tuners/1/tune HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Type: application/json\r\n" + first + b"\r\n" +
                    second + b"\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                    400, "bad_request")


class AcceptedHeads(ApiBoxTest):
    def first_line(self, data):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        self.addCleanup(s.close)
        s.sendall(data)
        answer = b""
        while b"\r\n" not in answer:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer.split(b"\r\n", 1)[0]

    def test_heads_within_bounds_are_served(self):
        for data in (GET + b"\r\n",
                     b"GET /api/v1/box HTTP/1.0\r\n\r\n",
                     GET + b"Content-Length: 0\r\nContent-Length: 0\r\n\r\n",
                     GET + b"Content-Length:  0\r\n\r\n",
                     GET + b"Content-Length:0\r\n\r\n",
                     GET + b"X-Folded: a\r\n b\r\n\r\n"):
            with self.subTest(data=data[:60]):
                self.assertEqual(self.first_line(data), b"HTTP/1.1 200 OK")

    def test_a_uri_at_the_limit_is_routed(self):
        uri = b"/api/v1/" + b"n" * (2048 - 8)
        self.assertEqual(len(uri), 2048)
        self.assertEqual(self.first_line(b"GET " + uri + b" HTTP/1.1\r\n\r\n"),
                         b"HTTP/1.1 404 Not Found")


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: MIT
"""Browsers on the API: CORS preflights and headers for listed origins,
and the Origin rule: a request from a web page of an unlisted origin is
refused (REST, SSE, WebSocket) before anything runs, while requests
without an Origin (scripts) and same-origin pages go on."""
import json
import unittest

from events_util import SseStream, ws_connect, ws_next
from harness import ApiBoxTest

import websocket

LISTED = "http://console.example:8080"
OTHER = "http://evil.example"


class Cors(ApiBoxTest):
    config = {"cors": {"origins": [LISTED], "max_age_s": 120}}

    def test_preflight_listed_origin(self):
        r = self.api("OPTIONS", "/api/v1/tuners/1/tune", headers={
            "Origin": LISTED,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type"})
        self.assertEqual(r.status, 204, r)
        self.assertEqual(r.headers.get("access-control-allow-origin"),
                         LISTED)
        self.assertIn("POST", r.headers["access-control-allow-methods"])
        allowed = r.headers["access-control-allow-headers"].lower()
        self.assertIn("authorization", allowed)
        self.assertIn("content-type", allowed)
        self.assertEqual(r.headers.get("access-control-max-age"), "120")
        self.assertIn("Origin", r.headers.get("vary", ""))

    def test_preflight_unlisted_origin_refused(self):
        r = self.api("OPTIONS", "/api/v1/tuners/1/tune", headers={
            "Origin": OTHER, "Access-Control-Request-Method": "POST"})
        self.assertError(r, 403, "origin_not_allowed")
        self.assertNotIn("access-control-allow-origin", r.headers)

    def test_plain_options_lists_methods(self):
        r = self.api("OPTIONS", "/api/v1/tuners/1/lease")
        self.assertEqual(r.status, 204, r)
        self.assertEqual(r.headers.get("allow"), "POST, DELETE")
        self.assertNotIn("access-control-allow-origin", r.headers)

    def test_answers_carry_the_listed_origin(self):
        r = self.api("GET", "/api/v1/tuners", headers={"Origin": LISTED})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.headers.get("access-control-allow-origin"),
                         LISTED)
        self.assertIn("Origin", r.headers.get("vary", ""))
        # errors too, so the page can read why
        r = self.api("GET", "/api/v1/tuners/99", headers={"Origin": LISTED})
        self.assertError(r, 404, "not_found")
        self.assertEqual(r.headers.get("access-control-allow-origin"),
                         LISTED)

    def test_unlisted_origin_changes_nothing(self):
        before = self.api("GET", "/api/v1/tuners/1").json
        r = self.api("POST", "/api/v1/tuners/1/sleep",
                     headers={"Origin": OTHER})
        self.assertError(r, 403, "origin_not_allowed")
        self.assertNotIn("access-control-allow-origin", r.headers)
        after = self.api("GET", "/api/v1/tuners/1").json
        self.assertEqual(before.get("state"), after.get("state"))
        self.assertEqual(before.get("params"), after.get("params"))
        # the same request from a script (no Origin) goes on
        self.assertEqual(self.api("POST", "/api/v1/tuners/1/sleep").status,
                         200)

    def test_same_origin_page(self):
        own = "http://127.0.0.1:%d" % self.port
        r = self.api("GET", "/api/v1/box", headers={"Origin": own})
        self.assertEqual(r.status, 200, r)
        self.assertNotIn("access-control-allow-origin", r.headers)

    def test_sse(self):
        sse = SseStream(self.port, "types=tuner.tune",
                        headers={"Origin": LISTED})
        self.addCleanup(sse.conn.close)
        self.assertEqual(sse.status, 200)
        self.assertEqual(sse.headers.get("access-control-allow-origin"),
                         LISTED)
        refused = SseStream(self.port, "types=tuner.tune",
                            headers={"Origin": OTHER})
        self.addCleanup(refused.conn.close)
        self.assertEqual(refused.status, 403)
        self.assertEqual(refused.body_json()["error"]["code"],
                         "origin_not_allowed")

    def test_websocket(self):
        url = "ws://127.0.0.1:%d/api/v1/events?types=tuner.tune" % self.port
        with self.assertRaises(websocket.WebSocketBadStatusException) as cm:
            websocket.create_connection(url, origin=OTHER,
                                        subprotocols=["tunerd.v1"],
                                        timeout=10)
        self.assertEqual(cm.exception.status_code, 403)
        for origin in (LISTED, "http://127.0.0.1:%d" % self.port):
            ws = websocket.create_connection(url, origin=origin,
                                             subprotocols=["tunerd.v1"],
                                             timeout=10)
            self.addCleanup(ws.close)
            self.assertEqual(ws.getstatus(), 101)
        # no Origin at all (a script): as before
        ws = ws_connect(self.port, "types=tuner.tune")
        self.addCleanup(ws.close)
        r = self.api("POST", "/api/v1/tuners/1/tune",
                     body={"delivery_system": "DVBT",
                           "frequency": 474000000, "bandwidth": 8000000})
        self.assertEqual(r.status, 200, r)
        msg = ws_next(ws, lambda m: m.get("type") == "tuner.tune")
        self.assertEqual(msg["tuner"], 1, json.dumps(msg))


class NoCorsConfigured(ApiBoxTest):
    def test_nothing_allowed_unless_listed(self):
        r = self.api("OPTIONS", "/api/v1/tuners", headers={
            "Origin": LISTED, "Access-Control-Request-Method": "GET"})
        self.assertError(r, 403, "origin_not_allowed")
        r = self.api("GET", "/api/v1/tuners", headers={"Origin": LISTED})
        self.assertError(r, 403, "origin_not_allowed")


if __name__ == "__main__":
    unittest.main()

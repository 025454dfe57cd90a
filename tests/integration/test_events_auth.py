# SPDX-License-Identifier: MIT
"""Who may use the event stream: tokens in the Authorization header, the
"bearer.<token>" WebSocket subprotocol or ?access_token= (SSE); a viewer
streams but does not tune; leases hold over WebSocket too."""
import unittest

from events_util import SseStream, websocket, ws_connect, ws_next, \
    ws_request
from harness import ApiBoxTest

VIEWER = "v-" + "1" * 30
OPERATOR = "o-" + "2" * 30
DVBT_A = {"delivery_system": "DVBT", "frequency": 474000000,
          "bandwidth": 8000000}


class EventAuth(ApiBoxTest):
    config = {"tokens": [
        {"name": "watcher", "token": VIEWER, "role": "viewer"},
        {"name": "ops", "token": OPERATOR, "role": "operator"}]}

    def ws(self, query="types=tuner.tune", **kw):
        ws = ws_connect(self.port, query, **kw)
        self.addCleanup(ws.close)
        return ws

    def refused(self, **kw):
        with self.assertRaises(websocket.WebSocketBadStatusException) as cm:
            ws_connect(self.port, **kw)
        return cm.exception

    def test_websocket_needs_a_token(self):
        self.assertEqual(self.refused().status_code, 401)
        # the refusal is an API error answer
        r = self.api("GET", "/api/v1/events", headers={
            "Upgrade": "websocket", "Connection": "Upgrade",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Protocol": "tunerd.v1"})
        self.assertError(r, 401, "unauthorized")
        self.assertEqual(r.headers.get("www-authenticate"),
                         'Bearer realm="tunerd"')
        self.assertEqual(self.refused(token="wrong").status_code, 401)
        self.assertEqual(
            self.refused(subprotocol_token="wrong").status_code, 401)

    def test_token_as_subprotocol(self):
        ws = self.ws(subprotocol_token=VIEWER)
        # the server names only the real protocol, never the token
        self.assertEqual(ws.getsubprotocol(), "tunerd.v1")
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        self.assertEqual(ws_next(ws, lambda m: True)["type"], "tuner.tune")

    def test_token_in_the_authorization_header(self):
        ws = self.ws(token=VIEWER)
        self.assertTrue(ws_request(ws, {"id": 1, "op": "status",
                                        "tuner": 1})["ok"])

    def test_viewer_cannot_tune(self):
        ws = self.ws(subprotocol_token=VIEWER)
        r = ws_request(ws, {"id": "t", "op": "tune", "tuner": 1,
                            "params": DVBT_A})
        self.assertFalse(r["ok"], r)
        self.assertEqual(r["error"]["code"], "forbidden")
        self.assertEqual(r["error"]["details"]["required_role"],
                         "operator")

    def test_operator_tunes_and_the_event_names_the_token(self):
        ws = self.ws(subprotocol_token=OPERATOR)
        seen = []
        r = ws_request(ws, {"id": "t", "op": "tune", "tuner": 1,
                            "params": DVBT_A}, seen=seen)
        self.assertTrue(r["ok"], r)
        ev = [m for m in seen if m.get("type") == "tuner.tune"] or \
            [ws_next(ws, lambda m: m.get("type") == "tuner.tune")]
        self.assertEqual(ev[0]["origin"], "api")
        self.assertEqual(ev[0]["by"], "api:ops")

    def test_lease_is_honoured(self):
        lease = self.api("POST", "/api/v1/tuners/2/lease",
                         {"holder": "mythtv", "ttl_s": 60},
                         token=OPERATOR)
        self.assertEqual(lease.status, 201, lease)
        ws = self.ws(subprotocol_token=OPERATOR)
        r = ws_request(ws, {"id": "a", "op": "tune", "tuner": 2,
                            "params": DVBT_A})
        self.assertEqual(r["error"]["code"], "lease_conflict", r)
        self.assertEqual(r["error"]["details"]["holder"], "mythtv")
        r = ws_request(ws, {"id": "b", "op": "tune", "tuner": 2,
                            "params": DVBT_A,
                            "lease_id": lease.json["lease_id"]})
        self.assertTrue(r["ok"], r)
        t = self.api("GET", "/api/v1/tuners/2", token=VIEWER).json
        self.assertEqual(t["last_change"]["by"], "mythtv", t)

    def test_sse_access_token(self):
        s = SseStream(self.port, "since=0")
        self.addCleanup(s.close)
        self.assertEqual(s.status, 401)
        self.assertEqual(s.body_json()["error"]["code"], "unauthorized")
        s = SseStream(self.port, "since=0&access_token=" + VIEWER)
        self.addCleanup(s.close)
        self.assertEqual(s.status, 200)
        self.assertEqual(s.next()["data"]["seq"], 1)
        s = SseStream(self.port, "since=0",
                      {"Authorization": "Bearer " + VIEWER})
        self.addCleanup(s.close)
        self.assertEqual(s.status, 200)


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: MIT
"""The event stream over WebSocket: kernel-side and API tunes, lock
changes, filters, catching up with since, requests and their replies."""
import base64
import json
import os
import socket
import unittest

from events_util import (websocket, ws_collect, ws_connect, ws_next,
                         ws_request)
from harness import ApiBoxTest, read_to_close
from test_front_routing import Reader, upgrade_head

DVBT_A = {"delivery_system": "DVBT", "frequency": 474000000,
          "bandwidth": 8000000}


def of_type(t, tuner=None):
    return lambda m: m.get("type") == t and \
        (tuner is None or m.get("tuner") == tuner)


class WsEvents(ApiBoxTest):
    config = {"name": "box-ev"}

    def connect(self, query="types=tuner.*"):
        ws = ws_connect(self.port, query)
        self.addCleanup(ws.close)
        return ws

    def test_upgrade_answers_the_subprotocol(self):
        ws = self.connect()
        self.assertEqual(ws.getstatus(), 101)
        self.assertEqual(ws.getsubprotocol(), "tunerd.v1")

    def test_kernel_tune_is_an_event_with_origin_kernel(self):
        ws = self.connect("types=tuner.tune,tuner.tune_started,tuner.lock")
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        started = ws_next(ws, of_type("tuner.tune_started", 1))
        self.assertEqual(started["origin"], "kernel", started)
        self.assertEqual(started["params"], DVBT_A, started)
        ev = ws_next(ws, of_type("tuner.tune", 1))
        self.assertGreater(ev["seq"], started["seq"])
        self.assertEqual(ev["origin"], "kernel", ev)
        self.assertEqual(ev["by"], "kernel", ev)
        self.assertEqual(ev["box"], "box-ev", ev)
        self.assertEqual(ev["result"], "ok", ev)
        self.assertNotIn("message", ev)
        # the REST API's Params and Status
        self.assertEqual(ev["params"], DVBT_A, ev)
        self.assertIsInstance(ev["elapsed_ms"], int)
        st = ev["status"]
        self.assertTrue(st["fe_status"]["lock"], st)
        self.assertEqual(st["frequency"], 474000000, st)
        self.assertEqual(st["signal_strength"]["unit"], "dBm", st)
        self.assertTrue(st["changed_at"].endswith("Z"), st)
        # the REST view of the tuner says the same
        t = self.api("GET", "/api/v1/tuners/1").json
        self.assertEqual(t["params"], ev["params"])
        self.assertEqual(st["changed_at"], t["status"]["changed_at"])
        self.assertIsInstance(ev["seq"], int)
        self.assertTrue(ev["time"].endswith("Z"), ev)
        lock = ws_next(ws, of_type("tuner.lock", 1))
        self.assertTrue(lock["locked"], lock)
        self.assertTrue(lock["status"]["fe_status"]["lock"], lock)

    def test_a_failed_tune_names_the_api_error_code(self):
        ws = self.connect("types=tuner.tune&tuner=1")
        self.assertOk(self.box.call({"op": "fault", "client": 1,
                                     "hang": True}))
        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_A)
        self.assertError(r, 504, "deadline")
        ev = ws_next(ws, of_type("tuner.tune", 1), timeout=20)
        self.assertEqual(ev["origin"], "api", ev)
        self.assertNotEqual(ev["result"], "ok", ev)
        self.assertIn(ev["result"], ("deadline", "unavailable"), ev)
        self.assertTrue(ev["message"], ev)
        self.assertIsNone(ev["status"], ev)
        self.assertIsInstance(ev["elapsed_ms"], int)

    def test_box_events_have_no_tuner(self):
        ws = self.connect("since=0&types=stub.*,plugin.*")
        ev = ws_next(ws, of_type("stub.connected"))
        self.assertNotIn("tuner", ev)
        self.assertEqual(ev["box"], "box-ev", ev)
        self.assertEqual(ev["kind"], "sim", ev)
        ev = ws_next(ws, of_type("plugin.load"))
        self.assertNotIn("tuner", ev)

    def test_lock_gained_then_lost(self):
        ws = self.connect("types=tuner.lock&tuner=1")
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        self.assertTrue(ws_next(ws, of_type("tuner.lock"))["locked"])
        self.assertOk(self.box.tune(1, "DVBT", 530000000, 8000000))
        self.assertFalse(ws_next(ws, of_type("tuner.lock"))["locked"])

    def test_api_tune_request_reply_and_event(self):
        ws = self.connect("types=tuner.tune")
        seen = []
        reply = ws_request(ws, {"id": "r1", "op": "tune", "tuner": 2,
                                "params": DVBT_A}, seen=seen)
        self.assertEqual(reply["id"], "r1")
        self.assertTrue(reply["ok"], reply)
        res = reply["result"]
        self.assertEqual(res["tuner"], 2)
        self.assertEqual(res["params"], DVBT_A)
        self.assertTrue(res["locked"], res)
        self.assertTrue(res["status"]["fe_status"]["lock"], res)
        self.assertIsInstance(res["elapsed_ms"], int)
        # the event may come before or after the reply
        ev = [m for m in seen if of_type("tuner.tune", 2)(m)]
        ev = ev[0] if ev else ws_next(ws, of_type("tuner.tune", 2))
        self.assertEqual(ev["origin"], "api", ev)
        self.assertEqual(ev["result"], "ok", ev)
        # the event and the reply speak the same shapes
        self.assertEqual(ev["params"], res["params"])
        self.assertEqual(ev["status"]["fe_status"],
                         res["status"]["fe_status"])
        self.assertEqual(sorted(ev["status"]), sorted(res["status"]))
        self.assertEqual(ev["status"]["changed_at"],
                         res["status"]["changed_at"])
        # the REST view agrees
        t = self.api("GET", "/api/v1/tuners/2").json
        self.assertEqual(t["last_change"]["origin"], "api", t)

    def test_status_request(self):
        ws = self.connect("types=none.at.all")
        reply = ws_request(ws, {"id": 7, "op": "status", "tuner": 1})
        self.assertEqual(reply["id"], 7)
        self.assertTrue(reply["ok"], reply)
        self.assertIn("fe_status", reply["result"])
        self.assertIn("lock", reply["result"]["fe_status"])

    def test_bad_requests_get_error_replies_and_the_stream_stays(self):
        ws = self.connect("types=tuner.tune")
        cases = [
            ("not json", "bad_json"),
            ("[1, 2]", "bad_request"),
            (json.dumps({"id": "x", "op": "fly", "tuner": 1}),
             "bad_request"),
            (json.dumps({"id": "x", "op": "status", "tuner": "one"}),
             "bad_request"),
            (json.dumps({"id": "x", "op": "status", "tuner": 1,
                         "extra": 1}), "bad_request"),
            (json.dumps({"id": "x", "op": "status", "tuner": 99}),
             "not_found"),
            (json.dumps({"id": "x", "op": "tune", "tuner": 1,
                         "params": dict(DVBT_A, frequency=1500000000)}),
             "unsupported_params"),
            (json.dumps({"id": "x", "op": "tune", "tuner": 1}),
             "bad_request"),
            ("[" * 40 + "]" * 40, "bad_json"),
            (json.dumps({"id": "x", "pad": "y" * 20000}),
             "body_too_large"),
        ]
        for text, code in cases:
            with self.subTest(code=code, text=text[:40]):
                ws.send(text)
                r = ws_next(ws, of_type("reply"))
                self.assertFalse(r["ok"], r)
                self.assertEqual(r["error"]["code"], code, r)
                self.assertTrue(r["error"]["message"], r)
        ws.send_binary(b"\x01\x02")
        r = ws_next(ws, of_type("reply"))
        self.assertEqual(r["error"]["code"], "bad_request", r)
        # still streaming and answering
        self.assertTrue(ws_request(ws, {"id": "ok", "op": "status",
                                        "tuner": 1})["ok"])
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        ws_next(ws, of_type("tuner.tune", 1))

    def test_refused_upgrades(self):
        for query, status in (("types=Bad!", 400), ("tuner=x", 400),
                              ("since=-1", 400)):
            with self.subTest(query=query):
                with self.assertRaises(
                        websocket.WebSocketBadStatusException) as cm:
                    ws_connect(self.port, query)
                self.assertEqual(cm.exception.status_code, status)
        with self.assertRaises(websocket.WebSocketBadStatusException) as cm:
            websocket.create_connection(
                "ws://127.0.0.1:%d/api/v1/nothing" % self.port,
                subprotocols=["tunerd.v1"], timeout=10)
        self.assertEqual(cm.exception.status_code, 404)

    def test_refusals_are_api_errors(self):
        hs = {"Upgrade": "websocket", "Connection": "Upgrade",
              "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
              "Sec-WebSocket-Version": "13"}
        r = self.api("GET", "/api/v1/events",
                     headers=dict(hs, **{"Sec-WebSocket-Protocol": "chat"}))
        self.assertError(r, 400, "bad_request")
        self.assertEqual(r.error["details"]["field"],
                         "Sec-WebSocket-Protocol")
        r = self.api("GET", "/api/v1/events",
                     headers=dict(hs, Connection="keep-alive"))
        self.assertError(r, 400, "bad_request")
        r = self.api("GET", "/api/v1/events?types=" + "a" * 2100,
                     headers=hs)
        self.assertError(r, 414, "uri_too_long")
        r = self.api("GET", "/api/v1/events?since=x", headers=hs)
        self.assertError(r, 400, "bad_request")
        self.assertEqual(r.error["details"]["field"], "since")
        # without a subprotocol (a bare browser WebSocket) it streams
        ws = ws_connect(self.port, "types=tuner.tune", subprotocols=())
        self.addCleanup(ws.close)
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        ws_next(ws, of_type("tuner.tune", 1))


class WsFilters(ApiBoxTest):
    def test_type_and_tuner_filters(self):
        only2 = ws_connect(self.port, "types=tuner.tune&tuner=2")
        prefix = ws_connect(self.port, "types=tuner.*&tuner=1")
        every = ws_connect(self.port)
        for ws in (only2, prefix, every):
            self.addCleanup(ws.close)
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        self.assertOk(self.box.tune(2, "DVBT", 474000000, 8000000))
        got = ws_next(only2, lambda m: True)
        self.assertEqual((got["type"], got["tuner"]), ("tuner.tune", 2))
        rest = ws_collect(only2, 0.5)
        self.assertEqual([m for m in rest if m["tuner"] != 2], [])
        seen = ws_collect(prefix, 1.0)
        self.assertTrue(seen)
        self.assertTrue(all(m["type"].startswith("tuner.") and
                            m["tuner"] == 1 for m in seen), seen)
        self.assertIn("tuner.tune", [m["type"] for m in seen])
        everything = ws_collect(every, 1.0)
        self.assertEqual({m["tuner"] for m in everything
                          if m["type"] == "tuner.tune"}, {1, 2})
        seqs = [m["seq"] for m in everything]
        self.assertEqual(seqs, sorted(seqs))


class WsCatchUp(ApiBoxTest):
    def test_since_replays_then_goes_live(self):
        ws = ws_connect(self.port, "since=0")
        first = ws_collect(ws, 1.0)
        ws.close()
        self.assertTrue(first)
        self.assertEqual(first[0]["seq"], 1, first[0])
        seqs = [m["seq"] for m in first]
        self.assertEqual(seqs, list(range(1, len(seqs) + 1)))
        last = seqs[-1]
        self.assertOk(self.box.tune(3, "DVBT", 474000000, 8000000))
        ws = ws_connect(self.port, "since=%d" % last)
        self.addCleanup(ws.close)
        ev = ws_next(ws, lambda m: True)
        self.assertEqual(ev["seq"], last + 1, ev)
        ws_next(ws, of_type("tuner.tune", 3))
        # then live
        self.assertOk(self.box.tune(4, "DVBT", 474000000, 8000000))
        ws_next(ws, of_type("tuner.tune", 4))

    def test_since_with_a_filter(self):
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        ws = ws_connect(self.port, "since=0&types=tuner.tune")
        self.addCleanup(ws.close)
        ev = ws_next(ws, lambda m: True)
        self.assertEqual((ev["type"], ev["tuner"]), ("tuner.tune", 1))


class WsStatusSampling(ApiBoxTest):
    # a heartbeat as short as the interval: every read is published (the
    # deadband's economy is tested in test_history.py)
    daemon_extra = ("--status-interval-ms", "100",
                    "--status-heartbeat-ms", "100")

    def test_status_events_for_every_ready_tuner(self):
        ws = ws_connect(self.port, "types=tuner.status")
        self.addCleanup(ws.close)
        got = ws_collect(ws, 1.5)
        per_tuner = {}
        for m in got:
            per_tuner.setdefault(m["tuner"], []).append(m)
        self.assertEqual(set(per_tuner), {1, 2, 3, 4}, got[:4])
        for msgs in per_tuner.values():
            self.assertGreaterEqual(len(msgs), 3)
            self.assertIn("fe_status", msgs[-1]["status"])
            self.assertIn("locked", msgs[-1])



class WsStatusOnlyWhileSubscribed(ApiBoxTest):
    """The sampler reads a chip only while a stream wants its
    tuner.status: a status read is I2C and the bridge's demodulator lock.
    (The history, which reads every tuner each second, is off here, and a
    heartbeat as short as the interval publishes every read.)"""
    daemon_extra = ("--status-interval-ms", "50",
                    "--status-heartbeat-ms", "50")
    config = {"history": {"enabled": False}}
    power_up_wait = True  # the restore's inits are I2C too

    def i2c_transfers(self):
        return self.box.call({"op": "stats"})["stats"]["i2c_transfers"]

    def test_no_status_subscriber_no_i2c(self):
        # A stream of other events: 20 sampling periods, no chip read.
        other = ws_connect(self.port, "types=tuner.tune")
        self.addCleanup(other.close)
        before = self.i2c_transfers()
        self.assertEqual(ws_collect(other, 1.0), [])
        self.assertEqual(self.i2c_transfers(), before)
        # A status subscriber of tuner 1 (an MT2060: its status is I2C).
        ws = ws_connect(self.port, "types=tuner.status&tuner=1")
        self.addCleanup(ws.close)
        for _ in range(3):
            ws_next(ws, of_type("tuner.status", 1))
        self.assertGreater(self.i2c_transfers(), before)

    def test_get_status_reads_on_demand(self):
        before = self.i2c_transfers()
        r = self.api("GET", "/api/v1/tuners/1/status")
        self.assertEqual(r.status, 200, r)
        self.assertGreater(self.i2c_transfers(), before)


class WsHostileClient(ApiBoxTest):
    """RFC 6455 5.1: a client must mask every frame it sends; a server
    that gets an unmasked one closes the connection with 1002 (protocol
    error).  The client here is a raw socket: it builds its frames by
    hand, as a broken or hostile peer would."""

    def raw_stream(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        self.addCleanup(sock.close)
        sock.sendall(upgrade_head(base64.b64encode(os.urandom(16))))
        reader = Reader(sock)
        status, headers = reader.head()
        self.assertEqual(status, 101, headers)
        return sock, reader

    def test_unmasked_frame_gets_close_1002(self):
        sock, reader = self.raw_stream()
        req = json.dumps({"id": "unmasked", "op": "status",
                          "tuner": 1}).encode()
        # FIN + text, payload length without the mask bit, no masking key
        sock.sendall(bytes([0x81, len(req)]) + req)
        # The stream's filter (types=none.none) passes no event: the next
        # frame is the server's close, and the request is not served.
        op, payload = reader.frame()
        self.assertEqual(op, websocket.ABNF.OPCODE_CLOSE, payload)
        self.assertEqual(int.from_bytes(payload[:2], "big"), 1002, payload)
        # then the server closes the connection
        self.assertEqual(reader.buf + read_to_close(sock), b"")
        # the daemon goes on, and a client that masks is served
        ws = ws_connect(self.port, "types=none.none")
        self.addCleanup(ws.close)
        reply = ws_request(ws, {"id": "masked", "op": "status", "tuner": 1})
        self.assertTrue(reply["ok"], reply)
        self.assertEqual(self.api("GET", "/api/v1/box").status, 200)

    def test_masked_raw_frame_is_served(self):
        """The same request masked, on the same raw client: answered."""
        sock, reader = self.raw_stream()
        req = json.dumps({"id": "masked", "op": "status",
                          "tuner": 1}).encode()
        key = os.urandom(4)
        body = bytes(b ^ key[i % 4] for i, b in enumerate(req))
        sock.sendall(bytes([0x81, 0x80 | len(req)]) + key + body)
        op, payload = reader.frame()
        self.assertEqual(op, websocket.ABNF.OPCODE_TEXT, payload)
        msg = json.loads(payload)
        self.assertEqual((msg["type"], msg["id"]), ("reply", "masked"), msg)
        self.assertTrue(msg["ok"], msg)


if __name__ == "__main__":
    unittest.main()

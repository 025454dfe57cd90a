# SPDX-License-Identifier: MIT
"""The event stream as Server-Sent Events, read raw with http.client."""
import unittest

from events_util import SseStream
from harness import ApiBoxTest


class SseEvents(ApiBoxTest):
    config = {"name": "box-sse"}

    def stream(self, query="", headers=None):
        s = SseStream(self.port, query, headers)
        self.addCleanup(s.close)
        return s

    def test_format_and_catch_up(self):
        s = self.stream("since=0")
        self.assertEqual(s.status, 200)
        self.assertEqual(s.headers["content-type"], "text/event-stream")
        for expect_seq in (1, 2, 3):
            m = s.next()
            self.assertEqual(int(m["id"]), expect_seq, m)
            self.assertEqual(m["data"]["seq"], expect_seq, m)
            self.assertEqual(m["event"], m["data"]["type"], m)
            self.assertEqual(m["data"]["box"], "box-sse", m)
            # The box's own events (stub, plugins) carry no tuner.  Plugin
            # trials run in the background, so a tuner's attach may come
            # before the last plugin's.
            if m["data"]["type"].startswith("tuner."):
                self.assertIsInstance(m["data"]["tuner"], int, m)
            else:
                self.assertNotIn("tuner", m["data"])
                self.assertTrue(m["data"]["type"].startswith(("stub.",
                                                              "plugin.")), m)

    def test_live_kernel_tune(self):
        # since= the last event so far: the tune arrives whether the
        # subscription is live before it happens or catches up to it.
        last = self.api("GET", "/api/v1/box").json["events"]["next_seq"] - 1
        s = self.stream("types=tuner.tune&since=%d" % last)
        self.assertOk(self.box.tune(2, "DVBT", 474000000, 8000000))
        m = s.next()
        self.assertEqual(m["event"], "tuner.tune")
        self.assertEqual(m["data"]["tuner"], 2)
        self.assertEqual(m["data"]["origin"], "kernel")
        self.assertEqual(m["data"]["result"], "ok")
        self.assertEqual(m["data"]["params"],
                         {"delivery_system": "DVBT", "frequency": 474000000,
                          "bandwidth": 8000000})

    def test_last_event_id_resumes_after_it(self):
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        first = self.stream("since=0")
        ids = [int(first.next()["id"]) for _ in range(4)]
        s = self.stream("since=0", {"Last-Event-ID": str(ids[1])})
        self.assertEqual(int(s.next()["id"]), ids[2])
        self.assertEqual(int(s.next()["id"]), ids[3])

    def test_filters(self):
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))
        self.assertOk(self.box.tune(3, "DVBT", 474000000, 8000000))
        s = self.stream("since=0&types=tuner.t*&tuner=3")
        m = s.next()
        self.assertEqual((m["event"], m["data"]["tuner"]),
                         ("tuner.tune_started", 3), m)
        m = s.next()
        self.assertEqual((m["event"], m["data"]["tuner"]),
                         ("tuner.tune", 3), m)

    def test_bad_query_is_a_400(self):
        for query, field in (("types=,", "types"), ("tuner=1,a", "tuner"),
                             ("since=x", "since")):
            with self.subTest(query=query):
                s = self.stream(query)
                self.assertEqual(s.status, 400)
                err = s.body_json()["error"]
                self.assertEqual(err["code"], "bad_request")
                self.assertEqual(err["details"]["field"], field)
        s = self.stream("", {"Last-Event-ID": "abc"})
        self.assertEqual(s.status, 400)

    def test_idle_stream_gets_a_heartbeat(self):
        s = self.stream("types=no.such.type")
        self.assertEqual(s.status, 200)
        # The first line after the head is a heartbeat (no event matches);
        # the timeout only bounds the wait for a broken daemon.
        self.assertEqual(s.next_comment(timeout=30), ": keep-alive")


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: MIT
"""Leases: take, renew, release, expire, pre-empt, and what they refuse."""
import json
import socket
import time
import unittest

from events_util import EventsFromNow
from harness import ApiBoxTest

DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000}
LEASE = "/api/v1/tuners/1/lease"


def read_sse(port, path, want, timeout=10.0):
    """Read Server-Sent Events until want(event_dict) is true; returns the
    events seen.  Raises AssertionError on timeout."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n"
               "Accept: text/event-stream\r\n\r\n" % path).encode())
    buf, seen, end = b"", [], time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            s.settimeout(max(0.1, end - time.monotonic()))
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
            for line in buf.split(b"\n"):
                if line.startswith(b"data:"):
                    try:
                        ev = json.loads(line[5:])
                    except ValueError:
                        continue
                    if ev not in seen:
                        seen.append(ev)
                    if want(ev):
                        return seen
    finally:
        s.close()
    raise AssertionError("event not seen; got %r" % seen)


class Leases(ApiBoxTest):
    def take(self, holder="mythtv-1", **kw):
        body = {"holder": holder}
        body.update(kw)
        return self.api("POST", LEASE, body)

    def test_take_renew_release(self):
        r = self.take(ttl_s=30, priority=100)
        self.assertEqual(r.status, 201, r)
        lease = r.json
        self.assertRegex(lease["lease_id"], r"^[0-9a-f]{32}$")
        self.assertEqual(lease["tuner"], 1)
        self.assertEqual(lease["holder"], "mythtv-1")
        self.assertEqual(lease["priority"], 100)
        self.assertEqual(lease["ttl_s"], 30)
        t = self.api("GET", "/api/v1/tuners/1").json
        self.assertEqual(t["lease"]["holder"], "mythtv-1")
        self.assertNotIn(lease["lease_id"], json.dumps(t))

        r = self.api("POST", LEASE, {"lease_id": lease["lease_id"],
                                     "ttl_s": 60})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["ttl_s"], 60)
        self.assertEqual(r.json["lease_id"], lease["lease_id"])
        self.assertGreater(r.json["expires"], lease["expires"])

        # a wrong id is a conflict, no id at all too
        r = self.api("DELETE", LEASE, headers={"X-Tunerd-Lease": "0" * 32})
        self.assertError(r, 409, "lease_conflict")
        self.assertError(self.api("DELETE", LEASE), 409, "lease_conflict")
        r = self.api("DELETE", LEASE + "?lease_id=" + lease["lease_id"])
        self.assertEqual(r.status, 204, r)
        self.assertEqual(r.body, b"")
        self.assertError(self.api("DELETE", LEASE), 404, "not_found")
        self.assertIsNone(self.api("GET", "/api/v1/tuners/1").json["lease"])

    def test_defaults_and_bad_bodies(self):
        r = self.take()
        self.assertEqual(r.status, 201, r)
        self.assertEqual(r.json["ttl_s"], 30)
        self.assertEqual(r.json["priority"], 100)
        for body, field in (({"holder": "x" * 65}, "holder"),
                            ({"holder": "a", "ttl_s": 0}, "ttl_s"),
                            ({"holder": "a", "ttl_s": 3601}, "ttl_s"),
                            ({"holder": "a", "priority": 1001}, "priority"),
                            ({"holder": "a", "colour": 1}, "colour"),
                            ({"ttl_s": 5}, "holder")):
            with self.subTest(field=field):
                e = self.assertError(self.api("POST",
                                              "/api/v1/tuners/2/lease",
                                              body), 400, "bad_request")
                self.assertEqual(e["details"]["field"], field)
        self.assertError(self.api("POST", "/api/v1/tuners/7/lease",
                                  {"holder": "a"}), 404, "not_found")
        self.assertError(self.api("POST", "/api/v1/tuners/2/lease",
                                  {"lease_id": "f" * 32}), 404, "not_found")

    def test_conflict_and_tunes_need_the_lease(self):
        lease = self.take(priority=100).json
        e = self.assertError(self.take("other", priority=100), 409,
                             "lease_conflict")
        self.assertEqual(e["details"]["holder"], "mythtv-1")
        self.assertEqual(e["details"]["priority"], 100)
        self.assertIn("expires", e["details"])
        self.assertError(self.take("other", priority=50), 409,
                         "lease_conflict")

        self.assertError(self.api("POST", "/api/v1/tuners/1/tune",
                                  DVBT_474), 409, "lease_conflict")
        self.assertError(self.api("POST", "/api/v1/tuners/1/sleep"), 409,
                         "lease_conflict")
        self.assertError(self.api("POST", "/api/v1/tuners/1/tune",
                                  dict(DVBT_474, lease_id="1" * 32)),
                         409, "lease_conflict")
        r = self.api("POST", "/api/v1/tuners/1/tune",
                     dict(DVBT_474, lease_id=lease["lease_id"]))
        self.assertEqual(r.status, 200, r)
        t = self.api("GET", "/api/v1/tuners/1").json
        self.assertEqual(t["last_change"]["by"], "mythtv-1")
        r = self.api("POST", "/api/v1/tuners/1/init",
                     headers={"X-Tunerd-Lease": lease["lease_id"]})
        self.assertEqual(r.status, 200, r)
        # other tuners are not affected
        r = self.api("POST", "/api/v1/tuners/2/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)
        # reads need no lease
        self.assertEqual(self.api("GET", "/api/v1/tuners/1/status").status,
                         200)
        # kernel-side tunes are never refused by a lease
        self.assertOk(self.box.tune(1, "DVBT", 490000000, 8000000))

    def test_expiry(self):
        events = EventsFromNow(self, "tuner=1")
        lease = self.take(ttl_s=1).json
        self.assertError(self.api("POST", "/api/v1/tuners/1/tune",
                                  DVBT_474), 409, "lease_conflict")
        ev = events.wait("lease.expired")
        self.assertEqual(ev["holder"], "mythtv-1")
        self.assertIsNone(self.api("GET", "/api/v1/tuners/1").json["lease"])
        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)
        self.assertError(self.api("POST", LEASE,
                                  {"lease_id": lease["lease_id"]}),
                         404, "not_found")

    def test_renew_keeps_it_alive(self):
        # Tuner 1's lease is renewed; tuner 2's, taken after it with the
        # same first TTL, is not: once tuner 2's has expired, tuner 1's
        # first TTL has run out too, and only the renew kept it.
        events = EventsFromNow(self, "types=lease.*")
        lease = self.take(ttl_s=2).json
        control = self.api("POST", "/api/v1/tuners/2/lease",
                           {"holder": "control", "ttl_s": 2})
        self.assertEqual(control.status, 201, control)
        r = self.api("POST", LEASE, {"lease_id": lease["lease_id"],
                                     "ttl_s": 60})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["ttl_s"], 60, r)
        self.assertEqual(events.wait("lease.renewed")["tuner"], 1)
        expired = events.wait("lease.expired")
        self.assertEqual((expired["tuner"], expired["holder"]),
                         (2, "control"), expired)
        self.assertEqual(self.api("GET", "/api/v1/tuners/1").json
                         ["lease"]["holder"], "mythtv-1")
        r = self.api("POST", LEASE, {"lease_id": lease["lease_id"]})
        self.assertEqual(r.status, 200, r)

    def test_preemption(self):
        old = self.take("live-tv", priority=100).json
        events_on = self.api("GET", "/api/v1/box").json
        since = events_on["events"]["next_seq"] - 1
        r = self.take("recorder", priority=300, ttl_s=60)
        self.assertEqual(r.status, 201, r)
        new = r.json
        self.assertEqual(new["holder"], "recorder")
        self.assertNotEqual(new["lease_id"], old["lease_id"])
        t = self.api("GET", "/api/v1/tuners/1").json
        self.assertEqual(t["lease"]["holder"], "recorder")
        self.assertEqual(t["lease"]["priority"], 300)
        # the old holder's id no longer works
        self.assertError(self.api("POST", "/api/v1/tuners/1/tune",
                                  dict(DVBT_474, lease_id=old["lease_id"])),
                         409, "lease_conflict")
        self.assertError(self.api("POST", LEASE,
                                  {"lease_id": old["lease_id"]}),
                         409, "lease_conflict")
        # the old holder is told through the event stream (SSE here)
        seen = read_sse(self.port, "/api/v1/events?since=%d&tuner=1" % since,
                        lambda ev: ev.get("type") == "lease.preempted",
                        timeout=5)
        ev = [e for e in seen if e.get("type") == "lease.preempted"][0]
        self.assertEqual(ev["holder"], "live-tv")
        self.assertEqual(ev["by"], "recorder")
        self.assertNotIn(old["lease_id"], json.dumps(seen))


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: MIT
"""REST API v1: every endpoint, and every way a request can be wrong."""
import operator
import os
import re
import shutil
import socket
import tempfile
import threading
import unittest

from harness import ApiBoxTest, wait_for

TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000}


class Endpoints(ApiBoxTest):
    def test_box(self):
        r = self.api("GET", "/api/v1/box")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.headers["content-type"], "application/json")
        b = r.json
        self.assertTrue(b["name"])
        self.assertRegex(b["version"], r"^\d+\.\d+\.\d+")
        self.assertGreaterEqual(b["uptime_s"], 0)
        # The ABI both sides negotiated: the simulated box and the daemon
        # are built from the same tuner_stub.h (1.2: command brackets).
        self.assertEqual(b["stub"], {"kind": "sim", "connected": True,
                                     "abi": "1.2"})
        self.assertEqual(b["tuners"], 4)
        self.assertGreaterEqual(b["events"]["next_seq"],
                                b["events"]["oldest_seq"])

    def test_tuners_and_tuner(self):
        # The box reports a tuner bound once its worker has the channel,
        # before the probe that makes it ready.
        def probed():
            r = self.api("GET", "/api/v1/tuners")
            starting = r.status == 200 and any(
                t["state"] == "starting" for t in r.json["tuners"])
            return None if starting else r
        r = wait_for(probed, what="the probes")
        self.assertEqual(r.status, 200, r)
        tuners = r.json["tuners"]
        self.assertEqual([t["id"] for t in tuners], [1, 2, 3, 4])
        chips = [t["chip"]["name"] for t in tuners]
        self.assertEqual(chips, ["MT2060", "QT1010", "XC3028", "MT2060"])
        t1 = tuners[0]
        self.assertEqual(t1["state"], "ready")
        self.assertEqual(t1["chip"]["plugin"], "mt2060")
        self.assertEqual(t1["chip"]["chip_id"], 3)
        self.assertEqual(t1["frequency"]["min"], 48000000)
        self.assertEqual(t1["frequency"]["step"], 50000)
        self.assertIn("DVBT", t1["delivery_systems"])
        self.assertIn(8000000, t1["bandwidths"])
        self.assertIn("name", t1["bridge"])
        self.assertIn("i2c_addr", t1["bridge"])
        self.assertIsNone(t1["lease"])
        one = self.api("GET", "/api/v1/tuners/1")
        self.assertEqual(one.status, 200)
        self.assertEqual(one.json["id"], 1)
        self.assertEqual(one.json["chip"], t1["chip"])

    def test_tune_status_sleep_init(self):
        r = self.api("POST", "/api/v1/tuners/1/tune",
                     dict(DVBT_474, wait_lock_ms=2000))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["tuner"], 1)
        self.assertEqual(r.json["params"], DVBT_474)
        self.assertTrue(r.json["locked"], r)
        self.assertGreaterEqual(r.json["elapsed_ms"], 0)
        st = r.json["status"]
        self.assertTrue(st["fe_status"]["lock"])

        r = self.api("GET", "/api/v1/tuners/1/status")
        self.assertEqual(r.status, 200, r)
        st = r.json
        self.assertTrue(st["fe_status"]["lock"], st)
        self.assertEqual(st["signal_strength"]["unit"], "dBm")
        self.assertAlmostEqual(st["signal_strength"]["value"], -50.0,
                               delta=1.5)
        self.assertEqual(st["cnr"]["unit"], "dB")
        self.assertAlmostEqual(st["cnr"]["value"], 30.0, delta=1.5)
        self.assertLessEqual(abs(st["frequency"] - 474000000), 50000)
        self.assertRegex(st["changed_at"], TIME_RE)

        t = self.api("GET", "/api/v1/tuners/1").json
        self.assertEqual(t["params"], DVBT_474)
        self.assertEqual(t["last_change"]["origin"], "api")
        self.assertRegex(t["last_change"]["time"], TIME_RE)

        r = self.api("POST", "/api/v1/tuners/1/sleep")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json, {"tuner": 1, "state": "sleeping"})
        r = self.api("POST", "/api/v1/tuners/1/init", {})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json, {"tuner": 1, "state": "ready"})

    def test_status_max_age_answers_from_the_last_read(self):
        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)
        # the chip now hangs: only the last status read can answer
        self.assertOk(self.box.call({"op": "fault", "client": 1,
                                     "hang": True}))
        # a read of the hung chip would end at the deadline with a 504
        r = self.api("GET", "/api/v1/tuners/1/status?max_age_ms=60000")
        self.assertEqual(r.status, 200, r)
        self.assertTrue(r.json["fe_status"]["lock"], r.json)
        self.assertEqual(r.json["frequency"], 474000000)
        for bad in ("-1", "abc", "60001", "5x"):
            r = self.api("GET", "/api/v1/tuners/1/status?max_age_ms=" + bad)
            self.assertEqual(r.status, 400, (bad, r))
            self.assertEqual(r.json["error"]["details"]["field"],
                             "max_age_ms")
        self.assertOk(self.box.call({"op": "fault", "client": 1,
                                     "hang": False}))

    def test_tune_without_lock(self):
        r = self.api("POST", "/api/v1/tuners/2/tune",
                     {"delivery_system": "DVBT", "frequency": 530000000,
                      "bandwidth": 8000000, "wait_lock_ms": 300})
        self.assertEqual(r.status, 200, r)
        self.assertFalse(r.json["locked"])
        self.assertGreaterEqual(r.json["elapsed_ms"], 250)

    def test_concurrent_status_requests(self):
        self.assertEqual(self.api("POST", "/api/v1/tuners/1/tune",
                                  DVBT_474).status, 200)
        replies = []
        lock = threading.Lock()

        def poll():
            for _ in range(5):
                r = self.api("GET", "/api/v1/tuners/1/status")
                with lock:
                    replies.append(r)

        threads = [threading.Thread(target=poll) for _ in range(12)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
        self.assertEqual(len(replies), 60)
        for r in replies:
            self.assertEqual(r.status, 200, r)
            self.assertTrue(r.json["fe_status"]["lock"], r)
            self.assertLessEqual(abs(r.json["frequency"] - 474000000),
                                 50000)

    def test_plugins(self):
        r = self.api("GET", "/api/v1/plugins")
        self.assertEqual(r.status, 200, r)
        files = {p["file"]: p for p in r.json["plugins"]}
        self.assertIn("mt2060.so", files)
        p = files["mt2060.so"]
        self.assertEqual(p["name"], "MT2060")
        self.assertEqual(p["chip_id"], 3)
        self.assertEqual(p["abi"], 1)
        self.assertTrue(p["loaded"])
        self.assertIsNone(p["error"])

    def test_kernel_side_tune_is_visible(self):
        self.assertOk(self.box.tune(3, "DVBT", 490000000, 8000000))
        t = wait_for(lambda: (lambda j: j if j["params"] else None)(
            self.api("GET", "/api/v1/tuners/3").json), what="params")
        self.assertEqual(t["params"]["frequency"], 490000000)
        self.assertEqual(t["params"]["delivery_system"], "DVBT")
        self.assertEqual(t["last_change"]["origin"], "kernel")
        self.assertIsNone(t["last_change"]["by"])

    def assertListFollows(self, tid, what):
        """GET /tuners answers its kept text while the tuners', leases'
        and streams' versions stand; /tuners/{id} checks its tuner field
        by field.  Both must show the same Tuner once the change is made:
        at once for all but the status, which a sample may renew between
        the two reads (so compared again until both show the same)."""
        def both():
            one = self.api("GET", "/api/v1/tuners/%d" % tid).json
            listed = self.api("GET", "/api/v1/tuners").json["tuners"]
            return [t for t in listed if t["id"] == tid], [one]

        def but_status(tuners):
            return [{k: v for k, v in t.items() if k != "status"}
                    for t in tuners]
        listed, one = both()
        self.assertEqual(but_status(listed), but_status(one), what)
        wait_for(lambda: operator.eq(*both()), timeout=5.0,
                 what="the list to show the status after " + what)

    def test_the_list_follows_every_change(self):
        lease = "/api/v1/tuners/2/lease"
        self.assertListFollows(2, "the first state")
        r = self.api("POST", "/api/v1/tuners/2/tune",
                     dict(DVBT_474, wait_lock_ms=2000))
        self.assertEqual(r.status, 200, r)
        self.assertListFollows(2, "a REST tune")
        self.assertOk(self.box.tune(4, "DVBT", 490000000, 8000000))
        wait_for(lambda: self.api("GET", "/api/v1/tuners/4").json["params"],
                 what="the kernel's params")
        self.assertListFollows(4, "a kernel-side tune")
        r = self.api("POST", lease, {"holder": "list", "ttl_s": 30})
        self.assertEqual(r.status, 201, r)
        self.assertListFollows(2, "a lease taken")
        r = self.api("POST", lease, {"lease_id": r.json["lease_id"],
                                     "ttl_s": 60})
        self.assertEqual(r.status, 200, r)
        self.assertListFollows(2, "a lease renewed")
        r = self.api("DELETE", lease + "?lease_id=" + r.json["lease_id"])
        self.assertEqual(r.status, 204, r)
        self.assertListFollows(2, "a lease released")
        self.assertEqual(self.api("POST", "/api/v1/tuners/2/sleep").status,
                         200)
        self.assertListFollows(2, "a sleep")


class Errors(ApiBoxTest):
    def test_404(self):
        e = self.assertError(self.api("GET", "/api/v1/nothing"), 404,
                             "not_found")
        self.assertEqual(e["details"]["path"], "/api/v1/nothing")
        e = self.assertError(self.api("GET", "/api/v1/tuners/9"), 404,
                             "not_found")
        self.assertEqual(e["details"]["tuner"], 9)
        self.assertError(self.api("POST", "/api/v1/tuners/9/tune",
                                  DVBT_474), 404, "not_found")
        self.assertError(self.api("GET", "/api/v1/tuners/x"), 404,
                         "not_found")
        self.assertError(self.api("GET", "/api/v2/box"), 404, "not_found")
        # no web root configured: static paths are 404 JSON too
        self.assertError(self.api("GET", "/"), 404, "not_found")

    def test_405_lists_allowed_methods(self):
        r = self.api("DELETE", "/api/v1/box")
        self.assertError(r, 405, "method_not_allowed")
        self.assertIn("GET", r.headers["allow"])
        r = self.api("GET", "/api/v1/tuners/1/tune")
        self.assertError(r, 405, "method_not_allowed")
        self.assertEqual(r.headers["allow"], "POST")
        r = self.api("PUT", "/api/v1/tuners/1/lease", {})
        self.assertError(r, 405, "method_not_allowed")
        self.assertEqual(r.headers["allow"], "POST, DELETE")

    def test_400_bad_json(self):
        self.assertError(self.api("POST", "/api/v1/tuners/1/tune",
                                  "{not json",
                                  {"Content-Type": "application/json"}),
                         400, "bad_json")
        deep = "[" * 17 + "]" * 17
        body = '{"delivery_system":"DVBT","frequency":474000000,' \
               '"x":%s}' % deep
        self.assertError(self.api("POST", "/api/v1/tuners/1/tune", body,
                                  {"Content-Type": "application/json"}),
                         400, "bad_json")
        very_deep = "[" * 5000 + "]" * 5000
        self.assertError(self.api("POST", "/api/v1/tuners/1/tune",
                                  very_deep,
                                  {"Content-Type": "application/json"}),
                         400, "bad_json")
        # 16 levels are fine as JSON (and then refused as a field)
        ok_depth = "[" * 15 + "]" * 15
        body = '{"delivery_system":"DVBT","frequency":474000000,' \
               '"x":%s}' % ok_depth
        e = self.assertError(self.api("POST", "/api/v1/tuners/1/tune",
                                      body,
                                      {"Content-Type": "application/json"}),
                             400, "bad_request")
        self.assertEqual(e["details"]["field"], "x")

    def test_400_bad_request(self):
        cases = [
            ({"delivery_system": "DVBT", "frequency": 474000000,
              "bandwith": 8000000}, "bandwith"),
            ({"delivery_system": "DVBT", "frequency": "474000000"},
             "frequency"),
            ({"frequency": 474000000}, "delivery_system"),
            ({"delivery_system": "DVBT"}, "frequency"),
            (dict(DVBT_474, wait_lock_ms=20000), "wait_lock_ms"),
            (dict(DVBT_474, lease_id=5), "lease_id"),
            (dict(DVBT_474, symbol_rate=6900000), "symbol_rate"),
        ]
        for body, field in cases:
            with self.subTest(field=field):
                e = self.assertError(self.api("POST",
                                              "/api/v1/tuners/1/tune",
                                              body), 400, "bad_request")
                self.assertEqual(e["details"]["field"], field)
        self.assertError(self.api("POST", "/api/v1/tuners/1/tune", [1]),
                         400, "bad_request")
        self.assertError(self.api("POST", "/api/v1/tuners/1/tune"), 400,
                         "bad_request")
        e = self.assertError(self.api("POST", "/api/v1/tuners/1/sleep",
                                      {"force": True}), 400, "bad_request")
        self.assertEqual(e["details"]["field"], "force")

    def test_400_bad_query_parameter(self):
        e = self.assertError(self.api("GET", "/api/v1/tuners?limit=2"), 400,
                             "bad_request")
        self.assertEqual(e["details"]["field"], "limit")
        e = self.assertError(self.api("DELETE",
                                      "/api/v1/tuners/1/lease?id=abc"),
                             400, "bad_request")
        self.assertEqual(e["details"]["field"], "id")

    def test_413_body_too_large(self):
        big = '{"pad":"%s"}' % ("x" * 70000)
        self.assertError(self.api("POST", "/api/v1/tuners/1/tune", big,
                                  {"Content-Type": "application/json"}),
                         413, "body_too_large")
        # chunked: no Content-Length to go by
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        s.sendall(b"POST /api/v1/tuners/1/tune HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"y" * 8192
        for _ in range(10):
            s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        s.sendall(b"0\r\n\r\n")
        head = s.recv(65536)
        s.close()
        self.assertTrue(head.startswith(b"HTTP/1.1 413"), head[:200])
        self.assertIn(b"body_too_large", head)
        # the daemon still answers
        self.assertEqual(self.api("GET", "/api/v1/box").status, 200)

    def test_414_uri_too_long(self):
        r = self.api("GET", "/api/v1/box?x=" + "a" * 3000)
        self.assertError(r, 414, "uri_too_long")

    def test_415_content_type(self):
        self.assertError(self.api("POST", "/api/v1/tuners/1/tune",
                                  '{"delivery_system":"DVBT"}',
                                  {"Content-Type": "text/plain"}),
                         415, "unsupported_media_type")
        self.assertError(self.api("POST", "/api/v1/tuners/1/lease",
                                  '{"holder":"x"}'),
                         415, "unsupported_media_type")
        # parameters after the type are fine
        r = self.api("POST", "/api/v1/tuners/1/tune",
                     '{"delivery_system":"DVBT","frequency":474000000}',
                     {"Content-Type": "application/json; charset=utf-8"})
        self.assertEqual(r.status, 200, r)

    def test_422_unsupported_params(self):
        e = self.assertError(self.api("POST", "/api/v1/tuners/1/tune",
                                      {"delivery_system": "DVBT",
                                       "frequency": 1500000000,
                                       "bandwidth": 8000000}),
                             422, "unsupported_params")
        d = e["details"]
        self.assertEqual(d["frequency_min"], 48000000)
        self.assertEqual(d["frequency_max"], 860000000)
        self.assertEqual(d["frequency_step"], 50000)
        self.assertIn("DVBT", d["delivery_systems"])
        self.assertIn(8000000, d["bandwidths"])
        self.assertError(self.api("POST", "/api/v1/tuners/1/tune",
                                  {"delivery_system": "DVBS2",
                                   "frequency": 1200000000,
                                   "symbol_rate": 27500000}),
                         422, "unsupported_params")
        self.assertError(self.api("POST", "/api/v1/tuners/1/tune",
                                  {"delivery_system": "DVBT",
                                   "frequency": 474000000,
                                   "bandwidth": 1712000}),
                         422, "unsupported_params")
        # the tuner is unharmed
        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)


class StaticFiles(ApiBoxTest):
    def setUp(self):
        self.web_root = tempfile.mkdtemp(prefix="tunerd-web-")
        os.makedirs(os.path.join(self.web_root, "js"))
        files = {"index.html": "<html>hi</html>", "js/app.js": "let a;",
                 "style.css": "body{}", "logo.svg": "<svg/>",
                 "data.json": "{}"}
        for name, text in files.items():
            with open(os.path.join(self.web_root, name), "w") as f:
                f.write(text)
        outside = os.path.join(os.path.dirname(self.web_root),
                               os.path.basename(self.web_root) + "-outside")
        with open(outside, "w") as f:
            f.write("classified-content")
        self.outside = outside
        os.symlink(outside, os.path.join(self.web_root, "leak.txt"))
        super().setUp()

    def tearDown(self):
        super().tearDown()
        shutil.rmtree(self.web_root, ignore_errors=True)
        os.unlink(self.outside)

    def test_files_types_and_traversal(self):
        r = self.api("GET", "/")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.body, b"<html>hi</html>")
        self.assertTrue(r.headers["content-type"].startswith("text/html"))
        for path, ctype in (("/js/app.js", "text/javascript"),
                            ("/style.css", "text/css"),
                            ("/logo.svg", "image/svg+xml"),
                            ("/data.json", "application/json")):
            r = self.api("GET", path)
            self.assertEqual(r.status, 200, (path, r))
            self.assertTrue(r.headers["content-type"].startswith(ctype))
        self.assertError(self.api("GET", "/missing.html"), 404, "not_found")
        self.assertError(self.api("GET", "/leak.txt"), 404, "not_found")
        self.assertError(self.api("POST", "/index.html", {}), 405,
                         "method_not_allowed")
        # raw request lines so that no client normalises the dots away
        for target in (b"/../" + os.path.basename(self.outside).encode(),
                       b"/js/../../etc/passwd", b"/%2e%2e/etc/passwd"):
            s = socket.create_connection(("127.0.0.1", self.port),
                                         timeout=10)
            s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\n"
                      b"Connection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            s.close()
            self.assertTrue(data.startswith(b"HTTP/1.1 404"),
                            (target, data[:100]))
            self.assertNotIn(b"classified-content", data)
            self.assertNotIn(b"root:", data)


if __name__ == "__main__":
    unittest.main()

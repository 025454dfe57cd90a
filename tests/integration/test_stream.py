# SPDX-License-Identifier: MIT
"""GET /api/v1/tuners/{id}/stream: the whole multiplex, PID and service
filters, slow readers, leases, events, statistics and bad queries, read
from tsgen.py's sockets through the real daemon."""
import http.client
import socket
import struct
import threading
import unittest

import tsgen
from events_util import EventsFromNow
from harness import ApiBoxTest, TsSource, read_to_close, wait_for
from test_rest_openapi import SPEC, jsonschema, to_json_schema, yaml

STREAM = "/api/v1/tuners/1/stream"
CYCLE, KEYS = tsgen.multiplex()


def open_stream(port, path=STREAM, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    conn.request("GET", path, headers=headers or {})
    return conn, conn.getresponse()


def close_stream(conn, resp):
    """The response holds the socket too: close both, or the connection
    stays open until the response is collected."""
    resp.close()
    conn.close()


def read_packets(resp, n):
    data = b""
    while len(data) < n * tsgen.PACKET:
        chunk = resp.read(n * tsgen.PACKET - len(data))
        if not chunk:
            break
        data += chunk
    return tsgen.packets(data[:len(data) // tsgen.PACKET * tsgen.PACKET])


def pat_programs(p):
    """(transport_stream_id, [(program, PMT PID)]) of a one-section PAT
    packet, its CRC checked."""
    sec_len = ((p[6] & 0x0F) << 8) | p[7]
    sec = p[5:5 + 3 + sec_len]
    assert tsgen.crc32_mpeg(sec) == 0, "PAT CRC"
    body = sec[8:-4]
    progs = [struct.unpack(">HH", body[i:i + 4])
             for i in range(0, len(body), 4)]
    return (struct.unpack(">H", sec[3:5])[0],
            [(n, pid & 0x1FFF) for n, pid in progs])


class StreamTest(ApiBoxTest):
    def setUp(self):
        super().setUp()
        self.source = TsSource(self.box)
        self.addCleanup(self.source.stop)

    def stream(self, path=STREAM, n=3000, headers=None):
        conn, resp = open_stream(self.port, path, headers)
        try:
            if resp.status != 200:
                self.fail("%d %r" % (resp.status, resp.read(300)))
            self.assertEqual(resp.getheader("Content-Type"), "video/mp2t")
            return read_packets(resp, n)
        finally:
            close_stream(conn, resp)

    def test_whole_multiplex(self):
        pk = self.stream()
        self.assertEqual(len(pk), 3000)
        self.assertEqual(tsgen.cc_errors(pk), 0)
        self.assertTrue(tsgen.run_matches([tsgen.key_of(p) for p in pk],
                                          KEYS))

    def test_pids(self):
        want = {0, 0x11, 0x200}
        pk = self.stream(STREAM + "?pids=0,17,0x200", n=800)
        self.assertEqual({tsgen.pid_of(p) for p in pk}, want)
        self.assertEqual(tsgen.cc_errors(pk), 0)
        self.assertTrue(tsgen.run_matches(
            [tsgen.key_of(p) for p in pk], [k for k in KEYS
                                            if k[0] in want]))

    def check_service(self, sid):
        pmt, pcr, streams = tsgen.SERVICES[sid]
        want = {pmt, pcr} | {pid for _, pid in streams}
        pk = self.stream(STREAM + "?service=%d" % sid, n=1200)
        self.assertEqual({tsgen.pid_of(p) for p in pk}, want | {0})
        self.assertEqual(tsgen.cc_errors(pk), 0)
        rest = [tsgen.key_of(p) for p in pk if tsgen.pid_of(p)]
        self.assertTrue(tsgen.run_matches(
            rest, [k for k in KEYS if k[0] in want]))
        pats = [p for p in pk if tsgen.pid_of(p) == 0]
        self.assertTrue(pats)
        for p in pats:
            self.assertEqual(pat_programs(p), (tsgen.TS_ID, [(sid, pmt)]))

    def test_service(self):
        self.check_service(0x101)
        self.check_service(0x102)  # its PCR on a PID of its own

    def test_bad_queries(self):
        for q, field in (("pids=abc", "pids"), ("pids=8192", "pids"),
                         ("pids=1,,2", "pids"), ("pids=", "pids"),
                         ("pids=" + ",".join(["1"] * 65), "pids"),
                         ("service=0", "service"),
                         ("service=70000", "service"),
                         ("service=x", "service"),
                         ("pids=0&service=1", "service"),
                         ("program=1", "program")):
            r = self.api("GET", STREAM + "?" + q)
            err = self.assertError(r, 400, "bad_request")
            self.assertEqual(err["details"]["field"], field, q)
        self.assertError(self.api("GET", "/api/v1/tuners/9/stream"), 404,
                         "not_found")
        self.assertError(self.api("POST", STREAM, {}), 405,
                         "method_not_allowed")

    def test_head(self):
        r = self.api("HEAD", STREAM)
        self.assertEqual(r.status, 200)
        self.assertEqual(r.headers["content-type"], "video/mp2t")

    def test_lease(self):
        lease = self.api("POST", "/api/v1/tuners/1/lease",
                         {"holder": "recorder"}).json["lease_id"]
        err = self.assertError(self.api("GET", STREAM), 409,
                               "lease_conflict")
        self.assertEqual(err["details"]["holder"], "recorder")
        ev = EventsFromNow(self, "types=stream.*")
        pk = self.stream(headers={"X-Tunerd-Lease": lease}, n=100)
        self.assertEqual(len(pk), 100)
        self.assertEqual(ev.wait("stream.start")["by"], "api:recorder")
        pk = self.stream(STREAM + "?lease_id=" + lease, n=100)
        self.assertEqual(len(pk), 100)
        # other tuners are not leased
        self.assertEqual(len(self.stream("/api/v1/tuners/2/stream", n=10)),
                         10)

    def listed_stream(self):
        """Tuner 1's stream statistics in GET /tuners (the list's kept
        text, made again when the streams' version moves)."""
        tuners = self.api("GET", "/api/v1/tuners").json["tuners"]
        return [t["stream"] for t in tuners if t["id"] == 1][0]

    def test_events_and_stats(self):
        self.listed_stream()  # the list's text made before the stream
        ev = EventsFromNow(self, "types=stream.*&tuner=1")
        conn, resp = open_stream(self.port, STREAM + "?pids=0,512")
        read_packets(resp, 500)
        listed = self.listed_stream()
        self.assertTrue(listed["active"])
        self.assertGreaterEqual(listed["packets"], 500)
        start = ev.wait("stream.start")
        self.assertEqual(start["filter"], "pids")
        self.assertEqual(start["pids"], [0, 512])
        self.assertEqual(start["readers"], 1)
        t = self.api("GET", "/api/v1/tuners/1").json["stream"]
        self.assertTrue(t["active"])
        self.assertEqual(t["readers"], 1)
        self.assertGreater(t["packets"], 500)
        self.assertEqual(t["cc_errors"], 0)
        self.assertEqual(t["tei_errors"], 0)
        close_stream(conn, resp)
        stop = ev.wait("stream.stop")
        self.assertEqual(stop["reason"], "client_closed")
        self.assertEqual(stop["reader"], start["reader"])
        self.assertGreaterEqual(stop["packets"], 500)
        self.assertEqual(stop["bytes"], stop["packets"] * tsgen.PACKET)
        self.assertEqual(stop["cc_errors"], 0)
        t = self.api("GET", "/api/v1/tuners/1").json["stream"]
        self.assertEqual((t["active"], t["readers"]), (False, 0))
        self.assertEqual(self.listed_stream(), t)
        # the rate of a second with packets, then of the ~24 Mbit/s
        conn, resp = open_stream(self.port)
        read_packets(resp, 20000)  # 1.25 s
        rate = self.api("GET", "/api/v1/tuners/1").json["stream"]
        close_stream(conn, resp)
        self.assertGreater(rate["bitrate_bps"], 0)

    def test_slow_reader_dropped(self):
        ev = EventsFromNow(self, "types=stream.*&tuner=1")
        slow = socket.socket()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.connect(("127.0.0.1", self.port))
        slow.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n"
                      % STREAM).encode())
        slow_id = ev.wait("stream.start")["reader"]
        conn, resp = open_stream(self.port)
        got, stop = [], threading.Event()

        def fast():
            while not stop.is_set():
                got.append(resp.read(188 * 100))
        th = threading.Thread(target=fast)
        th.start()
        try:
            dropped = ev.wait("stream.stop", reader=slow_id)
            self.assertEqual(dropped["reason"], "slow_reader")
            t = self.api("GET", "/api/v1/tuners/1").json["stream"]
            self.assertEqual(t["dropped_readers"], 1)
            self.assertEqual(t["readers"], 1)
            n = len(b"".join(got))
            wait_for(lambda: len(b"".join(got)) > n + 188 * 5000,
                     timeout=20, what="the fast reader going on")
        finally:
            stop.set()
            th.join()
            close_stream(conn, resp)
        data = b"".join(got)
        pk = tsgen.packets(data[:len(data) // 188 * 188])
        self.assertEqual(tsgen.cc_errors(pk), 0)
        self.assertTrue(tsgen.run_matches([tsgen.key_of(p) for p in pk],
                                          KEYS))
        read_to_close(slow)  # the daemon closed it
        slow.close()

    def test_tuner_gone(self):
        ev = EventsFromNow(self, "types=stream.*")
        conn, resp = open_stream(self.port)
        read_packets(resp, 100)
        self.source.stop()  # the source closes
        self.assertEqual(ev.wait("stream.stop")["reason"], "tuner_gone")
        while resp.read(65536):
            pass  # the answer ends
        close_stream(conn, resp)

    def test_daemon_stopping(self):
        # The event streams close at a stop without what is queued (as
        # events.md says): the reason shows in the log.
        conn, resp = open_stream(self.port)
        read_packets(resp, 100)
        self.daemon.kill(15)
        while resp.read(65536):
            pass  # the answer ends as a whole (the last chunk comes)
        close_stream(conn, resp)
        self.assertRegex(self.daemon.logtext(),
                         r"stream: tuner 1: reader 1 \(api\) ended: "
                         r"daemon_stopping")


    @unittest.skipIf(yaml is None, "PyYAML or jsonschema missing")
    def test_matches_the_spec(self):
        with open(SPEC) as f:
            spec = yaml.safe_load(f)

        def check(obj, name):
            schema = to_json_schema(spec, {"$ref": "#/components/schemas/"
                                           + name})
            jsonschema.Draft4Validator(schema).validate(obj)
        op = spec["paths"]["/api/v1/tuners/{id}/stream"]["get"]
        self.assertIn("video/mp2t", op["responses"]["200"]["content"])
        ev = EventsFromNow(self, "types=stream.*")
        self.stream(STREAM + "?service=258", n=50)
        for e in (ev.wait("stream.start"), ev.wait("stream.stop")):
            check(e, "Event")
        check(self.api("GET", "/api/v1/tuners/1").json, "Tuner")
        for q in ("pids=x", "service=0", "x=1"):
            r = self.api("GET", STREAM + "?" + q)
            self.assertIn(str(r.status), op["responses"])
            check(r.json, "Error")


class StreamMhdTest(StreamTest):
    """Every test again with the stream delivered through libmicrohttpd's
    content callback instead of the daemon's own writes."""
    daemon_extra = ("--stream-delivery", "mhd")


class StreamWithoutLockTest(ApiBoxTest):
    """A source that sends nothing (a tuner without lock): the stream
    opens and stays open, and a client that leaves is noticed although no
    packet is ever written to it (the default delivery watches its
    socket; through MHD a suspended connection is only noticed at the
    next packets)."""

    def setUp(self):
        super().setUp()
        self.source = TsSource(self.box, tuners="1", silent=True)
        self.addCleanup(self.source.stop)

    def test_open_without_packets(self):
        ev = EventsFromNow(self, "types=stream.*")
        conn, resp = open_stream(self.port)
        self.assertEqual(resp.status, 200)
        self.assertEqual(resp.getheader("Content-Type"), "video/mp2t")
        ev.wait("stream.start")
        t = self.api("GET", "/api/v1/tuners/1").json["stream"]
        self.assertEqual((t["active"], t["readers"], t["packets"],
                          t["bitrate_bps"]), (True, 1, 0, 0))
        close_stream(conn, resp)
        stop = ev.wait("stream.stop")
        self.assertEqual((stop["reason"], stop["bytes"]),
                         ("client_closed", 0))
        t = self.api("GET", "/api/v1/tuners/1").json["stream"]
        self.assertEqual((t["active"], t["readers"]), (False, 0))


class StreamRolesTest(ApiBoxTest):
    config = {"tokens": [
        {"name": "tv", "token": "viewer-token-1", "role": "viewer"}]}

    def setUp(self):
        super().setUp()
        self.source = TsSource(self.box, tuners="1")
        self.addCleanup(self.source.stop)

    def test_viewer_streams(self):
        self.assertError(self.api("GET", STREAM), 401, "unauthorized")
        for path, hdrs in ((STREAM, {"Authorization":
                                     "Bearer viewer-token-1"}),
                           (STREAM + "?access_token=viewer-token-1", {})):
            conn, resp = open_stream(self.port, path, hdrs)
            self.assertEqual(resp.status, 200)
            self.assertEqual(len(read_packets(resp, 50)), 50)
            close_stream(conn, resp)


if __name__ == "__main__":
    unittest.main()

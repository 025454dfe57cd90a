# SPDX-License-Identifier: MIT
"""The HDHomeRun face's HTTP side as Jellyfin, Plex and Emby use it:
discover.json -> lineup.json -> a lineup URL with ?duration= -> ffprobe
finds the service; the 503 with X-HDHomeRun-Error when every tuner is
taken (REST leases, a REST stream); off -> 404; a peer outside hdhomerun.allow -> 403;
lineup.post runs the scan that fills the lineup; http_port serves the
same on a second port."""
import http.client
import os
import shutil
import subprocess
import unittest
import urllib.parse

import test_rest_openapi as openapi
from events_util import EventsFromNow
from harness import ApiBoxTest, free_port, http_request
from test_channels import FREQS, SCANNED
from test_stream_ts import ENV_FILE, env_services, probe_programs

with open(ENV_FILE) as _f:
    ENV_TEXT = _f.read()
BBC = env_services(ENV_TEXT, "PSB1 BBC A (C23)")
BBC_ONE = BBC[0]  # sid 4164, LCN 1
PSB1 = {"delivery_system": "DVBT", "frequency": 490000000,
        "bandwidth": 8000000}
SCAN = {"frequencies": FREQS, "delivery_system": "DVB-T",
        "bandwidth": 8000000}


def channel(svc, params=PSB1):
    return {"name": svc["name"], "lcn": svc["lcn"],
            "service_id": svc["sid"], "transport_stream_id": 4164,
            "network_id": 12293, "type": svc["type"], "params": params}


def hdhr_config(**kw):
    # control_port 0: no control channel on the fixed port 65001, which
    # the control tests hold (RESOURCE_LOCK hdhomerun_65001)
    h = {"enabled": True, "allow": ["127.0.0.0/8"], "scan": SCAN,
         "control_port": 0}
    h.update(kw)
    return {"hdhomerun": h}


def spec_errors(obj, name):
    """What makes obj not a components/schemas/<name> of
    protocol/openapi.yaml."""
    with open(openapi.SPEC) as f:
        spec = openapi.yaml.safe_load(f)
    schema = openapi.to_json_schema(
        spec, {"$ref": "#/components/schemas/" + name})
    return [e.message for e in
            openapi.jsonschema.Draft4Validator(schema).iter_errors(obj)]


class HdhrBase(ApiBoxTest):
    env_text = ENV_TEXT
    tuners = "mt2060,mt2060"
    box_extra = ("--no-card",)  # the services' streams, without ffmpeg
    config = hdhr_config()

    def set_channels(self, svcs):
        r = self.api("PUT", "/api/v1/channels",
                     {"channels": [channel(s) for s in svcs]})
        self.assertEqual(r.status, 200, r)

    def get(self, path, port=None, **kw):
        return http_request(port or self.port, "GET", path, **kw)


@unittest.skipUnless(shutil.which("ffprobe"),
                     "ffprobe is not installed (scripts/deps.sh test)")
@unittest.skipIf(openapi.yaml is None, "PyYAML or jsonschema missing "
                 "(scripts/deps.sh test installs them)")
class HdhrHttpFlow(HdhrBase):
    def test_jellyfin_flow(self):
        self.set_channels(BBC[:2])
        d = self.get("/discover.json")
        self.assertEqual(d.status, 200, d)
        self.assertEqual(d.headers["content-type"], "application/json")
        dev = d.json
        for key in ("FriendlyName", "ModelNumber", "FirmwareName",
                    "FirmwareVersion", "DeviceID", "DeviceAuth", "BaseURL",
                    "LineupURL", "TunerCount"):
            self.assertIn(key, dev)
        self.assertEqual(spec_errors(dev, "HdhrDiscover"), [])
        self.assertEqual(dev["TunerCount"], 2)
        self.assertEqual(dev["BaseURL"], "http://127.0.0.1:%d" % self.port)
        lineup_url = urllib.parse.urlsplit(dev["LineupURL"])
        self.assertEqual(lineup_url.path, "/lineup.json")

        lineup = self.get(lineup_url.path).json
        for e in lineup:
            self.assertEqual(spec_errors(e, "HdhrLineupEntry"), [])
        self.assertEqual(
            [(e["GuideNumber"], e["GuideName"]) for e in lineup],
            [(str(s["lcn"]), s["name"]) for s in BBC[:2]])
        url = urllib.parse.urlsplit(lineup[0]["URL"])
        self.assertEqual((url.hostname, url.port, url.path),
                         ("127.0.0.1", self.port, "/auto/v1"))

        ev = EventsFromNow(self, "types=tuner.tune,lease.acquired,"
                           "lease.released,stream.stop")
        # the stream ends by itself after 3 s: read it to its end
        conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=30)
        self.addCleanup(conn.close)
        conn.request("GET", url.path + "?duration=3")
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        self.assertEqual(resp.getheader("Content-Type"), "video/mp2t")
        data = resp.read()
        self.assertGreater(len(data), 188 * 100)
        path = os.path.join(self.dir, "auto-v1.ts")
        with open(path, "wb") as f:
            f.write(data)
        programs = probe_programs(path)
        self.assertEqual(sorted(programs), [BBC_ONE["sid"]])
        streams = {s["id"] for s in programs[BBC_ONE["sid"]]["streams"]}
        self.assertEqual(streams, {hex(BBC_ONE["video"]),
                                   hex(BBC_ONE["audio"])})

        # a lease change's event follows its write, so the tune's may
        # come first: collect until the release
        seen = {}
        while "lease.released" not in seen:
            e = ev.wait(("tuner.tune", "lease.acquired", "lease.released"))
            seen.setdefault(e["type"], e)
        acq, rel = seen["lease.acquired"], seen["lease.released"]
        tune = seen["tuner.tune"]
        self.assertEqual(acq["holder"], "hdhomerun:127.0.0.1")
        self.assertEqual(rel["holder"], "hdhomerun:127.0.0.1")
        self.assertEqual((tune["tuner"], tune["origin"], tune["by"],
                          tune["result"]),
                         (acq["tuner"], "hdhomerun", "hdhomerun:127.0.0.1",
                          "ok"))
        t = self.api("GET", "/api/v1/tuners/%d" % acq["tuner"]).json
        self.assertIsNone(t["lease"])
        self.assertEqual(t["last_change"]["origin"], "hdhomerun")

    def test_tune_by_frequency_whole_multiplex(self):
        r = self.get("/auto/ch490000000?duration=1")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.headers["content-type"], "video/mp2t")
        path = os.path.join(self.dir, "ch.ts")
        with open(path, "wb") as f:
            f.write(r.body)
        self.assertEqual(sorted(probe_programs(path)),
                         sorted(s["sid"] for s in BBC))

    def test_all_tuners_in_use(self):
        self.set_channels(BBC[:1])
        for tuner in (1, 2):
            r = self.api("POST", "/api/v1/tuners/%d/lease" % tuner,
                         {"holder": "rest-%d" % tuner, "ttl_s": 60})
            self.assertEqual(r.status, 201, r)
        r = self.get("/auto/v1")
        self.assertEqual(r.status, 503, r)
        self.assertEqual(r.headers["x-hdhomerun-error"],
                         "805 All Tuners In Use")
        self.assertEqual(r.body, b"805 All Tuners In Use")
        r = self.get("/tuner0/v1")
        self.assertEqual(r.status, 503, r)
        self.assertEqual(r.headers["x-hdhomerun-error"], "804 Tuner In Use")
        # a channel that is not there, a tuner that is not there
        self.assertError(self.get("/auto/v999"), 404, "not_found")
        self.assertError(self.get("/tuner7/v1"), 404, "not_found")
        self.assertError(self.get("/auto/v1?duration=x"), 400,
                         "bad_request")

    def test_a_rest_stream_makes_a_tuner_busy(self):
        self.set_channels(BBC[:1])
        conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=30)
        self.addCleanup(conn.close)
        conn.request("GET", "/api/v1/tuners/1/stream")
        resp = conn.getresponse()  # the head: the reader is open
        self.assertEqual(resp.status, 200)
        lease = self.api("POST", "/api/v1/tuners/2/lease",
                         {"holder": "rest-2", "ttl_s": 60})
        self.assertEqual(lease.status, 201, lease)
        r = self.get("/auto/v1")
        self.assertEqual((r.status, r.headers["x-hdhomerun-error"]),
                         (503, "805 All Tuners In Use"))
        self.assertEqual(self.api(
            "DELETE", "/api/v1/tuners/2/lease",
            headers={"X-Tunerd-Lease": lease.json["lease_id"]}).status, 204)
        ev = EventsFromNow(self, "types=stream.start")
        r = self.get("/auto/v1?duration=1")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(ev.wait("stream.start",
                                 by="hdhomerun:127.0.0.1")["tuner"], 2)

    def test_lineup_post_scans(self):
        self.assertEqual(self.get("/lineup.json").json, [])
        st = self.get("/lineup_status.json").json
        self.assertEqual((st["ScanInProgress"], st["ScanPossible"]), (0, 1))
        ev = EventsFromNow(self, "types=scan.progress,scan.done")
        r = http_request(self.port, "POST", "/lineup.post?scan=start")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["ScanInProgress"], 1)
        first = ev.wait("scan.progress")
        st = self.get("/lineup_status.json").json
        # the scan of 10 frequencies is still running after its first
        self.assertEqual(st["ScanInProgress"], 1, st)
        self.assertGreaterEqual(st["Progress"], 0)
        self.assertIn("Found", st)
        self.assertEqual(spec_errors(st, "HdhrLineupStatus"), [])
        done = ev.wait("scan.done", timeout=120, scan=first["scan"])
        self.assertEqual(done["state"], "done", done)
        self.assertEqual(self.get("/lineup_status.json").json
                         ["ScanInProgress"], 0)
        lineup = self.get("/lineup.json").json
        want = sorted((str(s["lcn"]), s["name"])
                      for m in SCANNED for s in m["services"])
        self.assertEqual(sorted((e["GuideNumber"], e["GuideName"])
                                for e in lineup), want)
        self.assertError(http_request(self.port, "POST",
                                      "/lineup.post?scan=bogus"),
                         400, "bad_request")
        self.assertError(self.get("/lineup.post?scan=start"), 405,
                         "method_not_allowed")


class HdhrMhdDelivery(HdhrBase):
    daemon_extra = ("--stream-delivery", "mhd")

    def test_duration_ends_an_mhd_stream(self):
        self.set_channels(BBC[:1])
        ev = EventsFromNow(self, "types=lease.released")
        conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=30)
        self.addCleanup(conn.close)
        conn.request("GET", "/auto/v1?duration=1")
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        data = b""
        try:  # the socket is shut: chunked framing ends unfinished
            while True:
                chunk = resp.read1(1 << 16)
                if not chunk:
                    break
                data += chunk
        except http.client.IncompleteRead as e:
            data += e.partial
        self.assertGreater(len(data), 188 * 10)
        self.assertEqual(ev.wait("lease.released")["holder"],
                         "hdhomerun:127.0.0.1")


class HdhrOff(HdhrBase):
    config = {"hdhomerun": {"enabled": False, "allow": ["127.0.0.0/8"]}}

    def test_paths_are_absent(self):
        for path in ("/discover.json", "/lineup.json", "/lineup_status.json",
                     "/auto/v1", "/tuner0/v1"):
            with self.subTest(path=path):
                self.assertError(self.get(path), 404, "not_found")


class HdhrNotAllowed(HdhrBase):
    config = hdhr_config(allow=["192.0.2.0/24"])

    def test_peer_outside_allow(self):
        for path in ("/discover.json", "/lineup.json", "/auto/v1"):
            with self.subTest(path=path):
                self.assertError(self.get(path), 403, "forbidden")
        # the REST API is not the face's business
        self.assertEqual(self.api("GET", "/api/v1/box").status, 200)


class HdhrHttpPort(HdhrBase):
    def start_daemon(self, wait=True):
        self.face_port = free_port()
        self.config = hdhr_config(http_port=self.face_port)
        return super().start_daemon(wait)

    def test_second_port_serves_the_face(self):
        self.set_channels(BBC[:1])
        main = self.get("/discover.json").json
        face = self.get("/discover.json", port=self.face_port).json
        self.assertEqual(face["DeviceID"], main["DeviceID"])
        self.assertEqual(face["BaseURL"],
                         "http://127.0.0.1:%d" % self.face_port)
        # stream URLs point at the face's port, whichever port was asked
        for port in (self.port, self.face_port):
            lineup = self.get("/lineup.json", port=port).json
            self.assertEqual(lineup[0]["URL"], "http://127.0.0.1:%d/auto/v1"
                             % self.face_port)
        r = self.get("/auto/v1?duration=1", port=self.face_port)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.headers["content-type"], "video/mp2t")
        self.assertGreater(len(r.body), 188 * 10)
        # only the face is on its port
        self.assertError(self.get("/api/v1/box", port=self.face_port), 404,
                         "not_found")


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: MIT
"""Channels: a scan of the simulated box's multiplexes (uk-crystal-palace
.env) through the real daemon finds exactly the env file's multiplexes and
services with names and LCNs; tunes by channel name and LCN; the list
survives a restart; dvbv5 export and import (libdvbv5 on both sides, and
Debian's dvb-format-convert when installed); bad input gets the JSON 400."""
import os
import shutil
import subprocess
import tempfile
import unittest

import json

from events_util import EventsFromNow, ws_connect, ws_next
from harness import ApiBoxTest
from test_stream_ts import ENV_FILE, env_muxes

with open(ENV_FILE) as _f:
    ENV_TEXT = _f.read()
MUXES = env_muxes(ENV_TEXT)
DIGITAL = [m for m in MUXES if m["system"] in ("DVBT", "DVBT2")]
# Every multiplex with services locks (the weak C40 one does not).
SCANNED = [m for m in DIGITAL if m["services"]]
FREQS = sorted(m["frequency"] for m in DIGITAL) + [538000000]


def expected_channels():
    out = []
    for m in SCANNED:
        for s in m["services"]:
            out.append({"name": s["name"], "lcn": s["lcn"],
                        "service_id": s["sid"], "type": s["type"],
                        "frequency": m["frequency"],
                        "delivery_system": m["system"]})
    return sorted(out, key=lambda c: (c["lcn"], c["name"].lower()))


def summary(channels):
    return [{"name": c["name"], "lcn": c["lcn"],
             "service_id": c["service_id"], "type": c["type"],
             "frequency": c["params"]["frequency"],
             "delivery_system": c["params"]["delivery_system"]}
            for c in channels]


class ChannelsTest(ApiBoxTest):
    env_text = ENV_TEXT
    tuners = "mt2060,mt2060"

    def scan(self, body, tuner=1):
        ev = EventsFromNow(self, "types=scan.progress,scan.done")
        r = self.api("POST", "/api/v1/tuners/%d/scan" % tuner, body)
        self.assertEqual(r.status, 202, r)
        job = r.json["scan"]
        self.assertEqual(job["state"], "running")
        self.assertEqual(job["tuner"], tuner)
        progress = []
        while True:
            e = ev.wait(("scan.progress", "scan.done"), timeout=120,
                        scan=job["id"])
            if e["type"] == "scan.done":
                break
            progress.append(e)
        self.assertEqual(e["state"], "done", e)
        return job, progress, e

    def scan_all(self):
        return self.scan({"frequencies": FREQS, "delivery_system": "DVB-T",
                          "bandwidth": 8000000})

    def test_scan_finds_the_env_files_channels(self):
        job, progress, done = self.scan_all()
        self.assertEqual([p["frequency"] for p in progress], FREQS)
        self.assertEqual([p["index"] for p in progress],
                         list(range(len(FREQS))))
        locked = {p["frequency"]: p for p in progress if p["locked"]}
        self.assertEqual(sorted(locked), sorted(m["frequency"]
                                                for m in SCANNED))
        for m in SCANNED:
            self.assertEqual(locked[m["frequency"]]["services"],
                             len(m["services"]))
        self.assertEqual(done["multiplexes"], len(SCANNED))
        want = expected_channels()
        self.assertEqual(done["channels"], len(want))
        got = self.api("GET", "/api/v1/channels").json["channels"]
        self.assertEqual(summary(got), want)
        for c in got:
            self.assertEqual(c["network_id"], 12293)
            self.assertEqual(c["params"]["bandwidth"], 8000000)
        job = self.api("GET", "/api/v1/tuners/1/scan").json["scan"]
        self.assertEqual(job["state"], "done")
        self.assertEqual((job["done"], job["total"]), (len(FREQS),) * 2)
        self.assertEqual(len(job["channels"]), len(want))

        # tune by name (any case) and by LCN, through the command service
        r = self.api("POST", "/api/v1/tuners/2/tune",
                     {"channel": "bbc two hd", "wait_lock_ms": 3000})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["channel"]["service_id"], 17472)
        self.assertEqual(r.json["params"]["frequency"], 545833333)
        self.assertTrue(r.json["locked"])
        r = self.api("POST", "/api/v1/tuners/2/tune", {"lcn": 3})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["channel"]["name"], "ITV1")
        self.assertEqual(r.json["params"]["frequency"], 514000000)
        err = self.assertError(self.api("POST", "/api/v1/tuners/2/tune",
                                        {"channel": "No Such TV"}),
                               404, "not_found")
        self.assertEqual(err["details"]["channel"], "No Such TV")
        self.assertError(self.api("POST", "/api/v1/tuners/2/tune",
                                  {"lcn": 999}), 404, "not_found")
        self.assertError(self.api("POST", "/api/v1/tuners/2/tune",
                                  {"channel": "ITV1", "frequency": 1}),
                         400, "bad_request")

        # the WebSocket's tune takes a channel as its params
        ws = ws_connect(self.port)
        self.addCleanup(ws.close)
        ws.send(json.dumps({"id": "w1", "op": "tune", "tuner": 2,
                            "params": {"channel": "Film4"}}))
        reply = ws_next(ws, lambda m: m.get("type") == "reply")
        self.assertTrue(reply["ok"], reply)
        self.assertEqual(reply["result"]["channel"]["lcn"], 14)
        self.assertEqual(reply["result"]["params"]["frequency"], 514000000)
        ws.send(json.dumps({"id": "w2", "op": "tune", "tuner": 2,
                            "params": {"lcn": 12345}}))
        reply = ws_next(ws, lambda m: m.get("type") == "reply")
        self.assertFalse(reply["ok"], reply)
        self.assertEqual(reply["error"]["code"], "not_found")

        # the list survives a restart of the daemon
        self.daemon.stop()
        self.daemons.remove(self.daemon)
        self.daemon = self.start_daemon()
        after = self.api("GET", "/api/v1/channels").json["channels"]
        self.assertEqual(after, got)

        # a second scan of one multiplex replaces only its entries
        self.scan({"frequencies": [490000000]})
        self.assertEqual(self.api("GET", "/api/v1/channels").json
                         ["channels"], got)

    def test_dvbv5_round_trip(self):
        self.scan_all()
        got = self.api("GET", "/api/v1/channels").json["channels"]
        r = self.api("GET", "/api/v1/channels?format=dvbv5")
        self.assertEqual(r.status, 200, r)
        self.assertTrue(r.headers["content-type"].startswith("text/plain"))
        text = r.body.decode()
        self.assertIn("[BBC ONE Lon]", text)
        self.assertIn("DELIVERY_SYSTEM = DVBT2", text)
        self.check_dvb_format_convert(text, len(got))
        # the import endpoint parses it back (libdvbv5) into the same list
        self.assertOk200(self.api("PUT", "/api/v1/channels", {"channels": []}))
        self.assertEqual(self.api("GET", "/api/v1/channels").json
                         ["channels"], [])
        r = self.api("PUT", "/api/v1/channels?format=dvbv5", text,
                     headers={"Content-Type": "text/plain"})
        self.assertEqual(r.status, 200, r)
        back = r.json["channels"]
        keys = ("name", "lcn", "service_id", "transport_stream_id",
                "network_id", "params")
        self.assertEqual([{k: c[k] for k in keys} for c in back],
                         [{k: c[k] for k in keys} for c in got])
        # and a JSON list goes back in as it came out
        r = self.api("PUT", "/api/v1/channels", {"channels": got})
        self.assertEqual(r.json["channels"], got)

    def assertOk200(self, r):
        self.assertEqual(r.status, 200, r)
        return r

    def check_dvb_format_convert(self, text, n):
        """Debian's dvb-tools parse the export as a dvbv5 file too."""
        tool = shutil.which("dvb-format-convert")
        if not tool:
            self.skipTest("dvb-format-convert (dvb-tools) not installed")
        with tempfile.TemporaryDirectory() as d:
            src, dst = os.path.join(d, "in.conf"), os.path.join(d, "out.conf")
            with open(src, "w") as f:
                f.write(text)
            subprocess.run([tool, "-I", "DVBV5", "-O", "DVBV5", src, dst],
                           check=True, capture_output=True, timeout=30)
            with open(dst) as f:
                self.assertEqual(f.read().count("\n["), n - 1)

    def test_bad_input(self):
        for body, field in [
                ({}, "frequencies"),
                ({"frequencies": []}, "frequencies"),
                ({"frequencies": ["x"]}, "frequencies"),
                ({"frequencies": [490000000], "colour": 1}, "colour"),
                ({"band": "uhf", "region": "mars"}, "band"),
                ({"band": 7}, "band"),
                ({"frequencies": [490000000], "bandwidth": "8M"},
                 "bandwidth")]:
            with self.subTest(body=body):
                err = self.assertError(
                    self.api("POST", "/api/v1/tuners/1/scan", body),
                    400, "bad_request")
                self.assertEqual(err["details"]["field"], field)
        self.assertError(self.api("POST", "/api/v1/tuners/1/scan", "{x",
                                  headers={"Content-Type":
                                           "application/json"}),
                         400, "bad_json")
        self.assertError(self.api("POST", "/api/v1/tuners/9/scan",
                                  {"frequencies": [490000000]}),
                         404, "not_found")
        self.assertError(self.api("GET", "/api/v1/tuners/1/scan"),
                         404, "not_found")
        for body in [{"channels": [{"name": "x"}]}, {"channels": 1},
                     {"list": []}, [1]]:
            with self.subTest(body=body):
                self.assertError(self.api("PUT", "/api/v1/channels", body),
                                 400, "bad_request")
        self.assertError(self.api("PUT", "/api/v1/channels?format=dvbv5",
                                  "[x]\n\tFREQUENCY = 1\n",
                                  headers={"Content-Type": "text/plain"}),
                         400, "bad_request")
        self.assertError(self.api("GET", "/api/v1/channels?format=xml"),
                         400, "bad_request")

    def test_uhf_band_scan(self):
        """The eu UHF raster (21-69, 474 MHz + 8 MHz steps) reaches every
        multiplex of the env file, the offset C30- one at its channel's
        centre, and nothing else."""
        def raster(f):
            return 474000000 + round((f - 474000000) / 8e6) * 8000000
        job, progress, done = self.scan({"band": "uhf", "region": "eu"})
        self.assertEqual([p["frequency"] for p in progress],
                         [474000000 + 8000000 * i for i in range(49)])
        self.assertEqual(sorted(p["frequency"] for p in progress
                                if p["locked"]),
                         sorted(raster(m["frequency"]) for m in SCANNED))
        got = self.api("GET", "/api/v1/channels").json["channels"]
        want = expected_channels()
        for c in want:
            c["frequency"] = raster(c["frequency"])
        self.assertEqual(summary(got), want)

    def test_lease_rules(self):
        lease = self.api("POST", "/api/v1/tuners/1/lease",
                         {"holder": "recorder"}).json["lease_id"]
        self.assertError(self.api("POST", "/api/v1/tuners/1/scan",
                                  {"frequencies": [490000000]}),
                         409, "lease_conflict")
        ev = EventsFromNow(self, "types=scan.done")
        r = self.api("POST", "/api/v1/tuners/1/scan",
                     {"frequencies": [490000000]},
                     headers={"X-Tunerd-Lease": lease})
        self.assertEqual(r.status, 202, r)
        e = ev.wait("scan.done", scan=r.json["scan"]["id"])
        self.assertEqual((e["state"], e["channels"]), ("done", 11))

    def test_busy_and_cancel(self):
        ev = EventsFromNow(self, "types=scan.done")
        r = self.api("POST", "/api/v1/tuners/1/scan",
                     {"band": "uhf", "region": "eu"})
        self.assertEqual(r.status, 202, r)
        self.assertEqual(r.json["scan"]["total"], 49)
        self.assertError(self.api("POST", "/api/v1/tuners/1/scan",
                                  {"frequencies": [490000000]}),
                         409, "busy")
        r = self.api("DELETE", "/api/v1/tuners/1/scan")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["scan"]["state"], "cancelled")
        e = ev.wait("scan.done", scan=r.json["scan"]["id"])
        self.assertEqual(e["state"], "cancelled")
        self.assertError(self.api("DELETE", "/api/v1/tuners/1/scan"),
                         404, "not_found")
        # a scan still running when the daemon stops (tearDown: SIGTERM,
        # then the sanitizers' verdict in the log)
        r = self.api("POST", "/api/v1/tuners/1/scan",
                     {"band": "uhf", "region": "eu"})
        self.assertEqual(r.status, 202, r)
        self.assertEqual(r.json["scan"]["id"], "scan-2")


if __name__ == "__main__":
    unittest.main()

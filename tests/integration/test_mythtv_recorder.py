# SPDX-License-Identifier: MIT
"""clients/mythtv's External Recorder driven as a MythTV backend drives
it (mythtv_backend.py), against a real daemon on the simulated box: a
20 s recording (by the stream's own PCR clock) read back by ffprobe with
no continuity errors, XON/XOFF and poll flow control, a pre-empted
lease reported as STATUS:ERR with the stream stopped on a packet
boundary, the channel list over the v1 and v2 fallbacks.

The recorder runs under Debian's /usr/bin/python3 (python3-requests is
there for the tunerd package)."""
import json
import os
import shutil
import subprocess
import threading
import unittest

from harness import (BIN, ApiBoxTest, Box, Daemon, free_port, http_request,
                     wait_for)
from mythtv_backend import PACKET, Backend

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RECORDER = os.path.join(REPO, "clients", "mythtv", "tunerd_mythtv_recorder.py")
PYTHON = "/usr/bin/python3"
ENV_FILE = os.path.join(REPO, "kmod", "sim", "env", "uk-crystal-palace.env")
TOKEN = "mythtv-recorder-test-token"
HOLDER = "mythtv-it"
# PSB1 (CNR 28.5 dB: no errors) and PSB2 (27 dB)
MUXES = {"PSB1 BBC A (C23)": (490000000, 4164, 9018),
         "PSB2 D3&4 (C26)": (514000000, 8199, 9018)}


def env_channels(text):
    """The API channel objects of MUXES' services in the env file."""
    out, params = [], None
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "SERVICE" and params:
            name = line[line.index('"') + 1:line.rindex('"')]
            out.append({"name": name, "lcn": int(words[2]),
                        "service_id": int(words[1]),
                        "transport_stream_id": params[1],
                        "network_id": 12293, "type": words[3],
                        "params": {"delivery_system": "DVBT",
                                   "frequency": params[0],
                                   "bandwidth": 8000000},
                        "_pmt": int(words[4]),
                        "_pids": [int(w) for w in words[5:7] if w != "-"]})
        elif words[0] not in ("SERVICE", "MUX"):
            label = line[line.index('"') + 1:line.rindex('"')] \
                if '"' in line else ""
            params = MUXES.get(label)
    return out


def cc_errors_by_pid(path):
    """{pid: continuity errors} over a captured file, as a receiver
    counts them: a packet without payload or a repeated counter (a
    legal duplicate) does not advance it; null packets have none."""
    with open(path, "rb") as f:
        data = f.read()
    last, errors = {}, {}
    for i in range(0, len(data) - PACKET + 1, PACKET):
        pkt = data[i:i + 4]
        pid = ((pkt[1] & 0x1f) << 8) | pkt[2]
        if pid == 0x1fff or not pkt[3] & 0x10:
            continue
        cc = pkt[3] & 0x0f
        if pid in last and cc not in ((last[pid] + 1) & 15, last[pid]):
            errors[pid] = errors.get(pid, 0) + 1
        last[pid] = cc
    return errors, set(last)


def package_dir():
    """The folder that holds the tunerd package of this tree (a flat or
    a src layout of clients/python)."""
    for sub in ("", "src"):
        path = os.path.join(REPO, "clients", "python", sub)
        if os.path.exists(os.path.join(path, "tunerd", "__init__.py")):
            return os.path.normpath(path)
    return os.path.join(REPO, "clients", "python")


def recorder_ready():
    """Why the recorder cannot run here, or None."""
    if not os.path.exists(PYTHON):
        return "Debian's %s is missing" % PYTHON
    return None


@unittest.skipIf(recorder_ready(), recorder_ready())
class MythRecorder(ApiBoxTest):
    with open(ENV_FILE) as f:
        env_text = f.read()
    tuners = "mt2060,mt2060"
    box_extra = ("--no-card",)  # empty PES: the tables and CCs count
    config = {"tokens": [{"name": "myth", "token": TOKEN,
                          "role": "operator"}]}

    def setUp(self):
        super().setUp()
        self.channels = env_channels(self.env_text)
        r = self.api("PUT", "/api/v1/channels",
                     {"channels": self.channel_body()}, token=TOKEN)
        self.assertEqual(r.status, 200, r)

    def channel_body(self):
        return [{k: v for k, v in c.items() if not k.startswith("_")}
                for c in self.channels]

    def start(self, api_max=3, flow="xon", ttl=15, ini=False,
              program=(PYTHON, RECORDER), more_boxes=(), whole=False):
        """The recorder under a backend that speaks up to api_max, its
        configuration file in JSON or INI."""
        url = "http://127.0.0.1:%d" % self.port
        if ini:
            path = os.path.join(self.dir, "recorder.conf")
            text = ("[recorder]\nholder = %s\nlease_ttl_s = %d\n"
                    "flow_control = %s\npriority_recording = 500\n"
                    "priority_livetv = 100\n\n[box sim]\nurl = %s\n"
                    "token = %s\n" % (HOLDER, ttl, flow, url, TOKEN))
        else:
            path = os.path.join(self.dir, "recorder.json")
            text = json.dumps({
                "boxes": [{"url": url, "token": TOKEN}] + [
                    {"url": "http://127.0.0.1:%d" % port, "token": TOKEN,
                     "name": "second"} for port in more_boxes],
                "holder": HOLDER, "whole_multiplex": whole,
                "lease_ttl_s": ttl, "flow_control": flow,
                "priority": {"recording": 500, "livetv": 100}})
        with open(path, "w") as f:
            f.write(text)
        self.log = os.path.join(self.dir, "recorder.log")
        self.ts = os.path.join(self.dir, "rec%d.ts" % api_max)
        env = dict(os.environ, PYTHONPATH=package_dir())
        be = Backend([*program, "--config", path, "--log", self.log,
                      "--quiet", "--inputid", "1"], self.ts, env=env,
                     api_max=api_max)
        self.addCleanup(be.kill)
        return be

    def leases(self, port=None):
        r = http_request(port or self.port, "GET", "/api/v1/tuners",
                         headers={"Authorization": "Bearer " + TOKEN})
        return {t["id"]: t["lease"] for t in r.json["tuners"]}

    def second_box(self):
        """Another simulated box with its daemon and the same channel
        list: the port of its API."""
        box = Box(os.path.join(self.dir, "second"), tuners="mt2060",
                  extra=self.box_extra, env_text=self.env_text)
        self.addCleanup(box.stop)
        port = free_port()
        path = os.path.join(box.dir, "tunerd.json")
        with open(path, "w") as f:
            json.dump(self.config, f)
        daemon = Daemon(box, extra=["--listen", "127.0.0.1:%d" % port,
                                    "--config", path], name="second")
        self.daemons.append(daemon)  # stopped and its log checked
        wait_for(box.all_bound, what="the second box's tuner bound")
        headers = {"Authorization": "Bearer " + TOKEN}

        def up():
            try:
                return http_request(port, "PUT", "/api/v1/channels",
                                    {"channels": self.channel_body()},
                                    headers=headers).status == 200
            except OSError:
                return False
        wait_for(up, what="the second box's channel list")
        return port

    def test_two_boxes_are_one_pool(self):
        """Both tuners of the first box are held above a recording's
        priority: the recording goes to the second box."""
        for tuner in (1, 2):
            r = self.api("POST", "/api/v1/tuners/%d/lease" % tuner,
                         {"holder": "someone", "priority": 1000},
                         token=TOKEN)
            self.assertEqual(r.status, 201, r)
        port = self.second_box()
        be = self.start(more_boxes=(port,))
        be.handshake()
        self.assertEqual(be.tune("BBC ONE Lon", recordid=7)[0],
                         (True, "OK:Tuned"))
        self.assertIn("second:1", be.command("Description?")[1])
        self.assertEqual(self.leases(port)[1]["holder"],
                         HOLDER + "-input1")
        self.assertEqual(be.close()[2], 0)
        self.assertEqual(self.leases(port), {1: None})

    def assertProtocolOnly(self, be):
        """stderr held replies and status lines only."""
        for line in be.lines:
            if line.startswith("{"):
                self.assertIn("command", json.loads(line), line)
            else:
                self.assertRegex(line, r"^(\d+:)?(OK|WARN|ERR|STATUS)", line)

    def assertCleanTs(self, path, channel):
        size = os.path.getsize(path)
        self.assertGreater(size, 0)
        self.assertEqual(size % PACKET, 0)
        with open(path, "rb") as f:
            data = f.read()
        self.assertTrue(all(data[i] == 0x47 for i in range(0, size, PACKET)))
        errors, pids = cc_errors_by_pid(path)
        self.assertEqual(errors, {})
        # the service alone: PAT, its PMT, its elementary streams
        self.assertEqual(pids, {0, channel["_pmt"], *channel["_pids"]})

    def test_handshake_then_a_20s_recording(self):
        be = self.start()
        caps = be.handshake()
        self.assertEqual(be.version, 3)
        self.assertEqual(caps["HasTuner?"], (True, "OK:Yes"))
        self.assertEqual(caps["FlowControl?"], (True, "OK:XON/XOFF"))
        self.assertEqual(caps["LockTimeout?"], (True, "OK:10000"))
        (ok, result), first = be.tune("1", recordid=42)
        self.assertEqual(first, (True, "OK:InProgress"))
        self.assertEqual((ok, result), (True, "OK:Tuned"))
        self.assertEqual(be.command("HasLock?"), (True, "OK:Yes"))
        ok, pct = be.command("SignalStrengthPercent?")
        self.assertTrue(ok)
        self.assertTrue(0 < int(pct.split(":")[1]) <= 100, pct)
        self.assertIn("BBC ONE Lon", be.command("Description?")[1])
        held = [lease for lease in self.leases().values() if lease]
        self.assertEqual([(x["holder"], x["priority"]) for x in held],
                         [(HOLDER + "-input1", 500)])

        self.assertEqual(be.command("IsOpen?")[0], True)
        self.assertEqual(be.command("StartStreaming", timeout=15)[0], True)
        cap = be.capture
        self.assertEqual(cap.bytes, 0)  # nothing before XON
        self.assertEqual(be.command("XON"), (True, "OK:"))
        cap.wait(lambda: cap.pcr_span() >= 5, 30, "5 s of stream")
        self.check_xoff_holds(be)
        cap.wait(lambda: cap.pcr_span() >= 20, 60, "20 s of stream")
        self.assertEqual(be.command("XOFF")[0], True)
        self.assertEqual(be.command("StopStreaming", timeout=10)[0], True)
        ok, result, code = be.close()
        self.assertEqual((ok, result, code), (True, "OK:Terminating", 0))
        self.assertEqual(be.statuses, [])
        self.assertProtocolOnly(be)
        self.assertEqual([x for x in self.leases().values() if x], [])
        self.assertGreater(os.path.getsize(self.log), 0)

        bbc1 = [c for c in self.channels if c["lcn"] == 1][0]
        self.assertCleanTs(self.ts, bbc1)
        self.assertProbesAs(self.ts, bbc1)

    def check_xoff_holds(self, be):
        """After XOFF nothing reaches stdout while the box streams on
        (a write under way finishes first); XON resumes it."""
        cap = be.capture
        self.assertEqual(be.command("XOFF"), (True, "OK:"))

        def box_bytes():
            r = self.api("GET", "/api/v1/tuners", token=TOKEN)
            return sum(t["stream"]["bytes"] for t in r.json["tuners"])

        mark = box_bytes()
        wait_for(lambda: box_bytes() > mark + 2000000, timeout=20,
                 what="the box streaming 2 MB after XOFF")
        held = cap.bytes  # a write under way at XOFF has landed by now
        mark = box_bytes()
        wait_for(lambda: box_bytes() > mark + 2000000, timeout=20,
                 what="the box streaming 2 MB more")
        self.assertEqual(cap.bytes, held)
        self.assertEqual(be.command("XON"), (True, "OK:"))
        cap.wait(lambda: cap.bytes > held, 20, "data after XON")

    @unittest.skipUnless(shutil.which("ffprobe"),
                         "ffmpeg is not installed (scripts/deps.sh test)")
    def test_ffprobe_available(self):
        pass  # under CI=true a missing ffprobe fails here

    def assertProbesAs(self, path, channel):
        if not shutil.which("ffprobe"):
            return  # test_ffprobe_available reports it
        probe = json.loads(subprocess.run(
            ["ffprobe", "-v", "error", "-show_programs", "-of", "json",
             path], capture_output=True, text=True, timeout=60,
            check=True).stdout)
        programs = {p["program_id"]: p for p in probe["programs"]}
        self.assertEqual(list(programs), [channel["service_id"]])
        p = programs[channel["service_id"]]
        self.assertEqual(p["pmt_pid"], channel["_pmt"])
        self.assertEqual(sorted(int(s["id"], 16) for s in p["streams"]),
                         sorted(channel["_pids"]))

    def test_preempted_lease_is_status_err_and_a_clean_stop(self):
        be = self.start(flow="poll", ttl=3)
        # the pool: tuner 1 is held above live TV's priority, so the
        # recorder must take tuner 2
        r = self.api("POST", "/api/v1/tuners/1/lease",
                     {"holder": "someone", "priority": 1000}, token=TOKEN)
        self.assertEqual(r.status, 201, r)
        caps = be.handshake()
        self.assertEqual(caps["FlowControl?"], (True, "OK:Poll"))
        (ok, result), _ = be.tune("bbc two", recordid=0)  # live TV, by name
        self.assertEqual((ok, result), (True, "OK:Tuned"))
        tuner = [t for t, x in self.leases().items()
                 if x and x["holder"] == HOLDER + "-input1"][0]
        self.assertEqual(tuner, 2)
        self.assertEqual(self.leases()[tuner]["priority"], 100)
        self.assertEqual(be.command("StartStreaming", timeout=15)[0], True)
        cap = be.capture
        poll = threading.Event()
        while cap.bytes < 200 * PACKET:
            ok, sent = be.command("SendBytes")
            self.assertTrue(ok, sent)
            if sent == "OK:0":
                poll.wait(0.02)  # the backend's polling period
        r = self.api("POST", "/api/v1/tuners/%d/lease" % tuner,
                     {"holder": "recording-elsewhere", "priority": 900},
                     token=TOKEN)
        self.assertEqual(r.status, 201, r)
        status = be.next_status(timeout=15)
        self.assertTrue(status.startswith("STATUS:ERR:"), status)
        self.assertIn("lost", status)
        ok, result = be.command("TuneStatus?")
        self.assertFalse(ok)
        self.assertTrue(result.startswith("ERR:"), result)
        self.assertEqual(be.command("HasLock?"), (True, "OK:No"))
        self.assertEqual(be.command("StopStreaming")[0], True)
        ok, result, code = be.close()
        self.assertEqual((ok, code), (True, 0))
        self.assertProtocolOnly(be)
        bbc2 = [c for c in self.channels if c["lcn"] == 2][0]
        self.assertCleanTs(self.ts, bbc2)
        self.assertEqual(self.leases()[tuner]["holder"],
                         "recording-elsewhere")

    def test_a_stalled_backend_is_told_of_damage(self):
        """The whole multiplex (24 Mbit/s) with no XON: the recorder keeps
        reading the box (which would drop a slow reader), its buffer
        overflows, one STATUS:DAMAGE line says so; XON then delivers
        whole packets."""
        be = self.start(whole=True)
        be.handshake()
        self.assertEqual(be.tune("1", recordid=3)[0], (True, "OK:Tuned"))
        self.assertEqual(be.command("StartStreaming", timeout=15)[0], True)
        status = be.next_status(timeout=60)
        self.assertTrue(status.startswith("STATUS:DAMAGE:"), status)
        self.assertEqual(be.capture.bytes, 0)
        self.assertEqual(be.command("XON"), (True, "OK:"))
        be.capture.wait(lambda: be.capture.bytes >= 1000 * PACKET, 30,
                        "data after XON")
        self.assertEqual(be.command("StopStreaming")[0], True)
        self.assertEqual(be.close()[2], 0)
        self.assertEqual(os.path.getsize(self.ts) % PACKET, 0)
        r = self.api("GET", "/api/v1/tuners", token=TOKEN)
        self.assertEqual(sum(t["stream"]["dropped_readers"]
                             for t in r.json["tuners"]), 0)

    def test_sigterm_releases_the_lease(self):
        """The backend kills a recorder that did not close: the lease
        goes at once, not at its expiry."""
        be = self.start()
        be.handshake()
        self.assertEqual(be.tune("1")[0], (True, "OK:Tuned"))
        self.assertEqual(len([x for x in self.leases().values() if x]), 1)
        be.proc.terminate()
        self.assertEqual(be.proc.wait(15), 0)
        self.assertEqual([x for x in self.leases().values() if x], [])

    def channel_listing(self, api_max, **kw):
        be = self.start(api_max=api_max, **kw)
        be.handshake()
        self.assertEqual(be.version, api_max)
        want = sorted(self.channels, key=lambda c: (c["lcn"], c["name"]))
        self.assertEqual(be.command("LoadChannels", timeout=50),
                         (True, "OK:%d" % len(want)))
        got = []
        ok, result = be.command("FirstChannel")
        while ok and result != "OK:DONE":
            fields = result[3:].split(",")
            self.assertIn(len(fields), (4, 5), result)
            got.append((fields[0], fields[1]))
            ok, result = be.command("NextChannel")
        self.assertEqual(got, [(str(c["lcn"]), c["name"]) for c in want])
        (ok, result), first = be.tune("999")
        self.assertEqual(first, (True, "OK:InProgress"))
        self.assertFalse(ok)
        self.assertIn("999", result)
        self.assertEqual(be.close()[2], 0)
        self.assertProtocolOnly(be)

    @unittest.skipUnless(shutil.which("cmake"), "cmake is not on PATH")
    def test_channel_list_over_v3_by_the_installed_program(self):
        """cmake --install of clients/mythtv into a fresh prefix: the
        launcher finds its modules there."""
        build = os.path.dirname(os.path.abspath(BIN))
        prefix = os.path.join(self.dir, "prefix")
        subprocess.run(["cmake", "--install",
                        os.path.join(build, "clients", "mythtv"),
                        "--prefix", prefix], check=True,
                       capture_output=True, timeout=60)
        launcher = os.path.join(prefix, "bin", "tunerd-mythtv-recorder")
        self.channel_listing(3, program=(launcher,))

    def test_channel_list_over_v2(self):
        self.channel_listing(2)

    def test_channel_list_over_v1(self):
        self.channel_listing(1, ini=True)

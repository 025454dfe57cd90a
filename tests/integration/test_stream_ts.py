# SPDX-License-Identifier: MIT
"""The simulated box's transport stream socket of a tuner the daemon tuned
through the REST API: nothing without lock, whole packets with it, and a
recording that ffprobe reads back as the env file's multiplex: every
service with its name, its PMT's streams, its PCR, decodable video."""
import glob
import json
import os
import shutil
import socket
import subprocess
import unittest

from harness import ApiBoxTest, wait_for

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ENV_FILE = os.path.join(REPO, "kmod", "sim", "env", "uk-crystal-palace.env")
PSB1_LABEL = "PSB1 BBC A (C23)"
PSB1 = {"delivery_system": "DVBT", "frequency": 490000000,
        "bandwidth": 8000000}
EMPTY_C29 = {"delivery_system": "DVBT", "frequency": 538000000,
             "bandwidth": 8000000}
COM7_T2 = {"delivery_system": "DVBT2", "frequency": 570000000,
           "bandwidth": 8000000}  # CNR 22.5 dB, 2.5 dB over the T2 threshold
PACKET = 188


def count_errors(data):
    """(continuity gaps, TEI-marked packets) as a receiver counts them: it
    drops TEI-marked packets, and a null or adaptation-only packet does
    not advance the counter."""
    last, gaps, tei = {}, 0, 0
    for i in range(0, len(data) - PACKET + 1, PACKET):
        pid = ((data[i + 1] & 0x1f) << 8) | data[i + 2]
        if data[i + 1] & 0x80:
            tei += 1
            continue
        if pid == 0x1fff or not data[i + 3] & 0x10:
            continue
        cc = data[i + 3] & 0x0f
        if pid in last and cc != (last[pid] + 1) & 15:
            gaps += 1
        last[pid] = cc
    return gaps, tei


def env_muxes(text):
    """The carriers of an env file with their SERVICE lines."""
    muxes = []
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "SERVICE":
            name = line[line.index('"') + 1:line.rindex('"')]
            muxes[-1]["services"].append({
                "sid": int(words[1]), "lcn": int(words[2]),
                "type": words[3], "pmt": int(words[4]),
                "video": None if words[5] == "-" else int(words[5]),
                "audio": int(words[6]), "name": name})
        elif words[0] != "MUX":
            label = line[line.index('"') + 1:line.rindex('"')] \
                if '"' in line else ""
            muxes.append({"system": words[0], "frequency": int(words[1]),
                          "bandwidth": int(words[2]), "cnr": float(words[4]),
                          "label": label, "services": []})
    return muxes


def env_services(text, label):
    """The SERVICE lines under the carrier whose label is label."""
    return [m for m in env_muxes(text) if m["label"] == label][0]["services"]


def probe_programs(path):
    """ffprobe's programs of a recording, by service id."""
    probe = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-show_programs", "-of", "json", path],
        capture_output=True, text=True, timeout=60, check=True).stdout)
    return {p["program_id"]: p for p in probe["programs"]}


def read_exactly(sock, n):
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(1 << 20, n - got))
        if not chunk:
            raise AssertionError("stream closed after %d bytes" % got)
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def assertProgramsAre(test, programs, services, audio="mp2"):
    """Every service with its name, PMT PID, PCR PID and streams."""
    test.assertEqual(sorted(programs), sorted(s["sid"] for s in services))
    for svc in services:
        with test.subTest(service=svc["name"]):
            p = programs[svc["sid"]]
            test.assertEqual(p["tags"]["service_name"], svc["name"])
            test.assertEqual(p["pmt_pid"], svc["pmt"])
            test.assertEqual(p["pcr_pid"], svc["video"] or svc["audio"])
            streams = {s["id"]: s["codec_name"] for s in p["streams"]}
            want = {hex(svc["audio"]): audio}
            if svc["video"]:
                want[hex(svc["video"])] = "mpeg2video"
            test.assertEqual(streams, want)


class TsStream(ApiBoxTest):
    with open(ENV_FILE) as f:
        env_text = f.read()

    def stream(self, client):
        return [t for t in self.box.tuners()
                if t["client"] == client][0]["stream"]

    def connect(self, client):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect("%s.ts%d" % (self.box.sock, client))
        self.addCleanup(s.close)
        return s

    def tune(self, client, params):
        r = self.api("POST", "/api/v1/tuners/%d/tune" % client, params)
        self.assertEqual(r.status, 200, r)
        return r.json

    def lock_checks_pass(self, client, count=10):
        """Until the box has looked at the demodulator count more times
        with a reader connected."""
        start = self.stream(client)["lock_checks"]
        wait_for(lambda: self.stream(client)["lock_checks"] >= start + count,
                 what="the box checking the lock")

    def assertNothingToRead(self, sock):
        sock.setblocking(False)
        try:
            with self.assertRaises(BlockingIOError):
                sock.recv(1)
        finally:
            sock.setblocking(True)
            sock.settimeout(30)

    def test_sockets_exist_per_tuner(self):
        for t in self.box.tuners():
            self.assertTrue(os.path.exists(
                "%s.ts%d" % (self.box.sock, t["client"])))

    def test_nothing_without_lock_then_whole_packets(self):
        s = self.connect(1)
        self.lock_checks_pass(1)
        self.assertNothingToRead(s)
        self.assertEqual(self.stream(1)["packets"], 0)

        self.assertFalse(self.tune(1, EMPTY_C29)["status"]["fe_status"]
                         .get("lock"))
        self.lock_checks_pass(1)
        self.assertNothingToRead(s)
        self.assertFalse(self.stream(1)["locked"])

        self.assertTrue(self.tune(1, PSB1)["status"]["fe_status"]["lock"])
        data = read_exactly(s, PACKET * 2000)
        self.assertTrue(all(data[i] == 0x47
                            for i in range(0, len(data), PACKET)))
        st = self.stream(1)
        self.assertTrue(st["locked"])
        self.assertAlmostEqual(st["bitrate"], 24128342, delta=10)
        self.assertEqual(st["connections"], 1)
        # a good CNR: no packet errors
        self.assertEqual(st["cc_errors"] + st["tei_packets"], 0)
        self.assertEqual(count_errors(data), (0, 0))

    def test_low_cnr_gives_cc_errors_and_tei(self):
        s = self.connect(1)
        self.assertTrue(self.tune(1, COM7_T2)["status"]["fe_status"]["lock"])
        # 2.5 dB of margin: about 2 packets in 1000 errored, so about
        # 500 here; most are null packets (no gap when lost), yet a dozen
        # gaps are expected: none would take a broken error model
        data = read_exactly(s, PACKET * 250000)
        gaps, tei = count_errors(data)
        self.assertGreater(tei, 0)
        self.assertGreater(gaps, 0)
        st = self.stream(1)
        self.assertAlmostEqual(st["bitrate"], 40.2e6, delta=0.1e6)
        self.assertGreater(st["cc_errors"], 0)
        self.assertGreater(st["tei_packets"], 0)

    @unittest.skipUnless(shutil.which("ffprobe") and shutil.which("ffmpeg"),
                         "ffmpeg is not installed (scripts/deps.sh test)")
    def test_recording_probes_as_the_env_multiplex(self):
        services = env_services(self.env_text, PSB1_LABEL)
        self.assertEqual(len(services), 11)
        self.assertTrue(self.tune(1, PSB1)["status"]["fe_status"]["lock"])
        first = self.connect(1)  # the multiplex asks for its test cards
        cards = os.path.join(self.dir, "tscard", "card1-*-*-*.ts")
        wait_for(lambda: len([c for c in glob.glob(cards)
                              if ".tmp" not in c]) == len(services),
                 timeout=180, step=0.2, what="every test card made")
        # while a reader is connected the multiplex exists: its rate
        bitrate = self.stream(1)["bitrate"]
        self.assertAlmostEqual(bitrate, 24128342, delta=10)
        rec = self.connect(1)
        first.close()
        seconds = 4
        nbytes = bitrate * seconds // 8 // PACKET * PACKET
        path = os.path.join(self.dir, "psb1.ts")
        with open(path, "wb") as f:
            f.write(read_exactly(rec, nbytes))

        assertProgramsAre(self, probe_programs(path), services)

        frames = json.loads(subprocess.run(
            ["ffprobe", "-v", "error", "-select_streams", "v",
             "-count_frames", "-show_entries", "stream=id,nb_read_frames",
             "-of", "json", path], capture_output=True, text=True,
            timeout=120, check=True).stdout)["streams"]
        tv = [s for s in services if s["video"]]
        self.assertEqual(len(frames), len(tv))
        for s in frames:
            # 25 Hz for 4 s, less a GOP to find the first I frame
            self.assertGreaterEqual(int(s["nb_read_frames"]),
                                    25 * seconds - 24, s)


@unittest.skipUnless(shutil.which("ffprobe"),
                     "ffmpeg is not installed (scripts/deps.sh test)")
class TsEveryMultiplex(ApiBoxTest):
    """Every multiplex of the env file that locks, read by ffprobe; empty
    PES (no test cards) keeps it quick: the tables are what counts."""

    env_text = TsStream.env_text
    box_extra = ("--no-card",)

    def test_every_multiplex_probes_with_its_services(self):
        muxes = [m for m in env_muxes(self.env_text) if m["services"]]
        self.assertEqual(len(muxes), 7)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect("%s.ts1" % self.box.sock)
        self.addCleanup(s.close)
        for m in muxes:
            with self.subTest(mux=m["label"]):
                r = self.api("POST", "/api/v1/tuners/1/tune", {
                    "delivery_system": m["system"],
                    "frequency": m["frequency"],
                    "bandwidth": m["bandwidth"]})
                self.assertEqual(r.status, 200, r)
                self.assertTrue(r.json["status"]["fe_status"]["lock"])
                path = os.path.join(self.dir, "mux.ts")
                # 1.5 s: the SDT comes every second; the first packets
                # may still be the previous multiplex's, ffprobe sorts
                # them by PAT
                data = read_exactly(s, 40200000 * 3 // 2 // 8 // PACKET *
                                    PACKET)
                with open(path, "wb") as f:
                    f.write(data)
                programs = probe_programs(path)
                programs = {k: v for k, v in programs.items()
                            if k in {x["sid"] for x in m["services"]}}
                # stream type 3, MPEG-1 audio: without a frame to look
                # at, ffmpeg does not know the layer and says mp3
                assertProgramsAre(self, programs, m["services"], "mp3")


if __name__ == "__main__":
    unittest.main()

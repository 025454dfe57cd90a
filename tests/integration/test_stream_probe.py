# SPDX-License-Identifier: MIT
"""What a player gets from the daemon's stream API: a tuner tuned through
REST to a multiplex of the simulated box (its real services and test
cards, not a tsgen source), recorded from GET /api/v1/tuners/1/stream
and read back by ffprobe: every service of the multiplex with its name,
its PMT's streams and its PCR, decodable video; and ?service=<sid> as
exactly that one program."""
import glob
import http.client
import json
import os
import shutil
import subprocess
import tempfile
import threading
import unittest

from harness import ApiBoxTest, wait_for
from test_stream_ts import (ENV_FILE, PACKET, PSB1, PSB1_LABEL,
                            assertProgramsAre, env_services, probe_programs)

STREAM = "/api/v1/tuners/1/stream"
SECONDS = 4  # of the multiplex recorded
BBC_ONE = 4164


def pids_of(data):
    return [((data[i + 1] & 0x1f) << 8) | data[i + 2]
            for i in range(0, len(data) - PACKET + 1, PACKET)]


def video_frames(path):
    """{stream id: frames decoded} of every video stream of a recording."""
    streams = json.loads(subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v", "-count_frames",
         "-show_entries", "stream=id,nb_read_frames", "-of", "json", path],
        capture_output=True, text=True, timeout=120,
        check=True).stdout)["streams"]
    return {s["id"]: int(s["nb_read_frames"]) for s in streams}


@unittest.skipUnless(shutil.which("ffprobe") and shutil.which("ffmpeg"),
                     "ffmpeg is not installed (scripts/deps.sh test)")
class StreamProbe(ApiBoxTest):
    with open(ENV_FILE) as f:
        env_text = f.read()

    @classmethod
    def setUpClass(cls):
        # the test cards are made once for the whole class
        cls.card_dir = tempfile.mkdtemp(prefix="tunerd-cards-")
        cls.box_extra = ("--card-dir", cls.card_dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.card_dir, ignore_errors=True)

    def open_stream(self, query=""):
        conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=30)
        conn.request("GET", STREAM + query)
        resp = conn.getresponse()
        self.addCleanup(conn.close)
        self.addCleanup(resp.close)
        if resp.status != 200:
            self.fail("%d %r" % (resp.status, resp.read(300)))
        self.assertEqual(resp.getheader("Content-Type"), "video/mp2t")
        return conn, resp

    def read(self, resp, nbytes):
        data = b""
        while len(data) < nbytes:
            chunk = resp.read(min(1 << 20, nbytes - len(data)))
            if not chunk:
                self.fail("stream ended after %d bytes" % len(data))
            data += chunk
        return data

    def setUp(self):
        super().setUp()
        self.services = env_services(self.env_text, PSB1_LABEL)
        r = self.api("POST", "/api/v1/tuners/1/tune",
                     dict(PSB1, wait_lock_ms=5000))
        self.assertEqual(r.status, 200, r)
        self.assertTrue(r.json["locked"], r.json)
        # a reader makes the box generate the multiplex and its cards;
        # it keeps reading, or the daemon would drop it as too slow
        conn, resp = self.open_stream()
        stop = threading.Event()
        drain = threading.Thread(target=self.drain, args=(resp, stop),
                                 daemon=True)
        drain.start()
        self.addCleanup(drain.join, 10)
        self.addCleanup(stop.set)
        cards = os.path.join(self.card_dir, "card1-*-*-*.ts")
        wait_for(lambda: len([c for c in glob.glob(cards)
                              if ".tmp" not in c]) >= len(self.services),
                 timeout=180, step=0.2, what="every test card made")

    @staticmethod
    def drain(resp, stop):
        """Reads and forgets until stop is set (the multiplex flows, so a
        read never waits long)."""
        try:
            while not stop.is_set() and resp.read(1 << 16):
                pass
        except (OSError, ValueError, http.client.HTTPException):
            pass

    def record(self, query, nbytes, name):
        conn, resp = self.open_stream(query)
        data = self.read(resp, nbytes)
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(data)
        # whole packets from the first byte on
        self.assertEqual([i for i in range(0, len(data), PACKET)
                          if data[i] != 0x47][:3], [], name)
        return path, data

    def bitrate(self):
        """The multiplex's rate as the daemon measures it over a second
        of the holder's stream."""
        return wait_for(lambda: self.api("GET", "/api/v1/tuners/1")
                        .json["stream"]["bitrate_bps"], timeout=10,
                        what="the stream's bitrate")

    def test_whole_multiplex_and_one_service(self):
        nbytes = self.bitrate() * SECONDS // 8 // PACKET * PACKET
        path, data = self.record("", nbytes, "psb1.ts")
        assertProgramsAre(self, probe_programs(path), self.services)
        tv = [s for s in self.services if s["video"]]
        frames = video_frames(path)
        self.assertEqual(sorted(frames), sorted(hex(s["video"]) for s in tv))
        for sid, n in frames.items():
            # 25 Hz, less a GOP to find the first I frame
            self.assertGreaterEqual(n, 25 * SECONDS - 24, sid)

        # as many packets of BBC ONE as the multiplex carried in as long
        one = [s for s in self.services if s["sid"] == BBC_ONE][0]
        own = {0, one["pmt"], one["video"], one["audio"]}
        npk = sum(1 for p in pids_of(data) if p in own)
        path, data = self.record("?service=%d" % BBC_ONE, npk * PACKET,
                                 "bbc1.ts")
        self.assertEqual(set(pids_of(data)), own)
        programs = probe_programs(path)
        self.assertEqual(list(programs), [BBC_ONE])
        p = programs[BBC_ONE]
        # the stream has no SDT (PID 17): ffprobe knows no name
        self.assertEqual(p["pmt_pid"], one["pmt"])
        self.assertEqual(p["pcr_pid"], one["video"])
        self.assertEqual({s["id"]: s["codec_name"] for s in p["streams"]},
                         {hex(one["video"]): "mpeg2video",
                          hex(one["audio"]): "mp2"})
        frames = video_frames(path)
        self.assertEqual(list(frames), [hex(one["video"])])
        self.assertGreaterEqual(frames[hex(one["video"])],
                                25 * SECONDS - 24 - 25)


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: MIT
"""libhdhomerun's device API against the box, as MythTV's recorder uses
it (hdhr_mythtv.c): lockkey, channel, filter, a stream to the client's
own UDP port, status polling, release.  The lockkey is a tunerd lease:
a second client (and a REST lease) is refused while the first holds it,
and gets in once the first vanished and its lease expired (the event,
not a timer, says when)."""
import os
import signal
import subprocess
import unittest

from events_util import EventsFromNow
from harness import BIN
from hdhr_netns import HdhrTest

CLIENT = os.path.join(BIN, "hdhr_mythtv")
CHANNEL = "auto:490000000"  # a multiplex of hdhr_netns.HDHR_ENV


@unittest.skipUnless(os.path.exists(CLIENT), "hdhr_mythtv is not built")
class HdhrDevice(HdhrTest):
    box_extra = ("--no-card",)
    lockkey_ttl_s = 2
    target_timeout_s = 2

    def client(self, *args, timeout=60):
        return self.ns.run(CLIENT, self.ns.host_ip + "-0", *args,
                           timeout=timeout, check=False)

    def test_record_sequence(self):
        ev = EventsFromNow(self)
        r = self.client("record", CHANNEL, str(1 << 20))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"LOCKED t8dvbt ss=\d+ snq=\d+ seq=100")
        self.assertIn("RELEASED", r.stdout)
        holder = "hdhomerun:" + self.ns.client_ip
        # the lease events follow their write: in any order with the tune
        seen = {}
        want = ("lease.acquired", "tuner.tune", "stream.start",
                "lease.released")
        while len(seen) < len(want):
            m = ev.wait(want, tuner=1)
            if m["type"] != "stream.start" or m["by"] == holder:
                seen.setdefault(m["type"], m)
        self.assertEqual(seen["lease.acquired"]["holder"], holder)
        self.assertEqual(seen["lease.released"]["holder"], holder)
        tune = seen["tuner.tune"]
        self.assertEqual((tune["origin"], tune["by"], tune["result"]),
                         ("hdhomerun", holder, "ok"), tune)
        self.assertEqual(seen["stream.start"]["by"], holder)
        # free again: a REST lease is granted
        r = self.api("POST", "/api/v1/tuners/1/lease", {"holder": "rest"})
        self.assertEqual(r.status, 201, r)

    def test_stale_lock_expires(self):
        ev = EventsFromNow(self)
        first = subprocess.Popen(
            self.ns.cmd(CLIENT, self.ns.host_ip + "-0", "record", CHANNEL,
                        str(1 << 19), "hold"),
            stdout=subprocess.PIPE, text=True)
        self.addCleanup(first.wait)
        self.addCleanup(first.kill)
        lines = []
        for line in first.stdout:
            lines.append(line)
            if line.startswith(("HOLDING", "LOCK REFUSED", "NO LOCK",
                                "STREAM FAILED", "TUNE FAILED")):
                break
        self.assertEqual(lines[-1:], ["HOLDING\n"], lines)
        holder = "hdhomerun:" + self.ns.client_ip
        # the second client and REST are refused while the first holds it
        r = self.client("lock")
        self.assertIn("LOCK REFUSED: ERROR: resource locked by %s"
                      % self.ns.client_ip, r.stdout)
        r = self.api("POST", "/api/v1/tuners/1/lease", {"holder": "rest"})
        self.assertEqual(r.status, 409, r)
        # the first client vanishes: its stream is refused (ICMP), ends
        # after target_timeout_s, and the lease expires lockkey_ttl_s on
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        ev.wait("lease.expired", tuner=1, holder=holder, timeout=60)
        r = self.client("lock")
        self.assertIn("LOCK OK", r.stdout, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()

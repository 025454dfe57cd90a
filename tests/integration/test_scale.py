# SPDX-License-Identifier: MIT
"""256 tuners on one box through the real port: every tuner is tuned once
over REST while 1,000 WebSocket subscribers follow, every tune answers
ok, and every subscriber gets every tune's event.  The box models no bus
time, so the run stays short under ASan."""
import json
import resource
import selectors
import threading
import time
import unittest

from events_util import ws_connect, ws_next
from harness import ApiBoxTest, wait_for

CHIPS = ("mt2060", "qt1010", "xc3028")
NTUNERS = 256
TUNE = {"delivery_system": "DVBT", "frequency": 474000000,
        "bandwidth": 8000000}


class ScaleTest(ApiBoxTest):
    tuners = ",".join(CHIPS[i % len(CHIPS)] for i in range(NTUNERS))
    # WebSocket subscribers to tuner.tune, all read by one selector
    # thread: a thread each would spend the run switching under the GIL.
    subscribers = 1000
    clients = 8  # REST clients tuning at once

    def all_ready(self):
        r = self.api("GET", "/api/v1/tuners", timeout=30)
        ts = json.loads(r.body)["tuners"] if r.status == 200 else []
        return len(ts) == NTUNERS and all(
            t["state"] == "ready" for t in ts)

    def tune_all(self, ids):
        """Tune each id in turn; (id, status, body) of every answer."""
        out = []
        for i in ids:
            r = self.api("POST", "/api/v1/tuners/%d/tune" % i,
                         body=json.dumps(TUNE).encode(),
                         headers={"Content-Type": "application/json"},
                         timeout=60)
            out.append((i, r.status, r.body))
        return out

    def collect_tunes(self, subs, results, timeout=300):
        """Each subscriber's set of tuners with an ok api tune event, read
        until every set is whole or timeout passes.  websocket-client
        never reads past the frame it wants, so a readable socket is a
        frame to read and none stays behind in its buffer."""
        sel = selectors.DefaultSelector()
        for n, ws in enumerate(subs):
            results[n] = set()
            sel.register(ws.sock, selectors.EVENT_READ, n)
        want, whole = NTUNERS, 0
        end = time.monotonic() + timeout
        while whole < len(subs) and time.monotonic() < end:
            for key, _ in sel.select(timeout=1.0):
                n = key.data
                m = json.loads(subs[n].recv())
                if m.get("type") != "tuner.tune" or m.get("origin") != "api":
                    continue
                self.assertEqual(m["result"], "ok", m)
                results[n].add(m["tuner"])
                if len(results[n]) == want:
                    whole += 1
                    sel.unregister(key.fileobj)
        sel.close()

    def test_every_tuner_tunes_once(self):
        wait_for(self.all_ready, timeout=60, step=0.2,
                 what="%d tuners ready" % NTUNERS)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        need = self.subscribers + 256
        if soft < need:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
        subs = [ws_connect(self.port, "types=tuner.tune", timeout=120)
                for _ in range(self.subscribers)]
        seen = [None] * len(subs)
        failed = []

        def reader():
            try:
                self.collect_tunes(subs, seen)
            except BaseException as e:  # reported in the main thread
                failed.append(e)

        readers = [threading.Thread(target=reader)]
        answers = [[] for _ in range(self.clients)]

        def client(n):
            answers[n] = self.tune_all(range(n + 1, NTUNERS + 1,
                                             self.clients))

        tuners = [threading.Thread(target=client, args=(n,))
                  for n in range(self.clients)]
        for t in readers + tuners:
            t.start()
        for t in tuners + readers:
            t.join()
        for ws in subs:
            ws.close()
        if failed:
            raise failed[0]
        done = sorted(a for ans in answers for a in ans)
        self.assertEqual([a[0] for a in done],
                         list(range(1, NTUNERS + 1)))
        for i, status, body in done:
            self.assertEqual(status, 200, (i, body))
        want = set(range(1, NTUNERS + 1))
        for n, got in enumerate(seen):
            self.assertEqual(got, want, "subscriber %d" % n)
        # the list (a cached text) shows every tune
        r = self.api("GET", "/api/v1/tuners", timeout=30)
        self.assertEqual(r.status, 200)
        tuned = {t["id"]: (t.get("params") or {}).get("frequency")
                 for t in json.loads(r.body)["tuners"]}
        self.assertEqual(tuned, {i: TUNE["frequency"] for i in want})


if __name__ == "__main__":
    unittest.main()

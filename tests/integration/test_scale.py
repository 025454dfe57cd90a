# SPDX-License-Identifier: MIT
"""256 tuners on one box through the real port: every tuner is tuned once
over REST, every tune answers ok, and every subscriber gets every tune's
event.  The box models no bus time, so the run stays short under ASan."""
import json
import threading
import unittest

from events_util import ws_connect, ws_next
from harness import ApiBoxTest, wait_for

CHIPS = ("mt2060", "qt1010", "xc3028")
NTUNERS = 256
TUNE = {"delivery_system": "DVBT", "frequency": 474000000,
        "bandwidth": 8000000}


class ScaleTest(ApiBoxTest):
    tuners = ",".join(CHIPS[i % len(CHIPS)] for i in range(NTUNERS))
    # WebSocket subscribers to tuner.tune; raise it for a fan-out test.
    subscribers = 1
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

    def collect_tunes(self, ws, results, slot):
        seen = set()
        while len(seen) < NTUNERS:
            m = ws_next(ws, lambda m: m["type"] == "tuner.tune"
                        and m["origin"] == "api", timeout=120)
            self.assertEqual(m["result"], "ok", m)
            seen.add(m["tuner"])
        results[slot] = seen

    def test_every_tuner_tunes_once(self):
        wait_for(self.all_ready, timeout=60, step=0.2,
                 what="%d tuners ready" % NTUNERS)
        subs = [ws_connect(self.port, "types=tuner.tune", timeout=120)
                for _ in range(self.subscribers)]
        seen = [None] * len(subs)
        readers = [threading.Thread(target=self.collect_tunes,
                                    args=(ws, seen, n))
                   for n, ws in enumerate(subs)]
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

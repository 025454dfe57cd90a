# SPDX-License-Identifier: MIT
"""The tuners' history (GET /api/v1/tuners/{id}/history): points with
lock fraction and min/avg/max per field after a tune, lock and tune
marks, the history kept across a daemon restart (also a SIGKILL), the
query's validation; and tuner.status with economy: a steady tuner's
reads publish next to nothing, a change publishes at once.

Waits poll the API for what the history has written (one commit a
second) or wait for events; nothing sleeps to let time pass."""
import signal
import time
import unittest

from events_util import EventsFromNow, ws_next
from harness import ApiBoxTest, wait_for

MUX_A = 474000000  # -50 dBm, CNR 30 dB
MUX_B = 490000000  # DVBT2, -55 dBm
WEAK = 506000000   # -88 dBm: signal, no lock
FIELDS = ("signal", "cnr", "afc", "bitrate", "errors")


def now_ms():
    return int(time.time() * 1000)


class HistoryTest(ApiBoxTest):
    def history(self, tuner, query=""):
        return self.api("GET", "/api/v1/tuners/%d/history%s" % (tuner, query))

    def wait_history(self, tuner, pred, what, query="", timeout=30):
        """The first answer whose JSON satisfies pred (polled)."""
        def answer():
            r = self.history(tuner, query)
            self.assertEqual(r.status, 200, r)
            return r.json if pred(r.json) else None
        return wait_for(answer, timeout=timeout, step=0.2, what=what)

    def tune(self, tuner, freq, system="DVBT"):
        r = self.api("POST", "/api/v1/tuners/%d/tune" % tuner,
                     {"delivery_system": system, "frequency": freq,
                      "bandwidth": 8000000})
        self.assertEqual(r.status, 200, r)
        return r.json


class History(HistoryTest):
    def locked_points(self, answer):
        return [p for p in answer["points"] if p["lock"] == 1.0]

    def test_points_and_marks_after_a_tune(self):
        t0 = now_ms()
        self.tune(1, MUX_A)
        a = self.wait_history(
            1, lambda a: len(self.locked_points(a)) >= 2 and
            any(m["type"] == "tuner.lock" for m in a["marks"]),
            "locked points and a lock mark", "?step=1000")
        self.assertEqual((a["tuner"], a["step_ms"], a["tier_ms"]),
                         (1, 1000, 1000))
        p = self.locked_points(a)[-1]
        self.assertGreaterEqual(p["samples"], 1)
        self.assertTrue(-51.0 <= p["signal"]["min"] <= p["signal"]["avg"]
                        <= p["signal"]["max"] <= -49.0, p)
        self.assertTrue(29.0 <= p["cnr"]["avg"] <= 31.0, p)
        self.assertEqual(set(p) - {"time", "samples", "lock"}, set(FIELDS))
        self.assertIsNone(p["bitrate"])  # no stream open
        tunes = [m for m in a["marks"] if m["type"] == "tuner.tune"]
        self.assertEqual(tunes[-1]["params"]["frequency"], MUX_A)
        self.assertEqual(tunes[-1]["result"], "ok")
        self.assertGreaterEqual(tunes[-1]["time"], t0 - 1000)
        self.assertTrue([m for m in a["marks"] if m["type"] == "tuner.lock"
                         and m["locked"]])
        # times ascending, on the step
        times = [x["time"] for x in a["points"]]
        self.assertEqual(times, sorted(set(times)))
        self.assertEqual({t % 1000 for t in times}, {0})

        # lock lost on the weak carrier: a mark and unlocked points
        lost_after = now_ms() - 1000
        self.tune(1, WEAK)
        a = self.wait_history(
            1, lambda a: any(m["type"] == "tuner.lock" and not m["locked"]
                             for m in a["marks"]) and
            any(p["lock"] == 0.0 and p["time"] > lost_after
                for p in a["points"]),
            "the lock lost", "?step=1000&fields=signal")
        p = [p for p in a["points"] if p["lock"] == 0.0][-1]
        self.assertLess(p["signal"]["avg"], -80.0)
        self.assertEqual(set(p), {"time", "samples", "lock", "signal"})

    def test_minutes_and_automatic_step(self):
        self.tune(2, MUX_A)
        self.wait_history(2, lambda a: a["points"], "a point", "?step=1000")
        a = self.history(2, "?step=60000").json
        self.assertEqual((a["step_ms"], a["tier_ms"]), (60000, 60000))
        self.assertTrue(a["points"])
        self.assertEqual({p["time"] % 60000 for p in a["points"]}, {0})
        # a day without a step: the minutes at the step of ~1000 points
        a = self.history(2, "?from=%d" % (now_ms() - 86400000)).json
        self.assertEqual((a["step_ms"], a["tier_ms"]), (120000, 60000))
        # the last hour without a step: the seconds, 4 s apart
        a = self.history(2).json
        self.assertEqual((a["step_ms"], a["tier_ms"]), (4000, 1000))

    def test_bad_queries(self):
        n = now_ms()
        for query, field in (("?fields=signal,bogus", "fields"),
                             ("?fields=", "fields"),
                             ("?step=999", "step"),
                             ("?step=abc", "step"),
                             ("?step=-1000", "step"),
                             ("?to=x", "to"),
                             ("?from=%d&to=%d" % (n, n), "from"),
                             ("?from=%d&to=%d" % (n, n - 1000), "from"),
                             ("?from=0&step=1000", "step")):
            r = self.history(1, query)
            err = self.assertError(r, 400, "bad_request")
            self.assertEqual(err["details"]["field"], field, query)
        err = self.assertError(self.history(1, "?since=5"), 400,
                               "bad_request")
        self.assertError(self.history(99), 404, "not_found")
        r = self.api("POST", "/api/v1/tuners/1/history")
        self.assertEqual(r.status, 405, r)


class HistoryRestart(HistoryTest):
    def check_kept_across(self, stop):
        self.tune(1, MUX_A)
        before = self.wait_history(
            1, lambda a: len(a["points"]) >= 3 and a["marks"],
            "points and marks before the restart", "?step=1000")
        stop(self.daemons[-1])
        self.start_daemon()
        after = self.history(
            1, "?step=1000&from=%d&to=%d" % (before["from"],
                                             before["to"])).json
        # every point answered before is there, whole (the seconds are
        # written whole; the last one may have gained samples meanwhile)
        kept = {p["time"]: p for p in after["points"]}
        for p in before["points"][:-1]:
            self.assertEqual(kept.get(p["time"]), p)
        marks = [(m["time"], m["type"]) for m in after["marks"]]
        for m in before["marks"]:
            self.assertIn((m["time"], m["type"]), marks)
        # and the new daemon goes on adding seconds
        last = before["points"][-1]["time"]
        self.wait_history(1, lambda a: a["points"] and
                          a["points"][-1]["time"] > last + 1000,
                          "new points after the restart", "?step=1000")

    def test_kept_across_a_restart(self):
        self.check_kept_across(lambda d: d.stop())

    def test_kept_across_a_kill(self):
        self.check_kept_across(lambda d: d.kill(signal.SIGKILL))


class StatusEconomy(HistoryTest):
    # ten reads a second for tuner.status; the history's seconds count
    # the reads (their "samples"), so the test knows how many were made
    daemon_extra = ("--status-interval-ms", "100")

    def test_steady_signal_publishes_next_to_nothing(self):
        ev = EventsFromNow(self, "types=tuner.status,tuner.tune")
        self.tune(1, MUX_A)
        first = ws_next(ev.ws, lambda m: m["type"] == "tuner.status" and
                        m["tuner"] == 1 and
                        m["status"]["frequency"] == MUX_A)
        self.assertTrue(first["locked"])
        after_ms = now_ms() + 1000
        a = self.wait_history(
            1, lambda a: sum(p["samples"] for p in a["points"]
                             if p["time"] >= after_ms) >= 40,
            "40 reads of the steady tuner", "?step=1000")
        reads = sum(p["samples"] for p in a["points"]
                    if p["time"] >= after_ms)
        # a tune of another tuner ends the count: the stream is in order
        self.tune(2, MUX_B, "DVBT2")
        seen = []
        while True:
            m = ws_next(ev.ws, lambda m: True)
            if m["type"] == "tuner.tune" and m["tuner"] == 2:
                break
            seen.append(m)
        ones = [m for m in seen if m["type"] == "tuner.status" and
                m["tuner"] == 1]
        # without the deadband this would be every read (>= 40)
        self.assertLessEqual(len(ones), 2, (reads, ones))

        # a change past the deadband (another channel, 5 dB weaker) is
        # published by the next read
        self.assertTrue(self.box.tune(1, "DVBT2", MUX_B, 8000000)["ok"])
        m = ws_next(ev.ws, lambda m: m["type"] == "tuner.status" and
                    m["tuner"] == 1)
        self.assertEqual(m["status"]["frequency"], MUX_B)
        self.assertLess(m["status"]["signal_strength"]["value"], -53.0)


if __name__ == "__main__":
    unittest.main()

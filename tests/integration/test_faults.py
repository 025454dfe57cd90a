# SPDX-License-Identifier: MIT
"""Hangs, crashes, bad plugins and daemon death stay local to one tuner."""
import os
import signal
import threading
import unittest

from events_util import EventsFromNow, ws_connect, ws_next
from harness import ApiBoxTest, BoxTest, TEST_PLUGINS, PLUGINS, wait_for

FAULTY = 0xF001
WRONGABI = 0xF002


class HangingChip(BoxTest):
    deadline_ms = 1000

    def test_hang_fails_at_deadline_while_others_tune(self):
        self.assertOk(self.box.call({"op": "fault", "client": 2,
                                     "hang": True}))
        result = {}

        def hung_tune():
            result["reply"] = self.box.tune(2, "DVBT", 474000000, 8000000)

        th = threading.Thread(target=hung_tune)
        th.start()
        # the other tuners keep tuning while tuner 2 hangs: rounds that
        # ended while the hung tune was still waiting
        rounds_during_hang = 0
        while th.is_alive():
            for client in (1, 3, 4):
                self.assertOk(self.box.tune(client, "DVBT", 474000000,
                                            8000000))
            if th.is_alive():
                rounds_during_hang += 1
        th.join()
        r = result["reply"]
        self.assertFalse(r["ok"], r)
        # the box's deadline ended it, nothing else
        self.assertEqual(r["errname"], "ETIMEDOUT")
        self.assertGreater(rounds_during_hang, 0)
        # once the chip answers again, so does the tuner
        self.assertOk(self.box.call({"op": "fault", "client": 2,
                                     "hang": False}))
        wait_for(lambda: self.box.tune(2, "DVBT", 474000000,
                                       8000000).get("ok"),
                 timeout=10, what="tuner 2 recovered")


class CrashingPlugin(BoxTest):
    tuners = "mt2060,mt2060:0x%x,mt2060" % FAULTY
    plugin_dirs = (PLUGINS, TEST_PLUGINS)

    def test_crash_restarts_worker_and_restores_params(self):
        self.assertOk(self.box.tune(2, "DVBT", 474000000, 8000000))
        self.assertOk(self.box.tune(1, "DVBT2", 490000000, 8000000))
        r = self.box.tune(2, "DVBT", 666000000, 8000000)  # crashes
        self.assertFalse(r["ok"], r)
        self.assertIn(r["errname"], ("ECONNABORTED", "ENOTCONN"))
        # restarted, and the last good params restored by the new worker
        wait_for(self.box.all_bound, what="worker rebound")
        st = wait_for(lambda: (lambda s: s if s.get("ok") else None)(
            self.box.status(2)), what="status after restart")["status"]
        self.assertEqual(st["frequency"], 474000000, st)
        self.assertIn("crash", self.daemon.logtext().lower())
        # tuner 1 never noticed
        st1 = self.assertOk(self.box.status(1))["status"]
        self.assertEqual(st1["frequency"], 490000000)
        self.assertTrue(st1["lock"])

    def test_hanging_plugin_is_killed_and_restarted(self):
        r = self.box.tune(2, "DVBT", 667000000, 8000000)  # plugin hangs
        self.assertFalse(r["ok"], r)
        wait_for(lambda: self.box.tune(2, "DVBT", 474000000,
                                       8000000).get("ok"),
                 timeout=15, what="hung worker replaced")
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))


DVBT = {"delivery_system": "DVBT", "bandwidth": 8000000}


def dvbt(hz):
    return dict(DVBT, frequency=hz)


class StoppedWorker(ApiBoxTest):
    power_up_wait = True
    """A worker that stops taking commands (SIGSTOP) is found by its
    liveness watch: worker.hang, a kill and a restart."""
    deadline_ms = 1000
    daemon_extra = ("--deadline-ms", "1000")

    def worker_pid(self, tuner):
        ws = ws_connect(self.port, "since=0&tuner=%d" % tuner)
        self.addCleanup(ws.close)
        return ws_next(ws, lambda m: m.get("type") == "tuner.ready")["pid"]

    def test_sigstop_is_a_hang_and_the_tuner_recovers(self):
        pid = self.worker_pid(2)
        events = EventsFromNow(self, "tuner=2")
        os.kill(pid, signal.SIGSTOP)
        r = self.api("POST", "/api/v1/tuners/2/tune", dvbt(474000000))
        self.assertError(r, 504, "deadline")
        hang = events.wait("worker.hang")
        self.assertEqual(hang["pid"], pid, hang)
        self.assertEqual(hang["op"], "tune", hang)
        events.wait("worker.restart")
        ready = events.wait("tuner.ready")
        self.assertNotEqual(ready["pid"], pid, ready)
        r = self.api("POST", "/api/v1/tuners/2/tune", dvbt(490000000))
        self.assertEqual(r.status, 200, r)
        t = self.api("GET", "/api/v1/tuners/2").json
        self.assertEqual(t["state"], "ready", t)
        # the other tuners never noticed
        r = self.api("POST", "/api/v1/tuners/1/tune", dvbt(474000000))
        self.assertEqual(r.status, 200, r)


class LostZygote(ApiBoxTest):
    """A killed worker zygote is forked again: workers go on coming from
    a zygote, not from the grown daemon."""
    power_up_wait = True
    worker_pid = StoppedWorker.worker_pid

    def children(self):
        pid = self.daemon.proc.pid
        kids = set()
        for task in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                kids.update(int(k) for k in f.read().split())
        return kids

    def zygote(self):
        workers = set(self.pids.values())
        others = wait_for(lambda: self.children() - workers or None,
                          what="a child that is not a worker")
        self.assertEqual(len(others), 1, (others, workers))
        return others.pop()

    def restart_worker(self, tuner):
        pid = self.pids[tuner]
        events = EventsFromNow(self, "tuner=%d" % tuner)
        os.kill(pid, signal.SIGKILL)
        ready = events.wait("tuner.ready")
        self.assertNotEqual(ready["pid"], pid, ready)
        self.pids[tuner] = ready["pid"]

    def test_killed_zygote_is_forked_again(self):
        self.pids = {n: self.worker_pid(n) for n in (1, 2, 3, 4)}
        first = self.zygote()
        os.kill(first, signal.SIGKILL)
        self.restart_worker(2)  # finds the zygote gone: forked here
        self.assertIn("worker zygote %d is gone" % first,
                      self.daemon.logtext())
        self.restart_worker(3)  # forks a new zygote, which forks it
        second = self.zygote()
        self.assertNotEqual(second, first)
        self.assertIn("worker zygote %d: forked again" % second,
                      self.daemon.logtext())
        self.assertEqual(self.api("POST", "/api/v1/tuners/3/tune",
                                  dvbt(474000000)).status, 200)


class InterruptedTuneEvents(ApiBoxTest):
    power_up_wait = True
    """Every tuner.tune_started is closed by a tuner.tune, with an error
    result when the worker crashed or hung in it."""
    tuners = "mt2060,mt2060:0x%x,mt2060" % FAULTY
    plugin_dirs = (PLUGINS, TEST_PLUGINS)
    deadline_ms = 1000
    daemon_extra = ("--deadline-ms", "1000")

    def closed(self, events, hz, end_types):
        """The tune at hz began: wait for its end (one of end_types) and
        its closing tuner.tune, which must carry an error."""
        def is_start(m):
            return m.get("type") == "tuner.tune_started" and \
                m["params"]["frequency"] == hz
        first = ws_next(events.ws, lambda m: is_start(m) or
                        m.get("type") in end_types)
        if not is_start(first):
            return None  # the worker was reaped before its start was read
        tune = ws_next(events.ws, lambda m: m.get("type") == "tuner.tune")
        self.assertEqual(tune["params"]["frequency"], hz, tune)
        self.assertEqual(tune["result"], "unavailable", tune)
        self.assertTrue(tune.get("message"), tune)
        self.assertIsNone(tune["status"], tune)
        return tune

    def test_hung_tune_is_closed_with_an_error(self):
        events = EventsFromNow(self, "tuner=2")
        r = self.api("POST", "/api/v1/tuners/2/tune", dvbt(667000000))
        self.assertError(r, 504, "deadline")
        tune = self.closed(events, 667000000, ())
        self.assertIsNotNone(tune)
        events.wait("tuner.ready")

    def test_crashed_tune_is_closed_with_an_error(self):
        events = EventsFromNow(self, "tuner=2")
        r = self.api("POST", "/api/v1/tuners/2/tune", dvbt(666000000))
        self.assertError(r, 503, "unavailable")
        self.closed(events, 666000000, ("worker.crash",))
        events.wait("tuner.ready")


class WrongAbiPlugin(BoxTest):
    tuners = "mt2060,mt2060:0x%x" % WRONGABI
    plugin_dirs = (PLUGINS, TEST_PLUGINS)

    def setUp(self):
        super().setUp()

    def start_daemon(self, wait=False):
        d = super().start_daemon(wait=False)
        wait_for(lambda: self.box.tuners()[0].get("bound"),
                 what="tuner 1 bound")
        return d

    def test_refused_with_clear_log_and_daemon_keeps_running(self):
        wait_for(lambda: "999" in self.daemon.logtext(),
                 what="refusal logged")
        log = self.daemon.logtext()
        self.assertIn("wrongabi", log)
        self.assertIsNone(self.daemon.proc.poll())
        self.assertFalse(self.box.tuners()[1].get("bound"))
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))


class DaemonDeath(BoxTest):
    def test_sigkill_and_restart_serves_every_tuner_again(self):
        for client in (1, 2, 3, 4):
            self.assertOk(self.box.tune(client, "DVBT", 490000000, 8000000))
        self.daemon.kill(signal.SIGKILL)
        # the box outlives the daemon and fails requests clearly
        r = self.box.tune(1, "DVBT", 474000000, 8000000)
        self.assertFalse(r["ok"], r)
        self.assertIn(r["errname"], ("ENOTCONN", "ECONNABORTED",
                                     "ETIMEDOUT"))
        self.start_daemon()
        for client in (1, 2, 3, 4):
            st = self.assertOk(self.box.status(client))["status"]
            self.assertEqual(st["frequency"], 490000000, (client, st))
            self.assertOk(self.box.tune(client, "DVBT", 474000000, 8000000))
            self.assertTrue(self.box.status(client)["status"]["lock"])


if __name__ == "__main__":
    unittest.main()

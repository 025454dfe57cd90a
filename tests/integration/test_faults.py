# SPDX-License-Identifier: MIT
"""Hangs, crashes, bad plugins and daemon death stay local to one tuner."""
import os
import signal
import threading
import unittest

from harness import BoxTest, TEST_PLUGINS, PLUGINS, wait_for

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

# SPDX-License-Identifier: MIT
"""A plugin that hangs while loading: its trial child neither holds up the
daemon nor outlives it, so a daemon killed meanwhile leaves the stub free
for the next one at once.

The simulated box refuses a second daemon (-EBUSY) while the first's
control channel is open; a trial child that inherited that channel and
outlived the daemon would keep every later daemon out.
"""
import os
import shutil
import signal
import tempfile
import unittest

from harness import (ApiBoxTest, BoxTest, PLUGINS, TEST_PLUGINS,
                     wait_for)

HANG_PLUGINS = os.environ.get(
    "TUNERD_HANG_PLUGINS",
    os.path.join(os.path.dirname(os.path.abspath(TEST_PLUGINS)),
                 "test-plugins-hang"))
CTORHANG = 0xF009  # claimed by ctorhang.so, which never finishes loading


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def process_gone(pid):
    """Dead, or a zombie left to whoever reaps orphans."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return True


class HangingTrial(BoxTest):
    # tuner 2's chip is claimed only by ctorhang.so: its attach needs the
    # hanging file's description.
    tuners = "mt2060,mt2060:0x%x" % CTORHANG
    plugin_dirs = (PLUGINS, HANG_PLUGINS)

    def setUp(self):
        self.assertTrue(os.path.exists(os.path.join(HANG_PLUGINS,
                                                    "ctorhang.so")),
                        "ctorhang.so not built in " + HANG_PLUGINS)
        super().setUp()

    def tearDown(self):
        # a sanitizer reports at exit: stop the daemons first
        for d in self.daemons:
            d.kill(signal.SIGTERM)
        reports = [d.logtext() for d in self.daemons
                   if any(m in d.logtext()
                          for m in ApiBoxTest.SANITIZER_MARKS)]
        super().tearDown()
        os.environ.pop("TUNERD_TEST_HANG_MARK", None)
        self.assertEqual(reports, [], "sanitizer reports in the daemon log")

    def start_daemon(self, wait=False):
        # each daemon's trial child writes its pid to its own file
        self.mark = os.path.join(self.dir, "hang.%d" % len(self.daemons))
        os.environ["TUNERD_TEST_HANG_MARK"] = self.mark
        return super().start_daemon(wait=False)

    def test_daemon_killed_during_a_hanging_trial_frees_the_stub(self):
        first = self.daemon
        pid = wait_for(lambda: read_pid(self.mark),
                       what="the trial of ctorhang.so hanging")
        # killed at once, well within the trial's deadline: the daemon's
        # control channel is open (the trial looks up tuner 2's chip)
        self.assertFalse(process_gone(pid))
        first.kill(signal.SIGKILL)
        wait_for(lambda: process_gone(pid),
                 what="the trial child gone with its daemon")

        second = self.start_daemon()
        wait_for(lambda: "stub connected" in second.logtext(),
                 what="the new daemon attached to the stub")
        wait_for(lambda: self.box.tuners()[0].get("bound"),
                 what="tuner 1 bound by the new daemon")
        # tuner 1 serves while the new daemon's own trial hangs
        self.assertOk(self.box.tune(1, "DVBT", 490000000, 8000000))
        # that trial ends at its deadline: the file is refused, the
        # daemon lives on
        wait_for(lambda: "ctorhang.so: hung for" in second.logtext(),
                 what="ctorhang.so refused as hanging")
        self.assertFalse(self.box.tuners()[1].get("bound"))
        self.assertIsNone(second.proc.poll())
        self.assertOk(self.box.tune(1, "DVBT", 474000000, 8000000))


class PluginsWhileATrialHangs(ApiBoxTest):
    plugin_dirs = (PLUGINS, HANG_PLUGINS)

    def setUp(self):
        self.mark_dir = tempfile.mkdtemp(prefix="tunerd-it-mark-")
        self.mark = os.path.join(self.mark_dir, "hang")
        os.environ["TUNERD_TEST_HANG_MARK"] = self.mark
        super().setUp()

    def tearDown(self):
        os.environ.pop("TUNERD_TEST_HANG_MARK", None)
        try:
            super().tearDown()
        finally:
            shutil.rmtree(self.mark_dir, ignore_errors=True)

    def plugins(self):
        r = self.api("GET", "/api/v1/plugins")
        self.assertEqual(r.status, 200, r)
        return {p["file"]: p for p in r.json["plugins"]}

    def test_listing_answers_with_what_is_known(self):
        pid = wait_for(lambda: read_pid(self.mark),
                       what="the trial of ctorhang.so hanging")
        files = self.plugins()
        hang = files["ctorhang.so"]
        self.assertFalse(hang["loaded"])
        self.assertIsNone(hang["name"])
        if not process_gone(pid):
            # answered while the trial still hangs: from the cache, not
            # waiting for it (the deadline may pass first on a machine
            # slow enough; then only the refusal below is checked)
            self.assertIn("being tried", hang["error"])
        self.assertTrue(files["mt2060.so"]["loaded"])
        self.assertIsNone(files["mt2060.so"]["error"])
        # the trial ends at its deadline and the listing says why
        wait_for(lambda: process_gone(pid), what="the hanging trial killed")
        wait_for(lambda: "hung for" in (self.plugins()["ctorhang.so"]
                                        ["error"] or ""),
                 what="ctorhang.so refused in the listing")
        self.assertIn("plugin ctorhang.so: hung for",
                      self.plugins()["ctorhang.so"]["error"])


if __name__ == "__main__":
    unittest.main()

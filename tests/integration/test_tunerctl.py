# SPDX-License-Identifier: MIT
"""tunerctl against two real boxes at once: two simulated boxes, each with
its own daemon listening on its own port."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

import harness
from harness import BIN, Box, Daemon, wait_for

TUNERCTL = os.path.join(BIN, "tunerctl")
NAMES = ("attic", "cellar")
LEASE_ID = re.compile(r"^[0-9a-f]{32}$")


def free_port():
    """A TCP port nobody listens on right now (the harness's if it has
    one)."""
    helper = getattr(harness, "free_port", None)
    if helper:
        return helper()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rest(url, method="GET", body=None, headers=None, timeout=15):
    """(status, JSON answer or None) of one API request."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers=dict(headers or {}))
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, json.loads(raw) if raw else None


def tuned_to(event):
    """The frequency a tuner.tune event asked for, or None."""
    return (event.get("params") or {}).get("frequency")


class Site:
    """One simulated box with a daemon serving the API on its own port."""

    def __init__(self, root, name, daemon_extra=(), env_text=harness.TEST_ENV,
                 box_extra=()):
        self.name = name
        self.dir = os.path.join(root, name)
        os.makedirs(self.dir)
        self.box = Box(self.dir, env_text=env_text, extra=box_extra)
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.daemon_extra = list(daemon_extra)
        self.daemons = []
        try:
            self.start_daemon()
        except BaseException:
            self.stop()
            raise

    def start_daemon(self):
        d = Daemon(self.box, name="%s-%d" % (self.name, len(self.daemons)),
                   extra=["--listen", "127.0.0.1:%d" % self.port,
                          "--name", self.name] + self.daemon_extra)
        self.daemons.append(d)
        wait_for(self.all_bound, what=self.name + ": every tuner bound")
        wait_for(self.api_up, what=self.name + ": API answers")
        return d

    def all_bound(self):
        try:
            return self.box.all_bound()
        except OSError:
            return None  # the box's app socket is not accepting yet

    def api_up(self):
        try:
            return rest(self.url + "/api/v1/box", timeout=2)[0] in (200, 401)
        except OSError:
            return False

    def stop_daemon(self):
        self.daemons[-1].stop()

    def client_of(self, tuner_id):
        """The box-side client id of API tuner tuner_id."""
        return self.box.tuners()[tuner_id - 1]["client"]

    def stop(self):
        for d in self.daemons:
            d.stop()
        self.box.stop()


class Watch:
    """A running `tunerctl watch`; its stdout lines collected as they come."""

    def __init__(self, test, *args):
        self.proc = subprocess.Popen([TUNERCTL] + list(args),
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env=test.env)
        self.lines = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.stderr = None
        test.addCleanup(self.close)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        if self.stderr is None:
            self.finish()

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    def events(self):
        with self.cond:
            return [json.loads(x) for x in self.lines]

    def wait_output(self, timeout):
        """Until a new line comes or watch ends, at most timeout s: watch
        does not tell when it is subscribed, so the tests tune again when
        nothing came (the timeout paces the tries)."""
        with self.cond:
            seen = len(self.lines)
            self.cond.wait_for(lambda: len(self.lines) > seen or
                               self.proc.poll() is not None, timeout)

    def stop(self, sig=signal.SIGINT):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.finish()

    def finish(self, timeout=10):
        rc = self.proc.wait(timeout)
        self.reader.join(5)
        self.proc.stdout.close()
        self.stderr = self.proc.stderr.read()
        self.proc.stderr.close()
        return rc


class TwoBoxes(unittest.TestCase):
    """Two boxes named attic and cellar, listed in the default config file
    ($XDG_CONFIG_HOME/tunerd/boxes.json) that tunerctl finds by itself."""

    daemon_extra = ()
    names = NAMES
    env_text = harness.TEST_ENV
    box_extra = ()

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="tunerd-ctl-")
        self.addCleanup(self.remove_root)
        self.sites = {}
        for name in self.names:
            self.sites[name] = Site(self.root, name, self.daemon_extra,
                                    self.env_text, self.box_extra)
            self.addCleanup(self.sites[name].stop)
        xdg = os.path.join(self.root, "xdg")
        os.makedirs(os.path.join(xdg, "tunerd"))
        self.config = os.path.join(xdg, "tunerd", "boxes.json")
        self.write_config()
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("TUNERD_BOX", "TUNERD_TOKEN")}
        self.env["XDG_CONFIG_HOME"] = xdg

    def write_config(self, tokens=None):
        boxes = [{"name": n, "url": self.sites[n].url} for n in self.names]
        for b in boxes:
            if tokens and tokens.get(b["name"]):
                b["token"] = tokens[b["name"]]
        with open(self.config, "w") as f:
            json.dump({"boxes": boxes}, f)

    def remove_root(self):
        if self._failed():
            print("kept for inspection:", self.root)
        else:
            shutil.rmtree(self.root, ignore_errors=True)

    def _failed(self):
        result = getattr(self, "_outcome", None)
        result = getattr(result, "result", None)
        return result is not None and any(
            t is self for t, _ in result.failures + result.errors)

    def ctl(self, *args, env=None, timeout=30):
        return subprocess.run([TUNERCTL] + list(args), capture_output=True,
                              text=True, timeout=timeout,
                              env=env if env is not None else self.env)

    def ctl_ok(self, *args, **kw):
        r = self.ctl(*args, **kw)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def tuners(self, name):
        st, body = rest(self.sites[name].url + "/api/v1/tuners")
        self.assertEqual(st, 200, body)
        return body["tuners"]


class ListAndTune(TwoBoxes):
    def test_ls_lists_every_tuner_of_both_boxes(self):
        r = self.ctl_ok("ls")
        rows = [line.split() for line in r.stdout.splitlines()]
        self.assertEqual(rows[0][:3], ["BOX", "ID", "CHIP"])
        for name in NAMES:
            want = [(str(t["id"]), t["chip"]["name"])
                    for t in self.tuners(name)]
            got = [(row[1], row[2]) for row in rows[1:] if row[0] == name]
            self.assertEqual(got, want, r.stdout)
        self.assertEqual(len(rows) - 1, 8, r.stdout)

        r = self.ctl_ok("--json", "ls")
        listed = json.loads(r.stdout)
        for name in NAMES:
            mine = [t for t in listed if t["box"] == name]
            self.assertEqual([t["id"] for t in mine],
                             [t["id"] for t in self.tuners(name)])
            self.assertTrue(all(t["state"] == "ready" for t in mine), mine)

    def test_ls_shows_what_was_tuned(self):
        self.ctl_ok("tune", "attic:2", "DVBT", "474M", "--bandwidth", "8M",
                    "--wait-lock", "3000")
        r = self.ctl_ok("ls")
        row = [x.split() for x in r.stdout.splitlines()
               if x.split()[:2] == ["attic", "2"]][0]
        # BOX ID CHIP STATE SYSTEM FREQ LOCK SIGNAL(value unit) CNR LEASE
        self.assertEqual(row[4:7], ["DVBT", "474.000", "yes"], r.stdout)
        self.assertEqual(row[8], "dBm", r.stdout)

    def test_tune_and_status_through_each_box(self):
        for name, tuner in (("attic", 1), ("cellar", 2)):
            with self.subTest(box=name):
                target = "%s:%d" % (name, tuner)
                r = self.ctl_ok("tune", target, "dvbt", "474M",
                                "--bandwidth", "8000000",
                                "--wait-lock", "3000")
                self.assertIn(target + "  DVBT 474.000 MHz", r.stdout)
                self.assertRegex(r.stdout, r"lock\s+yes")
                self.assertRegex(r.stdout, r"signal\s+-5\d\.\d dBm")
                # the tune went through the daemon to that box's chip
                site = self.sites[name]
                tuned = [t for t in site.box.tuners()
                         if t["client"] == site.client_of(tuner)][0]
                self.assertLess(abs(tuned["tuned"]["frequency"] - 474000000),
                                200000, tuned)

                r = self.ctl_ok("--json", "tune", target, "DVBT2", "490M",
                                "--bandwidth", "8M", "--wait-lock", "3000")
                answer = json.loads(r.stdout)
                self.assertTrue(answer["locked"], answer)
                self.assertEqual(answer["params"]["frequency"], 490000000)
                self.assertEqual(answer["params"]["delivery_system"],
                                 "DVBT2")

                r = self.ctl_ok("--json", "status", target)
                st = json.loads(r.stdout)
                self.assertTrue(st["fe_status"]["lock"], st)
                self.assertAlmostEqual(st["cnr"]["value"], 28.0, delta=1.5)

        # a weak carrier: signal but no lock; the other box is untouched
        self.ctl_ok("tune", "attic:1", "DVBT", "506M", "--bandwidth", "8M")
        r = self.ctl_ok("status", "attic:1")
        self.assertRegex(r.stdout, r"lock\s+no")
        self.assertRegex(r.stdout, r"signal\s+-8\d\.\d dBm")
        r = self.ctl_ok("status", "cellar:2")
        self.assertRegex(r.stdout, r"lock\s+yes")

    def test_status_follows_a_kernel_side_tune(self):
        site = self.sites["cellar"]
        self.assertTrue(site.box.tune(site.client_of(2), "DVBT", 474000000,
                                      8000000)["ok"])
        st = json.loads(self.ctl_ok("--json", "status", "cellar:2").stdout)
        self.assertTrue(st["fe_status"]["lock"], st)
        self.assertLess(abs(st["frequency"] - 474000000), 200000, st)

    def test_sleep_and_init(self):
        r = self.ctl_ok("sleep", "cellar:1")
        self.assertEqual(r.stdout.strip(), "cellar:1 sleeping")
        r = self.ctl_ok("--json", "init", "cellar:1")
        self.assertEqual(json.loads(r.stdout)["state"], "ready")

    def test_unknown_tuner_is_exit_5(self):
        r = self.ctl("status", "attic:99")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertTrue(r.stderr.startswith("tunerctl: attic: not_found: "),
                        r.stderr)

    def test_api_error_is_exit_1(self):
        r = self.ctl("tune", "cellar:1", "DVBT", "1500M", "--bandwidth",
                     "8M")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertRegex(r.stderr, r"^tunerctl: cellar: [a-z_]+: .+")


class Leases(TwoBoxes):
    def test_lease_refuses_other_clients_with_exit_4(self):
        r = self.ctl_ok("lease", "attic:1", "--holder", "recorder",
                        "--ttl", "60")
        lease = r.stdout.strip()
        self.assertRegex(lease, LEASE_ID)
        self.assertIn("recorder", self.ctl_ok("ls").stdout)

        # another client, without the lease
        r = self.ctl("tune", "attic:1", "DVBT", "474M", "--bandwidth", "8M")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertTrue(
            r.stderr.startswith("tunerctl: attic: lease_conflict: "),
            r.stderr)
        r = self.ctl("lease", "attic:1", "--holder", "other")
        self.assertEqual(r.returncode, 4, r.stderr)
        # the same tuner number on the other box is not leased
        self.ctl_ok("tune", "cellar:1", "DVBT", "474M", "--bandwidth", "8M")

        self.ctl_ok("tune", "attic:1", "DVBT", "474M", "--bandwidth", "8M",
                    "--lease", lease)
        r = self.ctl_ok("--json", "lease", "attic:1", "--renew", lease,
                        "--ttl", "30")
        self.assertEqual(json.loads(r.stdout)["lease_id"], lease)

        r = self.ctl("release", "attic:1", "0" * 32)
        self.assertEqual(r.returncode, 4, r.stderr)
        self.ctl_ok("release", "attic:1", lease)
        r = self.ctl("release", "attic:1", lease)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.ctl_ok("tune", "attic:1", "DVBT", "474M", "--bandwidth", "8M")

    def test_json_lease_answer(self):
        r = self.ctl_ok("--json", "lease", "cellar:2", "--holder", "x",
                        "--priority", "300", "--ttl", "5")
        answer = json.loads(r.stdout)
        self.assertRegex(answer["lease_id"], LEASE_ID)
        self.assertEqual(answer["priority"], 300)
        self.assertEqual(answer["holder"], "x")


class Failures(TwoBoxes):
    def test_unreachable_box_is_one_line_and_exit_3(self):
        dead = "dead=http://127.0.0.1:%d" % free_port()
        r = self.ctl("--box", "attic", "--box", dead, "--box", "cellar",
                     "ls")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertTrue(r.stderr.startswith("tunerctl: dead: "), r.stderr)
        boxes = [x.split()[0] for x in r.stdout.splitlines()[1:]]
        self.assertEqual(boxes, ["attic"] * 4 + ["cellar"] * 4, r.stdout)

        r = self.ctl("--json", "--box", dead, "--box", "cellar", "ls")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual({t["box"] for t in json.loads(r.stdout)},
                         {"cellar"})

    def test_silent_box_times_out_with_exit_3(self):
        # accepts connections, never answers
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(4)
        try:
            url = "http://127.0.0.1:%d" % s.getsockname()[1]
            # the box never answers: only --timeout ends the request (and
            # ctl()'s subprocess timeout fails a tunerctl that hangs)
            r = self.ctl("--timeout", "0.5", "--box", url, "--box", "attic",
                         "ls")
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn("attic", r.stdout)
        finally:
            s.close()

    def test_usage_errors_are_exit_2(self):
        cases = [
            (),
            ("frobnicate",),
            ("--bogus", "ls"),
            ("status",),
            ("status", "1"),  # two boxes: which one?
            ("status", "garage:1"),
            ("status", "attic:x"),
            ("tune", "attic:1", "DVBT"),
            ("tune", "attic:1", "DVBT", "474Q"),
            ("tune", "attic:1", "DVBT", "474M", "--bandwidth", "wide"),
            ("ls", "--bandwidth", "8M"),
            ("watch", "--count", "0"),
            ("watch", "--tuner", "one"),
            ("--timeout", "-1", "ls"),
            ("lease", "attic:1", "--renew", "ab", "--holder", "x"),
            ("--box", "nowhere", "ls"),
            ("--config", os.path.join(self.root, "missing.json"), "ls"),
        ]
        for args in cases:
            with self.subTest(args=args):
                r = self.ctl(*args)
                self.assertEqual(r.returncode, 2, (r.stdout, r.stderr))
                self.assertTrue(r.stderr.startswith("tunerctl: "), r.stderr)
                self.assertEqual(r.stdout, "")

    def test_help_lists_the_exit_codes(self):
        r = self.ctl_ok("--help")
        for code in range(6):
            self.assertRegex(r.stdout, r"\n  %d  " % code)


class WatchEvents(TwoBoxes):
    def tune_both(self, i):
        """Tune attic and cellar, alternately over REST and kernel-side."""
        freq = (474000000, 490000000)[i % 2]
        for n, name in enumerate(NAMES):
            site = self.sites[name]
            if (i + n) % 2:
                self.assertTrue(site.box.tune(site.client_of(1), "DVBT",
                                              freq, 8000000)["ok"])
            else:
                self.ctl_ok("tune", name + ":1", "DVBT", str(freq),
                            "--bandwidth", "8M")

    def test_watch_count_merges_both_boxes(self):
        w = Watch(self, "--json", "watch", "--types", "tuner.tune",
                  "--count", "6")
        for i in range(100):
            if w.proc.poll() is not None:
                break
            self.tune_both(i)
            w.wait_output(0.2)
        self.assertEqual(w.finish(), 0, w.stderr)
        events = w.events()
        self.assertEqual(len(events), 6, events)
        self.assertEqual({e["box"] for e in events}, set(NAMES))
        self.assertEqual({e["type"] for e in events}, {"tuner.tune"})
        self.assertEqual({e["origin"] for e in events}, {"api", "kernel"})
        for name in NAMES:
            seqs = [e["seq"] for e in events if e["box"] == name]
            self.assertEqual(seqs, sorted(set(seqs)), events)

    def test_watch_text_lines_are_labelled_by_box(self):
        w = Watch(self, "watch", "--types", "tuner.tune,tuner.lock",
                  "--tuner", "1")
        try:
            for i in range(100):
                with w.cond:
                    seen = {x.split()[0] for x in w.lines}
                if seen >= set(NAMES):
                    break
                self.tune_both(i)
                w.wait_output(0.2)
        finally:
            self.assertEqual(w.stop(), 0, w.stderr)
        line = re.compile(r"^(attic|cellar) +(\d+)  (tuner\.tune|tuner\.lock)"
                          r"  tuner=1( \w+=\S+)+$")
        for x in w.lines:
            self.assertRegex(x, line)
        self.assertEqual({x.split()[0] for x in w.lines}, set(NAMES))
        self.assertTrue(any(re.search(r"tuner\.lock .*locked=(true|false)",
                                      x) for x in w.lines), w.lines)

    def wait_for_event(self, w, pred, act, what, pace=0.0, tries=150):
        """Act until w shows an event pred accepts: again after each line
        that came without it, or after 0.2 s of nothing, but not more
        often than every pace s (an event that comes from a periodic
        read, not from the act itself, needs the read's time)."""
        last = None
        for i in range(tries):
            if any(pred(e) for e in w.events()):
                return
            if last is None or time.monotonic() - last >= pace:
                act(i)
                last = time.monotonic()
            w.wait_output(0.2)
        self.fail("watch never showed " + what)

    def test_watch_hides_status_unless_asked(self):
        """tuner.status (published after each tune, when the next read
        sees the new channel) shows with --status only: once the plain
        watch shows a tune numbered after a status event the other watch
        showed, that status event went past it unshown."""
        plain = Watch(self, "--json", "watch", "--box", "attic")
        status = Watch(self, "--json", "watch", "--box", "attic", "--status")
        site = self.sites["attic"]

        def tune(i):
            self.assertTrue(site.box.tune(site.client_of(1), "DVBT",
                                          (474000000, 490000000)[i % 2],
                                          8000000)["ok"])

        def status_seen():
            return [e for e in status.events() if e["type"] == "tuner.status"]

        # tuner.status comes from the sampler's reads (every second)
        self.wait_for_event(status, lambda e: e["type"] == "tuner.status",
                            tune, "a tuner.status with --status", pace=1.5,
                            tries=300)
        after = max(e["seq"] for e in status_seen())
        self.wait_for_event(
            plain, lambda e: e["type"] == "tuner.tune" and e["seq"] > after,
            tune, "a tune after that status event")
        self.assertEqual(plain.stop(), 0, plain.stderr)
        self.assertEqual(status.stop(), 0, status.stderr)
        types = {e["type"] for e in plain.events()}
        self.assertNotIn("tuner.status", types)
        self.assertIn("tuner.tune", types)

    def test_watch_resumes_after_a_daemon_restart(self):
        w = Watch(self, "--json", "watch")
        try:
            self.wait_for_event(
                w, lambda e: e["box"] == "attic" and e["type"] == "tuner.tune",
                self.tune_both, "a tune before the restart")
            attic = self.sites["attic"]
            attic.stop_daemon()
            # The outage this test is about, not a wait for anything: an
            # outage longer than a second is how watch tells a restart
            # from the new daemon's uptime when the new daemon's event
            # numbers have already passed the last one seen.
            time.sleep(1.5)
            attic.start_daemon()

            def after_restart(e):
                return (e["box"] == "attic" and e["type"] == "tuner.tune" and
                        tuned_to(e) == 506000000)
            self.wait_for_event(
                w, after_restart,
                lambda i: self.ctl_ok("tune", "attic:2", "DVBT", "506M",
                                      "--bandwidth", "8M"),
                "a tune after the restart")
            cellar = self.sites["cellar"]
            self.assertTrue(cellar.box.tune(cellar.client_of(2), "DVBT",
                                            506000000, 8000000)["ok"])
            self.wait_for_event(
                w, lambda e: (e["box"] == "cellar" and
                              e["type"] == "tuner.tune" and
                              tuned_to(e) == 506000000),
                lambda i: None, "cellar's tune after the restart")
        finally:
            rc = w.stop()
        self.assertEqual(rc, 0, w.stderr)
        self.assertIn("attic: events: connection lost", w.stderr)
        self.assertIn("attic: events: reconnected", w.stderr)
        self.assertNotIn("cellar: events:", w.stderr)

        events = w.events()
        attic = [e for e in events if e["box"] == "attic"]
        marks = [i for i, e in enumerate(attic) if e["type"] == "restarted"]
        self.assertEqual(len(marks), 1, attic)
        before, after = attic[:marks[0]], attic[marks[0] + 1:]
        for part in (before, after):
            seqs = [e["seq"] for e in part if "seq" in e]
            self.assertEqual(seqs, sorted(set(seqs)), part)
        # the new daemon's events from its first on, none lost in between
        self.assertEqual(after[0]["seq"], 1, after[:3])
        self.assertIn("stub.connected", [e["type"] for e in after], after)
        cellar = [e["seq"] for e in events if e["box"] == "cellar"]
        self.assertEqual(cellar, sorted(set(cellar)))


class Tokens(TwoBoxes):
    """One box, attic, that requires tokens."""

    names = ("attic",)
    tokens = {"ops": "op-secret-4f1c9a", "view": "view-secret-77ab0e"}

    def setUp(self):
        self.root_cfg = tempfile.mkdtemp(prefix="tunerd-ctl-cfg-")
        self.addCleanup(shutil.rmtree, self.root_cfg, True)
        cfg = os.path.join(self.root_cfg, "attic.json")
        with open(cfg, "w") as f:
            json.dump({"name": "attic", "tokens": [
                {"name": "ops", "token": self.tokens["ops"],
                 "role": "operator"},
                {"name": "view", "token": self.tokens["view"],
                 "role": "viewer"}]}, f)
        self.daemon_extra = ("--config", cfg)
        super().setUp()

        self.addCleanup(shutil.rmtree, self.root_cfg, True)

    def assertNoSecret(self, r):
        for t in self.tokens.values():
            self.assertNotIn(t, r.stdout + r.stderr)

    def test_token_from_config_flag_or_environment(self):
        r = self.ctl("--box", "attic", "ls")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertTrue(r.stderr.startswith("tunerctl: attic: unauthorized"),
                        r.stderr)
        r = self.ctl("--box", "attic", "--token", "wrong", "ls")
        self.assertEqual(r.returncode, 1, r.stderr)

        self.write_config({"attic": self.tokens["ops"]})
        r = self.ctl_ok("--box", "attic", "tune", "attic:1", "DVBT", "474M",
                        "--bandwidth", "8M")
        self.assertNoSecret(r)

        env = dict(self.env, TUNERD_TOKEN=self.tokens["view"],
                   TUNERD_BOX=self.sites["attic"].url)
        env.pop("XDG_CONFIG_HOME")
        env["HOME"] = self.root  # no config file there
        r = self.ctl("status", "1", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.ctl("tune", "1", "DVBT", "474M", "--bandwidth", "8M",
                     env=env)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("forbidden", r.stderr)
        self.assertNoSecret(r)
        # --token wins over the environment
        r = self.ctl("--token", self.tokens["ops"], "sleep", "1", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNoSecret(r)

    def test_watch_sends_the_token(self):
        self.write_config({"attic": self.tokens["view"]})
        w = Watch(self, "--json", "watch", "--box", "attic", "--count", "1",
                  "--types", "tuner.tune")
        site = self.sites["attic"]
        for _ in range(100):
            if w.proc.poll() is not None:
                break
            site.box.tune(site.client_of(1), "DVBT", 474000000, 8000000)
            w.wait_output(0.2)
        self.assertEqual(w.finish(), 0, w.stderr)
        self.assertEqual(w.events()[0]["box"], "attic")

    def test_watch_gives_up_on_a_refused_token(self):
        w = Watch(self, "--token", "wrong", "--box", "attic", "watch")
        self.assertEqual(w.finish(), 1, w.stderr)
        self.assertIn("tunerctl: attic: unauthorized", w.stderr)


with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "..", "kmod", "sim", "env",
                       "uk-crystal-palace.env")) as _f:
    CRYSTAL_PALACE = _f.read()
PACKET = 188
RATE_LINE = re.compile(r"^attic:1 +\d+\.\d\d Mbit/s +\d+\.\d\d MB +\d+:\d\d"
                       r"( \(average\))?$", re.M)


def pids_of(data):
    return {((data[i + 1] & 0x1f) << 8) | data[i + 2]
            for i in range(0, len(data) - PACKET + 1, PACKET)}


class Streams(TwoBoxes):
    """One box on the Crystal Palace spectrum (empty PES: no test cards)."""

    names = ("attic",)
    env_text = CRYSTAL_PALACE
    box_extra = ("--no-card",)

    def setUp(self):
        super().setUp()
        self.ctl_ok("tune", "attic:1", "DVBT", "490M", "--bandwidth", "8M",
                    "--wait-lock", "5000")

    def start(self, *args):
        p = subprocess.Popen([TUNERCTL, "stream", "attic:1"] + list(args),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=self.env)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        return p

    @staticmethod
    def read(p, nbytes):
        data = b""
        while len(data) < nbytes:
            chunk = p.stdout.read(nbytes - len(data))
            if not chunk:
                break
            data += chunk
        return data

    def assertPackets(self, data, nbytes):
        self.assertEqual(len(data), nbytes)
        self.assertEqual([i for i in range(0, len(data), PACKET)
                          if data[i] != 0x47][:3], [])

    def test_stream_to_stdout_until_sigint_with_a_rate_line(self):
        p = self.start("--progress")
        data = self.read(p, PACKET * 20000)
        self.assertPackets(data, PACKET * 20000)
        # the multiplex: PAT, SDT, NIT and every PMT of PSB1
        self.assertTrue({0, 16, 17, 256, 266} <= pids_of(data))
        p.send_signal(signal.SIGINT)
        rc = p.wait(15)
        err = p.stderr.read().decode()
        p.stdout.close()
        p.stderr.close()
        self.assertEqual(rc, 0, err)
        self.assertRegex(err, RATE_LINE)
        self.assertIn("(average)", err)

    def test_service_and_a_reader_that_closes_the_pipe(self):
        p = self.start("--service", "4164")
        data = self.read(p, PACKET * 300)
        self.assertPackets(data, PACKET * 300)
        self.assertEqual(pids_of(data), {0, 256, 1024, 1025})
        p.stdout.close()  # as `| head -c` would
        rc = p.wait(15)
        err = p.stderr.read().decode()
        p.stderr.close()
        self.assertEqual(rc, 0, err)
        # stderr is not a terminal and no --progress: no rate line
        self.assertEqual(err, "")

    def test_pids_and_duration(self):
        r = subprocess.run([TUNERCTL, "stream", "attic:1", "--pids",
                            "0,0x11", "--duration", "1.5"],
                           capture_output=True, timeout=30, env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(len(r.stdout), 0)
        self.assertEqual(len(r.stdout) % PACKET, 0)
        self.assertEqual(pids_of(r.stdout), {0, 17})

    def test_errors(self):
        def run(*args):
            return subprocess.run([TUNERCTL, "stream"] + list(args),
                                  stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True,
                                  timeout=30, env=self.env)
        r = run("attic:9")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertTrue(r.stderr.startswith("tunerctl: attic: not_found: "),
                        r.stderr)
        r = run("attic:1", "--pids", "9999")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertTrue(
            r.stderr.startswith("tunerctl: attic: bad_request: "), r.stderr)
        for args in (("attic:1", "--pids", "0", "--service", "1"),
                     ("attic:1", "--service", "0"),
                     ("attic:1", "--duration", "x"),
                     ("attic:1", "--bandwidth", "8M")):
            r = run(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))

        lease = self.ctl_ok("lease", "attic:1", "--holder", "rec").stdout
        lease = lease.strip()
        r = run("attic:1")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertTrue(
            r.stderr.startswith("tunerctl: attic: lease_conflict: "),
            r.stderr)
        p = self.start("--lease", lease)
        self.assertPackets(self.read(p, PACKET * 100), PACKET * 100)


PSB1_NAMES = ("BBC ONE Lon", "BBC TWO", "BBC Radio 4")
PSB2_NAMES = ("ITV1", "Channel 4")


class Channels(TwoBoxes):
    """scan, channels and tune --channel/--lcn.  They need the daemon's
    channels API (/api/v1/channels, .../scan): against a daemon without it
    they are skipped, which CI=true counts as a failure."""

    names = ("attic",)
    env_text = CRYSTAL_PALACE
    box_extra = ("--no-card",)

    def setUp(self):
        super().setUp()
        st, body = rest(self.sites["attic"].url + "/api/v1/channels")
        if st == 404:
            self.skipTest("the daemon has no channels API yet: "
                          "GET /api/v1/channels is 404")
        self.assertEqual(st, 200, body)

    def scan(self, *extra):
        return self.ctl_ok("scan", "attic:1", "--freq", "490M,514M",
                           "--system", "dvbt", "--bandwidth", "8M",
                           *extra, timeout=180)

    def test_scan_prints_the_channels_found(self):
        r = self.scan()
        for name in PSB1_NAMES + PSB2_NAMES:
            self.assertIn(name, r.stdout)
        self.assertRegex(r.stdout, r"(?m)^\s+1  BBC ONE Lon\s+4164  tv\s+"
                         r"DVBT 490\.000 MHz$")
        # a line per frequency, the last one 2/2
        self.assertRegex(r.stderr, r"attic:1: scan-\S+ +2/2 +514\.000 MHz"
                         r" +lock")
        listed = self.ctl_ok("channels").stdout
        self.assertEqual(listed, r.stdout)
        st, body = rest(self.sites["attic"].url + "/api/v1/channels")
        self.assertEqual(json.loads(self.ctl_ok("--json", "channels",
                                                "attic").stdout), body)
        self.assertEqual({c["name"] for c in body["channels"]} &
                         set(PSB1_NAMES + PSB2_NAMES),
                         set(PSB1_NAMES + PSB2_NAMES))

        dvbv5 = self.ctl_ok("channels", "--dvbv5").stdout
        with urllib.request.urlopen(self.sites["attic"].url +
                                    "/api/v1/channels?format=dvbv5",
                                    timeout=15) as f:
            self.assertEqual(dvbv5, f.read().decode())
        self.assertIn("[BBC ONE Lon]", dvbv5)

    def test_scan_json_is_the_finished_scan(self):
        scan = json.loads(self.ctl_ok("--json", "scan", "attic:1", "--freq",
                                      "490M", "--system", "DVBT",
                                      "--bandwidth", "8M",
                                      timeout=180).stdout)
        self.assertEqual(scan["state"], "done", scan)
        self.assertEqual(scan["tuner"], 1)
        self.assertEqual(scan["total"], 1)
        self.assertEqual({c["service_id"] for c in scan["channels"]},
                         {4164, 4287, 4544, 4352, 4671, 4736, 4415, 4608,
                          6720, 6784, 6848})

    def test_tune_by_channel_and_lcn(self):
        self.scan()
        r = self.ctl_ok("tune", "attic:2", "--channel", "bbc one lon",
                        "--wait-lock", "5000")
        self.assertIn("attic:2  channel BBC ONE Lon  lcn 1  service 4164",
                      r.stdout)
        self.assertIn("attic:2  DVBT 490.000 MHz", r.stdout)
        self.assertRegex(r.stdout, r"lock\s+yes")
        r = self.ctl_ok("--json", "tune", "attic:2", "--lcn", "3")
        answer = json.loads(r.stdout)
        self.assertEqual(answer["channel"]["name"], "ITV1")
        self.assertEqual(answer["params"]["frequency"], 514000000)

        r = self.ctl("tune", "attic:2", "--channel", "No Such TV")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertTrue(r.stderr.startswith("tunerctl: attic: not_found: "),
                        r.stderr)
        r = self.ctl("tune", "attic:2", "--lcn", "3", "DVBT", "474M")
        self.assertEqual(r.returncode, 2, r.stderr)

    def test_scan_errors(self):
        for args in (("scan", "attic:1"),
                     ("scan", "attic:1", "--band", "uhf", "--freq", "490M"),
                     ("scan", "attic:1", "--freq", "490Q"),
                     ("scan", "attic:1", "--region", "eu", "--freq", "1M")):
            r = self.ctl(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
        r = self.ctl("scan", "attic:9", "--freq", "490M")
        self.assertEqual(r.returncode, 5, r.stderr)


if __name__ == "__main__":
    unittest.main()

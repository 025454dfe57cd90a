# SPDX-License-Identifier: MIT
"""What survives a daemon restart: leases (SIGKILL during churn), params
(a whole box restart), and how a damaged or unusable state directory is
handled."""
import glob
import json
import os
import random
import signal
import threading
import time
import unittest

from harness import ApiBoxTest, Box, http_request, start_refused, wait_for

DVBT_474 = {"delivery_system": "DVBT", "frequency": 474000000,
            "bandwidth": 8000000}
TUNERS = (1, 2, 3, 4)


class Churn:
    """One client per tuner taking, renewing and releasing leases in a
    loop until the daemon dies.  What each tuner's lease is after the
    last acknowledged operation is the model; the one operation that may
    have been cut by the kill is kept apart (its outcome is unknown)."""

    def __init__(self, port, seed):
        self.port = port
        self.rng = random.Random(seed)
        self.lock = threading.Condition()
        self.acked = 0
        self.model = {t: None for t in TUNERS}   # tuner -> lease answer
        self.cut = {t: None for t in TUNERS}     # tuner -> (op, holder)
        self.ops = []
        self.threads = [threading.Thread(target=self.run, args=(t,),
                                         daemon=True) for t in TUNERS]

    def start(self):
        for th in self.threads:
            th.start()

    def _request(self, tuner, method, body=None, headers=None):
        return http_request(self.port, method,
                            "/api/v1/tuners/%d/lease" % tuner, body=body,
                            headers=headers, timeout=10)

    def _step(self, tuner, n):
        """One operation; returns False once the daemon is gone."""
        held = self.model[tuner]
        if held is None:
            op, holder = "take", "c%d-%d" % (tuner, n)
            args = ("POST", {"holder": holder, "ttl_s": 600,
                             "priority": 10 + n % 50})
        elif self.rng.random() < 0.5:
            op, holder = "renew", held["holder"]
            args = ("POST", {"lease_id": held["lease_id"],
                             "ttl_s": 300 + n % 300})
        else:
            op, holder = "release", held["holder"]
            args = ("DELETE", None, {"X-Tunerd-Lease": held["lease_id"]})
        self.cut[tuner] = (op, holder)
        try:
            r = self._request(tuner, *args)
        except OSError:
            return False  # cut by the kill: self.cut says what it was
        expected = {"take": 201, "renew": 200, "release": 204}[op]
        if r.status != expected:
            raise AssertionError("%s on tuner %d: %r" % (op, tuner, r))
        with self.lock:
            self.model[tuner] = None if op == "release" else r.json
            self.cut[tuner] = None
            self.acked += 1
            self.ops.append(op)
            self.lock.notify_all()
        return True

    def run(self, tuner):
        n = 0
        while self._step(tuner, n):
            n += 1

    def wait_acked(self, count, timeout=60):
        with self.lock:
            if not self.lock.wait_for(lambda: self.acked >= count,
                                      timeout=timeout):
                raise AssertionError("only %d operations acknowledged"
                                     % self.acked)

    def join(self):
        for th in self.threads:
            th.join(30)
            if th.is_alive():
                raise AssertionError("a churn client never ended")


class ContendedTakes:
    """Several clients per tuner taking it at once, each take with a
    priority above every earlier one (a counter per tuner), so each take
    that is not refused pre-empts the holder.  The daemon saves the takes
    of many clients in one write; after a kill the lease on each tuner
    must be the acknowledged take with the highest priority, or one with
    a higher priority still whose answer the kill cut."""

    CLIENTS = 3

    def __init__(self, port):
        self.port = port
        self.lock = threading.Condition()
        self.acked = 0
        self.next_prio = {t: 0 for t in TUNERS}
        self.best = {t: None for t in TUNERS}   # highest acknowledged take
        self.cut = {t: [] for t in TUNERS}      # takes sent, not answered
        self.threads = [threading.Thread(target=self.run, args=(t, c),
                                         daemon=True)
                        for t in TUNERS for c in range(self.CLIENTS)]

    def start(self):
        for th in self.threads:
            th.start()

    def _take(self, tuner, client):
        with self.lock:
            prio = self.next_prio[tuner]
            if prio > 1000:
                return False
            self.next_prio[tuner] += 1
            holder = "t%d-c%d-p%d" % (tuner, client, prio)
            self.cut[tuner].append((prio, holder))
        try:
            r = http_request(self.port, "POST",
                             "/api/v1/tuners/%d/lease" % tuner,
                             body={"holder": holder, "ttl_s": 600,
                                   "priority": prio}, timeout=10)
        except OSError:
            return False  # cut by the kill: left in self.cut
        if r.status not in (201, 409):
            raise AssertionError("take on tuner %d: %r" % (tuner, r))
        with self.lock:
            self.cut[tuner].remove((prio, holder))
            self.acked += 1
            if r.status == 201 and (self.best[tuner] is None or
                                    prio > self.best[tuner]["priority"]):
                self.best[tuner] = r.json
            self.lock.notify_all()
        return True

    def run(self, tuner, client):
        while self._take(tuner, client):
            pass

    def wait_acked(self, count, timeout=60):
        with self.lock:
            if not self.lock.wait_for(lambda: self.acked >= count,
                                      timeout=timeout):
                raise AssertionError("only %d takes answered" % self.acked)

    def join(self):
        for th in self.threads:
            th.join(30)
            if th.is_alive():
                raise AssertionError("a contending client never ended")


class LeasesAcrossRestarts(ApiBoxTest):
    def state(self, name):
        return os.path.join(self.dir, "state", name)

    def lease_of(self, tuner):
        r = self.api("GET", "/api/v1/tuners/%d" % tuner)
        self.assertEqual(r.status, 200, r)
        return r.json["lease"]

    def check_kept(self, tuner, acked, cut):
        """The lease after the restart is the acknowledged one, or what
        the operation cut by the kill would have made of it."""
        now = self.lease_of(tuner)
        if cut is None:
            if acked is None:
                self.assertIsNone(now, (tuner, "released, yet back"))
                return None
            self.assertIsNotNone(now, (tuner, "acknowledged, yet gone"))
            self.assertEqual(now["holder"], acked["holder"])
            self.assertEqual(now["priority"], acked["priority"])
            self.assertEqual(now["expires"], acked["expires"])
            return acked
        op, holder = cut
        if now is None:
            self.assertIn(op, ("release",) if acked else ("take",),
                          (tuner, cut, acked))
            return None
        self.assertEqual(now["holder"], holder, (tuner, cut))
        if acked is not None and now["expires"] == acked["expires"]:
            return acked
        self.assertIn(op, ("take", "renew"), (tuner, cut, acked, now))
        # a renew cut by the kill may have been saved: same id, later
        return acked if op == "renew" else None

    def test_sigkill_during_lease_churn(self):
        churn = Churn(self.port, seed=9)
        churn.start()
        churn.wait_acked(300)
        self.daemon.kill(signal.SIGKILL)
        churn.join()
        self.assertGreater(churn.ops.count("release"), 0)
        self.assertGreater(churn.ops.count("renew"), 0)

        self.start_daemon()
        log = self.daemons[-1].logtext()
        self.assertIn("lease(s) kept from the last run", log)
        held = len([t for t in TUNERS if self.lease_of(t)])
        for tuner in TUNERS:
            with self.subTest(tuner=tuner):
                acked = self.check_kept(tuner, churn.model[tuner],
                                        churn.cut[tuner])
                if acked is None:
                    continue
                # the holder still renews, tunes and releases with its id
                lid = acked["lease_id"]
                r = self.api("POST", "/api/v1/tuners/%d/lease" % tuner,
                             {"lease_id": lid, "ttl_s": 60})
                self.assertEqual(r.status, 200, r)
                self.assertEqual(r.json["lease_id"], lid)
                self.assertError(self.api("POST", "/api/v1/tuners/%d/tune"
                                          % tuner, DVBT_474),
                                 409, "lease_conflict")
                r = self.api("POST", "/api/v1/tuners/%d/tune" % tuner,
                             dict(DVBT_474, lease_id=lid))
                self.assertEqual(r.status, 200, r)
        self.assertTrue(os.path.exists(self.state("leases.json")))
        with open(self.state("leases.json")) as f:
            self.assertEqual(len(json.load(f)["leases"]), held)

    def test_sigkill_during_contended_takes(self):
        churn = ContendedTakes(self.port)
        churn.start()
        churn.wait_acked(400)
        self.daemon.kill(signal.SIGKILL)
        churn.join()
        self.start_daemon()
        for tuner in TUNERS:
            with self.subTest(tuner=tuner):
                best, cut = churn.best[tuner], churn.cut[tuner]
                now = self.lease_of(tuner)
                self.assertIsNotNone(best, "no take was acknowledged")
                self.assertIsNotNone(now, (tuner, best, "acknowledged, "
                                           "yet gone"))
                if now["priority"] == best["priority"]:
                    self.assertEqual(now["holder"], best["holder"])
                    self.assertEqual(now["expires"], best["expires"])
                    continue
                # only a take cut by the kill may have replaced it
                self.assertGreater(now["priority"], best["priority"],
                                   (tuner, now, best))
                self.assertIn((now["priority"], now["holder"]), cut,
                              (tuner, now, best))

    def test_release_after_restart_and_gone_after_it(self):
        lease = self.api("POST", "/api/v1/tuners/2/lease",
                         {"holder": "keeper", "ttl_s": 120}).json
        self.daemon.kill(signal.SIGKILL)
        self.start_daemon()
        self.assertEqual(self.lease_of(2)["holder"], "keeper")
        r = self.api("DELETE", "/api/v1/tuners/2/lease",
                     headers={"X-Tunerd-Lease": lease["lease_id"]})
        self.assertEqual(r.status, 204, r)
        self.daemons[-1].kill(signal.SIGKILL)
        self.start_daemon()
        self.assertIsNone(self.lease_of(2))
        self.assertError(self.api("POST", "/api/v1/tuners/2/lease",
                                  {"lease_id": lease["lease_id"]}),
                         404, "not_found")

    def test_expired_and_absent_tuners_at_start(self):
        """A lease whose expiry passed while the daemon was down is
        dropped; one of a tuner that is not attached is kept until its
        own expiry and may be renewed by its holder."""
        self.daemon.kill(signal.SIGKILL)
        now_ms = int(time.time() * 1000)
        leases = [
            {"tuner": 1, "id": "a" * 32, "holder": "late", "priority": 5,
             "ttl_s": 60, "expires_ms": now_ms - 1000},
            {"tuner": 2, "id": "b" * 32, "holder": "alive", "priority": 7,
             "ttl_s": 600, "expires_ms": now_ms + 500000},
            {"tuner": 9, "id": "c" * 32, "holder": "absent", "priority": 1,
             "ttl_s": 600, "expires_ms": now_ms + 500000},
        ]
        with open(self.state("leases.json"), "w") as f:
            json.dump({"version": 1, "leases": leases}, f)
        self.start_daemon()
        self.assertIn("2 lease(s) kept from the last run, 1 expired",
                      self.daemons[-1].logtext())
        self.assertIsNone(self.lease_of(1))
        alive = self.lease_of(2)
        self.assertEqual((alive["holder"], alive["priority"]), ("alive", 7))
        self.assertEqual(self.api("GET", "/api/v1/tuners/9").status, 404)
        r = self.api("POST", "/api/v1/tuners/9/lease",
                     {"lease_id": "c" * 32})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.json["holder"], "absent")
        self.assertError(self.api("POST", "/api/v1/tuners/9/lease",
                                  {"holder": "new"}), 404, "not_found")

    def test_corrupt_files_are_set_aside(self):
        self.daemon.kill(signal.SIGKILL)
        with open(self.state("leases.json"), "w") as f:
            f.write('{"version":1,"leases":[{"tuner":1,')
        with open(self.state("tuners.json"), "w") as f:
            f.write('[1,2')
        self.start_daemon()
        log = self.daemons[-1].logtext()
        self.assertIn("moved aside", log)
        self.assertEqual(len(glob.glob(self.state("leases.json.corrupt-*"))),
                         1)
        self.assertEqual(len(glob.glob(self.state("tuners.json.corrupt-*"))),
                         1)
        # the daemon runs and keeps new state in a file of its own
        r = self.api("POST", "/api/v1/tuners/1/lease", {"holder": "fresh"})
        self.assertEqual(r.status, 201, r)
        with open(self.state("leases.json")) as f:
            self.assertEqual(json.load(f)["leases"][0]["holder"], "fresh")

    def test_a_valid_json_that_is_no_lease_list_is_set_aside(self):
        self.daemon.kill(signal.SIGKILL)
        with open(self.state("leases.json"), "w") as f:
            json.dump({"version": 1, "leases": [{"tuner": 1, "id": "x",
                                                 "holder": "h",
                                                 "priority": 1, "ttl_s": 5,
                                                 "expires_ms": 1}]}, f)
        self.start_daemon()
        self.assertIn("not a valid list of leases",
                      self.daemons[-1].logtext())
        self.assertEqual(len(glob.glob(self.state("leases.json.corrupt-*"))),
                         1)


class ParamsAcrossBoxRestarts(ApiBoxTest):
    def test_box_restart_gets_its_params_back(self):
        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)
        with open(os.path.join(self.dir, "state", "tuners.json")) as f:
            saved = json.load(f)["tuners"]
        self.assertEqual([(t["id"], t["params"]["frequency"]) for t in saved],
                         [(1, 474000000)])
        # a local tune was answered before the daemon heard of it: it is
        # written soon after, not before
        self.assertOk(self.box.tune(3, "DVBT", 490000000, 8000000))

        def saved_ids():
            with open(os.path.join(self.dir, "state", "tuners.json")) as f:
                return [t["id"] for t in json.load(f)["tuners"]] == [1, 3]
        wait_for(saved_ids, what="the local tune saved")
        # the whole box goes: the stub forgets its params too
        self.daemon.kill(signal.SIGKILL)
        self.box.stop()
        self.box = Box(self.dir, tuners=self.tuners,
                       deadline_ms=self.deadline_ms, extra=self.box_extra)
        self.start_daemon()

        def restored():
            t = self.api("GET", "/api/v1/tuners/1").json
            return t if t.get("params") else None
        t = wait_for(restored, what="tuner 1 restored")
        self.assertEqual(t["params"]["frequency"], 474000000)
        self.assertEqual(t["last_change"]["origin"], "restore")
        self.assertEqual(self.box.status(1)["status"]["frequency"],
                         474000000)
        t3 = wait_for(lambda: self.api("GET", "/api/v1/tuners/3").json.get(
            "params"), what="tuner 3 restored")
        self.assertEqual(t3["frequency"], 490000000)
        # tuners that had no params stay untouched
        self.assertIsNone(self.api("GET", "/api/v1/tuners/2").json["params"])


    def saved_params(self):
        with open(os.path.join(self.dir, "state", "tuners.json")) as f:
            return {t["id"]: t["params"]["frequency"]
                    for t in json.load(f)["tuners"]}

    def test_a_failed_tune_leaves_the_params_before_it(self):
        # An API tune's params are written while the chip tunes, before
        # its answer: when the tune fails, they go back to the last good
        # ones.
        r = self.api("POST", "/api/v1/tuners/1/tune", DVBT_474)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.saved_params(), {1: 474000000})
        self.assertOk(self.box.call({"op": "fault", "client": 1,
                                     "nak_rate": 1.0}))
        r = self.api("POST", "/api/v1/tuners/1/tune",
                     dict(DVBT_474, frequency=490000000))
        self.assertGreaterEqual(r.status, 500, r)
        wait_for(lambda: self.saved_params() == {1: 474000000},
                 what="the params before the failed tune saved")
        self.assertOk(self.box.call({"op": "fault", "client": 1,
                                     "nak_rate": 0.0}))
        # a tune that never had a good one before it keeps nothing
        self.assertOk(self.box.call({"op": "fault", "client": 2,
                                     "nak_rate": 1.0}))
        r = self.api("POST", "/api/v1/tuners/2/tune", DVBT_474)
        self.assertGreaterEqual(r.status, 500, r)
        wait_for(lambda: self.saved_params() == {1: 474000000},
                 what="no params saved for tuner 2")
        self.assertEqual(self.api("GET", "/api/v1/tuners/1").json["params"]
                         ["frequency"], 474000000)


class StateDirRefused(ApiBoxTest):
    def refused(self, *args, **kw):
        code, out = start_refused(self.box, *args, **kw)
        self.assertNotEqual(code, 0, out)
        for mark in self.SANITIZER_MARKS:
            self.assertNotIn(mark, out)  # a refused start frees all too
        return code, out

    def test_unusable_explicit_dir_stops_the_start(self):
        not_dir = os.path.join(self.dir, "plain-file")
        with open(not_dir, "w") as f:
            f.write("x")
        for path in (not_dir, os.path.join(not_dir, "sub")):
            with self.subTest(path=path):
                code, out = self.refused(extra=("--state-dir", path))
                self.assertIn("cannot use --state-dir %s: Not a directory"
                              % path, out)
        if os.geteuid() != 0:  # root writes through a mode of 0500
            ro = os.path.join(self.dir, "read-only")
            os.mkdir(ro, 0o500)
            code, out = self.refused(extra=("--state-dir", ro))
            self.assertIn("Permission denied", out)
        # the config file's, then $STATE_DIRECTORY's, without --state-dir
        cfg = os.path.join(self.dir, "cfg.json")
        with open(cfg, "w") as f:
            json.dump({"state_dir": not_dir}, f)
        code, out = self.refused(cfg, state=False)
        self.assertIn("cannot use the config file's state_dir %s" % not_dir,
                      out)
        code, out = self.refused(state=False,
                                 env={"STATE_DIRECTORY": not_dir + ":/x"})
        self.assertIn("cannot use $STATE_DIRECTORY %s: Not a directory"
                      % not_dir, out)


if __name__ == "__main__":
    unittest.main()

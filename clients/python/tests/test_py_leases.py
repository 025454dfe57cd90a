# SPDX-License-Identifier: MIT
"""Leases renew in the background, report pre-emption, release on exit;
a killed worker is an error the client sees, then recovers from."""
import os
import signal
import threading

import pytest

from tunerd import errors

DVBT_474 = dict(delivery_system="DVBT", frequency=474000000,
                bandwidth=8000000)


def test_renewal_outlives_the_ttl(live):
    box = live.client()
    t = box.tuner(1)
    with box.events(types=["lease.renewed"], tuners=[1]) as ev, \
            t.lease("recorder-1", ttl=1, priority=200) as lease:
        # three renewals: past three ttls the lease is still ours
        for _ in range(3):
            assert ev.next(10).type == "lease.renewed"
        assert not lease.lost
        lease.check()
        t.tune(lease=lease, **DVBT_474)
        assert t.info()["lease"]["holder"] == "recorder-1"
    assert t.info()["lease"] is None


def test_preemption_is_reported(live):
    box = live.client()
    t = box.tuner(1)
    called = threading.Event()
    low = t.lease("recorder-low", ttl=3, priority=100,
                  on_lost=lambda lease: called.set())
    with low:
        with t.lease("live-tv", ttl=30, priority=500) as high:
            assert low.wait_lost(10)
            assert called.wait(1)
            assert low.lost and "live-tv" in low.lost_reason
            with pytest.raises(errors.LeaseLost):
                low.check()
            with pytest.raises(errors.LeaseConflict):
                t.tune(lease=low, **DVBT_474)
            t.tune(lease=high, **DVBT_474)
        # the lost lease's exit does not release the other's (gone too)
    assert t.info()["lease"] is None


def worker_pid(box, tuner):
    with box.events(types=["tuner.ready"], tuners=[tuner], since=0) as ev:
        return ev.next(10)["pid"]


def test_killed_worker_is_an_error_then_recovers(live):
    box = live.client()
    t = box.tuner(2)
    t.tune(**DVBT_474)
    pid = worker_pid(box, 2)
    with box.events(tuners=[2]) as ev:
        # a tune that is running in the worker when it dies
        assert live.sim.call({"op": "fault", "client": 2,
                              "hang": True}).get("ok")
        outcome = {}

        def tune():
            try:
                outcome["answer"] = t.tune(**DVBT_474)
            except errors.TunerdError as e:
                outcome["error"] = e
        th = threading.Thread(target=tune)
        th.start()
        while ev.next(10).type != "tuner.tune_started":
            pass
        os.kill(pid, signal.SIGKILL)
        th.join(20)
        assert isinstance(outcome.get("error"), errors.Unavailable), outcome
        assert outcome["error"].status == 503
        crash = ev.next(10)
        while crash.type != "worker.crash":
            crash = ev.next(10)
        assert crash["pid"] == pid and crash["signal"] == signal.SIGKILL
        assert live.sim.call({"op": "fault", "client": 2,
                              "hang": False}).get("ok")
        ready = ev.next(20)
        while ready.type != "tuner.ready":
            ready = ev.next(20)
        assert ready["pid"] != pid
    ans = t.tune(wait_lock=2.0, **DVBT_474)
    assert ans["locked"] is True


def test_deadline_and_busy(make_box):
    live = make_box(daemon_extra=("--deadline-ms", "1000"))
    box = live.client()
    t = box.tuner(2)
    assert live.sim.call({"op": "fault", "client": 2, "hang": True})["ok"]
    with pytest.raises(errors.Deadline) as e:
        t.tune(**DVBT_474)
    assert e.value.status == 504
    assert live.sim.call({"op": "fault", "client": 2, "hang": False})["ok"]
    # a scan running on tuner 1: a second one is Busy, naming it
    steps = box.scan(tuner=1, band="uhf", region="eu")
    with pytest.raises(errors.Busy) as e:
        next(box.scan(tuner=1, band="uhf", region="eu"))
    assert e.value.status == 409 and e.value.scan.startswith("scan-")
    assert box.tuner(1).cancel_scan()["state"] == "cancelled"
    assert list(steps)[-1]["state"] == "cancelled"

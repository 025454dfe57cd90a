# SPDX-License-Identifier: MIT
"""The tuner pool: every tuner of the configured boxes that can receive
a channel, and the one lease this recorder holds.

A tune runs in its own thread so that TuneChannel is answered at once
(`InProgress`) and the backend polls TuneStatus? while the box tunes and
waits for lock.  Free tuners are tried first; a leased one only when its
holder's priority is lower than ours (the box then pre-empts it), the
lowest first, so a recording takes a live TV viewer's tuner only when
nothing else is left.
"""
import logging
import threading

from tunerd import errors

log = logging.getLogger("tunerd-mythtv")


class TuneError(Exception):
    """A tune that cannot be done, with a reason for the backend."""


def channum(channel):
    """MythTV's channel number of an API channel: its LCN, else its name
    (the backend takes it as an opaque string)."""
    lcn = channel.get("lcn")
    return str(lcn) if lcn is not None else channel["name"]


def find_channel(channels, wanted):
    """The channel whose number or (any case) name is wanted, or None."""
    wanted = wanted.strip()
    for ch in channels:
        if channum(ch) == wanted:
            return ch
    folded = wanted.casefold()
    for ch in channels:
        if ch["name"].casefold() == folded:
            return ch
    return None


def can_receive(info, params):
    """Whether a tuner (its API object) can tune params now."""
    if info.get("state") != "ready":
        return False
    if params.get("delivery_system") not in info.get("delivery_systems", []):
        return False
    rng = info.get("frequency") or {}
    freq = params.get("frequency", 0)
    if not rng.get("min", 0) <= freq <= rng.get("max", freq):
        return False
    bandwidths = info.get("bandwidths") or []
    bw = params.get("bandwidth")
    return not (bw and bandwidths and bw not in bandwidths)


class Tuning:
    """The recorder's tuner: state "idle", "tuning", "tuned", "failed"
    (reason says why) or "lost" (the lease was taken away).  boxes:
    [(name, tunerd.Box)]; a tuner is called NAME:ID in messages."""

    def __init__(self, cfg, boxes, holder, on_lost):
        self.cfg, self.boxes, self.holder = cfg, boxes, holder
        self.on_lost = on_lost
        self.state, self.reason = "idle", None
        self.box = self.tuner = self.lease = self.channel = None
        self.priority = None
        self._lock = threading.Lock()
        self._thread = None

    def label(self, box=None, tuner=None):
        box, tuner = box or self.box, tuner or self.tuner
        return "%s:%d" % (box[0], tuner.id)

    def describe(self):
        if self.tuner is None:
            return "tunerd (%d boxes)" % len(self.boxes)
        return "tunerd %s %s" % (self.label(), self.channel["name"])

    def start(self, wanted, recording):
        """Begins a tune to channel wanted in the background; False when
        a tune is already under way."""
        with self._lock:
            if self.state == "tuning":
                return False
            self.state, self.reason = "tuning", None
        priority = (self.cfg.priority_recording if recording
                    else self.cfg.priority_livetv)
        self._thread = threading.Thread(target=self._run,
                                        args=(wanted, priority), daemon=True)
        self._thread.start()
        return True

    def _run(self, wanted, priority):
        try:
            self._tune(wanted, priority)
            state, reason = "tuned", None
        except TuneError as e:
            state, reason = "failed", str(e)
        except errors.TunerdError as e:
            state, reason = "failed", "%s: %s" % (e.code, e.message)
        except Exception as e:  # a bug must not leave the backend polling
            log.exception("tune to %s", wanted)
            state, reason = "failed", "internal error: %s" % e
        with self._lock:
            self.state, self.reason = state, reason
        log.info("tune to %s: %s %s", wanted, state, reason or "")

    def _tune(self, wanted, priority):
        candidates = []
        for box in self.boxes:
            try:
                ch = find_channel(box[1].channels(), wanted)
            except errors.TunerdError as e:
                log.warning("%s: channel list: %s", box[0], e)
                continue
            if ch:
                candidates.append((box, ch))
        if not candidates:
            raise TuneError("channel %s is in no box's channel list" % wanted)
        if self.lease and not self.lease.lost and self.priority == priority:
            for box, ch in candidates:
                if box is self.box and \
                        can_receive(self.tuner.info(), ch["params"]):
                    return self._tune_on(self.tuner, self.lease, ch)
        self.release()
        box, tuner, lease, ch = self._lease_from_pool(candidates, priority)
        try:
            self._tune_on(tuner, lease, ch)
        except BaseException:
            lease.release()
            raise
        self.box, self.tuner, self.lease = box, tuner, lease
        self.priority = priority
        if lease.lost:  # taken away before we held it
            raise TuneError("lease on %s lost while tuning: %s" %
                            (self.label(), lease.lost_reason))

    def _pool(self, candidates, priority):
        """(box, tuner, channel, lease priority or -1) of every tuner that
        can receive the channel and that we may lease, free ones first."""
        pool = []
        for box, ch in candidates:
            for tuner in box[1].tuners():
                info = tuner.info()
                if not can_receive(info, ch["params"]):
                    continue
                held = info.get("lease")
                if held and held.get("priority", 0) >= priority:
                    continue
                pool.append((box, tuner, ch,
                             held["priority"] if held else -1))
        pool.sort(key=lambda entry: entry[3])
        return pool

    def _lease_from_pool(self, candidates, priority):
        pool = self._pool(candidates, priority)
        if not pool:
            raise TuneError("no tuner that can receive %s is free or held "
                            "at a priority under %d" %
                            (candidates[0][1]["name"], priority))
        refused = []
        for box, tuner, ch, _ in pool:
            lease = tuner.lease(self.holder, ttl=self.cfg.lease_ttl_s,
                                priority=priority, on_lost=self._lost)
            try:
                lease.acquire()
            except errors.LeaseConflict as e:
                refused.append("%s by %s" % (self.label(box, tuner),
                                             e.holder))
                continue
            log.info("leased %s at priority %d", self.label(box, tuner),
                     priority)
            return box, tuner, lease, ch
        raise TuneError("every tuner that can receive %s is leased (%s)" %
                        (pool[0][2]["name"], ", ".join(refused)))

    def _tune_on(self, tuner, lease, ch):
        answer = tuner.tune(channel=ch["name"],
                            wait_lock=self.cfg.tune_wait_ms / 1000.0,
                            lease=lease)
        self.channel = ch
        log.info("tuned tuner %d to %s (lock %s)", tuner.id, ch["name"],
                 answer.get("locked"))

    def _lost(self, *args):
        """The lease's callback (from its renewal thread)."""
        lease, box, tuner = self.lease, self.box, self.tuner
        if lease is None or tuner is None or not lease.lost:
            return  # a tune under way reports it itself
        with self._lock:
            self.state = "lost"
            self.reason = "lease on %s lost: %s" % (
                self.label(box, tuner), lease.lost_reason)
        self.on_lost(self.reason)

    def status(self):
        """The tuner's live Status object, or None without a tuner."""
        if self.tuner is None or self.state != "tuned":
            return None
        return self.tuner.status()

    def wait(self, timeout):
        """Until a tune under way has ended (its lease is then ours to
        release)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def release(self):
        if self.lease is not None:
            lease, self.lease = self.lease, None
            lease.release()
        self.box = self.tuner = self.channel = self.priority = None
        with self._lock:
            if self.state != "tuning":
                self.state = "idle"

# SPDX-License-Identifier: MIT
"""A tuner lease that renews itself.

``POST .../lease`` takes it (201), the same POST with the lease id renews
it, ``DELETE`` releases it (protocol/API.md).  A background thread renews
at a third of the ttl, so two renewals may fail (a daemon restarting,
which keeps leases on disk) before it runs out.  The lease is *lost* when
a renewal is refused (409: pre-empted by a higher priority, or expired and
taken by someone else; 404: expired) or when its expiry passed without a
successful renewal.  Then ``lost`` turns True, ``on_lost(lease)`` is
called from the renew thread, and ``check()`` raises
:class:`errors.LeaseLost` in whichever thread calls it.
"""
from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional

from . import errors

if TYPE_CHECKING:
    from .box import Tuner


class Lease:
    """A lease on one tuner; a context manager (takes on enter unless
    taken already, releases on exit)."""

    def __init__(self, tuner: "Tuner", holder: str, ttl: float = 30,
                 priority: int = 100,
                 on_lost: Optional[Callable[["Lease"], None]] = None
                 ) -> None:
        self.tuner = tuner
        self.holder = holder
        self.ttl = ttl
        self.priority = priority
        self.on_lost = on_lost
        self.id: Optional[str] = None
        self.expires: Optional[str] = None
        self.lost = False
        self.lost_reason: Optional[str] = None
        self._lost_event = threading.Event()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._deadline = 0.0

    # -- the API -----------------------------------------------------------

    def _post(self, body: Dict[str, Any]) -> Dict[str, Any]:
        return self.tuner.box.api.request(
            "POST", "/api/v1/tuners/%d/lease" % self.tuner.id, json=body)

    def acquire(self) -> "Lease":
        """Take the lease (pre-empting a lower priority holder) and start
        renewing.  Raises LeaseConflict when someone holds it with the
        same or a higher priority."""
        ans = self._post({"holder": self.holder, "ttl_s": _ttl_s(self.ttl),
                          "priority": self.priority})
        self.id = ans["lease_id"]
        self.expires = ans.get("expires")
        self._deadline = time.monotonic() + self.ttl
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._renew_loop, daemon=True,
            name="tunerd-lease-%s-%d" % (self.holder, self.tuner.id))
        self._thread.start()
        return self

    def renew(self) -> None:
        """Renew now (the thread does this by itself)."""
        if self.id is None:
            raise errors.LeaseLost(message="the lease was never taken")
        ans = self._post({"lease_id": self.id, "ttl_s": _ttl_s(self.ttl)})
        self.expires = ans.get("expires")
        self._deadline = time.monotonic() + self.ttl

    def release(self) -> None:
        """Stop renewing and give the tuner back (a lost lease is only
        stopped)."""
        self._stop.set()
        if self._thread is not None and \
                self._thread is not threading.current_thread():
            self._thread.join()
        self._thread = None
        if self.id is not None and not self.lost:
            try:
                self.tuner.box.api.request(
                    "DELETE", "/api/v1/tuners/%d/lease" % self.tuner.id,
                    lease_id=self.id)
            except (errors.NotFound, errors.LeaseConflict):
                pass  # gone already: expired or taken meanwhile
        self.id = None if not self.lost else self.id

    # -- state ---------------------------------------------------------------

    def check(self) -> None:
        """Raise :class:`errors.LeaseLost` if the lease was lost."""
        if self.lost:
            raise errors.LeaseLost(message="lease of %s on tuner %d lost: %s"
                                   % (self.holder, self.tuner.id,
                                      self.lost_reason))

    def wait_lost(self, timeout: Optional[float] = None) -> bool:
        """Block until the lease is lost (True) or timeout passed."""
        return self._lost_event.wait(timeout)

    def _lose(self, reason: str) -> None:
        self.lost = True
        self.lost_reason = reason
        self._lost_event.set()
        if self.on_lost is not None:
            self.on_lost(self)

    def _renew_loop(self) -> None:
        period = max(self.ttl / 3.0, 0.1)
        while not self._stop.wait(period):
            try:
                self.renew()
            except errors.LeaseConflict as e:
                self._lose("preempted by %s (priority %s)"
                           % (e.holder, e.priority) if e.holder
                           else "conflict: " + e.message)
                return
            except errors.NotFound:
                self._lose("expired")
                return
            except errors.TunerdError:
                # The box restarting or unreachable: the lease is on its
                # disk, try again until it would have run out.
                if time.monotonic() >= self._deadline:
                    self._lose("expired: not renewed in time")
                    return
                period = max(min(period, self._deadline -
                                 time.monotonic()) / 2, 0.1)
                continue
            period = max(self.ttl / 3.0, 0.1)

    # -- context manager ----------------------------------------------------

    def __enter__(self) -> "Lease":
        if self.id is None:
            self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __str__(self) -> str:
        return self.id or ""

    def __repr__(self) -> str:
        return "Lease(%s on %s:%d%s)" % (self.holder, self.tuner.box,
                                         self.tuner.id,
                                         " lost" if self.lost else "")


def _ttl_s(ttl: float) -> int:
    """The API takes whole seconds, 1..3600."""
    return max(1, min(3600, int(round(ttl))))

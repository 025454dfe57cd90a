# SPDX-License-Identifier: MIT
"""A tunerd box and its tuners over the REST API (protocol/API.md)."""
from __future__ import annotations

import urllib.parse
from typing import (Any, Callable, Dict, Iterable, Iterator, List,
                    Optional, Union)

from . import errors
from .events import EventStream
from .http_api import HttpApi
from .lease import Lease
from .tsstream import TsStream

LeaseArg = Union[Lease, str, None]


def _lease_id(lease: LeaseArg) -> Optional[str]:
    if isinstance(lease, Lease):
        if lease.id is None:
            raise errors.LeaseLost(message="the lease is not held")
        return lease.id
    return lease


class Box:
    """One tunerd daemon: ``Box("http://attic:8080", token="...")``.

    timeout: seconds for each REST request (a tune waiting for lock gets
    its wait on top)."""

    def __init__(self, url: str, token: Optional[str] = None,
                 timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.api = HttpApi(self.url, token, timeout)
        self._name: Optional[str] = None

    @property
    def name(self) -> str:
        """The daemon's name (``GET /api/v1/box``; asked once)."""
        if self._name is None:
            self._name = str(self.info()["name"])
        return self._name

    def info(self) -> Dict[str, Any]:
        """``GET /api/v1/box``: name, version, uptime_s, stub, tuners,
        events (oldest_seq, next_seq)."""
        return self.api.request("GET", "/api/v1/box")

    def tuners(self) -> List["Tuner"]:
        """Every tuner of the box."""
        ans = self.api.request("GET", "/api/v1/tuners")
        return [Tuner(self, int(t["id"]), t) for t in ans["tuners"]]

    def tuner(self, id: int) -> "Tuner":
        """Tuner id (not asked for until used)."""
        return Tuner(self, int(id))

    # -- channels -----------------------------------------------------------

    def channels(self) -> List[Dict[str, Any]]:
        """The channel list: Channel objects (name, lcn, service_id,
        transport_stream_id, network_id, type, params)."""
        return self.api.request("GET", "/api/v1/channels")["channels"]

    def channel(self, name_or_number: Union[str, int]) -> Dict[str, Any]:
        """The channel of this name (any case) or logical channel number;
        :class:`errors.NotFound` if there is none."""
        key = str(name_or_number).strip()
        chans = self.channels()
        for c in chans:
            if c["name"].lower() == key.lower():
                return c
        if key.isdigit():
            for c in chans:
                if c.get("lcn") == int(key):
                    return c
        raise errors.NotFound(message="no channel %r on %s" % (key, self),
                              details={"channel": key})

    def channels_dvbv5(self) -> str:
        """The channel list as a dvbv5 channel file (dvbv5-zap -c)."""
        return self.api.request("GET", "/api/v1/channels",
                                params={"format": "dvbv5"}, raw=True)

    def scan(self, tuner: int = 1, *, lease: LeaseArg = None,
             timeout: float = 600.0, **params: Any
             ) -> Iterator[Dict[str, Any]]:
        """Scan on a tuner: ``frequencies=[...]`` (with delivery_system,
        bandwidth) or ``band="uhf", region="eu"``.  Yields each
        ``scan.progress`` event's fields as it comes, then the final Scan
        object (state, found, multiplexes, channels)."""
        return self.tuner(tuner).scan(lease=lease, timeout=timeout, **params)

    # -- events -------------------------------------------------------------

    def events(self, types: Optional[Iterable[str]] = None,
               tuners: Optional[Iterable[int]] = None,
               since: Optional[int] = None, sse: bool = False
               ) -> EventStream:
        """The event stream from now (or after seq ``since``): Event and
        Gap objects; reconnects and resumes by itself.  sse=True uses
        Server-Sent Events instead of WebSocket."""
        return EventStream(self, types=types, tuners=tuners, since=since,
                           sse=sse)

    def close(self) -> None:
        self.api.close()

    def __str__(self) -> str:
        """The box's name; host:port while it cannot be asked."""
        try:
            return self.name
        except errors.TunerdError:
            return urllib.parse.urlsplit(self.url).netloc

    def __repr__(self) -> str:
        return "Box(%r)" % self.url


class Tuner:
    """Tuner ``id`` of ``box``.  ``data``: the Tuner object it was listed
    with (may be stale; ``info()`` asks again)."""

    def __init__(self, box: Box, id: int,
                 data: Optional[Dict[str, Any]] = None) -> None:
        self.box = box
        self.id = id
        self.data = data

    def _path(self, what: str = "") -> str:
        return "/api/v1/tuners/%d%s" % (self.id, what)

    def info(self) -> Dict[str, Any]:
        """The Tuner object: state, chip, delivery_systems, frequency
        range, params, status, lease, last_change, stream."""
        self.data = self.box.api.request("GET", self._path())
        return self.data

    def status(self) -> Dict[str, Any]:
        """A fresh Status read from the chip."""
        return self.box.api.request("GET", self._path("/status"))

    def tune(self, delivery_system: Optional[str] = None,
             frequency: Optional[int] = None, *,
             channel: Optional[str] = None,
             wait_lock: Optional[float] = None, lease: LeaseArg = None,
             **params: Any) -> Dict[str, Any]:
        """Tune by params (``tune("DVBT", 490_000_000, bandwidth=8_000_000)``)
        or by channel name (``channel="BBC ONE Lon"``; ``lcn=1`` by
        number).  wait_lock: seconds to wait for lock (0..10).  Answers
        the tune answer (params, status, locked, elapsed_ms; channel)."""
        body: Dict[str, Any] = {}
        if channel is not None:
            body["channel"] = channel
        if delivery_system is not None:
            body["delivery_system"] = delivery_system
        if frequency is not None:
            body["frequency"] = int(frequency)
        body.update(params)
        if wait_lock is not None:
            body["wait_lock_ms"] = int(wait_lock * 1000)
        timeout = self.box.timeout + (wait_lock or 0)
        return self.box.api.request("POST", self._path("/tune"), json=body,
                                    lease_id=_lease_id(lease),
                                    timeout=timeout)

    def sleep(self, lease: LeaseArg = None) -> Dict[str, Any]:
        """Put the chip to sleep."""
        return self.box.api.request("POST", self._path("/sleep"), json={},
                                    lease_id=_lease_id(lease))

    def init(self, lease: LeaseArg = None) -> Dict[str, Any]:
        """Wake the chip (power-up init)."""
        return self.box.api.request("POST", self._path("/init"), json={},
                                    lease_id=_lease_id(lease))

    def history(self, **query: Any) -> Dict[str, Any]:
        """``GET /api/v1/tuners/{id}/history`` with these query parameters
        (a box without the endpoint answers :class:`errors.NotFound`)."""
        return self.box.api.request("GET", self._path("/history"),
                                    params=query or None)

    def lease(self, holder: str, ttl: float = 30, priority: int = 100,
              on_lost: Optional[Callable[[Lease], None]] = None) -> Lease:
        """A lease to take (``with tuner.lease("rec-1") as lease:`` or
        ``lease.acquire()``); it renews itself until released."""
        return Lease(self, holder, ttl=ttl, priority=priority,
                     on_lost=on_lost)

    def stream(self, pids: Optional[Iterable[int]] = None,
               service: Optional[int] = None, lease: LeaseArg = None,
               timeout: Optional[float] = None) -> TsStream:
        """The tuner's transport stream (or some PIDs, or one service)."""
        lease_id = _lease_id(lease)
        url = "%s%s?%s" % (self.box.url, self._path("/stream"),
                           TsStream.query(pids, service))
        return TsStream(url.rstrip("?"), self.box.api.headers(lease_id),
                        timeout or self.box.timeout)

    def scan(self, *, lease: LeaseArg = None, timeout: float = 600.0,
             **params: Any) -> Iterator[Dict[str, Any]]:
        """See :meth:`Box.scan`."""
        events = self.box.events(types=["scan.progress", "scan.done"],
                                 tuners=[self.id])
        try:
            # Subscribed first (events() starts at the box's current
            # seq), so no progress of this scan can be missed.
            job = self.box.api.request("POST", self._path("/scan"),
                                       json=params,
                                       lease_id=_lease_id(lease))["scan"]
        except BaseException:
            events.close()
            raise
        return self._follow_scan(events, job["id"], timeout)

    def _follow_scan(self, events: EventStream, scan_id: str,
                     timeout: float) -> Iterator[Dict[str, Any]]:
        with events:
            while True:
                ev = events.next(timeout)
                if ev is None:
                    raise errors.Deadline(
                        message="no scan progress within %.0f s" % timeout)
                if getattr(ev, "restarted", False) or \
                        getattr(ev, "type", "") == "gap":
                    break  # the box restarted or we lost events: ask it
                if ev.get("scan") != scan_id:  # type: ignore[union-attr]
                    continue
                if ev.type == "scan.done":  # type: ignore[union-attr]
                    break
                yield dict(ev.data)  # type: ignore[union-attr]
        yield self.box.api.request("GET", self._path("/scan"))["scan"]

    def cancel_scan(self, lease: LeaseArg = None) -> Dict[str, Any]:
        """Cancel the running scan; the cancelled Scan."""
        return self.box.api.request("DELETE", self._path("/scan"),
                                    lease_id=_lease_id(lease))["scan"]

    def __repr__(self) -> str:
        return "Tuner(%s:%d)" % (self.box, self.id)

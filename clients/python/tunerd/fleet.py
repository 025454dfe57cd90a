# SPDX-License-Identifier: MIT
"""Many boxes as one pool of tuners."""
from __future__ import annotations

import queue
import threading
from typing import Any, Iterable, Iterator, List, Optional, Tuple, Union

from . import errors
from .box import Box, Tuner
from .events import Event, EventStream, Gap
from .lease import Lease


class Fleet:
    """``Fleet([Box(...), Box(...)])``: the tuners of every box, their
    events merged, and a lease on any tuner that can take some params."""

    def __init__(self, boxes: Iterable[Box]) -> None:
        self.boxes: List[Box] = list(boxes)

    def tuners(self) -> List[Tuner]:
        """Every tuner of every box, box by box."""
        out: List[Tuner] = []
        for box in self.boxes:
            out.extend(box.tuners())
        return out

    def events(self, types: Optional[Iterable[str]] = None,
               tuners: Optional[Iterable[int]] = None,
               since: Optional[int] = None, sse: bool = False
               ) -> "FleetEvents":
        """Every box's events as they come (each Event's ``box`` says
        whose); each box resumes by itself.  since applies to every
        box."""
        return FleetEvents([b.events(types, tuners, since, sse)
                            for b in self.boxes])

    def lease_any(self, holder: str, delivery_system: str, frequency: int,
                  ttl: float = 30, priority: int = 100,
                  on_lost: Any = None) -> Tuple[Tuner, Lease]:
        """Lease a ready tuner that can receive delivery_system at
        frequency: a free one first, else one whose holder has a lower
        priority (pre-empted).  The lease is taken and renewing; release
        it (or use it as a context manager).  Raises
        :class:`errors.NoFreeTuner` when none could be taken."""
        free, taken = [], []
        for t in self.tuners():
            d = t.data or {}
            rng = d.get("frequency") or {}
            if d.get("state") != "ready" or \
                    delivery_system not in d.get("delivery_systems", ()) or \
                    not rng.get("min", 0) <= frequency <= rng.get("max", 0):
                continue
            held = d.get("lease")
            if held is None:
                free.append(t)
            elif held.get("priority", 0) < priority:
                taken.append((held.get("priority", 0), t))
        candidates = free + [t for _, t in sorted(taken, key=lambda x: x[0])]
        for t in candidates:
            lease = t.lease(holder, ttl=ttl, priority=priority,
                            on_lost=on_lost)
            try:
                return t, lease.acquire()
            except (errors.LeaseConflict, errors.NotFound,
                    errors.Unavailable, errors.ConnectionFailed):
                continue  # taken meanwhile, or its box is away: next one
        raise errors.NoFreeTuner(
            message="no tuner for %s at %d Hz could be leased by %s "
            "(priority %d)" % (delivery_system, frequency, holder, priority))


class FleetEvents:
    """Merged iterator of the boxes' EventStreams: one reader thread per
    box feeds a queue.  ``next(timeout)`` as EventStream's."""

    def __init__(self, streams: List[EventStream]) -> None:
        self.streams = streams
        self._queue: "queue.Queue[Union[Event, Gap, BaseException]]" = \
            queue.Queue(maxsize=1024)
        self._closed = threading.Event()
        self._threads = [threading.Thread(target=self._pump, args=(s,),
                                          daemon=True) for s in streams]
        for th in self._threads:
            th.start()

    def _pump(self, stream: EventStream) -> None:
        try:
            while not self._closed.is_set():
                item = stream.next(timeout=0.5)
                if item is not None:
                    self._queue.put(item)
        except BaseException as e:  # noqa: BLE001 - handed to the reader
            self._queue.put(e)

    def next(self, timeout: Optional[float] = None
             ) -> Optional[Union[Event, Gap]]:
        """The next event or gap of any box; None when timeout passed."""
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if isinstance(item, BaseException):
            raise item
        return item

    def __iter__(self) -> Iterator[Union[Event, Gap]]:
        return self

    def __next__(self) -> Union[Event, Gap]:
        if self._closed.is_set():
            raise StopIteration
        item = self.next()
        assert item is not None
        return item

    def close(self) -> None:
        self._closed.set()
        for th in self._threads:
            th.join(timeout=5)
        for s in self.streams:
            s.close()

    def __enter__(self) -> "FleetEvents":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

# SPDX-License-Identifier: MIT
"""The event stream of a box (protocol/events.md) as an iterator that
survives disconnections.

Resume: after a close, a failed connection or a ``closed`` message the
stream connects again with ``since=<last seq seen>``, so nothing the box
still keeps is lost.  What it no longer keeps comes as a :class:`Gap`,
never silently skipped:
- the box's own gap message (the ring moved on);
- a restarted daemon (sequence numbers start at 1 again): a ``Gap`` with
  ``restarted=True`` and ``to_seq=None`` (what the old daemon published
  after the last event seen is unknown), then everything the new daemon
  kept, from seq 1.  A restart is seen in ``GET /api/v1/box`` (fewer
  events than the last seq seen, or a later start), or because the
  reconnect asks for the last event seen once more (``since=seq-1``):
  another event at that seq (other time or type) is another run.
"""
from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from typing import (TYPE_CHECKING, Any, Dict, Iterable, Iterator, List,
                    Optional, Tuple, Union)

import websocket

from . import errors

if TYPE_CHECKING:
    from .box import Box

RECONNECT_MIN_S = 0.05
RECONNECT_MAX_S = 2.0
# uptime_s has a resolution of a second: a start time that moved by more
# than this is another daemon.
RESTART_SLACK_S = 2.5


class Event:
    """One event: seq, type, tuner (None for box events), time (RFC 3339
    text), data (the whole JSON object), box (the :class:`Box` it came
    from; ``box_name`` is the name the daemon put in it)."""

    __slots__ = ("seq", "type", "tuner", "time", "data", "box")

    def __init__(self, data: Dict[str, Any], box: "Box") -> None:
        self.data = data
        self.seq: int = data.get("seq", 0)
        self.type: str = data.get("type", "")
        self.tuner: Optional[int] = data.get("tuner")
        self.time: Optional[str] = data.get("time")
        self.box = box

    @property
    def box_name(self) -> Optional[str]:
        return self.data.get("box")

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def __repr__(self) -> str:
        return "Event(%s #%d %s tuner=%s)" % (self.box_name, self.seq,
                                              self.type, self.tuner)


class Gap:
    """Events from_seq..to_seq were lost for this client.  restarted: the
    daemon restarted (to_seq None: how many the old one published after
    the last event seen is unknown; the new one's follow from seq 1)."""

    __slots__ = ("from_seq", "to_seq", "message", "box", "restarted")
    type = "gap"

    def __init__(self, from_seq: int, to_seq: Optional[int], message: str,
                 box: "Box", restarted: bool = False) -> None:
        self.from_seq = from_seq
        self.to_seq = to_seq
        self.message = message
        self.box = box
        self.restarted = restarted

    def __repr__(self) -> str:
        return "Gap(%s %s..%s%s)" % (self.box, self.from_seq, self.to_seq,
                                     " restarted" if self.restarted else "")


class _Closed(Exception):
    """The connection ended (either side, or a closed message)."""


class _NoWebSocket(Exception):
    """The upgrade was refused by something that is not the box."""


class _WsTransport:
    def __init__(self, url: str, token: Optional[str],
                 timeout: float) -> None:
        header = ["Authorization: Bearer " + token] if token else []
        ws_url = "ws" + url[len("http"):]
        try:
            self.ws = websocket.create_connection(
                ws_url, header=header, subprotocols=["tunerd.v1"],
                timeout=timeout)
        except websocket.WebSocketBadStatusException as e:
            body = getattr(e, "resp_body", None)  # websocket-client >= 1.4
            err = _refusal(e.status_code, body, e.resp_headers)
            if body is None or err.message.endswith(
                    "without an error object"):
                # Not known to be the box's answer (a proxy that does not
                # upgrade, or a websocket-client that keeps no body): SSE
                # gets the box's own answer, a typed error if it refuses.
                raise _NoWebSocket(str(e))
            raise err

    def next(self, timeout: Optional[float]) -> Optional[Dict[str, Any]]:
        """The next message, or None when timeout passed without one."""
        self.ws.settimeout(timeout)
        try:
            text = self.ws.recv()
        except websocket.WebSocketTimeoutException:
            return None
        except (websocket.WebSocketException, OSError) as e:
            raise _Closed(str(e))
        if not text:
            raise _Closed("closed by the box")
        return json.loads(text)

    def close(self) -> None:
        self.ws.close()


class _SseTransport:
    def __init__(self, url: str, token: Optional[str],
                 timeout: float) -> None:
        parts = urllib.parse.urlsplit(url)
        cls = (http.client.HTTPSConnection if parts.scheme == "https"
               else http.client.HTTPConnection)
        self.conn = cls(parts.netloc, timeout=timeout)
        headers = {"Accept": "text/event-stream"}
        if token:
            headers["Authorization"] = "Bearer " + token
        try:
            self.conn.request("GET", parts.path + "?" + parts.query,
                              headers=headers)
            # Kept before getresponse(), which lets go of the socket of
            # an answer that ends with its connection.
            self.sock = self.conn.sock
            self.resp = self.conn.getresponse()
        except OSError as e:
            self.conn.close()
            raise _Closed(str(e))
        if self.resp.status != 200:
            body = self.resp.read()
            self.conn.close()
            raise _refusal(self.resp.status, body, self.resp.headers)

    def next(self, timeout: Optional[float]) -> Optional[Dict[str, Any]]:
        self.sock.settimeout(timeout)
        data = None
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    raise _Closed("the stream ended")
                line = line.rstrip(b"\r\n")
                if not line:
                    if data is not None:
                        return json.loads(data)
                    continue
                if line.startswith(b"data:"):
                    data = line[5:].strip()
        except TimeoutError:
            # A partly read message is lost with its connection: resume.
            if data is not None:
                raise _Closed("timed out inside a message")
            return None
        except (OSError, http.client.HTTPException) as e:
            raise _Closed(str(e))

    def close(self) -> None:
        self.conn.close()


def _refusal(status: int, body: Any, headers: Any) -> errors.TunerdError:
    try:
        parsed = json.loads(body) if body else None
    except (ValueError, TypeError):
        parsed = None
    return errors.from_answer(status, parsed, headers or {})


def _csv(values: Optional[Iterable[Any]]) -> Optional[str]:
    if values is None:
        return None
    if isinstance(values, (str, int)):
        return str(values)
    return ",".join(str(v) for v in values)


class EventStream:
    """Iterator of :class:`Event` and :class:`Gap` for one box.

    Subscribes when made.  WebSocket unless sse; falls back to SSE when
    the upgrade is refused by something other than the box (a proxy: an
    answer without the API's error object).  Reconnects for ever
    (backoff up to 2 s) until :meth:`close`; an error the box answers
    the subscription with (401, 403, 400) is raised.  ``next(timeout)``
    returns None when nothing came in time."""

    def __init__(self, box: "Box", types: Optional[Iterable[str]] = None,
                 tuners: Optional[Iterable[int]] = None,
                 since: Optional[int] = None, sse: bool = False) -> None:
        self.box = box
        self.sse = sse
        self._filters: Dict[str, str] = {}
        if _csv(types):
            self._filters["types"] = _csv(types)  # type: ignore[assignment]
        if _csv(tuners):
            self._filters["tuner"] = _csv(tuners)  # type: ignore[assignment]
        self.last_seq: Optional[int] = since
        self._started: Optional[float] = None
        self._transport: Union[_WsTransport, _SseTransport, None] = None
        self._pending: List[Union[Event, Gap]] = []
        self._closed = False
        self.reconnects = 0
        self._last_key: Optional[Tuple[Any, Any]] = None
        self._verify: Optional[Tuple[int, Tuple[Any, Any]]] = None
        # Subscribe now: "from now" is when events() was called, and a
        # refused token is raised here.  A box that cannot be reached yet
        # is tried again by next().
        try:
            self._connect()
        except (_Closed, errors.ConnectionFailed, errors.Unavailable,
                websocket.WebSocketException, OSError):
            self._drop()

    # -- connection --------------------------------------------------------

    def _box_clock(self) -> Dict[str, Any]:
        info = self.box.info()
        info["_started"] = time.time() - float(info.get("uptime_s", 0))
        return info

    def _connect(self) -> None:
        info = self._box_clock()
        next_seq = int(info["events"]["next_seq"])
        self._verify = None
        if self.last_seq is None:
            # From now on: what happens after this call cannot be missed.
            self.last_seq = next_seq - 1
        elif self._restarted(info, next_seq):
            self._restart_gap()
        self._started = info["_started"]
        since = self.last_seq
        if self._last_key is not None and self.last_seq > 0:
            # Ask again for the last event seen: the same seq with the
            # same time and type proves it is the same daemon run.
            since = self.last_seq - 1
            self._verify = (self.last_seq, self._last_key)
        query = dict(self._filters, since=str(since))
        url = "%s/api/v1/events?%s" % (self.box.url,
                                       urllib.parse.urlencode(query,
                                                              safe=",*"))
        if not self.sse:
            try:
                self._transport = _WsTransport(url, self.box.token,
                                               self.box.timeout)
                return
            except _NoWebSocket:
                self.sse = True  # the fallback, for good on this stream
        self._transport = _SseTransport(url, self.box.token,
                                        self.box.timeout)

    def _restart_gap(self) -> None:
        self._pending.append(Gap(
            (self.last_seq or 0) + 1, None,
            "the daemon restarted: its events after the last one seen "
            "are unknown", self.box, restarted=True))
        self.last_seq = 0
        self._last_key = None

    def _restarted(self, info: Dict[str, Any], next_seq: int) -> bool:
        if self.last_seq is not None and next_seq - 1 < self.last_seq:
            return True
        return (self._started is not None and
                info["_started"] > self._started + RESTART_SLACK_S)

    def _check_resume(self, msg: Dict[str, Any]) -> Optional[bool]:
        """The first message after a reconnect that asked for the last
        event seen again: True to go on (the message is handled as
        usual), False to drop it, None when the daemon restarted."""
        seq, key = self._verify  # type: ignore[misc]
        self._verify = None
        if msg.get("type") == "gap":
            # The ring moved past the last event seen: only the part of
            # the gap after it is news.
            if int(msg["to"]) <= seq:
                return False
            msg["from"] = seq + 1
            return True
        if msg.get("seq") == seq and (msg.get("time"),
                                      msg.get("type")) == key:
            return False
        return None

    def _drop(self) -> None:
        if self._transport is not None:
            try:
                self._transport.close()
            except Exception:  # noqa: BLE001 - closing a broken socket
                pass
            self._transport = None

    # -- messages ----------------------------------------------------------

    def _take(self, msg: Dict[str, Any]) -> Optional[Union[Event, Gap]]:
        if self._verify is not None and "seq" in msg or \
                self._verify is not None and msg.get("type") == "gap":
            same = self._check_resume(msg)
            if same is None:
                # Another daemon run: read it from its first event.
                self._restart_gap()
                raise _Closed("the daemon restarted")
            if not same:
                return None
        kind = msg.get("type")
        if kind == "gap":
            self.last_seq = int(msg["to"])
            self._last_key = None
            return Gap(int(msg["from"]), int(msg["to"]),
                       str(msg.get("message", "")), self.box)
        if kind == "closed":
            raise _Closed("closed: %s" % msg.get("reason"))
        if kind == "reply" or "seq" not in msg:
            return None
        seq = int(msg["seq"])
        if self.last_seq is not None and seq <= self.last_seq:
            return None  # already delivered before a reconnect
        self.last_seq = seq
        self._last_key = (msg.get("time"), msg.get("type"))
        return Event(msg, self.box)

    def next(self, timeout: Optional[float] = None
             ) -> Optional[Union[Event, Gap]]:
        """The next event or gap; None if timeout (seconds) passed or
        the stream was closed."""
        end = None if timeout is None else time.monotonic() + timeout
        delay = RECONNECT_MIN_S
        while not self._closed:
            if self._pending:
                return self._pending.pop(0)
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                return None
            try:
                if self._transport is None:
                    self._connect()
                    delay = RECONNECT_MIN_S
                    continue
                msg = self._transport.next(left if left is not None
                                           else 30.0)
                item = self._take(msg) if msg is not None else None
            except (_Closed, errors.ConnectionFailed,
                    errors.Unavailable, websocket.WebSocketException,
                    OSError):
                self._drop()
                self.reconnects += 1
                if self._pending:
                    continue  # a restart: say so before waiting
                wait = delay if end is None else min(
                    delay, max(0.0, end - time.monotonic()))
                time.sleep(wait)  # backoff before connecting again
                delay = min(delay * 2, RECONNECT_MAX_S)
                continue
            if item is not None:
                return item
        return None

    def __iter__(self) -> Iterator[Union[Event, Gap]]:
        return self

    def __next__(self) -> Union[Event, Gap]:
        item = self.next()
        if item is None:  # closed
            raise StopIteration
        return item

    def close(self) -> None:
        self._closed = True
        self._drop()

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

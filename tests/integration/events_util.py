# SPDX-License-Identifier: MIT
"""Clients of the event stream (GET /api/v1/events) for the tests:
WebSocket through websocket-client (Debian: python3-websocket) and
Server-Sent Events over a raw http.client connection."""
import http.client
import json
import socket
import sys
import time

try:
    import websocket
except ImportError:
    # An interpreter outside Debian's (pyenv, venv) does not see the
    # packages apt installed.
    sys.path.append("/usr/lib/python3/dist-packages")
    import websocket

from harness import wait_for  # noqa: F401  (re-exported for the tests)

PATH = "/api/v1/events"


def ws_connect(port, query="", token=None, subprotocol_token=None,
               rcvbuf=None, timeout=10.0, subprotocols=("tunerd.v1",)):
    """Open a stream; token goes in Authorization, subprotocol_token as
    the "bearer.<token>" subprotocol.  Raises
    websocket.WebSocketBadStatusException when the upgrade is refused."""
    headers = []
    if token:
        headers.append("Authorization: Bearer " + token)
    protos = list(subprotocols)
    if subprotocol_token:
        protos.append("bearer." + subprotocol_token)
    sockopt = []
    if rcvbuf:
        sockopt.append((socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf))
    url = "ws://127.0.0.1:%d%s%s" % (port, PATH,
                                      "?" + query if query else "")
    return websocket.create_connection(
        url, header=headers, subprotocols=protos or None,
        sockopt=tuple(sockopt), timeout=timeout)


def ws_next(ws, pred=lambda m: True, timeout=10.0):
    """The next JSON message that pred accepts (others are skipped)."""
    end = time.monotonic() + timeout
    while True:
        left = end - time.monotonic()
        if left <= 0:
            raise AssertionError("no matching message within %.1f s"
                                 % timeout)
        ws.settimeout(left)
        msg = json.loads(ws.recv())
        if pred(msg):
            return msg


def ws_collect(ws, seconds):
    """Every JSON message that comes within seconds."""
    out = []
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return out
        ws.settimeout(left)
        try:
            out.append(json.loads(ws.recv()))
        except websocket.WebSocketTimeoutException:
            return out


def ws_drain_to_close(ws, timeout=30.0):
    """Read until the server closes: (text messages, close code)."""
    texts = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ws.settimeout(max(0.1, end - time.monotonic()))
        op, data = ws.recv_data(control_frame=True)
        if op == websocket.ABNF.OPCODE_TEXT:
            texts.append(data.decode())
        elif op == websocket.ABNF.OPCODE_CLOSE:
            code = int.from_bytes(data[:2], "big") if len(data) >= 2 \
                else None
            return texts, code
    raise AssertionError("the server did not close within %.1f s"
                         % timeout)


def ws_request(ws, req, timeout=15.0, seen=None):
    """Send a request; its reply.  The messages that came before it are
    appended to seen (a list) when given."""
    ws.send(json.dumps(req) if not isinstance(req, (str, bytes)) else req)
    rid = req.get("id") if isinstance(req, dict) else None

    def is_reply(m):
        if m.get("type") == "reply" and m.get("id") == rid:
            return True
        if seen is not None:
            seen.append(m)
        return False
    return ws_next(ws, is_reply, timeout)


class SseStream:
    """A Server-Sent Events stream read with http.client."""

    def __init__(self, port, query="", headers=None, timeout=10.0):
        self.conn = http.client.HTTPConnection("127.0.0.1", port,
                                               timeout=timeout)
        hdrs = {"Accept": "text/event-stream"}
        hdrs.update(headers or {})
        self.conn.request("GET", PATH + ("?" + query if query else ""),
                          headers=hdrs)
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.headers = {k.lower(): v for k, v in self.resp.getheaders()}
        self.comments = []

    def body_json(self):
        return json.loads(self.resp.read())

    def next(self, timeout=10.0):
        """The next message: {"id":..,"event":..,"data":(parsed JSON)}."""
        self.conn.sock.settimeout(timeout)
        msg = {}
        while True:
            line = self.resp.readline()
            if not line:
                raise EOFError("the stream ended")
            line = line.decode().rstrip("\n")
            if not line:
                if msg:
                    return msg
                continue
            if line.startswith(":"):
                self.comments.append(line)
                continue
            field, _, value = line.partition(": ")
            msg[field] = json.loads(value) if field == "data" else value

    def next_comment(self, timeout):
        """The next comment line (a heartbeat), skipping nothing else:
        an event meanwhile is an error."""
        self.conn.sock.settimeout(timeout)
        line = self.resp.readline().decode().rstrip("\n")
        if not line.startswith(":"):
            raise AssertionError("not a comment: %r" % line)
        return line

    def next_matching(self, pred, timeout=10.0):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError("no matching SSE message")
            m = self.next(left)
            if pred(m):
                return m

    def close(self):
        self.conn.close()


class EventsFromNow:
    """A WebSocket event stream that begins after the last event so far
    (since= the box's next_seq - 1).  What happens after the constructor
    returns cannot be missed, however late the subscription is live: the
    tests wait for these events instead of sleeping."""

    def __init__(self, test, query="", token=None):
        box = test.api("GET", "/api/v1/box", token=token).json
        since = box["events"]["next_seq"] - 1
        q = "since=%d" % since + ("&" + query if query else "")
        self.ws = ws_connect(test.port, q, token=token)
        test.addCleanup(self.ws.close)

    def wait(self, types, timeout=30.0, **fields):
        """The next event of this type (or of one of these types) whose
        fields have these values."""
        types = (types,) if isinstance(types, str) else tuple(types)

        def match(m):
            return m.get("type") in types and \
                all(m.get(k) == v for k, v in fields.items())
        return ws_next(self.ws, match, timeout)

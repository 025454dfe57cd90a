# SPDX-License-Identifier: MIT
"""events(): WebSocket and SSE, resume after a daemon restart with no
event lost, a Gap when the ring moved on, Fleet's merged events."""
import socket
import socketserver
import threading

import pytest

from tunerd import Box, Event, Fleet, Gap, errors

DVBT_474 = dict(delivery_system="DVBT", frequency=474000000,
                bandwidth=8000000)
DVBT2_490 = dict(delivery_system="DVBT2", frequency=490000000,
                 bandwidth=8000000)


def next_event(stream, pred=lambda e: True, timeout=20.0):
    """The next Event (or Gap) that pred accepts; fails after timeout."""
    while True:
        item = stream.next(timeout)
        assert item is not None, "no matching event within %.0f s" % timeout
        if pred(item):
            return item


def tune_events(stream, tuner, count, timeout=20.0):
    return [next_event(stream, lambda e: isinstance(e, Event) and
                       e.type == "tuner.tune" and e.tuner == tuner,
                       timeout) for _ in range(count)]


@pytest.mark.parametrize("sse", [False, True], ids=["ws", "sse"])
def test_filters_and_fields(live, sse):
    box = live.client()
    with box.events(types=["tuner.tune"], tuners=[2], sse=sse) as ev:
        box.tuner(1).tune(**DVBT_474)
        box.tuner(2).tune(**DVBT_474)
        e = next_event(ev)
        assert isinstance(e, Event)
        assert (e.type, e.tuner, e.box) == ("tuner.tune", 2, box)
        assert e.box_name == "box1" and e.seq > 0 and e.time.endswith("Z")
        assert e.data["params"]["frequency"] == 474000000
        assert e["result"] == "ok"


@pytest.mark.parametrize("sse", [False, True], ids=["ws", "sse"])
def test_restart_resumes_without_loss(live, sse):
    box = live.client()
    t = box.tuner(1)
    with box.events(types=["tuner.tune"], tuners=[1], sse=sse) as ev:
        t.tune(**DVBT_474)
        first = tune_events(ev, 1, 1)[0]
        # a connection cut while events keep coming: resumes with since=
        live.kill()
        live.start()
        t.tune(**DVBT2_490)
        t.tune(**DVBT_474)
        gap = next_event(ev)
        assert isinstance(gap, Gap) and gap.restarted, gap
        assert gap.from_seq == first.seq + 1
        after = tune_events(ev, 1, 3)
        # the new daemon's restore tune, then both API tunes, in order
        assert after[0]["origin"] == "restore"
        assert [e["params"]["frequency"] for e in after[1:]] == \
            [490000000, 474000000]
        assert after[0].seq < after[1].seq < after[2].seq
        assert ev.reconnects >= 1


def test_gap_when_the_ring_moved_on(make_box):
    live = make_box(daemon_extra=("--event-ring", "16"))
    box = live.client()
    t = box.tuner(2)
    ev = box.events(tuners=[2])
    try:
        # the old run goes further than the new one will: its restart is
        # plain from the box's next_seq
        for i in range(25):
            t.tune(**(DVBT_474 if i % 2 else DVBT2_490))
        seen = tune_events(ev, 2, 25)
        # Not reading: the daemon goes away and its successor publishes
        # more than its ring keeps before the stream is read again.
        live.kill()
        live.start()
        for i in range(8):
            t.tune(**(DVBT_474 if i % 2 else DVBT2_490))
        assert box.info()["events"]["oldest_seq"] > 1
        # what the old daemon sent before it died comes first
        old = []
        restart = next_event(ev, lambda x: isinstance(x, Gap) or
                             old.append(x))
        assert restart.restarted and restart.to_seq is None
        last = old[-1].seq if old else seen[-1].seq
        assert restart.from_seq == last + 1
        gap = next_event(ev)
        assert isinstance(gap, Gap) and not gap.restarted, gap
        assert gap.from_seq == 1 and gap.to_seq >= 1
        # the first event kept after the gap; events of other tuners (the
        # new daemon's restore tunes) may sit between, filtered out
        after = next_event(ev)
        assert isinstance(after, Event) and after.seq > gap.to_seq
        assert after.seq <= box.info()["events"]["next_seq"]
        # the last of the new run's tunes is there
        tunes = [after] + tune_events(ev, 2, 1)
        while tunes[-1]["params"]["frequency"] != 474000000 or \
                tunes[-1].seq < box.info()["events"]["next_seq"] - 16:
            tunes += tune_events(ev, 2, 1)
    finally:
        ev.close()


def test_fleet_of_two_boxes(make_box):
    a = make_box("attic")
    b = make_box("cellar", tuners="mt2060,mt2060")
    fleet = Fleet([a.client(), b.client()])
    tuners = fleet.tuners()
    assert [(str(t.box), t.id) for t in tuners] == \
        [("attic", i) for i in (1, 2, 3, 4)] + [("cellar", 1), ("cellar", 2)]
    with fleet.events(types=["tuner.tune"]) as ev:
        fleet.boxes[0].tuner(1).tune(**DVBT_474)
        fleet.boxes[1].tuner(2).tune(**DVBT_474)
        seen = {(e.box.name, e.tuner) for e in
                (next_event(ev), next_event(ev))}
        assert seen == {("attic", 1), ("cellar", 2)}
    # lease_any: every DVB-T capable tuner of both boxes, then none left
    leases = []
    try:
        while True:
            try:
                leases.append(fleet.lease_any("rec", delivery_system="DVBT",
                                              frequency=490000000, ttl=3))
            except errors.NoFreeTuner:
                break
        got = sorted((str(t.box), t.id) for t, _ in leases)
        assert ("cellar", 1) in got and ("attic", 1) in got
        assert len(got) == len(set(got))
        # a higher priority pre-empts one of them
        t, hi = fleet.lease_any("live-tv", delivery_system="DVBT",
                                frequency=490000000, priority=500)
        lost = [lease for tt, lease in leases
                if (tt.box, tt.id) == (t.box, t.id)][0]
        assert lost.wait_lost(10)
        hi.release()
    finally:
        for _, lease in leases:
            lease.release()


class NoUpgradeProxy(socketserver.ThreadingTCPServer):
    """A TCP relay to the daemon that answers any WebSocket upgrade with a
    plain-text 400, as a proxy without WebSocket support does."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port):
        self.target = port
        super().__init__(("127.0.0.1", 0), _Relay)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.server_address[1]


class _Relay(socketserver.BaseRequestHandler):
    def handle(self):
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.request.recv(65536)
            if not chunk:
                return
            head += chunk
        if b"upgrade: websocket" in head.lower():
            self.request.sendall(b"HTTP/1.1 400 Bad Request\r\n"
                                 b"Content-Type: text/plain\r\n"
                                 b"Content-Length: 11\r\n"
                                 b"Connection: close\r\n\r\nno upgrade\n")
            return
        up = socket.create_connection(("127.0.0.1", self.server.target))
        up.sendall(head)
        back = threading.Thread(target=_pipe, args=(up, self.request),
                                daemon=True)
        back.start()
        _pipe(self.request, up)
        back.join()


def _pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def test_sse_fallback_behind_a_proxy_without_websocket(live):
    proxy = NoUpgradeProxy(live.port)
    try:
        box = Box(proxy.url, token=live.token)
        with box.events(types=["tuner.tune"], tuners=[3]) as ev:
            assert ev.sse  # the WebSocket upgrade was refused
            live.client().tuner(3).tune(**DVBT_474)
            e = next_event(ev)
            assert (e.type, e.tuner) == ("tuner.tune", 3)
    finally:
        proxy.shutdown()
        proxy.server_close()

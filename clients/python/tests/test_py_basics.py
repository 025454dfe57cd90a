# SPDX-License-Identifier: MIT
"""Box, Tuner and the typed errors against a real daemon."""
import http.client

import harness
import pytest

from conftest import OPERATOR, VIEWER
from tunerd import Box, errors

DVBT_474 = dict(delivery_system="DVBT", frequency=474000000,
                bandwidth=8000000)


def test_info_tuners_status(live):
    box = live.client()
    info = box.info()
    assert box.name == "box1" == info["name"]
    assert info["tuners"] == 4
    tuners = box.tuners()
    assert [t.id for t in tuners] == [1, 2, 3, 4]
    assert tuners[0].data["chip"]["name"]
    assert box.tuner(2).info()["id"] == 2
    ans = box.tuner(1).tune(wait_lock=2.0, **DVBT_474)
    assert ans["locked"] is True
    st = box.tuner(1).status()
    assert st["fe_status"]["lock"] is True
    assert st["frequency"] == 474000000
    assert box.tuner(1).sleep()["state"] == "sleeping"
    assert box.tuner(1).init()["state"] == "ready"


def test_typed_errors(live):
    box = live.client()
    with pytest.raises(errors.NotFound) as e:
        box.tuner(99).info()
    assert e.value.status == 404 and e.value.code == "not_found"
    with pytest.raises(errors.UnsupportedParams) as e:
        box.tuner(1).tune("DVBT", 2_000_000_000, bandwidth=8000000)
    assert e.value.status == 422
    assert "frequency_max" in e.value.limits
    with pytest.raises(errors.BadRequest) as e:
        box.tuner(1).tune("DVBT", 474000000, bogus=1)
    assert e.value.field == "bogus"
    with pytest.raises(errors.Unauthorized):
        Box(live.url, token="not-a-known-token").info()
    with pytest.raises(errors.Unauthorized):
        Box(live.url).tuners()
    for sse in (False, True):
        with pytest.raises(errors.Unauthorized):
            Box(live.url, token="not-a-known-token").events(sse=sse)
    with pytest.raises(errors.Forbidden) as e:
        live.client(token=VIEWER).tuner(1).tune(**DVBT_474)
    assert e.value.required_role == "operator"
    with pytest.raises(errors.NotFound):
        box.channel("no such channel")
    with pytest.raises(errors.ConnectionFailed):
        Box("http://127.0.0.1:9", timeout=2).tuner(1).tune(**DVBT_474)
    # every error is a TunerdError with code, message, status, details
    with pytest.raises(errors.TunerdError) as e:
        box.tuner(99).status()
    assert e.value.message and e.value.details.get("tuner") == 99


def test_lease_conflict_details(live):
    box = live.client()
    t = box.tuner(1)
    with t.lease("holder-a", ttl=30, priority=300) as lease:
        assert len(lease.id) == 32
        t.tune(lease=lease, **DVBT_474)
        with pytest.raises(errors.LeaseConflict) as e:
            t.tune(**DVBT_474)
        assert e.value.holder == "holder-a"
        assert e.value.priority == 300
        assert e.value.expires.endswith("Z")
        with pytest.raises(errors.LeaseConflict):
            t.lease("holder-b", priority=100).acquire()
    # released on exit: anyone may tune again
    assert t.info()["lease"] is None
    t.tune(**DVBT_474)


def test_history_is_the_endpoint(live):
    ans = live.client().tuner(1).history(step=60000, fields="signal,cnr")
    assert ans["tuner"] == 1 and ans["step_ms"] == 60000
    assert isinstance(ans["points"], list)
    assert isinstance(ans["marks"], list)
    with pytest.raises(errors.BadRequest):
        live.client().tuner(1).history(limit=5)

def hold_the_slot(port):
    """A kept-alive connection that was served once: it keeps the box's
    one request slot until closed.  Taken once the daemon has seen the
    last holder's close (until then it answers 503)."""
    held = []

    def take():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/api/v1/box",
                     headers={"Authorization": "Bearer " + OPERATOR})
        r = conn.getresponse()
        r.read()
        if r.status == 200:
            held.append(conn)
            return True
        conn.close()
        return False

    harness.wait_for(take, timeout=30, what="the request slot")
    return held[0]


def test_retry_after_a_connection_cap(make_box):
    """A 503 with Retry-After (the connection cap: the request was never
    read) is sent again, a tune as well as a read; with no retries left it
    is Unavailable with the hint and the cap's name."""
    live = make_box(daemon_extra=("--max-request-conns", "1"))
    for method in ("GET", "POST"):
        held = hold_the_slot(live.port)
        box = live.client()
        seen = []

        def free_on_refusal(r, *args, **kwargs):
            seen.append(r.status_code)
            if r.status_code == 503:
                held.close()  # the next attempt finds the slot free

        box.api.session.hooks["response"].append(free_on_refusal)
        if method == "GET":
            assert box.info()["name"] == "box1"
        else:
            box.tuner(1).tune(**DVBT_474)
            assert box.tuner(1).info()["params"]["frequency"] == 474000000
        assert seen[0] == 503 and seen[-1] == 200, seen
        box.close()

    held = hold_the_slot(live.port)
    box = live.client()
    box.api.retries = 0
    with pytest.raises(errors.Unavailable) as e:
        box.info()
    assert e.value.retry_after == 1.0
    assert e.value.details == {"max_connections": 1}
    held.close()
    box.close()


# SPDX-License-Identifier: MIT
"""Transport streams and scans on the simulated box's UK multiplexes."""
import pytest

from conftest import ENV_UK
from tunerd import errors

PSB1 = dict(delivery_system="DVBT", frequency=490000000, bandwidth=8000000)


@pytest.fixture
def uk(make_box):
    with open(ENV_UK) as f:
        env = f.read()
    return make_box(env_text=env, tuners="mt2060,mt2060",
                    box_extra=("--no-card",))


def check_packets(data):
    assert len(data) % 188 == 0 and data
    assert all(data[i] == 0x47 for i in range(0, len(data), 188))


def pids_of(data):
    return {((data[i + 1] & 0x1f) << 8) | data[i + 2]
            for i in range(0, len(data), 188)}


def test_stream_read_iter_and_filters(uk):
    box = uk.client()
    t = box.tuner(1)
    assert t.tune(wait_lock=2.0, **PSB1)["locked"]
    with t.stream() as ts:
        data = ts.read(188 * 500)
        check_packets(data)
        got = b""
        for chunk in ts:
            got += chunk
            if len(got) >= 188 * 100:
                break
        assert got[0] == 0x47
    assert ts.closed
    with t.stream(pids=[0, 0x11]) as ts:
        data = ts.read(188 * 10)
        check_packets(data)
        assert pids_of(data) <= {0, 0x11}
    with t.stream(service=4164) as ts:
        pkts = list(p for _, p in zip(range(20), ts.packets()))
        assert all(len(p) == 188 and p[0] == 0x47 for p in pkts)
    with pytest.raises(errors.BadRequest):
        t.stream(pids=[0], service=4164)


def test_stream_needs_the_lease(uk):
    box = uk.client()
    t = box.tuner(2)
    with t.lease("rec", ttl=30) as lease:
        t.tune(wait_lock=2.0, lease=lease, **PSB1)
        with pytest.raises(errors.LeaseConflict):
            t.stream()
        with t.stream(lease=lease) as ts:
            check_packets(ts.read(188 * 20))


def test_scan_progress_and_channels(uk):
    box = uk.client()
    freqs = [490000000, 538000000]
    steps = list(box.scan(tuner=1, frequencies=freqs,
                          delivery_system="DVBT", bandwidth=8000000))
    progress, result = steps[:-1], steps[-1]
    assert [p["frequency"] for p in progress] == freqs
    assert [p["locked"] for p in progress] == [True, False]
    assert progress[0]["services"] > 0
    assert result["state"] == "done" and result["multiplexes"] == 1
    names = {c["name"] for c in result["channels"]}
    assert "BBC ONE Lon" in names
    assert box.channel("bbc one lon")["service_id"] == 4164
    assert box.channel("1")["name"] == "BBC ONE Lon"
    assert "[BBC ONE Lon]" in box.channels_dvbv5()
    ans = box.tuner(2).tune(channel="BBC ONE Lon", wait_lock=2.0)
    assert ans["locked"] and ans["channel"]["service_id"] == 4164
    with pytest.raises(errors.NotFound):
        box.tuner(2).tune(channel="No Such Channel")

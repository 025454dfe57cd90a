# SPDX-License-Identifier: MIT
"""The README's five example scripts, run as a user runs them, against a
live box."""
import os
import subprocess
import sys

import pytest

from conftest import ENV_UK, PKG_ROOT, VIEWER
from tunerd import Box

EXAMPLES = os.path.join(PKG_ROOT, "examples")
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") \
    else sys.executable
PSB1 = dict(delivery_system="DVBT", frequency=490000000, bandwidth=8000000)
EMPTY = dict(delivery_system="DVBT", frequency=538000000, bandwidth=8000000)


@pytest.fixture
def uk(make_box):
    with open(ENV_UK) as f:
        env = f.read()
    return make_box(env_text=env, tuners="mt2060,mt2060",
                    box_extra=("--no-card",))


def run(script, *args, timeout=60):
    return subprocess.run([PY, os.path.join(EXAMPLES, script), *args],
                          capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, PYTHONPATH=PKG_ROOT))


class Running:
    """A script in the background; waits for a line it prints."""

    def __init__(self, script, *args):
        self.proc = subprocess.Popen(
            [PY, os.path.join(EXAMPLES, script), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, PYTHONPATH=PKG_ROOT))

    def wait_line(self, prefix):
        for line in self.proc.stdout:
            if line.startswith(prefix):
                return line
        raise AssertionError("%r never printed (stderr: %s)"
                             % (prefix, self.proc.stderr.read()))

    def finish(self, timeout=30):
        out, err = self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, err
        return out, err


def test_scan_export_then_record(uk, workdir):
    conf = os.path.join(workdir, "channels.conf")
    r = run("scan_export.py", "--box", uk.url, "--token", uk.token,
            "--freq", "490000000,538000000", "--out", conf)
    assert r.returncode == 0, r.stderr
    assert "channels on 1 multiplexes" in r.stdout
    assert "2/2" in r.stderr
    with open(conf) as f:
        text = f.read()
    assert "[BBC ONE Lon]" in text and "SERVICE_ID = 4164" in text
    ts = os.path.join(workdir, "bbc1.ts")
    r = run("record_channel.py", "--box", uk.url, "--token", uk.token,
            "--channel", "BBC ONE Lon", "--duration", "3", "--out", ts)
    assert r.returncode == 0, r.stderr
    with open(ts, "rb") as f:
        data = f.read()
    assert len(data) >= 188 * 10 and data[0] == 0x47
    assert all(data[i] == 0x47 for i in range(0, len(data) - 187, 188))
    assert Box(uk.url, token=uk.token).tuner(1).info()["lease"] is None


def test_monitor_lock_across_a_fleet(make_box):
    a = make_box("attic")
    b = make_box("cellar", tuners="mt2060,mt2060")
    mon = Running("monitor_lock.py", "--box", a.url, "--box", b.url,
                  "--token", VIEWER, "--count", "2")
    mon.wait_line("watching")
    a.client().tuner(1).tune(**dict(PSB1, delivery_system="DVBT2"))
    b.client().tuner(2).tune(**dict(PSB1, delivery_system="DVBT2"))
    out, _ = mon.finish()
    assert "attic      tuner 1  locked" in out
    assert "cellar     tuner 2  locked" in out


def test_alert_on_lock_loss(uk, workdir):
    flag = os.path.join(workdir, "alert.txt")
    t = uk.client().tuner(2)
    t.tune(wait_lock=2.0, **PSB1)
    al = Running("alert_lock_loss.py", "--box", uk.url, "--token", VIEWER,
                 "--tuner", "2", "--count", "1", "--exec",
                 'echo "$TUNERD_BOX $TUNERD_TUNER $TUNERD_FREQUENCY" > '
                 + flag)
    al.wait_line("watching")
    t.tune(**EMPTY)
    _, err = al.finish()
    assert "ALERT box1 tuner 2 lost lock" in err
    with open(flag) as f:
        assert f.read().split() == ["box1", "2", "538000000"]


def test_lease_preemption_moves_to_another_tuner(uk):
    holder = Running("lease_preemption.py", "--box", uk.url, "--token",
                     uk.token, "--freq", "490000000", "--ttl", "3",
                     "--duration", "60", "--max-moves", "1")
    first = holder.wait_line("holding").split()[1]
    box = uk.client()
    tuner = box.tuner(int(first.split(":")[1]))
    with tuner.lease("live-tv", priority=900, ttl=30):
        line = holder.wait_line("pre-empted")
        assert first in line and "live-tv" in line
        holder.finish()

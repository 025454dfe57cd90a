# SPDX-License-Identifier: MIT
"""A transport stream source for tests and benches: listens on the unix
stream sockets PATH.ts<N> a daemon started with --stub sim:PATH reads, and
writes each connection a synthetic multiplex at a given rate.

    python3 tsgen.py --socket /tmp/sim.sock --tuners 1,2 [--rate-mbps 24]
                     [--silent]

It prints "ready" once every socket listens.  The multiplex is a cycle of
packets repeated forever, with real PAT and PMT sections (MPEG CRC) and
continuity counters that stay continuous across the repetitions: every PID
appears a multiple of 16 times per cycle.  Each other packet carries
b"TSGN" and its index in the cycle, so a test can tell exactly which
packets it got (multiplex() and the helpers below are what tests import).
"""
import argparse
import os
import socket
import struct
import sys
import threading
import time

PACKET = 188
MARK = b"TSGN"

# service id -> (PMT PID, PCR PID, [(stream type, elementary PID)])
SERVICES = {
    0x101: (0x100, 0x200, [(0x02, 0x200), (0x04, 0x201)]),
    0x102: (0x110, 0x212, [(0x1B, 0x210), (0x03, 0x211)]),
}
TS_ID = 0x1234
# one row of the cycle: PID and how often it comes
ROW = ([0x000, 0x100, 0x110, 0x011] + [0x200] * 6 + [0x201] * 2 +
       [0x210] * 6 + [0x211] * 2 + [0x212] + [0x1FFF] * 2)


def crc32_mpeg(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
            crc &= 0xFFFFFFFF
    return crc


def section(table_id, ext, body, version=1):
    length = 5 + len(body) + 4
    head = struct.pack(">BHHBBB", table_id, 0xB000 | length, ext,
                       0xC1 | (version << 1), 0, 0)
    s = head + body
    return s + struct.pack(">I", crc32_mpeg(s))


def pat_section(services=SERVICES):
    body = b"".join(struct.pack(">HH", sid, 0xE000 | v[0])
                    for sid, v in sorted(services.items()))
    return section(0x00, TS_ID, body)


def pmt_section(sid, services=SERVICES):
    _, pcr, streams = services[sid]
    body = struct.pack(">HH", 0xE000 | pcr, 0xF000)
    for stype, pid in streams:
        body += struct.pack(">BHH", stype, 0xE000 | pid, 0xF000)
    return section(0x02, sid, body)


def packet(pid, cc, payload, start=False):
    head = struct.pack(">BHB", 0x47, (0x4000 if start else 0) | pid,
                       0x10 | (cc & 0x0F))
    return head + payload + b"\xff" * (PACKET - 4 - len(payload))


def multiplex():
    """The cycle: bytes, and per packet (pid, key) where key is the cycle
    index for marked packets and ("table", cc) for PAT/PMT packets."""
    tables = {0x000: pat_section()}
    for sid, v in SERVICES.items():
        tables[v[0]] = pmt_section(sid)
    cc, out, keys = {}, [], []
    for _ in range(16):
        for pid in ROW:
            n = cc.get(pid, 0)
            cc[pid] = (n + 1) & 0x0F
            if pid in tables:
                out.append(packet(pid, n, b"\x00" + tables[pid], True))
                keys.append((pid, ("table", n)))
            else:
                idx = len(out)
                out.append(packet(pid, n, MARK + struct.pack(">I", idx)))
                keys.append((pid, idx))
    return b"".join(out), keys


# ---- what tests use to look at a received stream ----

def packets(data):
    """Split into packets; raises if a packet does not start with 0x47."""
    assert len(data) % PACKET == 0, "not whole packets: %d" % len(data)
    pk = [data[i:i + PACKET] for i in range(0, len(data), PACKET)]
    for i, p in enumerate(pk):
        assert p[0] == 0x47, "packet %d without its sync byte" % i
    return pk


def pid_of(p):
    return ((p[1] & 0x1F) << 8) | p[2]


def cc_errors(pk):
    """Continuity errors, counted per PID (null packets excluded)."""
    last, errors = {}, 0
    for p in pk:
        pid = pid_of(p)
        if pid == 0x1FFF or not p[3] & 0x10:
            continue
        cc = p[3] & 0x0F
        if pid in last and cc != (last[pid] + 1) & 0x0F:
            errors += 1
        last[pid] = cc
    return errors


def key_of(p):
    if p[4:8] == MARK:
        return (pid_of(p), struct.unpack(">I", p[8:12])[0])
    return (pid_of(p), ("table", p[3] & 0x0F))


def run_matches(got, expected):
    """True when got (keys) is a contiguous run of expected repeated."""
    first = next((i for i, k in enumerate(got) if isinstance(k[1], int)),
                 None)
    if first is None:
        return False
    pos = expected.index(got[first]) - first
    n = len(expected)
    return all(k == expected[(pos + i) % n] for i, k in enumerate(got))


# ---- the source ----

def serve_conn(conn, cycle, rate_bps):
    """Write the cycle again and again at rate_bps (0: as fast as the
    reader takes it; None: nothing, as a tuner without lock) until the
    reader goes away."""
    if rate_bps is None:
        conn.recv(1)  # returns when the reader closes
        conn.close()
        return
    chunk = PACKET * 100
    data = cycle * (chunk // len(cycle) + 2)
    off, sent, t0 = 0, 0, time.monotonic()
    try:
        while True:
            end = off + chunk
            conn.sendall(data[off:end])
            off = end % len(cycle)
            sent += chunk
            if rate_bps:
                ahead = sent * 8 / rate_bps - (time.monotonic() - t0)
                if ahead > 0:
                    time.sleep(ahead)
    except OSError:
        pass
    finally:
        conn.close()


def listen(path, cycle, rate_bps):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(8)

    def accept_loop():
        while True:
            conn, _ = s.accept()
            threading.Thread(target=serve_conn, args=(conn, cycle, rate_bps),
                             daemon=True).start()
    threading.Thread(target=accept_loop, daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--tuners", default="1")
    ap.add_argument("--rate-mbps", type=float, default=24.0)
    ap.add_argument("--silent", action="store_true",
                    help="accept and send nothing (no lock)")
    a = ap.parse_args()
    cycle, _ = multiplex()
    rate = None if a.silent else a.rate_mbps * 1e6
    for n in a.tuners.split(","):
        listen("%s.ts%d" % (a.socket, int(n)), cycle, rate)
    print("ready", flush=True)
    try:
        sys.stdin.read()  # until the parent closes our stdin or kills us
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

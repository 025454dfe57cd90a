#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Watch the lock of every tuner of several boxes, one line per change.

    monitor_lock.py --box http://attic:8080 --box http://cellar:8080 \
        --token change-me-viewer-1
"""
import argparse
import sys

from tunerd import Box, Event, Fleet, Gap


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--box", action="append", required=True, help="box URL")
    ap.add_argument("--token", help="viewer token")
    ap.add_argument("--count", type=int, default=0,
                    help="stop after this many lock changes (0: never)")
    args = ap.parse_args()
    fleet = Fleet([Box(url, token=args.token) for url in args.box])
    for t in fleet.tuners():
        locked = ((t.data or {}).get("status") or {}).get(
            "fe_status", {}).get("lock")
        print("%-10s tuner %d  %s" % (t.box, t.id,
                                      "locked" if locked else "no lock"))
    seen = 0
    with fleet.events(types=["tuner.lock"]) as events:
        print("watching", flush=True)
        for ev in events:
            if isinstance(ev, Gap):
                print("%-10s events lost (%s); re-reading the tuners"
                      % (ev.box, ev.message), flush=True)
                continue
            assert isinstance(ev, Event)
            print("%-10s tuner %d  %s  %s" % (
                ev.box, ev.tuner, "locked" if ev["locked"] else "LOST",
                ev.time), flush=True)
            seen += 1
            if args.count and seen >= args.count:
                break
    return 0


if __name__ == "__main__":
    sys.exit(main())

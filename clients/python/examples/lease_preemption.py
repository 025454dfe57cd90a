#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hold a tuner tuned to a multiplex; when a higher priority takes it,
move to any other tuner of the fleet that can receive it.

    lease_preemption.py --box http://attic:8080 --box http://cellar:8080 \
        --token change-me-operator --system DVBT --freq 490000000 \
        --duration 3600
"""
import argparse
import sys
import time

from tunerd import Box, Fleet, errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--box", action="append", required=True)
    ap.add_argument("--token", help="operator token")
    ap.add_argument("--system", default="DVBT")
    ap.add_argument("--freq", type=int, required=True, help="Hz")
    ap.add_argument("--bandwidth", type=int, default=8000000)
    ap.add_argument("--holder", default="lease_preemption")
    ap.add_argument("--priority", type=int, default=100)
    ap.add_argument("--ttl", type=float, default=30.0)
    ap.add_argument("--duration", type=float, default=3600.0)
    ap.add_argument("--max-moves", type=int, default=0,
                    help="stop after this many pre-emptions (0: never)")
    args = ap.parse_args()
    fleet = Fleet([Box(u, token=args.token) for u in args.box])
    end = time.monotonic() + args.duration
    moves = 0
    while True:
        try:
            tuner, lease = fleet.lease_any(
                args.holder, delivery_system=args.system,
                frequency=args.freq, ttl=args.ttl, priority=args.priority)
        except errors.NoFreeTuner as e:
            print("no tuner: %s" % e.message, file=sys.stderr)
            return 1
        with lease:
            tuner.tune(args.system, args.freq, bandwidth=args.bandwidth,
                       wait_lock=2.0, lease=lease)
            print("holding %s:%d" % (tuner.box, tuner.id), flush=True)
            if not lease.wait_lost(max(0.0, end - time.monotonic())):
                print("done", flush=True)
                return 0
            print("pre-empted on %s:%d: %s" % (tuner.box, tuner.id,
                                               lease.lost_reason),
                  flush=True)
        moves += 1
        if args.max_moves and moves >= args.max_moves:
            return 0


if __name__ == "__main__":
    sys.exit(main())

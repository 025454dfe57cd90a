#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Alert when a tuner loses its lock, without any monitoring system: a
line on stderr and, with --exec, a command run with the details in its
environment (TUNERD_BOX, TUNERD_TUNER, TUNERD_FREQUENCY, TUNERD_TIME).

    alert_lock_loss.py --box http://attic:8080 --token change-me-viewer-1 \
        --exec 'logger -t tunerd "tuner $TUNERD_TUNER lost lock"'
"""
import argparse
import os
import subprocess
import sys

from tunerd import Box, Fleet, Gap


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--box", action="append", required=True)
    ap.add_argument("--token", help="viewer token")
    ap.add_argument("--tuner", type=int, action="append",
                    help="only these tuners")
    ap.add_argument("--exec", dest="command", help="shell command to run")
    ap.add_argument("--count", type=int, default=0,
                    help="stop after this many alerts (0: never)")
    args = ap.parse_args()
    fleet = Fleet([Box(u, token=args.token) for u in args.box])
    alerts = 0
    with fleet.events(types=["tuner.lock"], tuners=args.tuner) as events:
        print("watching", flush=True)
        for ev in events:
            if isinstance(ev, Gap):
                # a lock loss may hide in what was lost: say so
                print("ALERT %s: events lost, check the tuners" % ev.box,
                      file=sys.stderr, flush=True)
                continue
            if ev["locked"]:
                continue
            freq = (ev.get("status") or {}).get("frequency")
            print("ALERT %s tuner %d lost lock (%s Hz) at %s" % (
                ev.box, ev.tuner, freq, ev.time), file=sys.stderr,
                flush=True)
            if args.command:
                subprocess.run(args.command, shell=True, env=dict(
                    os.environ, TUNERD_BOX=str(ev.box),
                    TUNERD_TUNER=str(ev.tuner),
                    TUNERD_FREQUENCY=str(freq), TUNERD_TIME=ev.time or ""))
            alerts += 1
            if args.count and alerts >= args.count:
                return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Record a channel for a while: lease a tuner, tune by channel name, save
the service's transport stream.

    record_channel.py --box http://attic:8080 --token change-me-operator \
        --channel "BBC ONE Lon" --duration 60 --out bbc1.ts
"""
import argparse
import sys
import time

from tunerd import Box, errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--box", required=True, help="box URL")
    ap.add_argument("--token", help="operator token")
    ap.add_argument("--tuner", type=int, default=1)
    ap.add_argument("--channel", required=True, help="name or LCN")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds")
    ap.add_argument("--out", required=True, help="file to write")
    ap.add_argument("--priority", type=int, default=200)
    args = ap.parse_args()
    box = Box(args.box, token=args.token)
    channel = box.channel(args.channel)
    tuner = box.tuner(args.tuner)
    try:
        with tuner.lease("record_channel", ttl=30,
                         priority=args.priority) as lease:
            ans = tuner.tune(channel=channel["name"], wait_lock=3.0,
                             lease=lease)
            if not ans["locked"]:
                print("no lock on %s" % channel["name"], file=sys.stderr)
                return 1
            written = 0
            end = time.monotonic() + args.duration
            with tuner.stream(service=channel["service_id"],
                              lease=lease) as ts, open(args.out, "wb") as f:
                for chunk in ts:
                    f.write(chunk)
                    written += len(chunk)
                    lease.check()
                    if time.monotonic() >= end:
                        break
    except errors.LeaseLost as e:
        print("recording stopped: %s" % e, file=sys.stderr)
        return 3
    except errors.LeaseConflict as e:
        print("tuner busy: %s holds it until %s" % (e.holder, e.expires),
              file=sys.stderr)
        return 4
    print("%s: %d bytes of %s" % (args.out, written, channel["name"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Scan a box's tuner and save the channels as a dvbv5 channel file
(for dvbv5-zap -c).

    scan_export.py --box http://attic:8080 --token change-me-operator \
        --band uhf --region eu --out channels.conf
    scan_export.py --box ... --freq 490000000,514000000 --out channels.conf
"""
import argparse
import sys

from tunerd import Box


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--box", required=True, help="box URL")
    ap.add_argument("--token", help="operator token")
    ap.add_argument("--tuner", type=int, default=1)
    ap.add_argument("--band", help="uhf or vhf (with --region)")
    ap.add_argument("--region", default="eu")
    ap.add_argument("--freq", help="comma-separated frequencies in Hz")
    ap.add_argument("--system", default="DVBT")
    ap.add_argument("--bandwidth", type=int, default=8000000)
    ap.add_argument("--out", required=True, help="dvbv5 file to write")
    args = ap.parse_args()
    if args.freq:
        params = {"frequencies": [int(f) for f in args.freq.split(",")],
                  "delivery_system": args.system,
                  "bandwidth": args.bandwidth}
    elif args.band:
        params = {"band": args.band, "region": args.region}
    else:
        ap.error("give --band or --freq")
    box = Box(args.box, token=args.token)
    for step in box.scan(tuner=args.tuner, **params):
        if "index" in step:
            print("%3d/%d  %9.3f MHz  %s  %d services" % (
                step["index"] + 1, step["total"], step["frequency"] / 1e6,
                "locked " if step["locked"] else "no lock",
                step["services"]), file=sys.stderr, flush=True)
        else:
            result = step
    if result["state"] != "done":
        print("scan %s: %s" % (result["state"], result.get("error")),
              file=sys.stderr)
        return 1
    with open(args.out, "w") as f:
        f.write(box.channels_dvbv5())
    print("%d channels on %d multiplexes -> %s" % (
        len(result["channels"]), result["multiplexes"], args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

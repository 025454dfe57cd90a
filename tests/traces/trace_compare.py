#!/usr/bin/env python3
"""Parity of the plugins with the in-kernel drivers, from I2C traces.

The kernel test (tests/kernel/guest/parity.sh) runs one sweep of tuner
calls per chip twice on the same virtual board: through the tuner stub
(tunerd and the plugin) and through Linux's own driver.  Each run's trace
holds the I2C segments, the bridge callbacks and the request marks of
tests/kernel/vbridge/vbridge_oracle.c:

    0x60 W 01 6e 69 03 fb 93        a segment (address, W/R, bytes)
    0x61 C reset 0                  a bridge callback
    ## 7 dvbt 474000000 8000000     a request ...
    ## 7 = 0                        ... and its return value

Usage:
    trace_compare.py --split RAW --out DIR   the serial capture to one
                                             DIR/<chip>-<side>.trace each
    trace_compare.py [--readme README] [--report FILE] DIR
                                             compare kernel and stub

The comparison is byte for byte, request by request (the attach section
first: the segments before the first request other than a mark).  It
prints the counts per chip and exits 1 on any difference, except
- a documented in-kernel defect: a row of the defects table of
  plugins/README.md names it by id, and DEFECTS below recognises it;
- on a chip whose row in the parity table says "pending" (its
  differences are printed all the same).
"""
import argparse
import re
import sys
from pathlib import Path

CHIPS = ("mt2060", "qt1010", "xc3028")
MARK = re.compile(r"^## (\d+) (.*)$")
RET = re.compile(r"^## (\d+) = (-?\d+)$")
SHOWN_PER_CHIP = 12


def split_capture(raw, out):
    """The serial capture's blocks to DIR/<chip>-<side>.trace."""
    out.mkdir(parents=True, exist_ok=True)
    name, lines, written = None, [], []
    text = raw.read_bytes().decode("ascii", "replace")
    for line in text.replace("\r", "").split("\n"):
        if line.startswith("=== end"):
            if name:
                (out / name).write_text("".join(lines))
                written.append(name)
            name, lines = None, []
        elif line.startswith("=== "):
            chip, side = line[4:].split()[:2]
            name, lines = f"{chip}-{side}.trace", []
        elif name and line:
            # The adapter number changes with every load of the bridge.
            lines.append(re.sub(r"^i2c-\d+ ", "", line) + "\n")
    for n in written:
        print(f"split: {n}")
    return 0 if written else 1


class Trace:
    """A trace cut into the attach section and the requests."""

    def __init__(self, path):
        self.attach = []
        self.requests = []  # [request text, [lines], return value]
        cur = None
        for line in Path(path).read_text().splitlines():
            ret = RET.match(line)
            mark = MARK.match(line)
            if ret:
                if cur is not None:
                    cur[2] = int(ret.group(2))
                    cur = None
            elif mark:
                req = mark.group(2)
                if req.startswith("mark") or req == "attach":
                    continue
                cur = [req, [], None]
                self.requests.append(cur)
            elif cur is not None:
                cur[1].append(line)
            elif not self.requests:
                self.attach.append(line)
            else:
                # Between requests: traffic nobody asked for.
                self.requests[-1][1].append("unasked: " + line)

    def segments(self):
        n = sum(1 for x in self.attach if " C " not in x)
        for r in self.requests:
            n += sum(1 for x in r[1] if " C " not in x)
        return n


def xc3028_sleep_returns_bytes(chip, req, kl, sl, kret, sret):
    """xc2028_sleep() returns send_seq()'s byte count (4), not 0."""
    return (chip == "xc3028" and req == "sleep" and kl == sl and
            kret == 4 and sret == 0)


# Documented in-kernel defects by id: the difference is exactly it.
DEFECTS = {
    "xc3028-sleep-returns-bytes": xc3028_sleep_returns_bytes,
}


def readme_defects(readme):
    """The ids the defects table of plugins/README.md lists."""
    ids = set()
    if not readme:
        return ids
    for line in Path(readme).read_text().splitlines():
        m = re.match(r"^\|\s*`([a-z0-9-]+)`\s*\|", line)
        if m and m.group(1) in DEFECTS:
            ids.add(m.group(1))
    return ids


def readme_status(readme):
    """The parity table's status per chip: clean or pending."""
    status = {}
    if not readme:
        return status
    for line in Path(readme).read_text().splitlines():
        m = re.match(r"^\|\s*(\w+)\s*\|\s*(clean|pending)\s*\|", line)
        if m:
            status[m.group(1).lower()] = m.group(2)
    return status


def first_difference(a, b):
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "(nothing)"
        y = b[i] if i < len(b) else "(nothing)"
        if x != y:
            return i, x, y
    return None


def documented(chip, defects, req, kl, sl, kret, sret):
    for d in defects:
        if DEFECTS[d](chip, req, kl, sl, kret, sret):
            return d
    return None


def compare_chip(chip, kernel, stub, report, defects):
    """Counts for one chip; the differences go to report."""
    k, s = Trace(kernel), Trace(stub)
    counts = {"requests": len(k.requests) + 1, "same": 0, "different": 0,
              "documented": 0, "kseg": k.segments(), "sseg": s.segments()}
    pairs = [("attach", k.attach, s.attach, None, None)]
    if [r[0] for r in k.requests] != [r[0] for r in s.requests]:
        report.append(f"{chip}: the two sweeps differ (requests "
                      f"{len(k.requests)} and {len(s.requests)})")
        counts["different"] = counts["requests"]
        return counts
    for kr, sr in zip(k.requests, s.requests):
        pairs.append((kr[0], kr[1], sr[1], kr[2], sr[2]))
    for n, (req, kl, sl, kret, sret) in enumerate(pairs):
        diff = first_difference(kl, sl)
        if diff is None and kret == sret:
            counts["same"] += 1
            continue
        defect = documented(chip, defects, req, kl, sl, kret, sret)
        if defect:
            counts["documented"] += 1
            report.append(f"{chip} #{n} {req}: documented: {defect}")
            continue
        counts["different"] += 1
        if diff is None:
            what = f"returns {kret} (kernel) and {sret} (plugin)"
        else:
            i, x, y = diff
            what = (f"line {i + 1} of {len(kl)}/{len(sl)}: kernel '{x}', "
                    f"plugin '{y}'")
        report.append(f"{chip} #{n} {req}: {what}")
    return counts


def compare(args):
    status = readme_status(args.readme)
    defects = readme_defects(args.readme)
    report, failed = [], False
    print("parity | requests | identical | documented | different | "
          "kernel segs | plugin segs | status")
    for chip in CHIPS:
        kernel = Path(args.dir) / f"{chip}-kernel.trace"
        stub = Path(args.dir) / f"{chip}-stub.trace"
        if not kernel.exists() or not stub.exists():
            print(f"{chip}: traces missing")
            failed = True
            continue
        chip_report = []
        c = compare_chip(chip, kernel, stub, chip_report, defects)
        st = status.get(chip, "clean")
        print(f"{chip} | {c['requests']} | {c['same']} | {c['documented']}"
              f" | {c['different']} | {c['kseg']} | {c['sseg']} | {st}")
        if c["requests"] < 200:
            print(f"{chip}: fewer than 200 requests")
            failed = True
        if c["different"] and st != "pending":
            failed = True
        shown = [x for x in chip_report if ": documented: " not in x]
        for line in shown[:SHOWN_PER_CHIP]:
            print("  " + line)
        if len(shown) > SHOWN_PER_CHIP:
            print(f"  ... {len(shown) - SHOWN_PER_CHIP} more")
        report += chip_report
    if args.report:
        Path(args.report).write_text("".join(x + "\n" for x in report))
    print("parity: " + ("FAIL" if failed else "PASS"))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", metavar="RAW")
    ap.add_argument("--out", metavar="DIR")
    ap.add_argument("--readme", metavar="README")
    ap.add_argument("--report", metavar="FILE")
    ap.add_argument("dir", nargs="?")
    args = ap.parse_args()
    if args.split:
        if not args.out:
            ap.error("--split needs --out")
        return split_capture(Path(args.split), Path(args.out))
    if not args.dir:
        ap.error("a directory of traces")
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())

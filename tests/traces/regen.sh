#!/usr/bin/env bash
# Regenerates the parity traces kept here from the kernel test: runs
# tests/kernel/run-qemu.sh (as root; its options pass through) and copies
# the traces its parity check split out (WORK/traces/<chip>-<side>.trace)
# into tests/traces/.  The unit tests replay the in-kernel drivers' traces
# (<chip>-kernel.trace); the plugins' (<chip>-stub.trace) are kept beside
# them for review.  The run's verdict is printed, not required: traces
# that show a difference are what a fix is checked against.
#
# Usage: tests/traces/regen.sh [--work-dir DIR] [run-qemu.sh options]
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$root/build-kernel
args=("$@")
while [ $# -gt 0 ]; do
	case $1 in
	--work-dir) work=$(realpath -m "$2"); shift 2 ;;
	*) shift ;;
	esac
done

"$root/tests/kernel/run-qemu.sh" "${args[@]}"
echo "regen: run-qemu.sh exited $?"
n=0
for f in "$work"/traces/*-kernel.trace "$work"/traces/*-stub.trace; do
	[ -s "$f" ] || continue
	cp "$f" "$here/"
	echo "regen: $(basename "$f"): $(wc -l <"$f") lines"
	n=$((n + 1))
done
[ $n -eq 6 ] || { echo "regen: $n of 6 traces" >&2; exit 1; }

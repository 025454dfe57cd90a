#!/usr/bin/env bash
# The whole test suite: a -Werror build and its tests, the same under
# ASan+UBSan, a 2-minute soak, then the kernel module in a real kernel
# under QEMU.
# Usage: scripts/test.sh [--no-kernel] [--no-asan] [--no-soak]
set -euo pipefail
cd "$(dirname "$0")/.."

kernel=1 asan=1 soak=1
for a in "$@"; do
	case "$a" in
	--no-kernel) kernel=0 ;;
	--no-asan) asan=0 ;;
	--no-soak) soak=0 ;;
	*) echo "usage: scripts/test.sh [--no-kernel] [--no-asan] [--no-soak]" >&2; exit 2 ;;
	esac
done

sets=(build test)
[ $kernel -eq 1 ] && sets+=(kernel)
scripts/deps.sh "${sets[@]}"

jobs=$(nproc)
run_suite() {
	local dir=$1; shift
	echo "== build $dir ($*)"
	cmake -S . -B "$dir" -DTUNERD_WERROR=ON "$@" >/dev/null
	cmake --build "$dir" -j"$jobs" >/dev/null
	echo "== ctest $dir"
	(cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 300)
}

run_suite build-ci
if [ $asan -eq 1 ]; then
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		run_suite build-ci-asan -DTUNERD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
fi
if [ $soak -eq 1 ]; then
	# The soak in the -Werror build only (ASan's quarantine would hide a
	# leak's slope), for 2 minutes.  100 subscribers fit the front's one
	# connection cap of 256 beside the soak's REST clients and slowloris;
	# they go up when event streams get a limit of their own.
	echo "== soak, 2 minutes (build-ci)"
	scripts/soak.sh --build-dir build-ci --minutes 2 --subscribers 100
fi
if [ $kernel -eq 1 ] && [ -x tests/kernel/run-qemu.sh ]; then
	echo "== kernel module under QEMU"
	tests/kernel/run-qemu.sh --build-dir build-ci --daemon tunerd
fi
echo "== all suites passed"

#!/usr/bin/env bash
# Build the libFuzzer targets of tests/fuzz (clang, ASan+UBSan) and run
# each for a while, then print what every target did.
#
# Usage: scripts/fuzz.sh [-j N] [-B DIR] [SECONDS] [TARGET...]
#   SECONDS   per target (default 600)
#   TARGET    fuzz_json_params, ... (default: every target)
#   -j N      targets run at once (default 1; each takes one core)
#   -B DIR    build directory (default build-fuzz)
#
# The seeds in tests/fuzz/corpus/<name>/ are only read; what a run finds
# goes to DIR/fuzz-corpus/<name>/, and a crash, leak or timeout input to
# DIR/fuzz-crashes/<name>/ (a regression input worth keeping goes into the
# seed corpus once the bug is fixed).  Exits 1 when any target failed.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=600 jobs=1 dir=build-fuzz
targets=()
while [ $# -gt 0 ]; do
	case "$1" in
	-j) jobs=$2; shift 2 ;;
	-B) dir=$2; shift 2 ;;
	-h|--help) sed -n '2,15p' "$0"; exit 0 ;;
	[0-9]*) secs=$1; shift ;;
	fuzz_*) targets+=("$1"); shift ;;
	*) echo "usage: scripts/fuzz.sh [-j N] [-B DIR] [SECONDS] [TARGET...]" >&2; exit 2 ;;
	esac
done

scripts/deps.sh build fuzz
echo "== build $dir (clang, libFuzzer, ASan+UBSan)"
CC=clang-14 cmake -S . -B "$dir" -DTUNERD_WERROR=ON -DTUNERD_FUZZ=ON \
	-DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$dir" --target fuzzers -j"$(nproc)" >/dev/null
if [ ${#targets[@]} -eq 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do
		targets+=("$(basename "$f" .c)")
	done
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# One target: its log in DIR/fuzz-logs/<target>.log, its exit status in
# DIR/fuzz-logs/<target>.rc.
run_one() {
	local t=$1 name=${1#fuzz_}
	local work=$dir/fuzz-corpus/$name crashes=$dir/fuzz-crashes/$name
	local seeds=tests/fuzz/corpus/$name log=$dir/fuzz-logs/$t.log

	mkdir -p "$work" "$crashes" "$dir/fuzz-logs"
	set +e
	"$dir/bin/$t" -max_total_time="$secs" -timeout=20 \
		-print_final_stats=1 -artifact_prefix="$crashes/" \
		"$work" "$seeds" >"$log" 2>&1
	echo $? >"$dir/fuzz-logs/$t.rc"
	set -e
}

echo "== fuzz ${#targets[@]} target(s), ${secs} s each, $jobs at a time"
running=0
for t in "${targets[@]}"; do
	[ -x "$dir/bin/$t" ] || { echo "no target $t" >&2; exit 2; }
	run_one "$t" &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n || true
		running=$((running - 1))
	fi
done
wait

failed=0
printf '%-24s %12s %8s %8s %8s  %s\n' target executions exec/s cov ft result
for t in "${targets[@]}"; do
	log=$dir/fuzz-logs/$t.log
	rc=$(cat "$dir/fuzz-logs/$t.rc")
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
	result=ok
	if [ "$rc" -ne 0 ]; then
		result="FAILED (rc $rc): $log, inputs in $dir/fuzz-crashes/${t#fuzz_}/"
		failed=1
	fi
	printf '%-24s %12s %8s %8s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" \
		"${cov:-?}" "${ft:-?}" "$result"
done
exit $failed

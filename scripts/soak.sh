#!/usr/bin/env bash
# The soak: a simulated box with 64 tuners (MT2060, QT1010, XC3028 in
# turn) on the Crystal Palace spectrum, tunerd on it, and everything at
# once through the daemon's one port for M minutes (tests/soak/README.md):
# WebSocket event subscribers, 200 tunes/s spread over the 64 tuners on
# keep-alive connections, leases churning on 8 tuners, a slowloris
# attacker, and a worker killed with SIGKILL every 10 s.  Meanwhile the
# RSS of the daemon, the box and the workers is sampled every 5 s.
#
# Fails (exit 1) when a REST request got no HTTP answer, when an event
# subscriber saw a hole in its sequence or was closed without being told,
# when an RSS grows by more than 10% over the second half, or when the
# daemon is gone or does not answer at the end.
#
# Usage: scripts/soak.sh [--minutes M] [--seconds S] [--subscribers N]
#        [--rate R] [--build-dir DIR] [--kill-every S] [--keep]
#        [-- extra tunerd-soak options]
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

minutes=10 seconds="" rate=200 build=build keep=0
kill_every=10 sample_every=5 growth_pct=10
# Event streams have a class of their own (2,048 by default), apart from
# the 256 request connections the REST load and the slowloris share.
subscribers=1000
extra=()
while [ $# -gt 0 ]; do
	case "$1" in
	--minutes) minutes=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--subscribers) subscribers=$2; shift 2 ;;
	--rate) rate=$2; shift 2 ;;
	--build-dir) build=$2; shift 2 ;;
	--kill-every) kill_every=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--) shift; extra=("$@"); break ;;
	*) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
	esac
done
seconds=${seconds:-$((minutes * 60))}

echo "== soak: build ($build)"
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DTUNERD_WERROR=ON >/dev/null
cmake --build "$build" -j2 --target tunerd tunerd-simbox tunerd-mkfw-xc3028 \
	mt2060 qt1010 xc3028 tunerd-soak >/dev/null
case "$build" in /*) ;; *) build=$top/$build ;; esac
bin=$build/bin

work=$(mktemp -d "${TMPDIR:-/tmp}/tunerd-soak.XXXXXX")
box_pid="" daemon_pid="" loop_pids=()
cleanup() {
	for p in "${loop_pids[@]}" $daemon_pid $box_pid; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

rss_kb() { awk '/^VmRSS/ {print $2; f=1} END {if (!f) print 0}' "/proc/$1/status" 2>/dev/null || echo 0; }
# A process's own pages (USS): a worker's RSS also counts the pages it
# still shares with the daemon it was forked from.
uss_kb() { awk '/^Private_(Clean|Dirty)/ {s += $2} END {print s + 0}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
workers() { cat /proc/"$daemon_pid"/task/*/children 2>/dev/null || true; }

# ---- the box and the daemon ----
mkdir -p "$work/fw" "$work/state"
"$bin/tunerd-mkfw-xc3028" "$work/fw/xc3028-v27.fw" >/dev/null
tuners=$(printf 'mt2060,qt1010,xc3028,mt2060,%.0s' $(seq 16))
"$bin/tunerd-simbox" --socket "$work/sim.sock" --app-socket "$work/app.sock" \
	--tuners "${tuners%,}" --env kmod/sim/env/uk-crystal-palace.env \
	--firmware "$work/fw/xc3028-v27.fw" >"$work/box.log" 2>&1 &
box_pid=$!
for _ in $(seq 200); do [ -S "$work/sim.sock" ] && break; sleep 0.05; done

# The slowloris comes from this machine's global address when it has one,
# so it meets the per-address cap as a remote attacker would; the daemon
# then listens on every address (with no tokens, only loopback may use it).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
src=$(ip -o -4 addr show scope global 2>/dev/null | awk '{split($4, a, "/"); print a[1]; exit}')
listen=127.0.0.1 slow=(--slow-conns 16)
[ -n "$src" ] && listen=0.0.0.0 slow=(--slow-conns 64 --slow-source "$src")
state=()
"$bin/tunerd" --help | grep -q -- --state-dir && state=(--state-dir "$work/state")
# The event ring grows with the events it keeps, up to its byte bound
# (64 MiB by default, hours of events): 8 MiB here is full within the
# first half of a 2-minute soak, so the RSS of the second half shows a
# leak rather than the ring filling up.
ring=()
"$bin/tunerd" --help | grep -q -- --event-ring-mib && ring=(--event-ring-mib 8)
"$bin/tunerd" --stub "sim:$work/sim.sock" --plugin-dir "$build/plugins" \
	--firmware-dir "$work/fw" --listen "$listen:$port" --name soak \
	"${state[@]}" "${ring[@]}" >"$work/tunerd.log" 2>&1 &
daemon_pid=$!
api=http://127.0.0.1:$port/api/v1
ready=0
for _ in $(seq 600); do
	ready=$(curl -sf "$api/tuners" 2>/dev/null | grep -o '"state":"ready"' | wc -l || true)
	[ "$ready" -eq 64 ] && break
	sleep 0.1
done
if [ "$ready" -ne 64 ]; then
	echo "soak: FAIL: only $ready of 64 tuners ready" >&2
	tail -20 "$work/tunerd.log" >&2
	exit 1
fi
echo "== soak: $seconds s, $subscribers subscribers, $rate tunes/s, a worker killed every ${kill_every} s (in $work)"

# ---- the samplers: RSS every few seconds, a worker killed every few ----
t0=$EPOCHREALTIME
(
	while kill -0 "$daemon_pid" 2>/dev/null; do
		w=0 u=0 n=0 each=""
		for k in $(workers); do
			x=$(uss_kb "$k")
			w=$((w + $(rss_kb "$k"))) u=$((u + x)) n=$((n + 1))
			each+=" $k:$x"
		done
		echo "$(awk -v a="$EPOCHREALTIME" -v b="$t0" 'BEGIN {printf "%.1f", a - b}') $(rss_kb "$daemon_pid") $(rss_kb "$box_pid") $w $u $n$each"
		sleep "$sample_every"
	done
) >"$work/rss.txt" &
loop_pids+=($!)
(
	while sleep "$kill_every" && kill -0 "$daemon_pid" 2>/dev/null; do
		pids=($(workers))
		[ ${#pids[@]} -gt 0 ] || continue
		victim=${pids[RANDOM % ${#pids[@]}]}
		kill -KILL "$victim" 2>/dev/null && echo "$victim"
	done
) >"$work/kills.txt" &
loop_pids+=($!)

# ---- the load and the driver's checks ----
set +e
"$bin/tunerd-soak" --port "$port" --seconds "$seconds" \
	--subscribers "$subscribers" --rate "$rate" "${slow[@]}" "${extra[@]}" \
	2>"$work/driver.err" | tee "$work/driver.txt"
driver_rc=${PIPESTATUS[0]}
set -e
kill "${loop_pids[@]}" 2>/dev/null || true
wait "${loop_pids[@]}" 2>/dev/null || true
loop_pids=()
failed=0
[ "$driver_rc" -eq 0 ] || failed=1
if [ -s "$work/driver.err" ]; then
	echo "driver's notes (first 10 of $(wc -l <"$work/driver.err")):"
	head -10 "$work/driver.err" | sed 's/^/  /'
fi

# ---- RSS: the curve, and the slope over the second half ----
echo
echo "worker processes killed with SIGKILL: $(wc -l <"$work/kills.txt")"
echo "RSS (MiB) every ${sample_every} s, $(wc -l <"$work/rss.txt") samples (at most 20 rows shown):"
awk -v pct="$growth_pct" -f tests/soak/soak_rss.awk "$work/rss.txt" || failed=1

# ---- CPU: who had the two cores ----
# /proc/PID/stat after the command name (which may hold spaces): the
# state is field 1, utime 12, stime 13, reaped children's 14 and 15.
stat_s() {
	for p in $1; do sed 's/.*) //' "/proc/$p/stat" 2>/dev/null; done |
		awk -v hz="$(getconf CLK_TCK)" -v a="$2" -v b="$3" '{s += $a + $b} END {printf "%.1f", s / hz}'
}
cpu_s() { stat_s "$1" 12 13; }
reaped_s() { stat_s "$1" 14 15; }
w=$(cpu_s "$(workers)")
echo "CPU seconds over the run: daemon $(cpu_s "$daemon_pid"), box $(cpu_s "$box_pid"), workers alive $w, workers reaped $(reaped_s "$daemon_pid")"

# ---- the daemon at the end ----
if ! kill -0 "$daemon_pid" 2>/dev/null; then
	echo "FAIL   the daemon is gone"
	failed=1
elif ! box=$(curl -sf --max-time 10 "$api/box"); then
	echo "FAIL   the daemon does not answer GET /api/v1/box"
	failed=1
else
	echo "the daemon answers at the end: $box"
fi
kill -TERM "$daemon_pid" 2>/dev/null || true
rc=0
wait "$daemon_pid" || rc=$?
daemon_pid=""
[ "$rc" -eq 0 ] || { echo "FAIL   the daemon exited $rc on SIGTERM"; failed=1; }
kill -TERM "$box_pid" 2>/dev/null || true
wait "$box_pid" 2>/dev/null || true
box_pid=""

if [ "$failed" -ne 0 ]; then
	echo "== soak FAILED (logs kept in $work)"
	exit 1
fi
echo "== soak passed"
[ "$keep" -eq 1 ] && echo "logs kept in $work" || rm -rf "$work"

#!/usr/bin/env bash
# Builds tunerd and starts a demo box: the simulated box with several
# tuners of the three chips on a real region's spectrum, the daemon on it,
# and the dashboard.  Tuner 1 is tuned to BBC ONE's multiplex and the
# script prints a stream URL for VLC or ffplay: the box's test card (made
# by ffmpeg on the first run, cached in the run directory).  Ctrl-C stops
# both.
# A second box (two tuners, its daemon on PORT+1, the first box's page
# listed in its CORS origins) makes the dashboard a console of two boxes.
# Environment: PORT (default 8080), LISTEN (default 127.0.0.1),
# TUNERS (default mt2060,qt1010,xc3028,mt2060,xc3028,qt1010).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

scripts/deps.sh build demo
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" >/dev/null

port=${PORT:-8080}
listen=${LISTEN:-127.0.0.1}
tuners=${TUNERS:-mt2060,qt1010,xc3028,mt2060,xc3028,qt1010}
run=${XDG_RUNTIME_DIR:-/tmp}/tunerd-demo
mkdir -p "$run/fw"
[ -f "$run/fw/xc3028-v27.fw" ] || build/bin/tunerd-mkfw-xc3028 "$run/fw/xc3028-v27.fw"

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

build/bin/tunerd-simbox --socket "$run/sim.sock" --app-socket "$run/app.sock" \
	--tuners "$tuners" --env kmod/sim/env/uk-crystal-palace.env \
	--firmware "$run/fw/xc3028-v27.fw" --trace "$run/i2c.trace" \
	2>"$run/simbox.log" &
pids+=($!)
for _ in $(seq 100); do [ -S "$run/sim.sock" ] && break; sleep 0.05; done

build/bin/tunerd --stub "sim:$run/sim.sock" --plugin-dir build/plugins \
	--firmware-dir "$run/fw" --web-root "$top/web" \
	--listen "$listen:$port" --name demo-box --state-dir "$run/state" \
	2>"$run/tunerd.log" &
pids+=($!)

# the second box: its own simulated box, state and config
port2=$((port + 1))
mkdir -p "$run/b"
cat >"$run/b/tunerd.json" <<EOT
{"name":"demo-box-2","cors":{"origins":["http://$listen:$port","http://127.0.0.1:$port","http://localhost:$port"]}}
EOT
build/bin/tunerd-simbox --socket "$run/b/sim.sock" --app-socket "$run/b/app.sock" \
	--tuners mt2060,xc3028 --env kmod/sim/env/uk-crystal-palace.env \
	--firmware "$run/fw/xc3028-v27.fw" 2>"$run/b/simbox.log" &
pids+=($!)
for _ in $(seq 100); do [ -S "$run/b/sim.sock" ] && break; sleep 0.05; done
build/bin/tunerd --stub "sim:$run/b/sim.sock" --plugin-dir build/plugins \
	--firmware-dir "$run/fw" --listen "$listen:$port2" \
	--config "$run/b/tunerd.json" --state-dir "$run/b/state" \
	2>"$run/b/tunerd.log" &
pids+=($!)

# the API from here (a wildcard listen address is reached on loopback)
case $listen in 0.0.0.0 | "[::]" | ::) api=127.0.0.1 ;; *) api=$listen ;; esac
base="http://$api:$port/api/v1"
for _ in $(seq 100); do
	curl -sf -o /dev/null "$base/box" && break
	kill -0 "${pids[1]}" 2>/dev/null || { cat "$run/tunerd.log" >&2; exit 1; }
	sleep 0.1
done

# BBC ONE's service id and its multiplex, from the environment file
read -r sys freq bw sid < <(awk '
	/^[[:space:]]*#/ { next }
	/^[A-Z]/ { sys = $1; freq = $2; bw = $3; next }
	$1 == "SERVICE" && /"BBC ONE/ { print sys, freq, bw, $2; exit }
	' kmod/sim/env/uk-crystal-palace.env)
curl -sf -o /dev/null -H 'Content-Type: application/json' \
	-d "{\"delivery_system\":\"$sys\",\"frequency\":$freq,\"bandwidth\":$bw,\"wait_lock_ms\":5000}" \
	"$base/tuners/1/tune" || echo "demo.sh: tuning tuner 1 failed (see $run/tunerd.log)" >&2
stream="http://$listen:$port/api/v1/tuners/1/stream?service=$sid"
# The box makes a service's test card with ffmpeg when the multiplex is
# first read, then keeps it: a reader while it does, so the first player
# gets a picture at once.
card_made() {
	local f
	for f in "$run"/tscard/card1-"$sid"-*.ts; do
		case ${f##*/} in *.tmp*) ;; *) [ -f "$f" ] && return 0 ;; esac
	done
	return 1
}
if command -v ffmpeg >/dev/null && ! card_made; then
	echo "making the test cards (once; up to a minute)..."
	curl -s -o /dev/null --max-time 120 "$base/tuners/1/stream" &
	warm=$!
	for _ in $(seq 1200); do
		card_made && break
		sleep 0.1
	done
	kill "$warm" 2>/dev/null || true
fi

cat <<EOT
tunerd demo box is up.
  console:     http://$listen:$port/#box=http://$listen:$port2
               (both boxes; the second is kept in the browser once added)
  stream:      $stream
               (BBC ONE's test card on tuner 1; the whole multiplex without ?service=)
  play it:     vlc '$stream'
               ffplay '$stream'
  API:         http://$listen:$port/api/v1/tuners
  events:      curl -N http://$listen:$port/api/v1/events
  kernel side: build/bin/tunerd-simctl -s $run/app.sock tune 1 DVBT 482000000 8000000
  logs:        $run/simbox.log  $run/tunerd.log  (I2C trace: $run/i2c.trace)
               second box: $run/b/
Ctrl-C stops both boxes.
EOT
wait -n "${pids[@]}"

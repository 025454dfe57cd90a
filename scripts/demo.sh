#!/usr/bin/env bash
# Builds tunerd and starts a demo box: the simulated box with several
# tuners of the three chips on a real region's spectrum, the daemon on it,
# and the dashboard.  Ctrl-C stops both.
# Environment: PORT (default 8080), LISTEN (default 127.0.0.1),
# TUNERS (default mt2060,qt1010,xc3028,mt2060,xc3028,qt1010).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

scripts/deps.sh build
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
sleep 0.5
kill -0 "${pids[1]}" 2>/dev/null || { cat "$run/tunerd.log" >&2; exit 1; }

cat <<EOT
tunerd demo box is up.
  dashboard:   http://$listen:$port/
  API:         http://$listen:$port/api/v1/tuners
  events:      curl -N http://$listen:$port/api/v1/events
  kernel side: build/bin/tunerd-simctl -s $run/app.sock tune 1 DVBT 482000000 8000000
  logs:        $run/simbox.log  $run/tunerd.log  (I2C trace: $run/i2c.trace)
Ctrl-C stops the box.
EOT
wait -n "${pids[@]}"

#!/usr/bin/env bash
# A simulated fleet on this machine: N boxes (default 8), each in its own
# network namespace on a private bridge with the simulated box and tunerd
# (DNS-SD and the MQTT bridge on), one mosquitto broker, one Prometheus
# scraping every box, avahi-daemons for discovery.  Prints the URLs and
# runs until Ctrl-C (or --detach, then scripts/fleet.sh --stop); removes
# every namespace, process and file it made.  Needs root.
# Builds first, as demo.sh does, unless TUNERD_BIN names built programs.
# Options: scripts/fleet.sh --help (scripts/fleet.py does the work).
set -euo pipefail
cd "$(dirname "$0")/.."

case " $* " in
*" --stop "* | *" -h "* | *" --help "*) ;;
*)
	scripts/deps.sh build fleet
	if [ -z "${TUNERD_BIN:-}" ]; then
		cmake -S . -B build >/dev/null
		cmake --build build -j"$(nproc)" >/dev/null
	fi
	;;
esac
exec python3 scripts/fleet.py "$@"

#!/usr/bin/env bash
# Installs the Debian 12 packages the build and the tests need, only those
# that are missing.  Usage: scripts/deps.sh [build|test|kernel|fuzz|demo|fleet]...
set -euo pipefail

# libwslay-dev: the daemon's WebSocket framing (server/net/events);
# libwebsockets-dev: the WebSocket clients of the soak and bench_fanout.
# libdvbpsi-dev: the simulated box's PSI/SI tables and the streams'
# rewritten PAT.  libdvbv5-dev (which needs libudev-dev for its pkg-config
# file): the streams' PAT/PMT parsing, the scan's PAT/SDT/NIT parsing and
# the dvbv5 channel files.  libsqlite3-dev: the tuners' history
# (server/history) in the state directory.
build_pkgs=(build-essential cmake pkg-config libmicrohttpd-dev libjansson-dev libhdhomerun-dev
	libwslay-dev libwebsockets-dev libuv1-dev libcurl4-openssl-dev
	libdvbv5-dev libudev-dev libdvbpsi-dev libavahi-client-dev
	libsqlite3-dev)
# libmosquitto-dev: the MQTT bridge (server/net/mqtt); libssl-dev: its
# SSL_pending() check of the TLS connection's buffered bytes, and
# libcrypto's SHA-1 and base64 for the WebSocket handshake.
build_pkgs+=(libmosquitto-dev libssl-dev)
# libsystemd-dev: sd_notify (Type=notify: READY, STATUS, the watchdog).
build_pkgs+=(libsystemd-dev)
# python3-yaml, python3-jsonschema: the OpenAPI test validates the answers
# against protocol/openapi.yaml.  ffmpeg: ffprobe checks the simulated
# box's streams, and ffmpeg makes its test cards.  dvb-tools:
# dvb-format-convert reads the daemon's dvbv5 channel export back.
# avahi-daemon, avahi-utils, dbus, iproute2: the DNS-SD test runs its own
# avahi-daemon and bus in a private network namespace.
# nginx, openssl: the TLS proxy test runs the shipped nginx site with
# a throw-away certificate.
test_pkgs=(python3 curl python3-websocket python3-yaml python3-jsonschema
	chromium ffmpeg dvb-tools nginx openssl
	avahi-daemon avahi-utils dbus iproute2)
# mosquitto, python3-paho-mqtt: test_mqtt.py runs the real broker and
# speaks to it with paho (mosquitto-clients for trying it by hand);
# openssl makes its throw-away TLS certificates.
test_pkgs+=(mosquitto mosquitto-clients python3-paho-mqtt openssl)
# python3-requests, python3-pytest, python3-venv, python3-pip: the tunerd
# Python package (clients/python) and its pytest suite, which also installs
# it into a venv with pip.
test_pkgs+=(python3-requests python3-pytest python3-venv python3-pip)
# nodejs, npm: the console's browser test (tests/integration/test_console.py)
# installs puppeteer-core from its package-lock.json with npm ci and drives
# the Debian chromium with it; scripts/vendor_uplot.sh uses npm pack.  A
# machine with Node.js from elsewhere keeps it: NodeSource's nodejs bundles
# npm and conflicts with Debian's npm package.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	test_pkgs+=(nodejs npm)
fi
# hdhomerun-config: the real HDHomeRun client drives the box's HDHomeRun
# face; iproute2: those tests put the clients in a network namespace.
test_pkgs+=(hdhomerun-config iproute2)
# The package test: dpkg-dev (dpkg-shlibdeps for CPack's Depends),
# lintian, fakeroot (dpkg --root without root), systemd (systemd-analyze
# verify of the unit, offline).
test_pkgs+=(dpkg-dev lintian fakeroot systemd)
# prometheus: its server scrapes two daemons, promtool checks /metrics.
test_pkgs+=(prometheus)
# python3: the kernel test compares the parity traces (tests/traces).
kernel_pkgs=(qemu-system-x86 busybox-static cpio kmod python3)
# The libFuzzer targets (tests/fuzz, scripts/fuzz.sh): clang-14 with its
# sanitizer and libFuzzer runtimes (libclang-rt-14-dev holds the
# -fsanitize=fuzzer runtime, libfuzzer-14-dev libFuzzer itself).
fuzz_pkgs=(clang-14 libclang-rt-14-dev libfuzzer-14-dev)
# fleet.sh runs a broker, Prometheus, and a D-Bus bus and avahi-daemon per
# network namespace (iproute2: the namespaces, veths and bridge;
# util-linux: unshare gives each avahi-daemon its own /run).
fleet_pkgs=(mosquitto prometheus avahi-daemon avahi-utils dbus iproute2 util-linux)
# test_fleet.py runs fleet.sh and reads the broker with mosquitto_sub.
test_pkgs+=("${fleet_pkgs[@]}" mosquitto-clients)
# demo.sh: curl tunes the demo box and ffmpeg makes its test cards.
demo_pkgs=(curl ffmpeg)

want=("${build_pkgs[@]}")
for set in "$@"; do
	case "$set" in
	build) ;;
	test) want+=("${test_pkgs[@]}") ;;
	kernel) want+=("${kernel_pkgs[@]}") ;;
	fuzz) want+=("${fuzz_pkgs[@]}") ;;
	demo) want+=("${demo_pkgs[@]}") ;;
	fleet) want+=("${fleet_pkgs[@]}") ;;
	*) echo "deps.sh: unknown set '$set'" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
	"${missing[@]}" >/dev/null

#!/usr/bin/env bash
# The tuner stub in a real Debian kernel under QEMU.
#
# Installs what it needs from Debian (QEMU, busybox, the headers of the
# kernel linux-image-amd64 depends on), fetches that kernel's image
# package (unpacked, never installed), builds the stub, the virtual bridge,
# the daemon and the guest tool, packs them into an initramfs and boots
# it.  The guest prints "TUNERD-CHECK <name> PASS|FAIL"; this script exits
# 0 only when every required check passed.
#
# Usage: tests/kernel/run-qemu.sh [--build-dir DIR] [--work-dir DIR]
#        [--daemon auto|tunerd|ktest] [--timeout SECONDS] [--no-update]
#   --build-dir  CMake build tree of the project (default: WORK/cmake);
#                built here if tunerd is missing
#   --work-dir   downloads, unpacked kernel, initramfs (default:
#                build-kernel/ in the source tree)
#   --daemon     the daemon in the guest: tunerd, or the minimal daemon
#                of tests/kernel/ktest; auto (default) takes tunerd when
#                it builds; with CI=true the default is tunerd, so a
#                daemon that does not build fails the run
#   --timeout    the guest's whole run (default 600)
#   --no-update  no apt-get update
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$root/build-kernel
build_dir=
daemon=auto
[ "${CI:-}" = true ] && daemon=tunerd
guest_timeout=600
apt_update=1
# The stub's request deadline (its module default).  It must exceed the
# daemon's own bound for a cold start's first answers: a LOAD_PLUGIN waits
# for the plugin's trial child (fork, dlopen, describe), which the daemon
# allows PLUGIN_TRIAL_TIMEOUT_MS (2000 ms) before refusing the plugin,
# and an ATTACH for a worker's fork and the chip's probe.  Under TCG on
# a loaded host the first announce took 1.2 s for LOAD_PLUGIN (the three
# trials share the guest's one CPU and end together) and 0.45 s for the
# MT2060's ATTACH (its probe calibrates), so 1500 ms timed out announces
# that the daemon was still working on as designed.  The daemon-init
# check prints these steps with their times.
# shellcheck disable=SC2034 # used by lib/build.sh
stub_timeout_ms=3000

# The checks the guest must pass (tests/kernel/guest/checks.sh).
REQUIRED_CHECKS=(module-load frontend-present no-daemon-enotconn
	abi-nodaemon daemon-init plugin-on-demand second-daemon-refused
	abi-daemon mt2060-474-bytes mt2060-frequencies fe-lock
	lock-from-chip qt1010-tune xc3028-tune deadline-timeout
	signal-eintr daemon-kill-abort daemon-restart reattach-sync analog-subdev
	netapi-kernel-tune netapi-api-tune dvr-direct netapi-stream
	frontend-rules-api kernel-tuner-variant
	parity-traces rmmod-clean frontend-rules dmesg-clean)

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
	case $1 in
	--build-dir) build_dir=$(realpath -m "$2"); shift 2 ;;
	--work-dir) work=$(realpath -m "$2"); shift 2 ;;
	--daemon) daemon=$2; shift 2 ;;
	--timeout) guest_timeout=$2; shift 2 ;;
	--no-update) apt_update=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
case $daemon in auto | tunerd | ktest) ;; *) usage >&2; exit 2 ;; esac
[ -n "$build_dir" ] || build_dir=$work/cmake

t0=$(date +%s%N)
report_time() {
	local ms=$((($(date +%s%N) - t0) / 1000000))
	printf 'run-qemu: total run time %d.%03d s\n' $((ms / 1000)) $((ms % 1000))
}
trap report_time EXIT

log() { printf '== %s\n' "$*"; }
die() { printf 'run-qemu: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (apt-get, depmod on the image)"
mkdir -p "$work"
. "$root/tests/kernel/lib/build.sh"

# --- host packages and the kernel ------------------------------------
kernel_version() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*-amd64\)$/\1/p' |
		head -n 1
}

install_packages() {
	[ $apt_update -eq 1 ] && apt-get update -qq
	KVER=$(kernel_version)
	[ -n "$KVER" ] || die "no kernel version from linux-image-amd64"
	log "target kernel $KVER"
	"$root/scripts/deps.sh" build kernel
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "linux-headers-$KVER" make gcc \
		libc6-dev jq >/dev/null
	KDIR=/usr/src/linux-headers-$KVER
	[ -d "$KDIR" ] || die "no $KDIR"
}

fetch_image() {
	IMG=$work/image-$KVER
	[ -f "$IMG/boot/vmlinuz-$KVER" ] && [ -f "$IMG/.depmod-done" ] && return
	log "fetching linux-image-$KVER (unpacked, not installed)"
	mkdir -p "$work/debs"
	# Kernels the archive moved on from.
	rm -rf "$work"/image-* "$work"/debs/linux-image-*.deb
	(cd "$work/debs" && apt-get download -q "linux-image-$KVER" 2>&1 |
		grep -v 'unsandboxed' || true)
	local deb
	deb=$(ls "$work/debs/linux-image-${KVER}_"*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || die "apt-get download linux-image-$KVER failed"
	rm -rf "$IMG"
	dpkg-deb -x "$deb" "$IMG"
	# The package's modules come without modules.dep.
	depmod -b "$IMG" "$KVER"
	touch "$IMG/.depmod-done"
}

# --- the guest ---------------------------------------------------------
run_guest() {
	local console=$work/console.log
	rm -f "$work/traces.raw"
	log "booting $KVER under QEMU (TCG)"
	local tq
	tq=$(date +%s%N)
	# log_buf_len: the frontend-rules check reads the summary every load
	# of the bridge logs at unload; the default 128 KiB ring loses them.
	timeout -k 10 "$guest_timeout" qemu-system-x86_64 -accel tcg -m 1G \
		-smp 1 -nographic -no-reboot -nic none \
		-kernel "$IMG/boot/vmlinuz-$KVER" -initrd "$work/initramfs.gz" \
		-serial mon:stdio -serial file:"$work/traces.raw" \
		-append "console=ttyS0 panic_on_warn=1 panic=-1 oops=panic loglevel=4 log_buf_len=8M" \
		</dev/null >"$console" 2>&1 || true
	local ms=$((($(date +%s%N) - tq) / 1000000))
	printf 'run-qemu: guest ran %d.%03d s\n' $((ms / 1000)) $((ms % 1000))
}

judge() {
	local console=$work/console.log failed=0 name line
	# The minimal daemon tunes only the MT2060 and has no network API.
	[ "$daemon" = tunerd ] || mapfile -t REQUIRED_CHECKS < <(printf '%s\n' \
		"${REQUIRED_CHECKS[@]}" | grep -v -e qt1010-tune -e xc3028-tune \
		-e netapi- -e parity-)
	tr -d '\r' <"$console" >"$console.txt"
	grep -a 'TUNERD-CHECK' "$console.txt" || true
	for name in "${REQUIRED_CHECKS[@]}"; do
		line=$(grep -a "TUNERD-CHECK $name " "$console.txt" |
			tail -n 1 || true)
		case $line in
		*"TUNERD-CHECK $name PASS"*) ;;
		'') echo "run-qemu: $name: no result"; failed=$((failed + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
	done
	grep -aq 'TUNERD-DONE' "$console.txt" ||
		{ echo "run-qemu: the guest did not finish"; failed=$((failed + 1)); }
	if grep -aEq 'Kernel panic|BUG:|Oops|WARNING:' "$console.txt"; then
		echo "run-qemu: the kernel complained on the console"
		failed=$((failed + 1))
	fi
	if [ "$daemon" = tunerd ]; then
		parity || failed=$((failed + 1))
	fi
	local total=${#REQUIRED_CHECKS[@]} passed
	passed=$(grep -ac 'TUNERD-CHECK [^ ]* PASS' "$console.txt" || true)
	if [ $failed -ne 0 ]; then
		echo "---- console (last 200 lines)"
		tail -n 200 "$console.txt"
		echo "run-qemu: $failed of $total checks failed"
		echo "kernel: $passed passed, $failed failed"
		return 1
	fi
	echo "run-qemu: all $total checks passed"
	echo "kernel: $total passed, 0 failed"
}

# The traces of the parity check, one file per chip and tuner in
# WORK/traces/, compared byte for byte (tests/traces/trace_compare.py);
# every difference is listed in WORK/traces/differences.txt.
parity() {
	rm -rf "$work/traces"
	mkdir -p "$work/traces"
	[ -s "$work/traces.raw" ] || { echo "run-qemu: no parity traces"; return 1; }
	python3 "$root/tests/traces/trace_compare.py" --split "$work/traces.raw" \
		--out "$work/traces" &&
		python3 "$root/tests/traces/trace_compare.py" \
			--readme "$root/plugins/README.md" \
			--report "$work/traces/differences.txt" "$work/traces"
}

install_packages
fetch_image
build_modules
build_userspace
stage_initramfs
run_guest
judge

#!/bin/sh
# Parity with the in-kernel drivers (sourced by checks.sh, busybox sh).
#
# For each chip the virtual bridge is loaded twice with one frontend on
# the same board (address, IF, write length, firmware file): once with
# the stub as its tuner (tunerd and the plugin), once with Linux's own
# driver.  The same sweep of tuner calls goes to both through
# <debugfs>/vbridge/oracle, and the I2C trace of each (segments, bridge
# callbacks, request marks) is written to the second serial port, which
# run-qemu.sh keeps and compares (tests/traces/trace_compare.py).
#
# shellcheck disable=SC2086

TRACE_PORT=/dev/ttyS1

# sweep_digital CHIP: DVB-T at 6/7/8 MHz and DVB-C over the chip's band,
# with sub-kHz frequencies, sleep/init between tunes.
sweep_digital() {
	hi=860000000
	[ "$1" = xc3028 ] && hi=862000000
	echo init
	echo "dvbt 474000000 8000000"
	echo "dvbt 474249700 8000000"
	k=0
	while [ $k -lt 180 ]; do
		f=$((48000000 + k * 4550000 + (k % 5) * 333 + (k % 3) * 125250))
		[ $f -gt $hi ] && f=$hi
		case $((k % 4)) in
		0) echo "dvbt $f 8000000" ;;
		1) echo "dvbt $f 7000000" ;;
		2) echo "dvbt $f 6000000" ;;
		3) echo "dvbc $f 8000000" ;;
		esac
		[ $((k % 25)) -eq 12 ] && echo sleep && echo init
		k=$((k + 1))
	done
	echo "dvbt 48000000 8000000"
	echo "dvbt $hi 8000000"
	echo "dvbt 177500999 7000000"
	echo sleep
	echo init
	echo "dvbt 858000000 8000000"
}

# sweep_analog: TV in several standards and FM radio, standard changes
# back and forth between analog, radio and digital (XC3028).
sweep_analog() {
	# PAL-BG, PAL-I, PAL-DK, NTSC-M, SECAM-L
	for std in 0x7 0x10 0xe0 0xb000 0x400000; do
		for f in 48250000 175250000 471250000 855250000; do
			echo "atv $f $std"
		done
		echo "dvbt 506000000 8000000"
	done
	for f in 87500000 98500000 107900000; do
		echo "radio $f"
	done
	echo "atv 175250000 0x7"
	echo "radio 98500000"
	echo "dvbt 226500000 7000000"
	echo "atv 623250000 0x10"
	echo "dvbt 666000000 8000000"
	echo "atv 623250000 0x10"
	echo sleep
	echo "atv 623250000 0x10"
}

sweep() {
	sweep_digital $1
	[ "$1" = xc3028 ] && sweep_analog
}

# parity_ready CHIP SIDE: the stub's tuner is bound to the daemon's
# worker, or the in-kernel driver can tune.
parity_ready() {
	if [ "$2" = stub ]; then
		grep -q 'bound=1' $ST/clients
	elif [ "$1" = xc3028 ]; then
		# The firmware file is requested at attach and read in the
		# background; tunes before that fail with EAGAIN.
		dmesg | grep -q 'firmware images from xc3028-v27.fw'
	fi
}

# parity_run CHIP SIDE: one sweep, its trace to the trace port.
parity_run() {
	chip=$1 side=$2
	case $side/$chip in
	kernel/mt2060) modprobe mt2060 ;;
	kernel/qt1010) modprobe qt1010 ;;
	kernel/xc3028) modprobe xc2028 ;;
	esac
	# The log is cleared for this run's firmware check: the bridge's
	# frontend-rules summaries so far are kept for that check first.
	dmesg | grep 'vbridge: frontend rules' >>/tmp/rules-kept.log
	dmesg -c >/dev/null
	insmod /lib/modules/$(uname -r)/extra/vbridge.ko chips=$chip \
		tuners=$side || return 1
	wait_for 30 parity_ready $chip $side || return 1
	# The stub's attach is the plugin's probe and the daemon's init after
	# it, both before any request the worker serves: the same as an
	# in-kernel driver's attach and the first open of the frontend.
	echo "mark attached" >$VB/oracle
	[ $side = kernel ] && echo attach >$VB/oracle
	n=0
	sweep $chip >/tmp/sweep.txt
	while read -r req; do
		echo "$req" >$VB/oracle || return 1
		n=$((n + 1))
	done </tmp/sweep.txt
	{
		echo "=== $chip $side"
		cat $VB/trace
		echo "=== end"
	} >$TRACE_PORT
	grep -q '^trace_dropped 0$' $VB/info || return 1
	say "$chip $side: $n requests, $(grep -c ' [RW] ' $VB/trace) segments"
	rmmod vbridge
}

# The kernel side runs without tunerd: it is stopped for the whole
# comparison and started again (no network API, so no status sampler
# adds reads of its own) for the stub side.
t_parity() {
	stop_daemon
	! grep -q '^vbridge ' /proc/modules || rmmod vbridge || return 1
	for chip in mt2060 qt1010 xc3028; do
		parity_run $chip kernel || return 1
	done
	/opt/tunerd/bin/tunerd --stub kernel:/dev/tuner \
		--plugin-dir /opt/tunerd/plugins \
		--firmware-dir /opt/tunerd/firmware >/tmp/daemon-parity.log 2>&1 &
	wait_for 20 connected || return 1
	for chip in mt2060 qt1010 xc3028; do
		parity_run $chip stub || return 1
	done
	stop_daemon
}

#!/bin/sh
# The kernel test's checks, run in the QEMU guest (busybox sh).  Each
# prints "TUNERD-CHECK <name> PASS" or "TUNERD-CHECK <name> FAIL: why";
# run-qemu.sh on the host lists the names it requires.
#
# /etc/ktest.conf (written by run-qemu.sh) sets:
#   DAEMON      tunerd or ktestd (the minimal daemon of ktest)
#   TIMEOUT_MS  the stub's request deadline (module parameter)
#
# Lists of pids and module arguments are split on purpose:
# shellcheck disable=SC2046,SC2086

. /etc/ktest.conf

ST=/sys/kernel/debug/tuner_stub
VB=/sys/kernel/debug/vbridge
OUT=/tmp/check.out
DLOG=0
API=http://127.0.0.1:8080/api/v1
# A frequency no other check tunes, so its event is the kernel's tune.
NETAPI_KERNEL_HZ=602000000
# 490 MHz by the MT2060 formulas: LO1 1710 MHz (DIV1 106, NUM1 56), LO2
# 1183.85 MHz (DIV2 73, NUM2 8115), LNABAND 0x50: registers 1..5.
NETAPI_API_HZ=490000000
NETAPI_API_BURST="01 5e 6a 03 fb 93"
# Three DVB-T frontends (mt2060, qt1010, xc3028) and an analog xc3028.
VBRIDGE_ARGS="analog=xc3028"
NCLIENTS=4

mark() {
	echo "TUNERD-CHECK $1 $2${3:+: $3}"
}

# check NAME FUNCTION: runs it, its output goes to $OUT.
check() {
	name=$1
	shift
	if "$@" >$OUT 2>&1; then
		mark "$name" PASS "$(grep . $OUT | tail -n 1 | cut -c1-160)"
	else
		mark "$name" FAIL "$(tail -n 4 $OUT | tr '\n' ' ')"
	fi
}

# wait_for SECONDS COMMAND...: until the command succeeds.
wait_for() {
	n=$(($1 * 10))
	shift
	while [ $n -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

say() {
	echo "$*"
}

connected() {
	grep -q '^daemon connected' $ST/state
}

# announced N: at least N clients known to the connected daemon.
announced() {
	[ "$(grep -c 'announced=1' $ST/clients)" -ge "$1" ]
}

stat_of() {
	sed -n "s/^$1 //p" $ST/state
}

# gone PID: the process has exited (or is a zombie nobody reaped yet).
gone() {
	! kill -0 $1 2>/dev/null ||
		grep -q '^[0-9]* ([^)]*) Z' /proc/$1/stat 2>/dev/null
}

# client_stat CLIENT KEY: a counter of <debugfs>/tuner_stub/clients.
client_stat() {
	sed -n "s/^client=$1 .* $2=\([0-9-]*\).*/\1/p" $ST/clients
}

daemon_pids() {
	pidof $DAEMON
}

start_daemon() {
	DLOG=$((DLOG + 1))
	if [ "$DAEMON" = tunerd ]; then
		/opt/tunerd/bin/tunerd --stub kernel:/dev/tuner \
			--plugin-dir /opt/tunerd/plugins \
			--firmware-dir /opt/tunerd/firmware -v \
			--state-dir /tmp/state-$DLOG \
			--listen 127.0.0.1:8080 >/tmp/daemon-$DLOG.log 2>&1 &
	else
		/bin/ktestd daemon >/tmp/daemon-$DLOG.log 2>&1 &
	fi
}

stop_daemon() {
	pids=$(daemon_pids)
	[ -n "$pids" ] && kill $pids 2>/dev/null
	wait_for 10 sh -c "! pidof $DAEMON >/dev/null"
	pids=$(daemon_pids)
	[ -n "$pids" ] && kill -9 $pids 2>/dev/null
	wait_for 5 sh -c "! pidof $DAEMON >/dev/null"
}

# chip_freq ADDR: the frequency the emulated chip at ADDR was tuned to.
chip_freq() {
	sed -n "s/^chip=.* addr=$1 .* frequency=\([0-9]*\) .*/\1/p" $VB/chips
}

tune() {
	ktest fe tune $ADAPTER "$@"
}

# ---------------------------------------------------------------------

t_module_load() {
	for ko in $(cat /etc/ktest/modules.load); do
		args=
		case $ko in
		*/tuner-stub.ko) args="timeout_ms=$TIMEOUT_MS" ;;
		*/vbridge.ko) args="$VBRIDGE_ARGS" ;;
		esac
		say "insmod $ko $args"
		insmod $ko $args || return 1
	done
	[ -c /dev/tuner ] && grep -q '^daemon none' $ST/state
}

t_frontends() {
	ADAPTER=$(sed -n 's/^dvb_adapter //p' $VB/info)
	I2C=$(sed -n 's/^i2c_adapter //p' $VB/info)
	cat $VB/info
	for f in 0 1 2; do
		[ -c /dev/dvb/adapter$ADAPTER/frontend$f ] || return 1
	done
}

# Without a daemon every request fails at once with ENOTCONN.
t_no_daemon() {
	ktest fe status $ADAPTER 0 | tee /tmp/st
	grep -q 'ENOTCONN' /tmp/st || return 1
	ms=$(sed -n 's/.* after \([0-9]*\) ms/\1/p' /tmp/st)
	[ "$ms" -lt 500 ]
}

t_daemon_init() {
	start_daemon
	wait_for 20 connected || return 1
	# The resend after INIT announces every tuner.
	wait_for 40 announced $NCLIENTS
	r=$?
	cat $ST/state $ST/clients
	# The cold start's steps with their times, on the console; when a
	# tuner was not announced, the daemon's whole start (the status
	# sampler's lines left out: they bury it).
	if [ $r -eq 0 ]; then
		grep -E 'connected|describes|loaded|attach|->' \
			/tmp/daemon-$DLOG.log | head -n 24 >/dev/console
	else
		grep -v 'status from sampler' /tmp/daemon-$DLOG.log |
			head -n 80 >/dev/console
	fi
	return $r
}

t_plugin_on_demand() {
	grep -q 'chip=3 name=MT2060 .*announced=1' $ST/clients &&
		grep -q 'chip=2 name=QT1010 .*announced=1' $ST/clients &&
		grep -q 'chip=1 name=XC3028 .*announced=1' $ST/clients
}

t_second_daemon() {
	pid=$(stat_of daemon_pid)
	refused=$(stat_of refused)
	ktest busy || return 1
	if [ "$DAEMON" = tunerd ]; then
		/opt/tunerd/bin/tunerd --stub kernel:/dev/tuner \
			--plugin-dir /opt/tunerd/plugins \
			--state-dir /tmp/state-second >/tmp/second.log 2>&1 &
		second=$!
		sleep 2
		kill $second
		wait $second
		cat /tmp/second.log
	fi
	say "refused: $refused -> $(stat_of refused), daemon pid $pid ->" \
		"$(stat_of daemon_pid)"
	[ "$(stat_of refused)" -gt "$refused" ] &&
		[ "$(stat_of daemon_pid)" = "$pid" ] && connected
}

t_mt2060_474() {
	echo clear >$VB/trace
	tune 0 474000000 8000000 || return 1
	grep "^i2c-$I2C 0x60 W 01 6e 69 03 fb 93\$" $VB/trace
}

t_mt2060_freqs() {
	for fb in 177500000:7000000 530000000:8000000 722000000:8000000 \
		858000000:8000000; do
		f=${fb%:*}
		tune 0 $f ${fb#*:} || return 1
		got=$(chip_freq 0x60)
		say "mt2060: asked $f, chip tuned to $got"
		[ "$got" = "$f" ] || return 1
	done
}

t_fe_lock() {
	tune 0 474000000 8000000 || return 1
	ktest fe status $ADAPTER 0 | tee /tmp/st
	grep -q 'FE_READ_STATUS -> OK (0) status 0x1f' /tmp/st
}

# The lock comes from the chip: a chip whose PLL never locks gives none.
t_lock_from_chip() {
	echo "nolock 0x60" >$VB/control
	ktest fe nolock $ADAPTER 0 530000000 2000
	r=$?
	echo "ok 0x60" >$VB/control
	[ $r -eq 0 ] && tune 0 530000000 8000000
}

t_chip_tune() {
	fe=$1 chip=$2 addr=$3 f=$4
	tune $fe $f 8000000 || return 1
	got=$(chip_freq $addr)
	say "$chip: asked $f, chip tuned to $got"
	[ "$got" = "$f" ]
}

# A daemon that does not answer: the caller gets ETIMEDOUT in time.
t_deadline() {
	before=$(grep -o 'timeouts=[0-9]*' $ST/clients | head -n 1)
	kill -STOP $(daemon_pids)
	ktest fe status $ADAPTER 0 | tee /tmp/st
	kill -CONT $(daemon_pids)
	grep -q 'ETIMEDOUT' /tmp/st || return 1
	ms=$(sed -n 's/.* after \([0-9]*\) ms/\1/p' /tmp/st)
	[ "$ms" -ge $((TIMEOUT_MS - 100)) ] &&
		[ "$ms" -le $((2 * TIMEOUT_MS + 1000)) ] || return 1
	say "client 1 $before -> $(grep -o 'timeouts=[0-9]*' $ST/clients |
		head -n 1)"
	sleep 1
	tune 0 474000000 8000000 || return 1
	cat /tmp/st
}

# A signal ends the caller's wait at once with EINTR; the daemon is sent
# TSTUB_INTERRUPT and the frontend works afterwards.
t_signal() {
	before=$(client_stat 1 interrupts)
	rm -f /tmp/go /tmp/go.open
	ktest fe status $ADAPTER 0 /tmp/go >/tmp/st 2>&1 &
	app=$!
	wait_for 10 test -e /tmp/go.open || return 1
	sleep 1
	kill -STOP $(daemon_pids)
	touch /tmp/go
	sleep 0.5
	kill -USR1 $app
	wait_for 5 gone $app
	r=$?
	kill -CONT $(daemon_pids)
	cat /tmp/st
	[ $r -eq 0 ] && grep -q 'EINTR' /tmp/st || return 1
	ms=$(sed -n 's/.* after \([0-9]*\) ms/\1/p' /tmp/st)
	say "interrupts of client 1: $before -> $(client_stat 1 interrupts)"
	[ "$ms" -lt "$TIMEOUT_MS" ] &&
		[ "$(client_stat 1 interrupts)" -gt "$before" ] || return 1
	sleep 0.5
	tune 0 474000000 8000000
}

# kill -9 of the daemon while a request waits: the caller gets an error
# at once, never hangs.
t_daemon_kill() {
	rm -f /tmp/go /tmp/go.open
	ktest fe status $ADAPTER 0 /tmp/go >/tmp/st 2>&1 &
	app=$!
	wait_for 10 test -e /tmp/go.open || return 1
	sleep 1
	kill -STOP $(daemon_pids)
	touch /tmp/go
	sleep 0.5
	kill -9 $(daemon_pids)
	wait_for 10 gone $app || {
		say "the application hangs"
		return 1
	}
	cat /tmp/st
	grep -q 'ECONNABORTED' /tmp/st || return 1
	ms=$(sed -n 's/.* after \([0-9]*\) ms/\1/p' /tmp/st)
	[ "$ms" -lt "$TIMEOUT_MS" ] || return 1
	wait_for 5 sh -c "! pidof $DAEMON >/dev/null"
	grep -q '^daemon none' $ST/state || return 1
	ktest fe status $ADAPTER 0 >/tmp/st2
	cat /tmp/st2
	grep -q 'ENOTCONN' /tmp/st2 || return 1
	say "the waiting application: $(cat /tmp/st)"
}

t_daemon_restart() {
	start_daemon
	wait_for 20 connected || return 1
	wait_for 40 announced $NCLIENTS || return 1
	cat $ST/clients
	t_chip_tune 0 mt2060 0x60 530000000
}

# With a daemon connected, attaching announces the tuner at once.
t_reattach_sync() {
	rmmod vbridge || return 1
	[ "$(grep -c client= $ST/clients)" -eq 0 ] || return 1
	insmod /lib/modules/$(uname -r)/extra/vbridge.ko $VBRIDGE_ARGS ||
		return 1
	cat $ST/clients
	announced $NCLIENTS || return 1
	wait_for 10 test -c /dev/dvb/adapter$ADAPTER/frontend0
	t_chip_tune 0 mt2060 0x60 474000000
}

# The V4L2 side: the analog subdevice tunes TV and radio through the
# daemon; with tunerd the XC3028 receives the divider (offset 0).
t_analog() {
	echo clear >$VB/trace
	echo "tv 175250000" >$VB/analog
	cat $VB/analog
	grep -q 'err=0' $VB/analog &&
		grep -q 'g_frequency=0 type=2 frequency=2804$' $VB/analog ||
		return 1
	[ "$DAEMON" = tunerd ] || return 0
	grep "^i2c-$I2C 0x64 W 00 00 2b d0\$" $VB/trace || return 1
	echo "radio 98500000" >$VB/analog
	cat $VB/analog
	grep -q 'err=0' $VB/analog &&
		grep -q 'type=1 frequency=1576000$' $VB/analog &&
		grep "^i2c-$I2C 0x64 W 00 00 18 a0\$" $VB/trace
}

# A frontend's tuner can be an in-kernel driver on the same virtual bus:
# Linux's mt2060.ko writes the same synthesizer burst as the plugin.
t_kernel_tuner() {
	rmmod vbridge || return 1
	insmod "$(find /lib/modules -name mt2060.ko | head -n 1)" || return 1
	insmod /lib/modules/$(uname -r)/extra/vbridge.ko tuners=kernel ||
		return 1
	cat $VB/info
	grep -q '^frontend0 mt2060@0x60 kernel$' $VB/info || return 1
	t_frontends >/dev/null || return 1
	echo clear >$VB/trace
	tune 0 474000000 8000000 || return 1
	grep "^i2c-$I2C 0x60 W 01 6e 69 03 fb 93\$" $VB/trace
}

# --- network API checks ----------------------------------------------
# tunerd serves the API on loopback (lo is up, see /init); no tokens are
# configured, so this loopback client is admin.  busybox wget fetches,
# jq reads the JSON.

# api_get PATH: the answer's body on stdout; fails on a non-2xx answer.
api_get() {
	wget -q -O- "$API$1"
}

# api_post PATH JSON: the body to /tmp/api.json, the status line of the
# answer (e.g. "HTTP/1.1 200") on stdout; fails on a non-2xx answer.
api_post() {
	wget -S -O /tmp/api.json --header 'Content-Type: application/json' \
		--post-data "$2" "$API$1" 2>/tmp/api.hdr
	r=$?
	sed -n 's|^ *\(HTTP/1\.[01] [0-9]*\).*|\1|p' /tmp/api.hdr
	return $r
}

# The API's id of the ready MT2060 (the stub's frontend 0).
api_mt2060_id() {
	api_get /tuners | jq -er '[.tuners[] |
		select(.chip.name == "MT2060" and .state == "ready")] |
		if length == 1 then .[0].id
		else error("ready MT2060 tuners: \(length)") end'
}

# api_tuner_is ID ORIGIN HZ: the tuner's params and last change.
api_tuner_is() {
	api_get /tuners/$1 >/tmp/tuner.json &&
		jq -e --arg o "$2" --argjson f "$3" '.params.frequency == $f and
		.params.delivery_system == "DVBT" and
		.params.bandwidth == 8000000 and .last_change.origin == $o' \
			/tmp/tuner.json >/dev/null
}

# sse_tune_in_capture ID ORIGIN HZ: the tuner.tune event is in the
# capture /tmp/sse.txt (printed, or why not).
sse_tune_in_capture() {
	jq -Rn -c -f /etc/ktest/sse.jq --argjson tuner $1 --arg origin $2 \
		--argjson freq $3 /tmp/sse.txt
}

# sse_tune_event ID ORIGIN HZ: /api/v1/events from the start of the ring
# (since=0) holds the tuner.tune event.  The wait is bounded in time: a
# capture of a long ring takes jq a while under TCG.
sse_tune_event() {
	wget -q -O /tmp/sse.txt --header 'Accept: text/event-stream' \
		"$API/events?since=0" &
	sse=$!
	end=$(($(date +%s) + 15))
	until sse_tune_in_capture "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt $end ] || break
		sleep 0.5
	done
	kill $sse 2>/dev/null
	wait $sse 2>/dev/null
	say "events: $(grep -c '^id:' /tmp/sse.txt) in the capture"
	ev=$(sse_tune_in_capture "$@") || return 1
	echo "$ev" | jq -r '"event \(.id) \(.event): tuner \(.data.tuner)," +
		" origin \(.data.origin), \(.data.params.frequency) Hz"'
}

api_up() {
	wget -q -O /dev/null "$API/box"
}

# A tune from the kernel (FE_SET_PROPERTY on the frontend) is seen by the
# network API: the tuner's params and last change, and the event stream.
t_netapi_kernel() {
	t_frontends >/dev/null || return 1
	wait_for 20 api_up || return 1
	id=$(api_mt2060_id) || return 1
	say "the MT2060 is tuner $id"
	tune 0 $NETAPI_KERNEL_HZ 8000000 || return 1
	wait_for 5 api_tuner_is $id kernel $NETAPI_KERNEL_HZ
	r=$?
	jq -c '{params, last_change}' /tmp/tuner.json
	[ $r -eq 0 ] && sse_tune_event $id kernel $NETAPI_KERNEL_HZ
}

# The API tunes the same tuner: the chip receives the plugin's burst, and
# the kernel's frontend works afterwards.
t_netapi_api() {
	id=$(api_mt2060_id) || return 1
	echo clear >$VB/trace
	body='"delivery_system":"DVBT","bandwidth":8000000'
	api_post /tuners/$id/tune "{$body,\"frequency\":$NETAPI_API_HZ}" \
		>/tmp/api.status
	cat /tmp/api.status /tmp/api.json
	echo
	[ "$(cat /tmp/api.status)" = "HTTP/1.1 200" ] || return 1
	jq -e --argjson id $id --argjson f $NETAPI_API_HZ \
		'.tuner == $id and .params.frequency == $f' /tmp/api.json \
		>/dev/null || return 1
	grep "^i2c-$I2C 0x60 W $NETAPI_API_BURST\$" $VB/trace || return 1
	got=$(chip_freq 0x60)
	say "mt2060: asked $NETAPI_API_HZ through the API, chip tuned to $got"
	[ "$got" = "$NETAPI_API_HZ" ] || return 1
	wait_for 5 api_tuner_is $id api $NETAPI_API_HZ || return 1
	ktest fe status $ADAPTER 0 | tee /tmp/st
	grep -q 'FE_READ_STATUS -> OK (0) status 0x1f' /tmp/st || return 1
	tune 0 474000000 8000000 || return 1
	say "API tune to $NETAPI_API_HZ: 200, burst $NETAPI_API_BURST," \
		"the frontend locks and tunes afterwards"
}

# --- the frontend's rules --------------------------------------------
# The bridge's demodulator has an I2C gate and a lock read_status holds
# (vbridge_rules.c); <debugfs>/vbridge/rules counts the transfers to a
# frontend's chip and those that broke the rules.

# rules_field KEY: a counter of <debugfs>/vbridge/rules.
rules_field() {
	tr ' ' '\n' <$VB/rules | sed -n "s/^$1=//p"
}

# FE_READ_STATUS in a loop on frontend 0 while the API tunes and reads
# its tuner: every transfer of the daemon's commands finds the gate open
# and no read_status in the demodulator.
t_rules_api() {
	id=$(api_mt2060_id) || return 1
	checked0=$(rules_field checked)
	reads0=$(rules_field status_reads)
	rm -f /tmp/rules.stop
	(
		i=0
		while [ $i -lt 400 ] && [ ! -e /tmp/rules.stop ]; do
			ktest fe status $ADAPTER 0 >/dev/null
			i=$((i + 1))
		done
	) &
	loop=$!
	body='"delivery_system":"DVBT","bandwidth":8000000'
	r=0
	for f in 474000000 490000000 506000000 522000000 538000000 554000000; do
		api_post /tuners/$id/tune "{$body,\"frequency\":$f}" \
			>/tmp/api.status || r=1
		api_get /tuners/$id/status >/dev/null || r=1
	done
	touch /tmp/rules.stop
	wait $loop
	cat $VB/rules
	[ $r -eq 0 ] || { say "an API tune or status failed"; return 1; }
	[ "$(rules_field broken)" = 0 ] || return 1
	[ "$(rules_field checked)" -gt "$checked0" ] &&
		[ "$(rules_field status_reads)" -gt "$reads0" ] || return 1
	say "API tunes and status reads beside FE_READ_STATUS:" \
		"$(($(rules_field checked) - checked0)) transfers checked," \
		"$(($(rules_field status_reads) - reads0)) read_status, none broke the rules"
}

# Every load of the bridge logged its counters when it went: none broke
# the rules, and the transfers were checked.  The parity check clears the
# log before each of its loads and keeps these lines in rules-kept.log.
t_rules_all() {
	touch /tmp/rules-kept.log
	{
		cat /tmp/rules-kept.log
		dmesg -s 8388608 | grep 'vbridge: frontend rules'
	} >/tmp/rules.log
	cat /tmp/rules.log
	! grep -q 'frontend rules broken' /tmp/rules.log || return 1
	n=$(grep -c 'frontend rules: checked=' /tmp/rules.log)
	bad=$(grep 'frontend rules: checked=' /tmp/rules.log |
		grep -vc ' broken=0$')
	sum=$(sed -n 's/.*frontend rules: checked=\([0-9]*\) .*/\1/p' \
		/tmp/rules.log | awk '{ s += $1 } END { print s + 0 }')
	say "$n loads of the bridge, $sum transfers checked, $bad with breaks"
	[ "$n" -gt 0 ] && [ "$bad" = 0 ] && [ "$sum" -gt 0 ]
}

# --- transport stream checks -----------------------------------------
# The bridge feeds a PAT and counter packets on TS_PID into its demux
# while a frontend has lock (vbridge_ts.c); `ktest ts|dvr` checks the sync
# bytes, continuity counters and packet counters of TS_MIN of them.
TS_PID=0x100
TS_MIN=500

# uptime_s: the guest's uptime in seconds, to report how long a check took.
uptime_s() {
	cut -d' ' -f1 /proc/uptime
}

# took T0: seconds since T0 (uptime_s).
took() {
	awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.2f s", b - a }'
}

# dvr0 read directly through a demux0 filter, as an application does.
t_dvr_direct() {
	for d in demux0 dvr0; do
		[ -c /dev/dvb/adapter$ADAPTER/$d ] ||
			{ say "no /dev/dvb/adapter$ADAPTER/$d"; return 1; }
	done
	t0=$(uptime_s)
	tune 0 474000000 8000000 || return 1
	ktest dvr $ADAPTER $TS_PID $TS_MIN >/tmp/ts.out
	r=$?
	say "$(cat /tmp/ts.out) in $(took $t0)"
	return $r
}

# The daemon's stream API serves what the bridge fed: tune through the
# API, then read a bounded amount of GET /tuners/{id}/stream.
t_netapi_stream() {
	t0=$(uptime_s)
	id=$(api_mt2060_id) || return 1
	body='"delivery_system":"DVBT","bandwidth":8000000'
	api_post /tuners/$id/tune "{$body,\"frequency\":474000000}" \
		>/tmp/api.status
	[ "$(cat /tmp/api.status)" = "HTTP/1.1 200" ] ||
		{ cat /tmp/api.status /tmp/api.json; return 1; }
	timeout 30 wget -q -O- "$API/tuners/$id/stream" 2>/tmp/wget.err |
		ktest ts $TS_PID $TS_MIN >/tmp/ts.out
	r=$?
	cat /tmp/wget.err /tmp/ts.out
	if [ $r -ne 0 ]; then
		grep -h 'stream' /tmp/daemon-*.log | tail -n 3
		return 1
	fi
	say "tuner $id: $(cat /tmp/ts.out) in $(took $t0)"
}

t_rmmod() {
	stop_daemon
	for m in vbridge mt2060 qt1010 xc2028 \
		$(tac /etc/ktest/modules.load); do
		m=$(basename $m .ko | tr - _)
		grep -q "^$m " /proc/modules || continue
		say "rmmod $m"
		rmmod $m || return 1
	done
	! grep -Eq '^(vbridge|tuner_stub|dvb_core|videodev|mc|mt2060|qt1010|xc2028) ' \
		/proc/modules
}

t_dmesg() {
	! dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection|UBSAN|KASAN|list_del corruption'
}

check module-load t_module_load
check frontend-present t_frontends
check no-daemon-enotconn t_no_daemon
check abi-nodaemon ktest abi nodaemon
check daemon-init t_daemon_init
check plugin-on-demand t_plugin_on_demand
check second-daemon-refused t_second_daemon
check abi-daemon ktest abi daemon
check mt2060-474-bytes t_mt2060_474
check mt2060-frequencies t_mt2060_freqs
check fe-lock t_fe_lock
check lock-from-chip t_lock_from_chip
# The minimal daemon tunes only the MT2060: the other chips need tunerd.
if [ "$DAEMON" = tunerd ]; then
	check qt1010-tune t_chip_tune 1 qt1010 0x62 474000000
	check xc3028-tune t_chip_tune 2 xc3028 0x61 474000000
else
	mark qt1010-tune SKIP "needs tunerd"
	mark xc3028-tune SKIP "needs tunerd"
fi
check deadline-timeout t_deadline
check signal-eintr t_signal
check daemon-kill-abort t_daemon_kill
check daemon-restart t_daemon_restart
check reattach-sync t_reattach_sync
check analog-subdev t_analog
if [ "$DAEMON" = tunerd ]; then
	check netapi-kernel-tune t_netapi_kernel
	check netapi-api-tune t_netapi_api
else
	mark netapi-kernel-tune SKIP "needs tunerd"
	mark netapi-api-tune SKIP "needs tunerd"
fi
check dvr-direct t_dvr_direct
if [ "$DAEMON" = tunerd ]; then
	check netapi-stream t_netapi_stream
else
	mark netapi-stream SKIP "needs tunerd"
fi
if [ "$DAEMON" = tunerd ]; then
	check frontend-rules-api t_rules_api
else
	mark frontend-rules-api SKIP "needs tunerd"
fi
check kernel-tuner-variant t_kernel_tuner
if [ "$DAEMON" = tunerd ]; then
	. /etc/ktest/parity.sh
	check parity-traces t_parity
else
	mark parity-traces SKIP "needs tunerd"
fi
check rmmod-clean t_rmmod
check frontend-rules t_rules_all
check dmesg-clean t_dmesg

echo "---- tuner_stub state"
cat $ST/state 2>/dev/null
for f in /tmp/daemon-*.log; do
	echo "---- $f (last lines)"
	tail -n 25 $f
done
echo "---- dmesg (last lines)"
dmesg | tail -n 60

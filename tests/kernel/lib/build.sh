# shellcheck shell=bash
# Build and packing steps of run-qemu.sh (sourced).  Uses its variables:
# root, work, build_dir, daemon, KVER, KDIR, IMG, stub_timeout_ms.

# The modules, built from a copy so the source tree stays clean.
build_modules() {
	local src=$work/modsrc
	log "building tuner-stub.ko and vbridge.ko against $KDIR"
	rm -rf "$src"
	mkdir -p "$src/kmod/linux" "$src/tests/kernel/vbridge" "$src/protocol"
	cp "$root"/kmod/linux/{Kbuild,Makefile,*.c,*.h} "$src/kmod/linux/"
	cp "$root"/tests/kernel/vbridge/{Kbuild,Makefile,*.c,*.h} \
		"$src/tests/kernel/vbridge/"
	cp "$root/protocol/tuner_stub.h" "$src/protocol/"
	make -s -C "$KDIR" M="$src/kmod/linux" KCFLAGS=-Werror modules
	make -s -C "$KDIR" M="$src/tests/kernel/vbridge" KCFLAGS=-Werror \
		KBUILD_EXTRA_SYMBOLS="$src/kmod/linux/Module.symvers" modules
	STUB_KO=$src/kmod/linux/tuner-stub.ko
	VB_KO=$src/tests/kernel/vbridge/vbridge.ko
}

build_tunerd() {
	log "building tunerd and its plugins in $build_dir"
	if [ ! -f "$build_dir/CMakeCache.txt" ]; then
		cmake -S "$root" -B "$build_dir" \
			-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$work/cmake.log" 2>&1 ||
			return 1
	fi
	cmake --build "$build_dir" -j"$(nproc)" --target tunerd mt2060 \
		qt1010 xc3028 tunerd-mkfw-xc3028 >"$work/cmake.log" 2>&1
}

# The guest tool (static), and tunerd unless the minimal daemon is asked.
build_userspace() {
	GUEST_BIN=$work/guest-bin
	mkdir -p "$GUEST_BIN"
	log "building the guest tool ktest (static)"
	gcc -std=gnu11 -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes \
		-Wmissing-prototypes -Werror -static -I"$root/protocol" \
		-o "$GUEST_BIN/ktest" "$root"/tests/kernel/ktest/*.c \
		"$root/protocol/tstub_codec.c"
	[ "$daemon" = ktest ] && return
	if build_tunerd; then
		daemon=tunerd
	elif [ "$daemon" = auto ]; then
		tail -n 20 "$work/cmake.log"
		echo "run-qemu: NOTE: tunerd does not build; the guest runs" \
			"the minimal daemon of tests/kernel/ktest instead"
		daemon=ktest
	else
		tail -n 40 "$work/cmake.log"
		die "tunerd does not build"
	fi
}

# Each ELF's shared libraries and loader, at the paths ldd names.
copy_libs() {
	local st=$1 f lib
	shift
	for f in "$@"; do
		for lib in $(ldd "$f" | awk '/=> \//{print $3} /^\t\//{print $1}'); do
			[ -e "$st$lib" ] ||
				install -D -m 0755 "$(readlink -f "$lib")" "$st$lib"
		done
	done
}

stage_tunerd() {
	local st=$1 opt=$1/opt/tunerd f
	mkdir -p "$opt/bin" "$opt/plugins" "$opt/firmware"
	cp "$build_dir/bin/tunerd" "$opt/bin/"
	cp "$build_dir"/plugins/*.so "$opt/plugins/"
	"$build_dir/bin/tunerd-mkfw-xc3028" "$opt/firmware/xc3028-v27.fw" \
		>/dev/null
	# The same file for xc2028.ko (request_firmware).
	install -D -m 0644 "$opt/firmware/xc3028-v27.fw" \
		"$st/lib/firmware/xc3028-v27.fw"
	copy_libs "$st" "$opt/bin/tunerd" "$opt"/plugins/*.so
	# The network API checks read JSON with jq (busybox wget fetches).
	install -m 0755 "$(command -v jq)" "$st/bin/jq"
	copy_libs "$st" "$st/bin/jq"
	install -m 0644 "$root/tests/kernel/guest/sse.jq" "$st/etc/ktest/sse.jq"
	for f in /lib/x86_64-linux-gnu/libnss_files.so.2 \
		/lib/x86_64-linux-gnu/libnss_dns.so.2; do
		[ -e "$f" ] && copy_libs "$st" "$f" &&
			install -D -m 0755 "$(readlink -f "$f")" "$st$f"
	done
	printf 'hosts: files dns\npasswd: files\ngroup: files\n' \
		>"$st/etc/nsswitch.conf"
	printf '127.0.0.1 localhost\n' >"$st/etc/hosts"
}

# In-tree modules ours depend on (and the in-kernel MT2060 driver), ours,
# modules.dep, and the load order.
stage_modules() {
	local st=$1 mods=lib/modules/$KVER m ko
	mkdir -p "$st/$mods/extra"
	for m in dvb_core videodev mt2060 qt1010 xc2028; do
		for ko in $(modprobe -d "$IMG" -S "$KVER" --show-depends "$m" |
			awk '$1 == "insmod" {print $2}'); do
			install -D -m 0644 "$ko" "$st/${ko#"$IMG"/}"
		done
	done
	cp "$STUB_KO" "$VB_KO" "$st/$mods/extra/"
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		[ -e "$IMG/$mods/$f" ] && cp "$IMG/$mods/$f" "$st/$mods/"
	done
	depmod -b "$st" "$KVER"
	modprobe -d "$st" -S "$KVER" --show-depends vbridge |
		awk '$1 == "insmod" {print $2}' | sed "s|^$st||" \
		>"$st/etc/ktest/modules.load"
	grep -q vbridge.ko "$st/etc/ktest/modules.load" ||
		die "no load order for vbridge"
}

stage_initramfs() {
	local st=$work/initramfs
	log "packing the initramfs (daemon: $daemon)"
	rm -rf "$st"
	mkdir -p "$st"/{bin,sbin,etc/ktest,proc,sys,dev,tmp,run,root}
	cp /bin/busybox "$st/bin/busybox"
	cp "$GUEST_BIN/ktest" "$st/bin/ktest"
	cp "$GUEST_BIN/ktest" "$st/bin/ktestd"
	stage_modules "$st"
	[ "$daemon" = tunerd ] && stage_tunerd "$st"
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$st/etc/passwd"
	printf 'root:x:0:\nvideo:x:44:\n' >"$st/etc/group"
	{
		echo "DAEMON=$([ "$daemon" = tunerd ] && echo tunerd || echo ktestd)"
		echo "TIMEOUT_MS=$stub_timeout_ms"
	} >"$st/etc/ktest.conf"
	install -m 0755 "$root/tests/kernel/guest/init" "$st/init"
	install -m 0755 "$root/tests/kernel/guest/checks.sh" "$st/checks.sh"
	install -m 0644 "$root/tests/kernel/guest/parity.sh" \
		"$st/etc/ktest/parity.sh"
	(cd "$st" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) |
		gzip -1 >"$work/initramfs.gz"
	log "initramfs: $(du -h "$work/initramfs.gz" | cut -f1)"
}

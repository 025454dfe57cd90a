#!/usr/bin/env bash
# checkpatch.pl --strict and kernel-doc on the kernel sources: the stub
# (kmod/linux) and the virtual bridge (tests/kernel/vbridge).
#
# Debian's headers packages do not ship checkpatch.pl; it is taken from
# the linux-source package of the same series (apt-get download, about
# 140 MB, once; cached under build-kernel/checkpatch/).
# Usage: tests/kernel/checkpatch.sh [--work-dir DIR]
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$root/build-kernel
[ "${1:-}" = --work-dir ] && work=$(realpath -m "$2")
tools=$work/checkpatch

fetch_checkpatch() {
	local pkg deb
	pkg=$(apt-cache depends linux-source 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-source-[0-9.]*\)$/\1/p' | head -n 1)
	pkg=${pkg:-linux-source-6.1}
	mkdir -p "$work/debs" "$tools"
	(cd "$work/debs" && apt-get download -q "$pkg" 2>&1 |
		grep -v unsandboxed || true)
	deb=$(ls "$work/debs/${pkg}_"*.deb | head -n 1)
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xO "./usr/src/$pkg.tar.xz" |
		tar -xJ -C "$tools" --strip-components=1 --wildcards \
			'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch' '*/scripts/kernel-doc'
}

[ -f "$tools/scripts/checkpatch.pl" ] || fetch_checkpatch

cd "$root"
files=()
for f in kmod/linux/*.[ch] tests/kernel/vbridge/*.[ch]; do
	case $f in *.mod.c) ;; *) files+=("$f") ;; esac # build artefacts
done
status=0
perl "$tools/scripts/checkpatch.pl" --strict --no-tree --terse \
	--show-types -f "${files[@]}" || status=1
out=$(perl "$tools/scripts/kernel-doc" -none "${files[@]}" 2>&1)
if [ -n "$out" ]; then
	echo "$out"
	status=1
fi
[ $status -eq 0 ] && echo "checkpatch --strict and kernel-doc: clean"
exit $status

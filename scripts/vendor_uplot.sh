#!/bin/sh
# Reproduces web/vendor/: the uPlot release the dashboard's plots use,
# unpacked from the npm registry's tarball (npm pack), with its licence.
# Usage: scripts/vendor_uplot.sh [VERSION]   (default: the recorded one)
set -eu
version=${1:-1.6.32}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "uplot@$version" >/dev/null)
tar -xzf "$tmp/uplot-$version.tgz" -C "$tmp"
out="$root/web/vendor"
cp "$tmp/package/dist/uPlot.esm.js" "$out/uPlot.esm.js"
cp "$tmp/package/dist/uPlot.min.css" "$out/uPlot.min.css"
cp "$tmp/package/LICENSE" "$out/uPlot.LICENSE"
echo "$version" > "$out/uPlot.VERSION"

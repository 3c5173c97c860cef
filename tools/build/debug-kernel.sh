#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once per machine, then cached) a debug kernel make check-debug
# boots: Debian's linux-source-6.1, tinyconfig plus
# tools/build/debug-common.config (KASAN, lockdep, kmemleak, failslab,
# UBSAN, debug objects, lockup and hung-task detectors) and
# debug-ARCH.config.  The build folder stays, configured, with
# Module.symvers, for "make -C DIR/obj M=...".
#
# The cache is keyed by the inputs, as ccache keys objects: the config
# fragments, this script and the source package's version name the
# folder (CACHE_DIR/debug-ARCH-KEY), so every clone on the machine reuses
# it and a changed input builds a new one (the older ones of ARCH go).
#
# Usage: debug-kernel.sh CACHE_DIR x86_64|arm64 LINK
# Prints only progress; LINK becomes a link to the folder, whose Image
# is the kernel.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
usage="usage: debug-kernel.sh CACHE_DIR x86_64|arm64 LINK"
cache=${1:?$usage}
arch=${2:?$usage}
link=${3:?$usage}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd -P)
frags=("$here/debug-common.config" "$here/debug-$arch.config")
tarball=/usr/src/linux-source-6.1.tar.xz
case $arch in
x86_64) kmake=(ARCH=x86) image=arch/x86/boot/bzImage target=bzImage ;;
arm64) kmake=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
       image=arch/arm64/boot/Image target=Image ;;
*) echo "debug-kernel: no debug kernel for $arch" >&2; exit 2 ;;
esac

if [[ ! -e $tarball ]]; then
	echo "debug-kernel: $tarball is missing: run 'make deps'" >&2
	exit 1
fi
# Rebuilt when the fragment, this script or the source package changes.
key=$(cat "${frags[@]}" "$0" | md5sum | cut -c1-12)-$(dpkg-query -W -f='${Version}' linux-source-6.1)
out=$cache/debug-$arch-$key
# One build per key at a time on the machine (clones share the cache).
exec 9>"$cache/.debug-$arch.lock"
flock 9
ln -sfn "$out" "$link"
if [[ -e $out/.stamp && -e $out/Image ]]; then
	exit 0
fi

log() { echo "debug-kernel: $*"; }
# One source tree for both architectures: builds are out of tree (O=).
src=$cache/debug-src
sver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
if [[ ! -e $src/.stamp-$sver ]]; then
	rm -rf "$src"
	mkdir -p "$src"
	log "extracting linux-source-6.1"
	tar -C "$src" --strip-components=1 -xJf "$tarball"
	touch "$src/.stamp-$sver"
fi
rm -rf "$cache/debug-$arch" "$cache/debug-$arch"-* # older keys
mkdir -p "$out/obj"
log "configuring $arch (tinyconfig + debug-common.config + debug-$arch.config)"
make -s -C "$src" O="$out/obj" "${kmake[@]}" tinyconfig >/dev/null
# -m: merge the text only; olddefconfig resolves it.
(cd "$out/obj" && "$src/scripts/kconfig/merge_config.sh" -m .config \
	"${frags[@]}" >/dev/null)
make -s -C "$src" O="$out/obj" "${kmake[@]}" olddefconfig >/dev/null
# Every line of the fragment must have survived olddefconfig: a missing
# dependency would silently drop a checker.
missing=0
while IFS= read -r line; do
	[[ $line =~ ^CONFIG_([A-Z0-9_]+)=(.*)$ ]] || continue
	sym=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]}
	if [[ $val == n ]]; then
		grep -qx "CONFIG_$sym=y" "$out/obj/.config" || continue
	elif grep -qx "CONFIG_$sym=$val" "$out/obj/.config"; then
		continue
	fi
	echo "debug-kernel: CONFIG_$sym=$val did not survive olddefconfig" >&2
	missing=1
done < <(cat "${frags[@]}")
((missing == 0)) || exit 1
log "building $target and modules (3 to 5 minutes on 2 cores)"
t0=$SECONDS
make -s -C "$src" O="$out/obj" "${kmake[@]}" -j"$(nproc)" "$target" modules \
	> "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
cp "$out/obj/$image" "$out/Image"
log "built in $((SECONDS - t0)) s"
touch "$out/.stamp"

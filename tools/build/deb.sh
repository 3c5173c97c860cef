#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: the Debian packages of the tree (debian/): the source
# package perfmon, perfmon-dkms (arch all), libperfmon1, libperfmon-dev
# and pfmon for the build machine's architecture, and the last three
# cross-built for arm64 (on an amd64 host); then lintian over all of
# them, failing on any warning.
#
# dpkg-buildpackage writes its results beside the source folder, so
# the build runs in a copy of the tree (what git tracks, and untracked
# files git does not ignore: uncommitted work is packaged too) under
# .build/deb/src; the results land in .build/deb.
#
# Usage: deb.sh [OUTDIR]   (default .build/deb)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/.build/deb}

die() { echo "deb: $*" >&2; exit 1; }
log() { echo "deb: $*"; }

for t in dpkg-buildpackage dh dh_dkms lintian; do
	command -v "$t" >/dev/null ||
		die "$t not found: run 'make deps' (dpkg-dev, debhelper, dh-dkms, lintian)"
done

cd "$top"
ver=$(dpkg-parsechangelog -l debian/changelog -SVersion)
upver=${ver%-*}
dkmsver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
# DKMS finds the sources at /usr/src/perfmon-VERSION by dkms.conf's
# version: the package's upstream version must be the same.
[[ $upver == "$dkmsver" ]] ||
	die "debian/changelog's $upver is not dkms.conf's PACKAGE_VERSION $dkmsver"

rm -rf "$out"
src=$out/src/perfmon-$upver
mkdir -p "$src"
# The tree's files; without git (an unpacked tarball), all of it but
# the caches and build products.
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$top" ls-files -z -co --exclude-standard |
		(cd "$top" && xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
		tar -C "$top" --null -T - -cf - | tar -C "$src" -xf -
else
	tar -C "$top" --exclude=./.build --exclude=./.cache --exclude=./.git \
		--exclude='*.o' --exclude='*.ko' -cf - . | tar -C "$src" -xf -
fi
# The upstream tarball: the tree less debian/.
tar -C "$out/src" --exclude="perfmon-$upver/debian" -cJf \
	"$out/src/perfmon_$upver.orig.tar.xz" "perfmon-$upver"

build() {	# build LABEL DPKG-BUILDPACKAGE-ARGS...
	local label=$1
	shift
	log "dpkg-buildpackage -us -uc${*:+ $*} ($label)"
	if ! (cd "$src" && dpkg-buildpackage -us -uc "$@") > "$out/build-$label.log" 2>&1; then
		tail -40 "$out/build-$label.log" >&2
		die "the $label build failed: $out/build-$label.log"
	fi
}
# Source, arch-independent and native packages.
build native
# The library and the tool for arm64 (cross: the arm64 -dev packages
# pfmon links are installed multiarch by make deps).
if [[ $(dpkg --print-architecture) == amd64 ]]; then
	build arm64 -aarm64 -B
fi

mv "$out"/src/perfmon_* "$out"/src/*.deb "$out/"
rm -rf "$out/src"

log "lintian --fail-on warning"
lintian --fail-on warning --tag-display-limit 0 "$out"/*.changes ||
	die "lintian found problems (above)"
log "packages in $out:"
(cd "$out" && ls -1 ./*.deb ./*.dsc)

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prove dkms.conf: "dkms add", "build" and "install" of the tree for the
# guest kernel, in private dkms/source/install trees so the machine's own
# module tree is not touched, then check every BUILT_MODULE_NAME landed
# and no test module was built.
#
# Usage: dkms-check.sh KERNEL_RELEASE
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${1:?usage: dkms-check.sh KERNEL_RELEASE}
eval "$(grep -E '^(PACKAGE_NAME|PACKAGE_VERSION)=' "$top/dkms.conf")"
pkg="$PACKAGE_NAME/$PACKAGE_VERSION"

work=$(mktemp -d "${TMPDIR:-/tmp}/perfmon-dkms.XXXXXX")
trap 'rm -rf "$work"' EXIT
src="$work/src/$PACKAGE_NAME-$PACKAGE_VERSION"
mkdir -p "$src" "$work/tree" "$work/inst/$kver"
tar -C "$top" --exclude=./.build --exclude=./.cache --exclude=./.git \
	--exclude='*.o' --exclude='*.ko' -cf - . | tar -C "$src" -xf -

dkms_() {
	dkms --dkmstree "$work/tree" --sourcetree "$work/src" \
		--installtree "$work/inst" "$@"
}
dkms_ add "$pkg" > "$work/log" 2>&1 &&
	dkms_ build "$pkg" -k "$kver" >> "$work/log" 2>&1 &&
	dkms_ install "$pkg" -k "$kver" >> "$work/log" 2>&1 ||
	{ cat "$work/log"; find "$work/tree" -name make.log -exec cat {} +; exit 1; }

status=0
# What dkms.conf lists for an x86_64 target (it is a shell fragment).
mods=$(arch=x86_64 kernel_source_dir=; . "$top/dkms.conf" &&
	echo "${BUILT_MODULE_NAME[@]}")
for m in $mods; do
	if ! find "$work/inst/$kver" -name "$m.ko*" | grep -q .; then
		echo "dkms-check: $m was not installed" >&2
		status=1
	fi
done
# The package is the runtime modules only: the test modules (the kernel
# API's, the simulated x86 PMU) are the tree's test build's.
for m in pfm_kapi_test pfm_cpupm_test pfm_x86_sim pfm_perf_simpmu pfm_perf_x86sim; do
	if find "$work/tree" "$work/inst" -name "$m.ko*" | grep -q .; then
		echo "dkms-check: test module $m was built by the package" >&2
		status=1
	fi
done
dkms_ status
exit $status

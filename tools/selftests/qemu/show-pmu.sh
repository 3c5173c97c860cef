#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make run, first: what the guest's kernel and perfmon found.  Runs
# inside the guest with the modules loaded.

echo
echo "== guest: $(uname -sr) on $(uname -m), $(grep -c ^processor /proc/cpuinfo) CPUs"
echo
echo "== perfmon"
dmesg | grep -E 'perfmon' | sed 's/^\[[ .0-9]*\] /  /'
if [ -c /dev/perfmon ]; then
	echo "  /dev/perfmon: $(ls -l /dev/perfmon | awk '{print $1, $5, $6}')"
fi
if [ -d /sys/module/perfmon ]; then
	echo "  modules: $(ls /sys/module | grep -E '^(perfmon|pfm_)' | tr '\n' ' ')"
fi
echo
echo "== PMU hardware seen by the kernel"
case $(uname -m) in
aarch64)
	for n in /proc/device-tree/pmu*; do
		[ -e "$n/compatible" ] || continue
		echo "  DT node $(basename "$n"): $(tr '\0' ' ' < "$n/compatible")"
	done
	dmesg | grep -E 'hw perfevents|PMUv3|initcall .*blacklisted' |
		sed 's/^\[[ .0-9]*\] /  /'
	;;
x86_64)
	grep -m1 '^model name' /proc/cpuinfo | sed 's/^/  /'
	if grep -qw arch_perfmon /proc/cpuinfo; then
		echo "  CPU flag arch_perfmon: yes"
	else
		echo "  CPU flag arch_perfmon: no"
	fi
	dmesg | grep -E 'Performance Events' | sed 's/^\[[ .0-9]*\] /  /'
	;;
esac

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make run: pfmon counting and profiling the bundled workload (hotspot,
# whose hot function is hot_loop), inside the guest.

run() {
	echo
	echo "\$ $*"
	"$@"
}

cd /tmp || exit 1
run pfmon list | sed -n '1,/^Counters/p'
run pfmon stat -- hotspot -r 100 || exit 1
case $(cat /sys/kernel/perfmon/pmu_desc/model) in
soft)
	# Five events on four counters: multiplexed in two event sets,
	# printed every 100 ms.
	run pfmon stat -e task-clock,cpu-clock,context-switches,syscalls \
		-e task-clock -I 100 -- hotspot -r 100 ;;
*)
	# Eight events on seven counters: multiplexed in two event sets.
	run pfmon stat -e cycles,instructions,stall_frontend,stall_backend \
		-e stall,inst_retired:u,cpu_cycles:k,r0x11:u \
		-- hotspot -r 100 ;;
esac
run pfmon record -g -o /tmp/pfmon.data -- hotspot -t 2 || exit 1
run pfmon report -i /tmp/pfmon.data -n 8 || exit 1
echo
echo "\$ pfmon report -i /tmp/pfmon.data --folded   (call chains: flame graph input)"
pfmon report -i /tmp/pfmon.data --folded | head -n 8
run pfmon report -i /tmp/pfmon.data -g -n 3 || exit 1
run pfmon report -i /tmp/pfmon.data --flame /tmp/pfmon.svg || exit 1
# to the host: make run's filter (demo-flame.sh) writes it out there
echo PFMON-FLAME-BEGIN
base64 /tmp/pfmon.svg
echo PFMON-FLAME-END

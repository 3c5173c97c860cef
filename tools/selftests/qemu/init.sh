#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the perfmon test guests (busybox sh).  Loads the modules, does
# what /etc/rig.conf asks (run the suite, one test, a command, or a
# shell), unloads the modules, dumps the kernel log and powers off.
# Every line the host parses starts with "RIG-".

/bin/busybox mkdir -p /proc /sys /dev /tmp /run
/bin/busybox mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
export PATH=/bin:/sbin HOME=/root
mkdir -p /root

. /etc/rig.conf

# Hung tasks are reported after 30 s instead of 120 s, within the
# host's hard timeout.
echo 30 > /proc/sys/kernel/hung_task_timeout_secs 2>/dev/null

echo "RIG-BOOTED $(uname -r) $(uname -m) cpus=$(grep -c ^processor /proc/cpuinfo)"

# The debug kernel (make check-debug) has kmemleak: forget what boot left
# unreferenced, so that the scan at the end reports only what the run
# leaked.
KMEMLEAK=/sys/kernel/debug/kmemleak
[ -w $KMEMLEAK ] && echo clear > $KMEMLEAK

rc=0
loaded=""
load_modules() {
	for m in $MODULES; do
		if insmod "/modules/$m"; then
			echo "RIG-CHECK pass load $m"
			loaded="$m $loaded"
		else
			echo "RIG-CHECK fail load $m"
			rc=1
			return 1
		fi
	done
}

unload_modules() {
	for m in $loaded; do
		if rmmod "$(basename "$m" .ko)"; then
			echo "RIG-CHECK pass unload $m"
		else
			echo "RIG-CHECK fail unload $m"
			rc=1
		fi
	done
}

run_test() {
	t=$1
	name=$(basename "$t")
	echo "RIG-TEST-BEGIN $name"
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$t"
	trc=$?
	# Guest seconds: make check's budget is spent per program.
	echo "RIG-TEST-END $name rc=$trc secs=$(awk -v a="$t0" \
		'{ printf "%.1f", $1 - a }' /proc/uptime)"
	# 4 is KSFT_SKIP: the program skipped as a whole.
	[ $trc -eq 0 ] || [ $trc -eq 4 ] || rc=1
}

if load_modules; then
	case "$MODE" in
	suite)
		for t in /tests/*; do
			[ -x "$t" ] && run_test "$t"
		done
		;;
	test)
		run_test "/tests/$TEST"
		;;
	exec)
		cd /root || true
		sh -c "$CMD"
		rc=$?
		;;
	shell)
		echo "RIG: guest shell, modules loaded; 'exit' powers off"
		setsid cttyhack sh -l
		;;
	esac
	unload_modules
fi

# After the modules are gone, anything they allocated and did not free
# is unreferenced.  kmemleak skips objects younger than 5 s and reports
# an object after two scans that found it unreferenced.
kmemleak_scan() {
	sleep 6
	echo scan > $KMEMLEAK
	echo scan > $KMEMLEAK
	leaks=$(grep -c '^unreferenced object' $KMEMLEAK)
	if [ "$leaks" -eq 0 ]; then
		echo "RIG-CHECK pass kmemleak scan empty"
	else
		echo "RIG-CHECK fail kmemleak: $leaks unreferenced objects"
		cat $KMEMLEAK
		rc=1
	fi
}
[ -w $KMEMLEAK ] && kmemleak_scan

# Without the CPU hotplug chatter of the storms (thousands of lines): on
# the -rt kernel under load, dumping them starved the serial port's
# threaded interrupt ("irq 4: nobody cared", then disabled) and the
# lines below never came out.
echo "RIG-DMESG-BEGIN"
dmesg | grep -v -E 'smpboot: |no longer affine to cpu|callbacks suppressed'
echo "RIG-DMESG-END"
echo "RIG-DONE rc=$rc"
sync
sleep 1		# let the serial port drain before the power goes
poweroff -f

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

rc=0
loaded=""

# The debug kernel (make check-debug) has kmemleak: forget what boot left
# unreferenced, so that the scan at the end reports only what the run
# leaked.  Its scan thread is stopped: the rig scans at the end itself
# (kmemleak_scan()), and the thread's first scan, 60 s after boot at
# nice 10, shared the CPU of pmuv3_test overflow_interrupt_cycles in
# make check (every one of its 10 rounds switched out; a scan loop at
# nice 10 beside the test fails it the same way on demand).
KMEMLEAK=/sys/kernel/debug/kmemleak
if [ -w $KMEMLEAK ]; then
	echo clear > $KMEMLEAK
	if echo scan=off > $KMEMLEAK; then
		echo "RIG-CHECK pass kmemleak's scan thread stopped"
	else
		echo "RIG-CHECK fail kmemleak's scan thread not stopped"
		rc=1
	fi
fi

# --- taint and lockdep ---------------------------------------------------
# A WARN sets the kernel's W taint whatever the log kept, a soft lockup
# L, a KASAN or slub_debug report B, an oops D: each test program must
# leave the taint flags as it found them.  Loading the tree's modules
# sets only O (out of tree) and E (unsigned).
TAINT=/proc/sys/kernel/tainted
LOCKDEP=/proc/lockdep_stats
TAINT_LOAD=$(((1 << 12) | (1 << 13)))
taint() { cat $TAINT; }

# taint_letters MASK: the kernel's letter for each bit set (its
# taint_flags[] table, kernel/panic.c), and the bit number of an unknown.
taint_letters() {
	m=$1 i=0 out=""
	for c in P F S R M B U D A W C I O E L K X T N; do
		[ $((m & (1 << i))) -ne 0 ] && out="$out$c"
		i=$((i + 1))
	done
	[ $((m >> i)) -ne 0 ] && out="$out(bits $((m >> i))<<$i)"
	echo "$out"
}

# taint_check WHAT BEFORE [ALLOWED]: fail WHAT if the taint gained a flag
# beyond ALLOWED since BEFORE.
taint_check() {
	now=$(taint)
	new=$(($now & ~$2 & ~${3:-0}))
	if [ $new -ne 0 ]; then
		echo "RIG-CHECK fail taint $(taint_letters $new) new after $1 (tainted=$now, was $2)"
		rc=1
	fi
}

# lockdep_on: lockdep is built in and still checking.  It checks until
# its first report (or a taint that makes it unreliable) and then stays
# off for the rest of the boot: every later locking bug would go unseen.
lockdep_on() {
	[ -r $LOCKDEP ] || return 0
	grep -q 'debug_locks: *1' $LOCKDEP
}

# lockdep_check WHAT: fail WHAT if lockdep went off during it.
lockdep_check() {
	if [ -n "$LOCKDEP_WAS_ON" ] && ! lockdep_on; then
		echo "RIG-CHECK fail lockdep switched itself off during $1: the report above"
		LOCKDEP_WAS_ON=""
		rc=1
	fi
}

# step_check WHAT BEFORE [ALLOWED]: after each step of the run, both.
step_check() {
	taint_check "$@"
	lockdep_check "$1"
}

LOCKDEP_WAS_ON=""
if [ -r $LOCKDEP ]; then
	if lockdep_on; then
		LOCKDEP_WAS_ON=1
		echo "RIG-CHECK pass lockdep is on at init"
	else
		echo "RIG-CHECK fail lockdep was off before init: a report during the kernel's boot blinded it (Documentation/testing.rst)"
		rc=1
	fi
fi
TAINT_BOOT=$(taint)
if [ "$TAINT_BOOT" -ne 0 ]; then
	echo "RIG-CHECK fail taint $(taint_letters $TAINT_BOOT) before init: a report during the kernel's boot (Documentation/testing.rst)"
	rc=1
fi
load_modules() {
	t0=$(taint)
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
	step_check "loading the modules" "$t0" $TAINT_LOAD
	node_policy
}

# /dev/perfmon as the module makes it, root's alone; then what a site's
# udev rule does (tools/udev/60-perfmon.rules): group perfmon, 0660.
# The tests' unprivileged users join that group (pfm_test.h).
PERFMON_GID=990
node_policy() {
	node=$(stat -c '%a %u %g' /dev/perfmon 2>&1)
	if [ "$node" = "600 0 0" ]; then
		echo "RIG-CHECK pass /dev/perfmon made 0600 root:root"
	else
		echo "RIG-CHECK fail /dev/perfmon made '$node', want '600 0 0'"
		rc=1
	fi
	chgrp $PERFMON_GID /dev/perfmon && chmod 0660 /dev/perfmon
}

unload_modules() {
	t0=$(taint)
	for m in $loaded; do
		if rmmod "$(basename "$m" .ko)"; then
			echo "RIG-CHECK pass unload $m"
		else
			echo "RIG-CHECK fail unload $m"
			rc=1
		fi
	done
	step_check "unloading the modules" "$t0"
}

run_test() {
	t=$1
	name=$(basename "$t")
	echo "RIG-TEST-BEGIN $name"
	t0=$(cut -d' ' -f1 /proc/uptime)
	tt=$(taint)
	"$t"
	trc=$?
	# A test may load the tree's test modules (O, E): nothing else.
	step_check "$name" "$tt" $TAINT_LOAD
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
		tt=$(taint)
		sh -c "$CMD"
		rc=$?
		step_check "the command" "$tt" $TAINT_LOAD
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

# The dump must hold the whole boot: a log that lost its start may have
# lost a report too (vm's log_buf_len).
if ! dmesg | head -3 | grep -q 'Linux version'; then
	echo "RIG-CHECK fail the kernel log overran its buffer: raise log_buf_len (vm)"
	rc=1
fi

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

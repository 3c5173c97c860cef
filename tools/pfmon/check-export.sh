#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pfmon export read by perf (make check's "export" stage): in the x86_64
# guest, record the workload with call chains, fold it with pfmon report
# and export it to perf.data; here on the host, Debian's perf reads that
# file (perf script, perf report) with the workload's binary in a
# --symfs tree, and must see what pfmon saw:
#  - as many samples;
#  - every call chain through the workload's worker() that perf
#    resolves whole (no [unknown] frame) is one of pfmon's folded
#    stacks, with as many samples.  Kernel frames count: the export's
#    kernel map and the guest's symbols (the lines of its /proc/kallsyms
#    that pfmon's stacks name, and _text, given to perf --kallsyms) let
#    perf name them, and it must name some.  (Elsewhere,
#    in libc, perf and pfmon may name one address by different aliases:
#    __madvise and madvise.)
#  - those chains hold 80% of the samples at least;
#  - perf report's top symbol is pfmon report's (hot_loop).
# The same recording exported as a pprof profile (--format pprof) is
# read by the pprof tool of Debian's Go (golang-1.19-go): pprof -raw
# takes the file whole, with as many samples, the task-clock sample
# type and the pid, tid, cpu and thread labels; pprof -top's first
# function is pfmon report's, with the same share to 0.01%; pprof
# -traces shows worker's chains.  A file that is no recording is
# refused by the export with a message, and leaves no file.  Both
# exports are made as any file the user writes: 0644 under umask 022
# (the pprof profile was 0600, mkstemp()'s mode).
# Usage: check-export.sh TOP KVER
set -euo pipefail

top=$1
kver=$2
work=$(mktemp -d)
[[ -n ${KEEP:-} ]] && echo "check-export: work in $work" || trap 'rm -rf "$work"' EXIT

cmd='cd /tmp && umask 022 && pfmon record -g -q -o g.data -- hotspot -t 2 &&
pfmon report -i g.data --folded > g.folded &&
pfmon report -i g.data -n 1 > g.top &&
pfmon export -i g.data -o perf.data &&
pfmon export -i g.data --format pprof -o g.pb.gz &&
test "$(stat -c %a perf.data g.pb.gz | sort -u)" = 644 &&
printf "no recording" > bad.data &&
{ ! pfmon export -i bad.data --format pprof -o bad.pb.gz; } &&
! ls bad.pb.gz* 2> /dev/null &&
echo PFMON-PPROF && base64 g.pb.gz &&
echo PFMON-B64 && base64 perf.data && echo PFMON-FOLDED && cat g.folded &&
echo PFMON-TOP && cat g.top && echo PFMON-KSYMS &&
awk '\''NR == FNR { n = split($1, f, ";"); for (i = 2; i <= n; i++) want[f[i]] = 1; next }
$3 == "_text" || ($2 ~ /^[tTwW]$/ && $3 in want)'\'' g.folded /proc/kallsyms &&
echo PFMON-END'
"$top/tools/selftests/qemu/vm" --arch x86_64 --kver "$kver" --timeout 300 \
	--log "$top/.build/x86_64/logs/$kver/exec-export.log" \
	exec -- "$cmd" > "$work/guest.log" 2>&1 || {
	tail -n 30 "$work/guest.log" >&2
	echo "check-export: the guest run failed" >&2
	exit 1
}
tr -d '\r' < "$work/guest.log" > "$work/log"
sed -n '/^PFMON-B64$/,/^PFMON-FOLDED$/p' "$work/log" | sed '1d;$d' |
	base64 -d > "$work/perf.data"
sed -n '/^PFMON-PPROF$/,/^PFMON-B64$/p' "$work/log" | sed '1d;$d' |
	base64 -d > "$work/pfmon.pb.gz"
sed -n '/^PFMON-FOLDED$/,/^PFMON-TOP$/p' "$work/log" | sed '1d;$d' \
	> "$work/pfmon.folded"
sed -n '/^PFMON-TOP$/,/^PFMON-KSYMS$/p' "$work/log" | sed '1d;$d' \
	> "$work/pfmon.top"
sed -n '/^PFMON-KSYMS$/,/^PFMON-END$/p' "$work/log" | sed '1d;$d' \
	> "$work/kallsyms"
grep '^pfmon export:' "$work/log" || true

# The guest's /bin/hotspot is this build's.
mkdir -p "$work/sym/bin"
cp "$top/.build/x86_64/pfmon/hotspot" "$work/sym/bin/"
perf script -i "$work/perf.data" --symfs "$work/sym" \
	--kallsyms "$work/kallsyms" -F comm,ip,sym \
	2> "$work/script.err" > "$work/script.out" || {
	cat "$work/script.err" >&2
	echo "check-export: perf script refused the file" >&2
	exit 1
}
# perf script's samples as folded stacks: comm, then outermost first.
awk '
function flush() {
	if (comm == "")
		return
	s = comm
	for (i = n; i >= 1; i--)
		s = s ";" f[i]
	count[s]++
	comm = ""
}
/^[^ \t]/ { flush(); comm = $1; n = 0; next }
/^\t/ { f[++n] = $2; next }
/^$/ { flush() }
END {
	flush()
	for (s in count)
		print s, count[s]
}' "$work/script.out" | sort > "$work/perf.folded"

total=$(awk '{ n += $NF } END { print n + 0 }' "$work/perf.folded")
pfmon_total=$(awk '{ n += $NF } END { print n + 0 }' "$work/pfmon.folded")
whole=0 fail=0
while read -r stack n; do
	[[ $stack == *'[unknown]'* || $stack != *';worker;'* ]] && continue
	whole=$((whole + n))
	if ! grep -qxF "$stack $n" "$work/pfmon.folded"; then
		echo "check-export: perf: $stack $n; pfmon: $(grep -F "$stack " "$work/pfmon.folded" || echo none)" >&2
		fail=1
	fi
done < <(awk '{ c = $NF; $NF = ""; sub(/ $/, ""); print $0, c }' "$work/perf.folded")
echo "check-export: perf read $total samples (pfmon $pfmon_total); $whole in whole chains through worker"
if ((total != pfmon_total)); then
	echo "check-export: perf read $total samples, pfmon reported $pfmon_total" >&2
	fail=1
fi
if ((whole * 100 < total * 80)); then
	echo "check-export: only $whole of $total samples in chains through worker perf resolved whole" >&2
	fail=1
fi
# Kernel frames (an address in the upper half) perf named, of all.
read -r kern_named kern_all < <(awk '/^\t/ && $1 ~ /^ffff/ {
	all++; if ($2 != "[unknown]") named++ } END { print named + 0, all + 0 }' \
	"$work/script.out")
echo "check-export: kernel frames perf named: $kern_named of $kern_all"
if ((kern_all > 0 && kern_named == 0)); then
	echo "check-export: perf named no kernel frame (the export's kernel map)" >&2
	fail=1
fi
perf_top=$(perf report -i "$work/perf.data" --symfs "$work/sym" --stdio \
	--no-children --sort sym 2> /dev/null | awk '/^ +[0-9.]+%/ { print $NF; exit }')
pfmon_top=$(awk '/^ +[0-9.]+%/ { print $NF; exit }' "$work/pfmon.top")
echo "check-export: top symbol: perf $perf_top, pfmon $pfmon_top"
if [[ -z $perf_top || $perf_top != "$pfmon_top" ]]; then
	echo "check-export: top symbols differ" >&2
	fail=1
fi

# The pprof profile, read by pprof itself.
pprof=$(ls /usr/lib/go-1.*/pkg/tool/linux_*/pprof 2> /dev/null | sort -V | tail -1)
if [[ -z $pprof ]]; then
	echo "check-export: no pprof tool (golang-1.19-go: make deps)" >&2
	exit 1
fi
export PPROF_TMPDIR=$work
"$pprof" -raw "$work/pfmon.pb.gz" > "$work/pprof.raw" 2> "$work/pprof.err" || {
	cat "$work/pprof.err" >&2
	echo "check-export: pprof refused the profile" >&2
	exit 1
}
pp_samples=$(awk '/^Samples:/ { on = 1; next } /^[A-Z]/ { on = 0 }
	on && /^ +[0-9]+ +[0-9]+:/ { n += $1 } END { print n + 0 }' "$work/pprof.raw")
echo "check-export: pprof read $pp_samples samples (pfmon $pfmon_total)"
if ((pp_samples != pfmon_total)); then
	echo "check-export: pprof read $pp_samples samples, pfmon reported $pfmon_total" >&2
	fail=1
fi
for want in "samples/count task-clock/nanoseconds" "thread:\[hotspot\]" \
	"pid:\[[0-9]+\]" "tid:\[[0-9]+\]" "cpu:\[[0-9]+\]" \
	"/bin/hotspot [0-9a-f]{40}"; do
	if ! grep -qE "$want" "$work/pprof.raw"; then
		echo "check-export: pprof -raw shows no '$want'" >&2
		fail=1
	fi
done
"$pprof" -top "$work/pfmon.pb.gz" 2> /dev/null > "$work/pprof.top"
pp_top=$(awk '/^ +flat/ { on = 1; next } on { print $6, $2; exit }' "$work/pprof.top")
pf_top=$(awk '/^ +[0-9.]+%/ { print $NF, $1; exit }' "$work/pfmon.top")
echo "check-export: top function: pprof $pp_top, pfmon $pf_top"
if [[ -z $pp_top || $pp_top != "$pf_top" ]]; then
	echo "check-export: pprof -top's first line is not pfmon report's" >&2
	sed -n 1,12p "$work/pprof.top" >&2
	fail=1
fi
if ! "$pprof" -traces "$work/pfmon.pb.gz" 2> /dev/null | grep -q '^ *worker$'; then
	echo "check-export: pprof -traces shows no chain through worker" >&2
	fail=1
fi
((fail)) && exit 1
echo "check-export: ok"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pfmon flame on the host (make check's "flame" stage): folded stacks to
# an SVG that parses as XML (xmllint), whose boxes hold every sample:
# the bottom box "all" the total, the boxes above it as many together,
# each frame the samples of the lines through it.  Names with the
# characters XML reserves, and a ';' turned ':' by pfmon report, must
# come out escaped.  Usage: check-flame.sh PFMON
set -euo pipefail

pfmon=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/in.folded" <<'FOLDED'
hotspot;__libc_start_call_main;main;worker;hot_loop 1173
hotspot;__libc_start_call_main;main;worker;warm_loop 273
hotspot;__libc_start_call_main;main;worker;cold_loop;spin 51
hotspot;start_thread;worker;hot_loop 555
hotspot;[unknown];std::vector<int>::at&"x'y" 7
swapper 3
FOLDED
"$pfmon" flame -t 'check <&> "flame"' -o "$work/out.svg" < "$work/in.folded"
xmllint --noout "$work/out.svg"

sum() {
	xmllint --xpath "$1" "$work/out.svg"
}
fail=0
want() {
	local got
	got=$(sum "$2")
	if [[ $got != "$3" ]]; then
		echo "check-flame: $1: $got, want $3" >&2
		fail=1
	fi
}
total=$(awk '{ n += $NF } END { print n }' "$work/in.folded")
want "all" 'string(//*[@data-d="0"]/@data-samples)' "$total"
want "depth 1" 'sum(//*[@data-d="1"]/@data-samples)' "$total"
want "hot_loop" 'sum(//*[@data-n="hot_loop"]/@data-samples)' 1728
want "worker" 'sum(//*[@data-n="worker"]/@data-samples)' 2052
want "escaped name" 'sum(//*[starts-with(@data-n, "std::vector<int>::at&")]/@data-samples)' 7
if ! grep -q 'std::vector&lt;int&gt;::at&amp;&quot;x&apos;y&quot;' "$work/out.svg"; then
	echo "check-flame: quotes in a name not escaped" >&2
	fail=1
fi
want "frames" 'count(//*[@class="f"])' 15
# a bad line is refused, with its number
if echo 'no count here' | "$pfmon" flame > /dev/null 2> "$work/err"; then
	echo "check-flame: a line without a count was taken" >&2
	fail=1
elif ! grep -q 'line 1: not "stack count"' "$work/err"; then
	echo "check-flame: unexpected error: $(cat "$work/err")" >&2
	fail=1
fi
((fail)) && exit 1
echo "check-flame: $(sum 'count(//*[@class="f"])') frames, $total samples: ok"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Documentation/design.rst's file table against the tree: every source
# file of the modules (core/, kapi/, arch/, smpl_fmt/, include/) must be
# a term of its "Files" section, and every term there must exist.
# Then its layers against the code: with OBJDIR (the build tree of a
# module build, e.g. .build/x86_64/6.1/src), every .c file of core/ and
# kapi/ must be in a "Layer N, ...:" paragraph, and no object file may
# use a symbol that a file of a higher layer defines (nm: the symbols
# each object defines and leaves undefined).
# Prints what differs; exit 1 when anything does.
#
# usage: check-design.sh [OBJDIR]
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1

# The terms of the "Files" section: from its title to the underline of
# the next section's.
listed=$(awk '/^Files$/ { on = 1; getline; next }
	      on && /^=+$/ { exit }
	      on && /^``[^`]+\.[ch]``$/ { gsub(/`/, ""); print }' \
	 Documentation/design.rst | sort)
tree=$(find core kapi arch smpl_fmt include -name '*.[ch]' ! -name '*.mod.c' |
       sort)

missing=$(comm -13 <(printf '%s\n' "$listed") <(printf '%s\n' "$tree"))
stale=$(comm -23 <(printf '%s\n' "$listed") <(printf '%s\n' "$tree"))
rc=0
for f in $missing; do
	echo "Documentation/design.rst: $f is not in the file table; add it"
	rc=1
done
for f in $stale; do
	echo "Documentation/design.rst: $f is listed but does not exist; remove it"
	rc=1
done
((rc)) || echo "design.rst names all $(printf '%s\n' "$tree" | wc -l) source files"

objdir=${1:-}
[[ -z $objdir ]] && exit $rc
if [[ ! -f $objdir/core/main.o ]]; then
	echo "$objdir/core/main.o: no module build; run make build-mods-x86_64 KVER=6.1 first"
	exit 1
fi

# "file layer" for each term of a "Layer N, ...:" paragraph.
layers=$(awk '/^Files$/ { on = 1; getline; next }
	      on && /^=+$/ { exit }
	      on && /^Layer [0-9]+, / { n = $2; sub(/,/, "", n); next }
	      on && /^[A-Z]/ { n = "" }
	      on && n != "" && /^``[^`]+\.[ch]``$/ { gsub(/`/, ""); print $0, n }' \
	 Documentation/design.rst)
# A header's own layer is for its inlines (below).
declare -A layer hlayer def
while read -r f n; do
	case $f in
	*.h) hlayer[$(basename "$f")]=$n ;;
	*) layer[$(basename "$f" .c)]=$n ;;
	esac
done <<< "$layers"

objs=()
for o in "$objdir"/core/*.o "$objdir"/kapi/*.o; do
	b=$(basename "$o" .o)
	[[ $b == perfmon* ]] && continue
	if [[ -z ${layer[$b]:-} ]]; then
		echo "Documentation/design.rst: ${o#"$objdir"/} has no layer; list ${b}.c under a \"Layer N\" paragraph"
		rc=1
		continue
	fi
	objs+=("$o")
	while read -r sym; do
		def[$sym]=$b
	done < <(nm --defined-only "$o" | awk '$2 ~ /^[TDBR]$/ { print $3 }')
done

up=0 calls=0 edges=""
for o in "${objs[@]}"; do
	b=$(basename "$o" .o)
	while read -r sym; do
		t=${def[$sym]:-}
		[[ -z $t || $t == "$b" ]] && continue
		calls=$((calls + 1))
		edges+="$b $t"$'\n'
		if ((layer[$t] > layer[$b])); then
			echo "core/$b.c (layer ${layer[$b]}) uses $sym of $t.c (layer ${layer[$t]}): a lower layer reaches a higher one through an ops table"
			up=$((up + 1))
			rc=1
		fi
	done < <(nm -u "$o" | awk '{ print $2 }')
done
echo "$calls uses of a symbol of another file, $up of them upward"

# A header's inline functions are compiled into each file that includes
# them, so nm counts their calls as that file's: an inline of a low
# header calling a higher layer would pass unseen.  Each inline belongs
# to the file its header section names ("/* core/upage.c: ..." or
# "/* Engine. core/ctxsw.c: ..."), or to the header itself before any,
# and may call only its own layer and those below.
inl=0 inl_up=0
while read -r h home fn callee; do
	t=${def[$callee]:-}
	[[ -z $t ]] && continue
	inl=$((inl + 1))
	hl=${layer[$home]:-${hlayer[$home]:-}}
	if [[ -z $hl ]]; then
		echo "$h: $fn's section names $home, which has no layer"
		rc=1
	elif ((layer[$t] > hl)); then
		echo "$h: inline $fn (of $home, layer $hl) calls $callee of $t.c (layer ${layer[$t]}): move it to a file of that layer"
		inl_up=$((inl_up + 1))
		rc=1
	fi
done < <(for h in core/*.h; do
	awk -v h="$h" -v self="$(basename "$h")" '
		BEGIN { home = self }
		/^\/\*/ && match($0, /core\/[a-z_0-9]+\.c/) {
			home = substr($0, RSTART + 5, RLENGTH - 7)
		}
		/^static (inline|__always_inline) / { infn = 1; fn = "" }
		infn && fn == "" && match($0, /[a-z_0-9]+\(/) {
			fn = substr($0, RSTART, RLENGTH - 1)
			next
		}
		infn {
			line = $0
			while (match(line, /[a-z_][a-z_0-9]*\(/)) {
				print h, home, fn, substr(line, RSTART, RLENGTH - 1)
				line = substr(line, RSTART + RLENGTH)
			}
		}
		infn && /^}/ { infn = 0 }' "$h"
done)
echo "$inl calls to the core's functions from header inlines, $inl_up of them upward"

# No two files may call each other, directly or round a longer loop
# (tsort names the files of a loop).
loop=$(printf '%s' "$edges" | sort -u |
       tsort 2>&1 >/dev/null | sed -n 's/^tsort: \([a-z_0-9]*\)$/\1/p')
if [[ -n $loop ]]; then
	echo "these files call each other in a loop: $(echo $loop | sed 's/ /.c, /g').c; have the lower one take an ops table or move the shared step below both"
	rc=1
else
	echo "no file calls one that calls it back"
fi
exit $rc

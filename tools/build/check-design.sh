#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Documentation/design.rst's file table against the tree: every source
# file of the modules (core/, kapi/, arch/, smpl_fmt/, include/) must be
# a term of its "Files" section, and every term there must exist.
# Prints what differs; exit 1 when anything does.
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
exit $rc

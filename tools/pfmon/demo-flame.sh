#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make run's output filter: the guest's console passes through, but the
# flame graph demo.sh prints (base64 between PFMON-FLAME-BEGIN and
# PFMON-FLAME-END) is written to the host file SVG instead, and its
# path printed.  Usage: vm ... exec -- ... | demo-flame.sh SVG
set -euo pipefail

svg=$1
mkdir -p "$(dirname "$svg")"
rm -f "$svg" "$svg.b64"
in=0
while IFS= read -r line; do
	line=${line%$'\r'}
	case $in:$line in
	0:PFMON-FLAME-BEGIN) in=1 ;;
	1:PFMON-FLAME-END)
		in=0
		base64 -d < "$svg.b64" > "$svg"
		rm -f "$svg.b64"
		echo "(the flame graph: $svg, open it in a browser)"
		;;
	1:*) printf '%s\n' "$line" >> "$svg.b64" ;;
	*) printf '%s\n' "$line" ;;
	esac
done

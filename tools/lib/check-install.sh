#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Install libperfmon into a scratch DESTDIR and check that a perfmon2
# program builds against it through pkg-config, linked static and shared,
# and that the shared object exports exactly the pfm_* calls.  One line
# per check, "ok ..." or "FAIL ..."; exits 1 if any check failed.
#
# The library is built for the host (ARCH, M32, OUT are ignored).

# The check functions are called through check().
# shellcheck disable=SC2317

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset ARCH M32 OUT CROSS_COMPILE

failed=0
lib=$tmp/usr/lib
inc=$tmp/usr/include
cflags=(-O2 -Wall -Wextra -Werror)

ok() { echo "ok $*"; }
fail() { echo "FAIL $*"; failed=1; }

# check NAME CMD...: run CMD, report NAME, show its output on failure.
check() {
	local name=$1

	shift
	if "$@" >"$tmp/log" 2>&1; then
		ok "$name"
	else
		fail "$name"
		sed 's/^/    /' "$tmp/log"
	fi
}

# Files and symlinks that make install must have put in place.
installed() {
	local f

	for f in "$inc/perfmon/perfmon.h" "$inc/perfmon/perfmon_abi.h" \
		 "$inc/perfmon/perfmon_dfl_smpl.h" "$inc/perfmon/perfmon_ring.h" \
		 "$inc/perfmon/perfmon_uread.h" \
		 "$lib/libperfmon.a" "$lib/libperfmon.so.1.1.0" \
		 "$lib/pkgconfig/libperfmon.pc"; do
		[ -f "$f" ] || { echo "missing ${f#"$tmp"}"; return 1; }
	done
	for f in libperfmon.so.1 libperfmon.so; do
		[ "$(readlink "$lib/$f")" = libperfmon.so.1.1.0 ] ||
			{ echo "bad symlink /usr/lib/$f"; return 1; }
	done
}

# The installed headers compile alone in strict C99 (the header-only
# user-level read helper needs POSIX's clock_gettime()).
header_c99() {
	echo '#include <perfmon/perfmon.h>' |
		gcc -std=c99 -pedantic "${cflags[@]}" -I"$inc" -fsyntax-only -x c - &&
	echo '#include <perfmon/perfmon_uread.h>' |
		gcc -std=c99 -pedantic -D_POSIX_C_SOURCE=200809L "${cflags[@]}" \
		    -I"$inc" -fsyntax-only -x c -
}

# A C++ program links against the C library (extern "C") and runs a call.
header_cxx() {
	printf '%s\n' '#include <perfmon/perfmon.h>' \
		'#include <perfmon/perfmon_uread.h>' \
		'int main() { return pfm_stop(-1) == -1 && !pfm_uread_map(-1) ? 0 : 1; }' |
		g++ "${cflags[@]}" -static -x c++ - "${pcflags[@]}" -o "$tmp/cxx"
	"$tmp/cxx"
}

# The static program has no dynamic section; the shared one needs us.
linked_static() {
	! readelf -d "$tmp/self_count_static" | grep -q NEEDED
}

linked_shared() {
	readelf -d "$tmp/self_count_shared" |
		grep -q 'NEEDED.*\[libperfmon\.so\.1\]'
}

soname() {
	readelf -d "$lib/libperfmon.so.1.1.0" |
		grep -q 'SONAME.*\[libperfmon\.so\.1\]'
}

# nm -D: the defined symbols are exactly the calls declared in the
# header, each with the version node libperfmon.map gives it.
exports() {
	local want mapped got

	want=$(grep -oE '\<pfm_[a-z_]+\(' "$here/include/perfmon/perfmon.h" |
	       tr -d '(' | sort -u)
	# The map's names, and the pre-0.3 names perfmon.c versions
	# itself (.symver).
	mapped=$({ awk '/^PERFMON_[0-9.]+ \{/ { node = $1 }
		       /^\t\tpfm_[a-z_]+;$/ { sub(";", ""); print $1 "@@" node }' \
		   "$here/libperfmon.map"
		   printf '%s\n' pfm_get_version@@PERFMON_0.1 \
			pfm_get_pmu_info@@PERFMON_0.1; } | sort)
	# The pre-0.3 names are non-default versions (name@node): compare
	# them as name@@node.
	got=$(nm -D --defined-only "$lib/libperfmon.so.1.1.0" |
	      awk '$2 != "A" { print $3 }' |
	      sed 's/^\([a-z_]*\)@\([A-Z]\)/\1@@\2/' | sort)
	diff <(echo "$want") <(echo "$mapped" | sed 's/@@.*//') ||
		{ echo "header and libperfmon.map differ"; return 1; }
	diff <(echo "$mapped") <(echo "$got")
}

# A program using libperfmon and libpfm4 (event names) links with both,
# static and shared: no symbol of one clashes with the other's.
with_libpfm4() {
	cat > "$tmp/both.c" <<'EOC'
#include <perfmon/pfmlib.h>
#include <perfmon/perfmon.h>
int main(void)
{
	struct pfarg_pmu_info info;
	pfm_pmu_info_t pinfo = { .size = sizeof(pinfo) };
	unsigned int maj;

	/* libpfm4's pfm_get_pmu_info(), not libperfmon's old name. */
	if (pfm_initialize() != PFM_SUCCESS ||
	    pfm_get_pmu_info(PFM_PMU_PERF_EVENT, &pinfo) != PFM_SUCCESS)
		return 1;
	pfm_get_abi_version(&maj, 0);
	pfm_get_pmu_desc(&info);
	return 0;
}
EOC
	gcc "${cflags[@]}" -static -o "$tmp/both_static" "$tmp/both.c" \
		"${pcflags[@]}" -lpfm &&
	gcc "${cflags[@]}" -o "$tmp/both_shared" "$tmp/both.c" \
		"${pcflags[@]}" -lpfm &&
	"$tmp/both_static" &&
	LD_LIBRARY_PATH=$lib "$tmp/both_shared"
}

# Without /dev/perfmon, the example fails with ENOSYS.
run_nodev() {
	local rc=0

	"$tmp/self_count_static" >"$tmp/out" 2>&1 || rc=$?
	cat "$tmp/out"
	[ "$rc" -eq 1 ] &&
		grep -q '^pfm_create_context: Function not implemented$' "$tmp/out"
}

check "make install DESTDIR=... PREFIX=/usr" \
	make -C "$top/tools/lib" install DESTDIR="$tmp" PREFIX=/usr
check "installed headers, libraries, symlinks, libperfmon.pc" installed

if ! command -v pkg-config >/dev/null; then
	fail "pkg-config not found (apt-get install pkg-config)"
	exit 1
fi
pc=$(PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$tmp \
     pkg-config --cflags --libs --static libperfmon) ||
	{ fail "pkg-config libperfmon"; exit 1; }
read -ra pcflags <<<"$pc"
check "pkg-config --modversion libperfmon is 1.1.0" \
	test "$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --modversion libperfmon)" = 1.1.0
check "headers alone, -std=c99 -pedantic" header_c99
if command -v g++ >/dev/null; then
	check "header from C++ (extern \"C\"), static link and run" header_cxx
else
	ok "header from C++ (skipped: no g++)"
fi

check "examples/self_count.c, static link" \
	gcc "${cflags[@]}" -static -o "$tmp/self_count_static" \
	"$here/examples/self_count.c" "${pcflags[@]}"
check "static program does not need a shared libperfmon" linked_static
check "examples/self_count.c, shared link" \
	gcc "${cflags[@]}" -o "$tmp/self_count_shared" \
	"$here/examples/self_count.c" "${pcflags[@]}"
check "shared program needs libperfmon.so.1" linked_shared
check "libperfmon.so.1.1.0 has soname libperfmon.so.1" soname
check "nm -D: exactly the pfm_* calls, versions from libperfmon.map" exports
check "links with libpfm4 too (static and shared)" with_libpfm4

if [ -e /dev/perfmon ]; then
	ok "self_count without /dev/perfmon (skipped: /dev/perfmon present)"
else
	check "self_count without /dev/perfmon fails with ENOSYS" run_nodev
fi

exit "$failed"

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-deb: the Debian packages, end to end, on this machine.
#
#  1. make deb (tools/build/deb.sh): build, lintian --fail-on warning;
#  2. apt install perfmon-dkms, libperfmon1, libperfmon-dev and pfmon:
#     DKMS builds the modules for every installed kernel with headers;
#     every BUILT_MODULE_NAME of dkms.conf must land in each, and no
#     test module be built (what check-dkms proved in private trees);
#  3. boot the x86_64 guest on 6.1 with the modules DKMS built there,
#     the packaged pfmon and libperfmon (with the loader and shared
#     libraries they need: the guest's userland is a static busybox),
#     and a libperfmon program built here against the installed -dev
#     package through pkg-config: pfmon list, pfmon stat -- CMD, and the
#     program must succeed;
#  4. purge the packages and what apt installed with them, and check
#     the machine is as it was: the package list, /usr/src, /var/lib/dkms
#     and every kernel's updates/dkms.  An exit at any point purges too.
#     DKMS makes its module signing key pair (/var/lib/dkms/mok.key and
#     mok.pub) at its first build on a machine and keeps it past any
#     package's purge: a pair this check caused is removed with the rest.
#
# It installs packages: root only, and it refuses to run where any of
# them (or a DKMS perfmon) is installed already, rather than remove it.
#
# Usage: deb-check.sh [KVER]   (the guest's kernel, default 6.1)
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${1:-6.1}
pkgs=(perfmon-dkms libperfmon1 libperfmon-dev pfmon)
t0=$SECONDS

die() { echo "deb-check: $*" >&2; exit 1; }
# set -e's exits say where, not only die's.
trap 'echo "deb-check: failed: line $LINENO: $BASH_COMMAND" >&2' ERR
log() { echo "deb-check: $* ($((SECONDS - t0)) s)"; }

[[ $(id -u) == 0 ]] || die "installs packages: run as root"
[[ $(dpkg --print-architecture) == amd64 ]] ||
	die "the guest is x86_64: needs an amd64 machine"
kabi=$(sed -n "s/^KABI_$kver := //p" "$top/.cache/config.mk" 2>/dev/null || true)
[[ -n $kabi ]] || die "no Debian kernel $kver known: run 'make deps'"
krel=$kabi-amd64
eval "$(grep -E '^(PACKAGE_NAME|PACKAGE_VERSION)=' "$top/dkms.conf")"
dkms_dir=/var/lib/dkms/$PACKAGE_NAME

# One at a time per machine (two clones' make check): the packages,
# DKMS's tree and dpkg are the machine's.  The lock is in the machine's
# cache, as deps.sh's and the debug kernels' are (a clone's .cache links
# to it; make deps made it), not in /run/lock, which a minimal
# container may lack.
lock=$top/.cache/.deb-check.lock
exec 8> "$lock"
flock -w 1800 8 || die "another deb-check holds $lock"

# Packages dpkg knows in any state but not-installed (config-files too).
present() {
	dpkg-query -W -f='${db:Status-Status} ${Package}:${Architecture}\n' "$@" 2>/dev/null |
		awk '$1 != "not-installed" { print $2 }' | sort
}
for p in "${pkgs[@]}"; do
	if [[ -n $(present "$p") ]]; then
		die "$p is installed already; this check installs and purges the packages: 'apt purge ${pkgs[*]}' first"
	fi
done
[[ ! -e $dkms_dir ]] ||
	die "$dkms_dir exists (a 'dkms add' of the tree?): 'dkms remove $PACKAGE_NAME/$PACKAGE_VERSION --all' first"

work=$(mktemp -d "${TMPDIR:-/tmp}/perfmon-deb.XXXXXX")

# What the check compares before and after: installed packages, the
# sources DKMS knows, its tree, and the modules it installed.
snapshot() {
	dpkg-query -W -f='${db:Status-Abbrev} ${Package}:${Architecture} ${Version}\n' | sort
	echo "-- /usr/src"
	ls -1 /usr/src
	echo "-- /var/lib/dkms"
	find /var/lib/dkms 2>/dev/null | sort || true
	echo "-- updates/dkms"
	find /lib/modules -mindepth 3 -path '*/updates/dkms*' | sort
}
snapshot > "$work/before"
present > "$work/pkgs-before"
# DKMS's signing key pair, when the machine has none yet (step 4).
mok=(/var/lib/dkms/mok.key /var/lib/dkms/mok.pub)
mok_before=$(ls "${mok[@]}" 2>/dev/null || true)

# Purge the packages and whatever apt brought in with them; on every
# exit, so that a failure leaves the machine as it was too.
cleanup() {
	local rc=$? new
	trap - EXIT
	set +e
	new=$(present | comm -13 "$work/pkgs-before" -)
	if [[ -n $new ]]; then
		log "purging" $new
		# shellcheck disable=SC2086 # one word per package
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $new \
			> "$work/purge.log" 2>&1 ||
			{ cat "$work/purge.log"; echo "deb-check: apt-get purge failed" >&2; rc=1; }
	fi
	# A failed postinst can leave DKMS's tree behind the purge.
	if [[ -e $dkms_dir ]]; then
		dkms remove "$PACKAGE_NAME/$PACKAGE_VERSION" --all > /dev/null 2>&1
		rm -rf "$dkms_dir"
	fi
	if [[ -z $mok_before ]] && ls "${mok[@]}" > /dev/null 2>&1; then
		rm -f "${mok[@]}"
		log "removed the signing key pair DKMS made at this machine's first build"
	fi
	snapshot > "$work/after"
	if ! diff -u "$work/before" "$work/after"; then
		echo "deb-check: the machine is not as it was (diff above)" >&2
		rc=1
	else
		log "purged: packages, /usr/src, /var/lib/dkms, updates/dkms as before"
	fi
	rm -rf "$work"
	exit $rc
}
trap cleanup EXIT

# 1. The packages.
"$top/tools/build/deb.sh" "$work/deb" | sed -n 's/^deb: \(lintian\|packages\)/&/p'
log "built, lintian clean"

# 2. Install: DKMS builds in perfmon-dkms's postinst.
debs=()
for p in "${pkgs[@]}"; do
	d=$(compgen -G "$work/deb/${p}_*_all.deb" ||
		compgen -G "$work/deb/${p}_*_amd64.deb" || true)
	[[ -n $d ]] || die "make deb made no $p package"
	debs+=("$d")
done
log "apt install ${pkgs[*]}"
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		"${debs[@]}" > "$work/install.log" 2>&1; then
	cat "$work/install.log"
	die "apt install failed"
fi
grep -E '^(Loading new|Building for|Building initial|Module build)' "$work/install.log" || true

# Every kernel with headers got every module dkms.conf names, and no
# test module was built.
mods=$(arch=x86_64 kernel_source_dir=; . "$top/dkms.conf" && echo "${BUILT_MODULE_NAME[@]}")
status=0
nk=0
for kdir in /lib/modules/*; do
	k=${kdir##*/}
	[[ -f $kdir/build/Makefile ]] || continue
	nk=$((nk + 1))
	for m in $mods; do
		if ! compgen -G "$kdir/updates/dkms/$m.ko*" > /dev/null; then
			echo "deb-check: $k: DKMS did not install $m" >&2
			status=1
		fi
	done
	[[ -z $(find "$dkms_dir" "$kdir/updates/dkms" \( -name 'pfm_*test.ko*' \
		-o -name 'pfm_*sim*.ko*' \) 2>/dev/null) ]] ||
		{ echo "deb-check: $k: a test module was built" >&2; status=1; }
done
if ((status)); then
	find "$dkms_dir" -name make.log -exec cat {} +
	die "the DKMS install is incomplete (above)"
fi
((nk > 0)) || die "no kernel with headers: nothing for DKMS to build"
[[ -d /lib/modules/$krel/updates/dkms ]] || die "no headers for $krel: run 'make deps'"
log "DKMS: $(echo $mods | wc -w) modules for each of $nk kernels: $(dkms status "$PACKAGE_NAME" | tr '\n' ';')"

# 3. The guest: DKMS's modules where vm looks for a build's (SRC/...),
# the packages' files at their own paths, with their loader and
# libraries (from ldd), unpacked over the busybox root by the script.
g=$work/guest
mkdir -p "$g/src/core" "$g/src/smpl_fmt" "$g/src/arch/soft" "$g/root"
unko() {	# unko NAME DEST: DKMS's module NAME, uncompressed
	local f
	f=$(compgen -G "/lib/modules/$krel/updates/dkms/$1.ko*" || true)
	case $f in
	*.ko) cp "$f" "$2" ;;
	*.ko.xz) xz -dc "$f" > "$2" ;;
	*.ko.zst) zstd -qdc "$f" > "$2" ;;
	*.ko.gz) gzip -dc "$f" > "$2" ;;
	*) die "no $1 module installed for $krel" ;;
	esac
}
unko perfmon "$g/src/core/perfmon.ko"
unko pfm_dfl_smpl "$g/src/smpl_fmt/pfm_dfl_smpl.ko"
unko pfm_ring_smpl "$g/src/smpl_fmt/pfm_ring_smpl.ko"
unko pfm_pmu_lib "$g/src/arch/pfm_pmu_lib.ko"
unko pfm_soft "$g/src/arch/soft/pfm_soft.ko"

# The library program, built as a user would: pkg-config, shared.
gcc -O2 -Wall -Werror -o "$g/self_count" "$top/tools/lib/examples/self_count.c" \
	$(pkg-config --cflags --libs libperfmon) ||
	die "self_count does not build against the installed libperfmon-dev"
for b in /usr/bin/pfmon "$g/self_count"; do
	# Not ldd | grep -q: grep's early exit would fail the pipe.
	l=$(ldd "$b")
	grep -Eq 'libperfmon\.so\.1 => (/usr)?/lib/x86_64-linux-gnu/' <<< "$l" ||
		die "$b is not linked with the packaged libperfmon.so.1: $l"
done
rootfs=$g/rootfs
mkdir -p "$rootfs"
{
	dpkg -L pfmon libperfmon1 | grep -E '^/usr/(bin|lib)/'
	ldd /usr/bin/pfmon "$g/self_count" | grep -o '/[^ ]*' | grep -v "^$g"
} | sort -u | while read -r f; do
	[[ -f $f ]] || continue
	mkdir -p "$rootfs$(dirname "$f")"
	cp -L "$f" "$rootfs$f"
done
cp "$g/self_count" "$g/root/"
cat > "$g/root/smoke.sh" <<'EOS'
set -e
# The packages' files and their libraries over the busybox root.
cp -a /root/rootfs/. /
echo "== pfmon list"
/usr/bin/pfmon list > /tmp/list
head -3 /tmp/list
grep -q task-clock /tmp/list
echo "== pfmon stat -e task-clock,syscalls -- ls /"
/usr/bin/pfmon stat -e task-clock,syscalls -- ls / > /tmp/stat 2>&1
cat /tmp/stat
grep -Eq '^ *[1-9][0-9,]* +.*syscalls' /tmp/stat
echo "== self_count (libperfmon, pkg-config)"
/root/self_count
echo "DEB-SMOKE-OK"
EOS
log "guest: x86_64 $kver, DKMS's modules, the packaged pfmon and library"
"$top/tools/selftests/qemu/vm" --arch x86_64 --kver "$kver" --timeout 600 \
	--build "$g" --log "$work/guest.log" \
	--file "$rootfs" --file "$g/root/smoke.sh" --file "$g/root/self_count" \
	exec -- 'sh /root/smoke.sh' > "$work/guest.out" 2>&1 || {
	cat "$work/guest.out"
	die "the guest smoke test failed"
}
# What the smoke test printed, and the rig's verdict.
awk '/^== pfmon list/ { p = 1 } p; /^DEB-SMOKE-OK/ { p = 0 } /^RIG-RESULT/' "$work/guest.out"
grep -q '^DEB-SMOKE-OK' "$work/guest.out" || {
	cat "$work/guest.out"
	die "the guest smoke test did not finish"
}
log "guest smoke test passed"

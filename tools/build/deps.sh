#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything perfmon needs from Debian's archive, idempotently.
#
# Host packages come through apt-get install, the x86_64 guest kernels
# with them (Debian's images and headers, installed as for the host).
# The arm64 guest kernels, their headers and busybox come through
# "apt-get download" + "dpkg-deb -x" into the cache folder: apt-get
# install of an :arm64 kernel package would replace the host compiler
# with the arm64 one.
#
# The cache is the machine's, not the clone's (tools/build/cache.sh): a
# fresh clone links .cache to it, so downloads, unpacked kernels and the
# debug kernels are made once per machine and kept while their inputs
# (package versions, config fragments) stay the same.
#
# Usage: deps.sh [KVER:FLAVOR:ARCH...]
#   With no argument: every kernel make check boots (KERNELS_CI below).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/build/cache.sh
. "$here/cache.sh"
cache=$(pfm_cache_link)

# The kernels make check boots: Debian 12's 6.1 and 6.12, generic on
# both arches, PREEMPT_RT 6.12 on x86_64.  KVER:FLAVOR:ARCH.
KERNELS_CI=(6.1:generic:x86_64 6.1:generic:arm64 6.12:generic:x86_64
	    6.12:generic:arm64 6.12:rt:x86_64)
kernels=("${KERNELS_CI[@]}" "$@")

host_pkgs=(
	make gcc libc6-dev bc flex bison libelf-dev libssl-dev dwarves kmod
	xz-utils cpio coreutils sparse perl util-linux
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	qemu-system-x86 qemu-system-arm busybox-static
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	libc6-dev-i386 lib32gcc-12-dev
	dkms
	libpfm4-dev zlib1g-dev libzstd-dev
	libxml2-utils
	linux-perf
	golang-1.19-go
	dpkg-dev debhelper dh-dkms lintian pkg-config
)

# The static libraries pfmon links, in their arm64 builds (unpacked).
a64_lib_pkgs=(libpfm4-dev libelf-dev zlib1g-dev libzstd-dev)

log() { echo "deps: $*"; }

installed() {
	local st
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null || true)
	[[ $st == ii* ]]
}

apt_updated=0
apt_update_once() {
	if [[ $apt_updated == 0 ]]; then
		log "apt-get update"
		apt-get update -qq
		apt_updated=1
	fi
}

as_root() {
	if [[ $(id -u) != 0 ]]; then
		echo "deps: must run as root to install: $*" >&2
		echo "deps: run 'sudo make deps'" >&2
		exit 1
	fi
}

apt_install() {
	as_root "$*"
	apt_update_once
	log "installing $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "$@"
}

# One deps run at a time per machine: the cache is shared by clones.
exec 9>"$cache/.deps.lock"
flock 9

# 1. Host packages.
missing=()
for p in "${host_pkgs[@]}"; do
	installed "$p" || missing+=("$p")
done
((${#missing[@]} == 0)) || apt_install "${missing[@]}"

# 2. Kernel ABIs, resolved from the archive, never hard-coded: 6.1's
# from the installed metapackage (6.1.0-N), 6.12's as the newest
# linux-headers-6.12.N+deb12-amd64 the archive lists.
abi_6_1=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 |
	sed -n 's/.*linux-headers-\([0-9.]*-[0-9]*\)-amd64.*/\1/p')
abi_6_12=$(apt-cache pkgnames linux-headers-6.12. |
	sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12\)-amd64$/\1/p' |
	sort -V | tail -1)
if [[ -z $abi_6_12 ]]; then
	apt_update_once
	abi_6_12=$(apt-cache pkgnames linux-headers-6.12. |
		sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12\)-amd64$/\1/p' |
		sort -V | tail -1)
fi
for v in abi_6_1 abi_6_12; do
	if [[ -z ${!v} ]]; then
		echo "deps: cannot resolve the ${v#abi_} kernel ABI from the archive" >&2
		exit 1
	fi
done
abi_of() { case $1 in 6.1) echo "$abi_6_1" ;; 6.12) echo "$abi_6_12" ;;
	   *) echo "deps: no Debian 12 kernel $1 (6.1 or 6.12)" >&2; exit 2 ;; esac; }
flav_sfx() { [[ $1 == generic ]] || echo "$1-"; }

# 3. x86_64 guest kernels: Debian's headers (they pull the image) and
# the -unsigned image.  Installed as the host's own are.
# 4. arm64 guest kernels and headers, unpacked (never installed), with
# busybox; the headers' Makefile includes the -common headers by
# absolute path (installed on the host by step 3's kernel of the same
# version) and their scripts/ links into linux-kbuild (host binaries).
a64="$cache/arm64"
mkdir -p "$a64/root"
a64_unpack() {	# a64_unpack STAMP PKG...: download and unpack once
	local stamp=$1 deb
	shift
	[[ -e $stamp ]] && return 0
	as_root "arm64 packages"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		log "dpkg --add-architecture arm64"
		dpkg --add-architecture arm64
		apt_updated=0
	fi
	apt_update_once
	rm -rf "$a64/debs"
	mkdir -p "$a64/debs"
	# apt fetches as the _apt user where it can write.
	chown _apt "$a64/debs" 2>/dev/null || true
	log "downloading arm64 $*"
	(cd "$a64/debs" && apt-get download -qq "$@")
	for deb in "$a64"/debs/*.deb; do
		dpkg-deb -x "$deb" "$a64/root"
	done
	rm -rf "$a64/debs"
	touch "$stamp"
}

for k in "${kernels[@]}"; do
	IFS=: read -r kv flav arch <<<"$k"
	abi=$(abi_of "$kv")
	sfx=$(flav_sfx "$flav")
	case $arch in
	x86_64)
		hdr=linux-headers-$abi-${sfx}amd64
		img=linux-image-$abi-${sfx}amd64-unsigned
		# 6.1's image is the signed one linux-image-amd64 brings.
		[[ $kv == 6.1 && $flav == generic ]] && img=linux-image-$abi-amd64
		if ! installed "$hdr" || ! [[ -e /boot/vmlinuz-$abi-${sfx}amd64 ]]; then
			installed "$img" || apt_install "$hdr" "$img"
			installed "$hdr" || apt_install "$hdr"
		fi
		;;
	arm64)
		# The -common headers and linux-kbuild come with the amd64
		# headers of the same kernel.
		common=linux-headers-$abi-common${sfx:+-${sfx%-}}
		kbuild=linux-kbuild-$kv
		[[ $kv == 6.1 ]] || kbuild=linux-kbuild-$abi
		installed "$common" || apt_install "$common"
		installed "$kbuild" || apt_install "$kbuild"
		# The same version as the -common headers, which the arm64
		# headers' Makefile includes.
		ver=$(dpkg-query -W -f='${Version}' "$common")
		a64_unpack "$a64/.stamp-$abi-${sfx}arm64-$ver" \
			"linux-image-$abi-${sfx}arm64:arm64=$ver" \
			"linux-headers-$abi-${sfx}arm64:arm64=$ver"
		# The guests load only our modules: the kernel's own are
		# 300 MB that nothing reads.
		rm -rf "$a64/root/lib/modules/$abi-${sfx}arm64"
		ln -sfn "/usr/lib/$kbuild" "$a64/root/usr/lib/$kbuild"
		;;
	*) echo "deps: no guest architecture $arch" >&2; exit 2 ;;
	esac
done

bver=$(dpkg-query -W -f='${Version}' busybox-static)
a64_unpack "$a64/.stamp-busybox-$bver" busybox-static:arm64

# 4b. make deb's arm64 packages (dpkg-buildpackage -aarm64) link the
# arm64 libraries as a Debian cross build does: installed multiarch
# (their :arm64 packages are Multi-Arch: same, beside the host's own,
# whose versions apt keeps in step), unlike the kernels above.  Before
# 4c: its key counts these versions too, the same from the first run.
a64_dev_pkgs=(libc6-dev:arm64 "${a64_lib_pkgs[@]/%/:arm64}")
missing=()
for p in "${a64_dev_pkgs[@]}"; do
	installed "$p" || missing+=("$p")
done
if ((${#missing[@]})); then
	as_root "arm64 development packages"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		log "dpkg --add-architecture arm64"
		dpkg --add-architecture arm64
		apt_updated=0
	fi
	apt_install "${missing[@]}"
fi

# 4c. arm64 builds of the libraries pfmon links: their .a files and
# headers, unpacked next to the kernels (dpkg-deb -x, never installed).
lkey=$(dpkg-query -W -f='${Version}' "${a64_lib_pkgs[@]}" | md5sum | cut -c1-12)
a64_unpack "$a64/.stamp-libs-$lkey" "${a64_lib_pkgs[@]/%/:arm64}"

# 4d. The arm64 guests' emulator: QEMU from Debian 12's backports,
# unpacked (never installed, so the host's own QEMU and its libraries
# stay Debian 12's; the backport runs on them).  Debian 12's QEMU 7.2
# shares an -icount guest's instructions unfairly between vCPUs: one
# that spins can hold the other off for seconds of guest time (fixed
# in QEMU 8.1, commit 83ecdb18).  A vCPU held off right after it
# reloads a PMU counter with interrupts masked then finds the counter,
# which QEMU counts in guest time whether or not the vCPU runs,
# overflowed again each time it comes back: an overflow interrupt
# livelock, a "hard LOCKUP" (Documentation/testing.rst).  The archive's
# own address is reused for the backports suite.
qa="$cache/qemu-arm"
a64_qemu_ver() {	# the backports' version of qemu-system-arm, or nothing
	apt-cache madison qemu-system-arm |
		awk -F' *[|] *' '$3 ~ /bookworm-backports/ { print $2; exit }'
}
a64_qemu() {
	local uri ver

	ver=$(a64_qemu_ver)
	if [[ -z $ver ]]; then
		as_root "the backports source"
		uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' |
			awk '$2 == "bookworm" { print $1; exit }')
		if [[ -z $uri ]]; then
			echo "deps: apt lists no Debian 12 (bookworm) source" >&2
			exit 1
		fi
		log "adding Debian 12's backports suite (for QEMU)"
		cat > /etc/apt/sources.list.d/perfmon-backports.sources <<EOS
Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
		apt_updated=0
		apt_update_once
		ver=$(a64_qemu_ver)
	fi
	if [[ -z $ver ]]; then
		echo "deps: Debian 12's backports list no qemu-system-arm" >&2
		exit 1
	fi
	[[ -e $qa/.stamp-$ver ]] && return 0
	as_root "qemu-system-arm $ver"
	rm -rf "$qa"
	mkdir -p "$qa/debs"
	chown _apt "$qa/debs" 2>/dev/null || true
	log "downloading qemu-system-arm $ver (backports)"
	(cd "$qa/debs" && apt-get download -qq "qemu-system-arm=$ver")
	dpkg-deb -x "$qa"/debs/*.deb "$qa/root"
	rm -rf "$qa/debs"
	touch "$qa/.stamp-$ver"
}
a64_qemu

# 5. kselftest harness and checkpatch from Debian's kernel source tarball.
src="$cache/linux-src"
sstamp="$src/.stamp-$(dpkg-query -W -f='${Version}' linux-source-6.1)"
if [[ ! -e $sstamp ]]; then
	rm -rf "$src"
	mkdir -p "$src"
	log "extracting kselftest harness and checkpatch from linux-source-6.1"
	tar -C "$src" --strip-components=1 -xJf /usr/src/linux-source-6.1.tar.xz \
		--wildcards \
		'linux-source-6.1/tools/testing/selftests/kselftest.h' \
		'linux-source-6.1/tools/testing/selftests/kselftest_harness.h' \
		'linux-source-6.1/scripts/checkpatch.pl' \
		'linux-source-6.1/scripts/spelling.txt' \
		'linux-source-6.1/scripts/const_structs.checkpatch'
	touch "$sstamp"
fi

# 6. What the Makefile and the rig need to know, written once.
cat > "$cache/config.mk.tmp" <<EOC
# Generated by tools/build/deps.sh; do not edit.
# Debian kernel ABIs by version (KVER=); KABI is 6.1's.
KABI := $abi_6_1
KABI_6.1 := $abi_6_1
KABI_6.12 := $abi_6_12
EOC
mv "$cache/config.mk.tmp" "$cache/config.mk"
log "ready: guest kernels 6.1 = $abi_6_1, 6.12 = $abi_6_12; cache $cache"

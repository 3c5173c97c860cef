# SPDX-License-Identifier: GPL-2.0
#
# The machine's cache for perfmon, shared by every clone (sourced).
#
# Downloads, unpacked guest kernels and the debug kernels depend only on
# package versions and config fragments, so a machine makes them once,
# the way ccache keeps objects: every entry is keyed by its inputs
# (stamp files, keyed folders) and rebuilt when they change.  A clone's
# .cache is a link to it.  PFM_CACHE overrides where it lives; the
# default is $XDG_CACHE_HOME/perfmon (~/.cache/perfmon).

pfm_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

pfm_cache_dir() {
	echo "${PFM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/perfmon}"
}

# pfm_cache_link: make the clone's .cache the machine cache (a link), or
# keep a real .cache folder a clone already has; print the folder.
pfm_cache_link() {
	local dir
	if [[ -d $pfm_top/.cache && ! -L $pfm_top/.cache ]]; then
		(cd "$pfm_top/.cache" && pwd -P)
		return
	fi
	dir=$(pfm_cache_dir)
	mkdir -p "$dir"
	ln -sfn "$dir" "$pfm_top/.cache"
	(cd "$dir" && pwd -P)
}

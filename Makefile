# SPDX-License-Identifier: GPL-2.0
#
# perfmon: out-of-tree modules, their tests and the QEMU test rig.
#
#   make                 build libperfmon and the modules for the running kernel (KDIR)
#   make ARCH=arm64      the same, cross-built against Debian's arm64 headers
#   make install         install libperfmon: header, libraries, pkg-config
#                        (DESTDIR=, PREFIX=/usr/local)
#   make modules_install install the modules for KDIR's kernel (depmod):
#                        modprobe then finds the PMU description itself
#   make deps            install what the project needs (Debian archive)
#   make check           every gate: builds, sparse, checkpatch, both guests,
#                        the debug kernel gate
#   make check-debug     the x86_64 suite, a million fuzzer calls and
#                        pmuv3_test on kernels with KASAN, lockdep,
#                        kmemleak, failslab (built once)
#   make run             boot a guest and profile a workload with pfmon
#   make bench           perfmon against perf_events in both guests, and
#                        over pfm_perf beside perf in the arm64 one
#                        (Documentation/performance.rst)
#   KVER=6.1|6.12        the Debian kernel the guests boot and the modules
#   FLAVOR=rt            build against (run, test, bench, shell; default
#                        6.1, generic; FLAVOR=rt: PREEMPT_RT)
#   make tool            pfmon, the profiling tool, for ARCH (tools/pfmon)
#   make deb             Debian packages into .build/deb: perfmon-dkms,
#                        libperfmon1, libperfmon-dev, pfmon (amd64 and
#                        arm64), lintian-clean (tools/build/deb.sh)
#   make help            all targets
#
# See Documentation/testing.rst for the rig.

TOP	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
CACHE	:= $(TOP)/.cache
BUILD	:= $(TOP)/.build

-include $(CACHE)/config.mk

HOSTARCH := $(shell uname -m)
ifeq ($(ARCH),)
ARCH	:= $(if $(filter aarch64 arm64,$(HOSTARCH)),arm64,x86_64)
override ARCH := $(ARCH)
endif
ifeq ($(ARCH),x86)
override ARCH := x86_64
endif
ifeq ($(ARCH),aarch64)
override ARCH := arm64
endif

ifeq ($(ARCH),arm64)
ifneq ($(filter aarch64 arm64,$(HOSTARCH)),)
CROSS_COMPILE ?=
else
CROSS_COMPILE ?= aarch64-linux-gnu-
endif
# On an x86 host, the headers unpacked by "make deps"; on arm64, the
# running kernel's.
ifeq ($(CROSS_COMPILE),)
KDIR	?= /lib/modules/$(shell uname -r)/build
else
KDIR	?= $(GUEST_KDIR_arm64)
endif
else
KDIR	?= /lib/modules/$(shell uname -r)/build
endif

# The kernels the guests boot: Debian's, by version and flavour, their
# ABIs resolved by make deps (KABI_6.1, KABI_6.12 in .cache/config.mk).
KVER	?= 6.1
FLAVOR	?= generic
override FLAVOR := $(or $(FLAVOR),generic)
ifeq ($(filter $(FLAVOR),generic rt),)
$(error FLAVOR=$(FLAVOR): generic or rt)
endif
FLAVOR_SFX := $(if $(filter rt,$(FLAVOR)),rt-,)
# The kernel's tag in build folders and logs: 6.1, 6.12, 6.12-rt.
KTAG	:= $(KVER)$(if $(filter rt,$(FLAVOR)),-rt,)
GUEST_KABI := $(KABI_$(KVER))
GUEST_KDIR_x86_64 := /usr/src/linux-headers-$(GUEST_KABI)-$(FLAVOR_SFX)amd64
GUEST_KDIR_arm64  := $(CACHE)/arm64/root/usr/src/linux-headers-$(GUEST_KABI)-$(FLAVOR_SFX)arm64

KMAKE	= $(MAKE) -C $(KDIR) M=$(CURDIR) ARCH=$(patsubst x86_64,x86,$(ARCH)) \
	  CROSS_COMPILE=$(CROSS_COMPILE)

.PHONY: all lib tool install modules modules_install clean deps deb check run help kdir-check

all: lib modules

# The user library (tools/lib), for ARCH.
lib:
	$(MAKE) -C $(TOP)/tools/lib ARCH=$(ARCH)

# The profiling tool (static; needs make deps for its libraries).
tool:
	$(MAKE) -C $(TOP)/tools/pfmon ARCH=$(ARCH)

install:
	$(MAKE) -C $(TOP)/tools/lib ARCH=$(ARCH) install

modules: kdir-check
	$(KMAKE) modules

# The runtime modules into /lib/modules/KVER/updates, with depmod, so
# that modprobe finds them by name and by alias (perfmon.pmu's choice of
# a description, the sampling formats by name).  The test modules are
# built only with PFM_TESTS=1 and so never installed.
modules_install: modules
	$(KMAKE) INSTALL_MOD_DIR=updates modules_install

# Works without kernel headers too: the build products are known by name.
clean:
	find $(TOP) -path $(TOP)/.cache -prune -o -path $(TOP)/.git -prune -o \
	  \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
	  -o -name '.*.cmd' -o -name modules.order -o -name Module.symvers \) \
	  -type f -print0 | xargs -0 rm -f
	rm -rf $(BUILD)

kdir-check:
	@if [ ! -f "$(KDIR)/Makefile" ]; then \
	  echo "error: no kernel headers in KDIR=$(KDIR)" >&2; \
	  if [ "$(ARCH)" = arm64 ] && [ -n "$(CROSS_COMPILE)" ]; then \
	    echo "  run 'make deps' to unpack Debian's arm64 headers" >&2; \
	  else \
	    echo "  install them: apt-get install linux-headers-$$(uname -r)" >&2; \
	    echo "  (or point KDIR= at a configured kernel tree;" >&2; \
	    echo "   'make deps && make build-x86_64' builds for the test guests)" >&2; \
	  fi; \
	  exit 1; \
	fi

# Every kernel make check boots; KVER=/FLAVOR= on the command line add
# that kernel for both arches (e.g. make deps KVER=6.1 FLAVOR=rt).
deps:
	$(TOP)/tools/build/deps.sh $(if $(filter command line,$(origin KVER) \
	  $(origin FLAVOR)),$(KVER):$(FLAVOR):x86_64 $(KVER):$(FLAVOR):arm64)

deb:
	$(TOP)/tools/build/deb.sh

help:
	@sed -n 's/^#   //p' $(TOP)/Makefile
	@echo "  make test T=NAME [ARCH=...]   run one test program in one guest"
	@echo "  make shell [ARCH=...]         interactive shell in a guest, modules loaded"
	@echo "  make guest-run FILES='a b' CMD='...' [ARCH=...]"
	@echo "                                copy files into a guest, run CMD, return its status"

# The rig's targets; absent from the DKMS source (perfmon-dkms ships the
# runtime modules' sources only, not tools/), where only "modules" runs.
-include $(TOP)/tools/selftests/qemu/rig.mk

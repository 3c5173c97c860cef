# SPDX-License-Identifier: GPL-2.0
#
# Test rig targets, included by the top-level Makefile.  Each guest
# architecture gets a copy of the tree under .build/ARCH/src built
# against the Debian kernel that guest boots, so both architectures'
# modules exist side by side and never clobber an in-place build.

RIG		:= $(TOP)/tools/selftests/qemu
VM		:= $(RIG)/vm
GUEST_ARCHES	:= x86_64 arm64
KSFT		:= $(CACHE)/linux-src/tools/testing/selftests
CHECKPATCH	:= $(CACHE)/linux-src/scripts/checkpatch.pl

guest_cross	= $(if $(filter arm64,$(1)),aarch64-linux-gnu-,)
guest_karch	= $(if $(filter arm64,$(1)),arm64,x86)
# The modules' tree for ARCH and the kernel KVER/FLAVOR selects
# (.build/ARCH/KTAG: src/ and the build logs); user programs are the
# same for every kernel (.build/ARCH/{tests,pfmon,bench}).
guest_kdir	= $(BUILD)/$(1)/$(KTAG)
# PFM_TESTS=1: the test modules too (Kbuild).
guest_kmake	= $(MAKE) -C $(GUEST_KDIR_$(1)) M=$(call guest_kdir,$(1))/src \
		  ARCH=$(call guest_karch,$(1)) CROSS_COMPILE=$(call guest_cross,$(1)) \
		  PFM_TESTS=1

# Our kernel-style sources: what checkpatch and the style rules cover.
STYLE_SRCS	= $(shell cd $(TOP) && find core kapi arch smpl_fmt include \
		    tools/selftests/perfmon tools/bench -name '*.[ch]' ! -name '*.mod.c' \
		    2>/dev/null | sort)

# checkpatch runs with --strict.  Exclusions, each with its reason:
#  FILE_PATH_CHANGES: asks for MAINTAINERS updates, which an out-of-tree
#  tree does not have.
CHECKPATCH_IGNORE := FILE_PATH_CHANGES
# And for the files that name registers with the kernel's own CamelCase
# definitions (SYS_PMEVTYPERn_EL0(), ID_AA64DFR0_EL1_PMUVer): CAMELCASE,
# since --no-tree cannot see that the kernel defines them.
CHECKPATCH_KNAMES := arch/arm64/pmuv3_map.c

.PHONY: need-deps checkpatch check check-dkms check-deb check-rig run test soak hold-off shell guest-run \
	check-debug bench fuzz-long

need-deps:
	@if [ -z "$(KABI)" ] || [ ! -d "$(KSFT)" ]; then \
	  echo "error: the rig's dependencies are missing: run 'make deps'" >&2; \
	  exit 1; \
	fi
	@if [ -z "$(GUEST_KABI)" ]; then \
	  echo "error: KVER=$(KVER): no such Debian kernel (6.1 or 6.12)" >&2; \
	  exit 1; \
	fi

# Per-arch rules: sync-ARCH, build-ARCH (build-mods-ARCH for the kernel
# KVER/FLAVOR select, build-user-ARCH), sparse-ARCH.
define guest_rules
# Copy the sources (not build products) into the per-kernel tree.  tar
# keeps modification times, so unchanged files are not rebuilt.
sync-$(1): need-deps
	@if [ ! -f "$(GUEST_KDIR_$(1))/Makefile" ]; then \
	  echo "error: no headers for $(1) $(KTAG) ($(GUEST_KDIR_$(1))):" >&2; \
	  echo "  run 'make deps KVER=$(KVER) FLAVOR=$(FLAVOR)'" >&2; \
	  exit 1; \
	fi
	@mkdir -p $(call guest_kdir,$(1))/src
	@tar -C $(TOP) --exclude=./.build --exclude=./.cache --exclude=./.git \
	  --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
	  --exclude='*.mod' --exclude='*.mod.c' --exclude=modules.order \
	  --exclude=Module.symvers -cf - . | tar -C $(call guest_kdir,$(1))/src -xf -

# Modules (W=1, any compiler warning fails).
build-mods-$(1): sync-$(1)
	@echo "  BUILD   $(1) modules for $(KTAG) ($(GUEST_KABI))"
	@$$(call guest_kmake,$(1)) W=1 modules > $(call guest_kdir,$(1))/build.log 2>&1 || \
	  { cat $(call guest_kdir,$(1))/build.log; exit 1; }
	@if grep -E 'warning:|error:' $(call guest_kdir,$(1))/build.log; then \
	  echo "error: compiler warnings in the $(1) $(KTAG) build" >&2; exit 1; fi

# The static user programs: pfmon, the tests, the benchmark.
build-user-$(1):
	@echo "  BUILD   $(1) pfmon"
	@$(MAKE) -s -C $(TOP)/tools/pfmon ARCH=$(1) OUT=$(BUILD)/$(1)/pfmon \
	  CACHE=$(CACHE)
	@echo "  BUILD   $(1) tests"
	@$(MAKE) -s -C $(TOP)/tools/selftests/perfmon ARCH=$(1) \
	  OUT=$(BUILD)/$(1)/tests KSFT=$(KSFT) TOP=$(TOP)
	@$(MAKE) -s -C $(TOP)/tools/bench ARCH=$(1) OUT=$(BUILD)/$(1)/bench \
	  TOP=$(TOP)

build-$(1): build-mods-$(1) build-user-$(1)

# sparse over every file (C=2); any finding fails.
sparse-$(1): sync-$(1)
	@echo "  SPARSE  $(1) $(KTAG)"
	@$$(call guest_kmake,$(1)) C=2 CHECK=sparse modules \
	  > $(call guest_kdir,$(1))/sparse.log 2>&1 || \
	  { cat $(call guest_kdir,$(1))/sparse.log; exit 1; }
	@if grep -E 'warning:|error:' $(call guest_kdir,$(1))/sparse.log; then \
	  echo "error: sparse findings for $(1) $(KTAG)" >&2; exit 1; fi

.PHONY: sync-$(1) build-$(1) build-mods-$(1) build-user-$(1) sparse-$(1)
endef
$(foreach a,$(GUEST_ARCHES),$(eval $(call guest_rules,$(a))))

checkpatch: need-deps
	@echo "  CHECKPATCH $(words $(STYLE_SRCS)) files"
	@mkdir -p $(BUILD)
	@cd $(TOP) && if ! perl $(CHECKPATCH) --no-tree --strict --terse \
	  --show-types --ignore $(CHECKPATCH_IGNORE) \
	  -f $(filter-out $(CHECKPATCH_KNAMES),$(STYLE_SRCS)) \
	  > $(BUILD)/checkpatch.log 2>&1 || \
	  ! perl $(CHECKPATCH) --no-tree --strict --terse --show-types \
	  --ignore $(CHECKPATCH_IGNORE),CAMELCASE -f $(CHECKPATCH_KNAMES) \
	  >> $(BUILD)/checkpatch.log 2>&1 || [ -s $(BUILD)/checkpatch.log ]; then \
	  cat $(BUILD)/checkpatch.log; echo "error: checkpatch findings" >&2; \
	  exit 1; fi

# dkms add/build/install for the x86_64 guest kernel KVER/FLAVOR
# select, in private trees.
check-dkms: need-deps
	@echo "  DKMS    $(GUEST_KABI)-$(FLAVOR_SFX)amd64"
	@$(TOP)/tools/build/dkms-check.sh $(GUEST_KABI)-$(FLAVOR_SFX)amd64

# The Debian packages end to end, as root: make deb, apt install (DKMS
# builds for every kernel with headers; every module of dkms.conf must
# land, no test module), pfmon and a libperfmon program in the x86_64
# 6.1 guest on DKMS's modules, then purge, the machine as it was.
check-deb: need-deps
	@$(TOP)/tools/build/deb-check.sh

# Every gate, both guests and the debug kernel; ends with
# "N passed, N failed[, N skipped]".
check:
	@$(RIG)/check

# The debug kernel gate alone: KASAN, lockdep, kmemleak, failslab, UBSAN
# (tools/build/debug-*.config), the suites, a kmemleak
# scan per guest run.
check-debug:
	@$(RIG)/check --debug

# The fuzzer's million calls on the x86_64 debug kernel (about 49
# minutes; make check runs it to a time budget, PFM_FUZZ_BUDGET seconds).
fuzz-long: build-x86_64-debug
	@$(VM) --arch x86_64 --kernel $(BUILD)/x86_64-debug/kernel/Image \
	  --build $(BUILD)/x86_64-debug --tests $(BUILD)/x86_64/tests \
	  --timeout 6600 --log $(BUILD)/x86_64-debug/logs/fuzz-long.log \
	  --append "PFM_TIMING_SLACK=5 PFM_FUZZ_CALLS=1000000 PFM_FUZZ_SECONDS=5400" \
	  --only fuzz_test suite

# Per-arch debug rules: debug-kernel-ARCH (built once per machine from
# linux-source-6.1, kept in the machine cache keyed by its inputs;
# .build/ARCH-debug/kernel links to it) and build-ARCH-debug, the
# modules built against it (W=1, no warnings) in their own tree; the
# test programs and pfmon are the ARCH ones (same user ABI).
define debug_rules
debug-kernel-$(1): need-deps
	@mkdir -p $(BUILD)/$(1)-debug
	@$(TOP)/tools/build/debug-kernel.sh $(CACHE) $(1) $(BUILD)/$(1)-debug/kernel

build-$(1)-debug: debug-kernel-$(1) build-user-$(1)
	@mkdir -p $(BUILD)/$(1)-debug/src
	@tar -C $(TOP) --exclude=./.build --exclude=./.cache --exclude=./.git \
	  --exclude='*.o' --exclude='*.ko' \
	  --exclude='.*.cmd' --exclude='*.mod' --exclude='*.mod.c' \
	  --exclude=modules.order --exclude=Module.symvers \
	  -cf - . | tar -C $(BUILD)/$(1)-debug/src -xf -
	@ln -sfn ../$(1)/pfmon $(BUILD)/$(1)-debug/pfmon
	@echo "  BUILD   $(1) modules for the debug kernel"
	@$(MAKE) -C $(BUILD)/$(1)-debug/kernel/obj M=$(BUILD)/$(1)-debug/src \
	  ARCH=$(call guest_karch,$(1)) CROSS_COMPILE=$(call guest_cross,$(1)) \
	  PFM_TESTS=1 W=1 modules > $(BUILD)/$(1)-debug/build.log 2>&1 || \
	  { cat $(BUILD)/$(1)-debug/build.log; exit 1; }
	@if grep -E 'warning:|error:' $(BUILD)/$(1)-debug/build.log; then \
	  echo "error: compiler warnings in the $(1) debug build" >&2; exit 1; fi

.PHONY: debug-kernel-$(1) build-$(1)-debug
endef
$(foreach a,$(GUEST_ARCHES),$(eval $(call debug_rules,$(a))))

# The rig's own tests: a failing test, a WARNING in the kernel log and a
# hung guest must each fail a run.
check-rig: build-x86_64
	@$(RIG)/rig-selftest

GUEST	?= $(ARCH)
TIMEOUT	?= 300
# The guest kernel, as make's KVER and FLAVOR select it.
VMK	:= --kver $(KVER) --flavor $(FLAVOR)
# PMU=soft|pmuv3|x86sim|perf: the PMU description of test, shell,
# guest-run, run and bench (the vm script's --pmu; perf is pfm_perf,
# with arm64's builtin PMUv3 driver in place).
PMU	?=
VMP	:= $(if $(PMU),--pmu $(PMU))

test: build-$(GUEST)
	@$(VM) --arch $(GUEST) $(VMK) $(VMP) --timeout $(TIMEOUT) test $(T)

# pfmon's attach soak (pfmon_test attach_soak; on arm64 with PMU=pmuv3 or
# perf, pmuv3_pfmon_test's): SOAK_ROUNDS rounds of stat -p and record -p
# of a running 4-thread process.  On x86_64, PMU=perf is pfm_perf over
# perf's software events, which pfmon_test counts as it does the
# software PMU's.
SOAK_ROUNDS ?= 40
SOAK_PROG := $(if $(and $(filter arm64,$(GUEST)),$(filter pmuv3 perf,$(PMU))),pmuv3_pfmon_test,pfmon_test)
soak: build-$(GUEST)
	@$(VM) --arch $(GUEST) $(VMK) $(VMP) --timeout 1500 \
	  --append "PFM_SOAK_ROUNDS=$(SOAK_ROUNDS)" test $(SOAK_PROG)

# A test program under a harsh host: the whole guest stopped for 8 ms at
# a time, 1..15 ms apart (vm --hold-off), HOLD_ROUNDS boots.  A timing
# failure that CI saw once in many runs repeats here: count_test's
# migration_keeps_one_count failed in 2 rounds of 40 before its bound
# allowed for the hold-offs it saw, and in 0 of 40 after.
HOLD_OFF    ?= 8,15
HOLD_ROUNDS ?= 10
HOLD_TEST   ?= count_test
hold-off: SHELL := /bin/bash -o pipefail
hold-off: build-$(GUEST)
	@for i in $$(seq $(HOLD_ROUNDS)); do \
	  $(VM) --arch $(GUEST) $(VMK) $(VMP) --timeout 600 \
	    --hold-off $(HOLD_OFF) test $(HOLD_TEST) | grep -E '^(not )?ok|RIG-RESULT' \
	    || exit 1; \
	done

shell: build-$(GUEST)
	@$(VM) --arch $(GUEST) $(VMK) $(VMP) shell

guest-run: build-$(GUEST)
	@$(VM) --arch $(GUEST) $(VMK) $(VMP) --timeout $(TIMEOUT) \
	  $(foreach f,$(FILES),--file $(f)) exec -- '$(CMD)'

# Benchmarks (tools/bench): perfmon against perf_events in one boot, on
# the x86_64 guest's software PMU, on the arm64 guest's PMUv3 under
# -icount 0, where guest time counts instructions, and there again over
# pfm_perf with the kernel's PMUv3 driver in place, where perf counts on
# the same hardware counters; then the arm64 table of the two boots,
# three columns (tools/bench/bench-table; Documentation/performance.rst).
# Each boot's output is kept in $(BUILD)/bench/, so that PMU=pmuv3 then
# PMU=perf also ends with the table.  PMU= keeps the boots of that
# description.
BENCH_ALL := x86_64:soft arm64:pmuv3 arm64:perf
BENCH	  := $(if $(PMU),$(filter %:$(PMU),$(BENCH_ALL)),$(BENCH_ALL))
BENCH_OUT := $(BUILD)/bench
bench: SHELL := /bin/bash -o pipefail
bench: build-x86_64 build-arm64
	@if [ -z "$(strip $(BENCH))" ]; then \
	  echo "error: make bench has no boot for PMU=$(PMU) (soft, pmuv3, perf)" >&2; \
	  exit 1; fi
	@mkdir -p $(BENCH_OUT) && rm -f $(BENCH_OUT)/arm64-table.txt \
	  $(foreach b,$(BENCH),$(BENCH_OUT)/$(subst :,-,$(b)).txt)
	@set -e; for b in $(BENCH); do \
	  a=$${b%%:*}; p=$${b#*:}; ic=; \
	  if [ $$a = arm64 ]; then ic="--icount 0"; fi; \
	  $(VM) --arch $$a $(VMK) --pmu $$p $$ic --timeout 2400 \
	    --file $(BUILD)/$$a/bench/pfm_bench exec -- '/root/pfm_bench 2000' | \
	    tee $(BENCH_OUT)/$$a-$$p.txt; \
	done
	@if [ -f $(BENCH_OUT)/arm64-pmuv3.txt ] && [ -f $(BENCH_OUT)/arm64-perf.txt ]; then \
	  echo; $(TOP)/tools/bench/bench-table $(BENCH_OUT)/arm64-pmuv3.txt \
	    $(BENCH_OUT)/arm64-perf.txt | tee $(BENCH_OUT)/arm64-table.txt; fi

# The demo: boot a guest (arm64 with its emulated PMUv3 by default;
# ARCH=x86_64: the software PMU; PMU=perf: pfm_perf), and run pfmon
# list, stat, record and report on the bundled workload (hotspot),
# output on this terminal, the flame graph in .build/run/ (bash for
# pipefail: the guest's status, not the filter's, is the recipe's).
RUN_ARCH ?= $(if $(filter command line,$(origin ARCH)),$(ARCH),arm64)
RUN_PMU	 := $(or $(PMU),$(if $(filter arm64,$(RUN_ARCH)),pmuv3,soft))
# -icount: QEMU counts PMUv3 instructions only with it.
RUN_OPTS := $(if $(filter arm64,$(RUN_ARCH)),--icount 0,)
run: SHELL := /bin/bash -o pipefail
run: build-$(RUN_ARCH)
	@$(VM) --arch $(RUN_ARCH) $(VMK) --pmu $(RUN_PMU) $(RUN_OPTS) \
	  --timeout $(TIMEOUT) \
	  --file $(RIG)/show-pmu.sh --file $(TOP)/tools/pfmon/demo.sh \
	  exec -- 'sh /root/show-pmu.sh && sh /root/demo.sh' | \
	  $(TOP)/tools/pfmon/demo-flame.sh $(BUILD)/run/flame-$(RUN_ARCH)-$(RUN_PMU).svg

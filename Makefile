# SPDX-License-Identifier: GPL-2.0
#
# Makefile - rbnest: userspace library and tests of the ring buffer core,
# the kernel module (through Kbuild), checks and benchmarks.
#
#   make              userspace library and test programs (build/user)
#   make run          boot a Debian kernel in QEMU, load rbnest.ko with
#                     every writer on, record a few seconds and show
#                     rbtrace check and a trace-cmd excerpt of nested
#                     events (scripts/run-demo.sh; KERNEL=6.1 default)
#   make user-lib     build/user/librbnest.a and build/user/include/
#   make module       the kernel module, against the running kernel's
#                     headers or KDIR=... (no fallback: without them it
#                     says which package to install; C=1 runs sparse)
#   make check        install missing packages, build every variant, run
#                     the tests (plain, ASan+UBSan, TSan stress, coverage),
#                     then the kernel selftests in the VM on each kernel
#                     of KERNELS (default 6.1; RBN_QUICK=1 durations)
#   make bench        rbnest against the kernel's ring buffer, in one VM
#                     boot (scripts/bench.sh; KERNEL=6.1 default)
#   make bench-user   instructions per event under callgrind, stress rate
#   make bench-rbtrace  rbtrace check/report/export on a recording of
#                     BENCH_MB (default 4096) MB: MB/s and peak RSS
#   make coverage     coverage tests and the coverage report alone
#   make fuzz         fuzz tools/rbtrace (libFuzzer, clang) for FUZZ_SECONDS
#                     (default 600) per target, new crash inputs kept in
#                     build/fuzz/run/artifacts
#   make fuzz-smoke   what make check runs: the regression corpus
#                     (tools/rbtrace/fuzz/corpus), then a fixed number of
#                     runs per target with a fixed seed (FUZZ_SEED)
#   make deps         install the Debian packages the above need
#   make vm-check     the kernel selftests (selftests/kernel/run.sh) in a
#                     QEMU VM (scripts/vm.sh) on each kernel of KERNELS
#                     (default "6.1"; also 6.1-rt, 6.12, 6.12-rt), e.g.
#                     make vm-check KERNELS="6.1 6.12 6.12-rt"; VM_CPUS=N
#                     (default 2), VM_TIMEOUT=SECONDS per kernel (3600),
#                     VM_ARGS="--mem 8G ..." (more scripts/vm.sh options)
#   make module-matrix
#                     rbnest.ko built from scratch against the headers of
#                     each kernel of MODULE_KERNELS (default "6.1 6.1-rt
#                     6.12 6.12-rt"), a warning counted as a failure;
#                     make check runs it too (MODULE_KERNELS= to leave out)
#   make install      rbnest.ko into /lib/modules/KVER/extra (KVER: the
#                     running kernel, or KDIR's), then depmod; DESTDIR= or
#                     INSTALL_MOD_PATH= to stage it (no depmod then);
#                     make uninstall removes it
#   make dkms-install the module's sources to /usr/src/rbnest-VERSION
#                     (git describe), DKMS add, build and install for
#                     KVER, rebuilt by DKMS for new kernels; make
#                     dkms-uninstall removes every version
#   make dkms-check   what make check runs of these: the staged install
#                     and a real DKMS install for DKMS_KERNEL (default
#                     6.1, not the running kernel), then all removed
#   make module-for KVER=6.12
#                     rbnest.ko for one of those kernels (or an ABI name),
#                     built in build/vm/ABI/src; prints its path
#   make mutants      mutants of rb_core.c (scripts/mutants.list) against
#                     the userspace tests, MUTANT_JOBS (default nproc) at
#                     once; MUTANTS="a b" runs only those, MUTANT_TESTS=
#                     "test_unit ..." only those tests (scripts/mutants.py)
#   make mutants-validator
#                     what the run-time validator alone catches of them
#                     (a measurement, not a test)
#   make clean
#
# tools/rbtrace/rbtrace (check and report rbnest recordings) is built by
# "make" too; "make check" also runs it on recordings of the core written
# by build/user/rbgen (selftests/user/test_rbtrace.sh), plain and under
# ASan+UBSan (build/asan/rbtrace).
#
# Variants of the userspace build, each in its own directory:
#   build/user  -O2             all tests
#   build/asan  ASan + UBSan    all tests
#   build/tsan  TSan            the stress test
#   build/cov   gcov            all tests, then scripts/coverage.py

BUILD		?= build
# The kernel the module is built and installed for: the running one by
# default (KVER), its headers in /lib/modules/KVER/build (KDIR). With
# only KDIR given, KVER is the release those headers were made for: the
# vermagic's (UTS_RELEASE; Debian's kernel.release differs from it).
KDIR_GIVEN	:= $(if $(filter undefined,$(origin KDIR)),,1)
KDIR_RELEASE	= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"$$/\1/p' \
		    $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
ifeq ($(origin KDIR),undefined)
KVER		?= $(shell uname -r)
KDIR		= /lib/modules/$(KVER)/build
else
KVER		?= $(KDIR_RELEASE)
endif

PKG_CONFIG	?= pkg-config
PYTHON		?= python3

# The core is kernel code: every warning is fatal, except -Wsign-compare,
# which the kernel does not enable either.
RBN_CFLAGS	:= -std=gnu11 -g -Wall -Wextra -Werror -Wno-sign-compare \
		   -I. -Iport/user -pthread
RBN_LDFLAGS	:= -pthread
EXTRA_CFLAGS	?=
EXTRA_LDFLAGS	?=

VARIANTS	:= user asan tsan cov

OPT_user	:= -O2
OPT_asan	:= -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
		   -fno-sanitize-recover=all
# TSan does not model stand-alone fences (smp_mb() and co. in the user
# port, -Wtsan); the port's acquire/release loads and stores carry the
# ordering it checks.
OPT_tsan	:= -O1 -fsanitize=thread -Wno-tsan
# Coverage counts branches per source line: with one copy of each inline
# function (not one per call site), a branch taken anywhere counts.
OPT_cov		:= -O0 --coverage -fprofile-update=atomic \
		   -include $(BUILD)/cov/noinline.h
PRE_cov		:= $(BUILD)/cov/noinline.h

LD_user		:=
LD_asan		:= -fsanitize=address,undefined
LD_tsan		:= -fsanitize=thread
LD_cov		:= --coverage

LIB_SRCS	:= rb_core.c port/user/rb_port_user.c
LIB_HDRS	:= rb_core.h port/user/rb_port.h

TEST_DIR	:= selftests/user
TEST_SRCS	:= $(sort $(wildcard $(TEST_DIR)/test_*.c))
TESTS		:= $(patsubst $(TEST_DIR)/%.c,%,$(TEST_SRCS))
# Helpers linked into every test program.
HELPER_SRCS	:= $(wildcard $(TEST_DIR)/rbn_decode.c)

TESTS_user	:= $(TESTS)
TESTS_asan	:= $(TESTS)
TESTS_tsan	:= $(filter test_stress,$(TESTS))
TESTS_cov	:= $(TESTS)

# Tests that need libtraceevent.
TEP_TESTS	:= test_kbuffer test_evfmt
TEP_CFLAGS	= $(shell $(PKG_CONFIG) --cflags libtraceevent 2>/dev/null)
TEP_LIBS	= $(shell $(PKG_CONFIG) --libs libtraceevent 2>/dev/null)

# Sizes of the test runs (environment knobs the tests read).
RUN_ENV_user	?=
# The sanitizer and coverage runs sample test_nest's trees (the plain
# run has them all): RBN_NEST_QUICK=3 runs a third of the sample of
# RBN_NEST_QUICK=1 (every swap point kept). The coverage run samples a
# twelfth: it reaches the same lines and branches of rb_core.c as with
# 3 (1444/1505 lines, 811/915 branches, every write-path branch both
# ways) in a third of the time at -O0.
RUN_ENV_asan	?= RBN_NEST_QUICK=3 RBN_STRESS_SECONDS=10 RBN_STRESS_EVENTS=2000000
RUN_ENV_tsan	?= RBN_STRESS_SECONDS=20 RBN_STRESS_EVENTS=500000
RUN_ENV_cov	?= RBN_NEST_QUICK=12 RBN_STRESS_SECONDS=5 RBN_STRESS_EVENTS=1000000
SAN_ENV		:= ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1 \
		   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		   TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
# TSan needs a fixed address space layout on kernels with large mmap ASLR.
RUN_PREFIX_tsan	= $(shell command -v setarch >/dev/null 2>&1 && setarch -R true 2>/dev/null && echo setarch -R)

Q		:= $(if $(V),,@)
# Builds inside "make check" use every CPU unless -j was given.
JOBS		= $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))

.PHONY: all run bench user-lib module module-clean install uninstall \
	dkms-install dkms-uninstall dkms-check check check-build bench-user \
	bench-rbtrace \
	coverage deps clean fuzz fuzz-build fuzz-smoke \
	$(addprefix tests-,$(VARIANTS)) \
	vm-check module-for module-matrix fail-nth check-debug vm-parallel soak \
	mutants mutants-validator

all: user-lib tests-user rbtrace fail-nth

user-lib: $(BUILD)/user/librbnest.a \
	$(addprefix $(BUILD)/user/include/,$(notdir $(LIB_HDRS)))

$(BUILD)/user/include/%.h: %.h
	@mkdir -p $(@D)
	$(Q)cp $< $@

$(BUILD)/user/include/%.h: port/user/%.h
	@mkdir -p $(@D)
	$(Q)cp $< $@

$(BUILD)/cov/noinline.h:
	@mkdir -p $(@D)
	$(Q)printf '%s\n' '/* Generated by the Makefile for the coverage build. */' \
		'#include <sys/cdefs.h>' '#undef __always_inline' \
		'#define __always_inline inline' >$@

# One set of rules per variant: library, helper objects, test programs.
define variant_rules
$(BUILD)/$(1)/obj/%.o: %.c $(PRE_$(1))
	@mkdir -p $$(@D)
	@echo "  CC [$(1)] $$<"
	$(Q)$$(CC) $$(RBN_CFLAGS) $$(OPT_$(1)) -MMD -MP $$(EXTRA_CFLAGS) \
		$$(if $$(filter $(TEST_DIR)/%,$$<),$$(TEP_CFLAGS)) -c $$< -o $$@

$(BUILD)/$(1)/librbnest.a: $(patsubst %.c,$(BUILD)/$(1)/obj/%.o,$(LIB_SRCS))
	@echo "  AR [$(1)] $$@"
	$(Q)rm -f $$@ && $$(AR) rcs $$@ $$^

$(addprefix $(BUILD)/$(1)/,$(TESTS)): $(BUILD)/$(1)/%: \
		$(BUILD)/$(1)/obj/$(TEST_DIR)/%.o \
		$(patsubst %.c,$(BUILD)/$(1)/obj/%.o,$(HELPER_SRCS)) \
		$(BUILD)/$(1)/librbnest.a
	@echo "  LD [$(1)] $$@"
	$(Q)$$(if $$(filter $(TEP_TESTS),$$*),$$(if $$(TEP_LIBS),,$$(error \
		libtraceevent not found by $$(PKG_CONFIG); run 'make deps')))
	$(Q)$$(CC) $$(RBN_LDFLAGS) $$(LD_$(1)) $$(EXTRA_LDFLAGS) -o $$@ \
		$$(filter %.o,$$^) $$(BUILD)/$(1)/librbnest.a \
		$$(if $$(filter $(TEP_TESTS),$$*),$$(TEP_LIBS))

tests-$(1): $(PRE_$(1)) $(addprefix $(BUILD)/$(1)/,$(TESTS_$(1)))
endef
$(foreach v,$(VARIANTS),$(eval $(call variant_rules,$(v))))

# Objects of every variant are precious; keep them for incremental builds.
.SECONDARY:
.DELETE_ON_ERROR:

# Only the variants' objects have dependency files (build/ also holds
# kernel trees).
-include $(shell find $(addprefix $(BUILD)/,$(VARIANTS)) -name '*.d' 2>/dev/null)

# ---- tools/rbtrace ------------------------------------------------------

RBTRACE_DIR	:= tools/rbtrace
RBTRACE_SRCS	= $(sort $(wildcard $(RBTRACE_DIR)/*.c))
RBTRACE_DEPS	= $(RBTRACE_SRCS) $(wildcard $(RBTRACE_DIR)/*.h) rbn_events.h
RBTRACE		:= $(RBTRACE_DIR)/rbtrace
# "rbtrace --version": git describe of the tree, when it is a git tree
RBTRACE_VERSION	:= $(shell git describe --tags --always --dirty 2>/dev/null)
RBTRACE_CFLAGS	= -std=gnu11 -g -Wall -Wextra -Werror -Wno-sign-compare -I. \
		  $(TEP_CFLAGS) \
		  $(if $(RBTRACE_VERSION),-DRBTRACE_VERSION='"$(RBTRACE_VERSION)"')
# rbtrace built for the tests: plain and under ASan+UBSan; the recording
# generator, on the userspace core.
RBTRACE_BINS	:= $(RBTRACE) $(BUILD)/asan/rbtrace $(BUILD)/user/rbgen

rbtrace: $(RBTRACE)

# tools/fail_nth/fail_nth: one system call with its Nth fault-injection
# point failed (/proc/self/fail-nth), for selftests/kernel/test_faultinj.
FAIL_NTH	:= tools/fail_nth/fail_nth

fail-nth: $(FAIL_NTH)

$(FAIL_NTH): tools/fail_nth/fail_nth.c
	@echo "  LD      $@"
	$(Q)$(CC) -std=gnu11 -g -O2 -Wall -Wextra -Werror $(EXTRA_CFLAGS) -o $@ $< \
		$(EXTRA_LDFLAGS)

$(RBTRACE): $(RBTRACE_DEPS)
	@echo "  LD      $@"
	$(Q)$(if $(TEP_LIBS),,$(error libtraceevent not found by $(PKG_CONFIG); run 'make deps'))
	$(Q)$(CC) $(RBTRACE_CFLAGS) -O2 $(EXTRA_CFLAGS) -o $@ $(RBTRACE_SRCS) \
		$(EXTRA_LDFLAGS) $(TEP_LIBS)

$(BUILD)/asan/rbtrace: $(RBTRACE_DEPS)
	@mkdir -p $(@D)
	@echo "  LD [asan] $@"
	$(Q)$(if $(TEP_LIBS),,$(error libtraceevent not found by $(PKG_CONFIG); run 'make deps'))
	$(Q)$(CC) $(RBTRACE_CFLAGS) $(OPT_asan) $(EXTRA_CFLAGS) -o $@ \
		$(RBTRACE_SRCS) $(LD_asan) $(EXTRA_LDFLAGS) $(TEP_LIBS)

$(BUILD)/user/rbgen: $(BUILD)/user/obj/$(TEST_DIR)/rbgen.o \
		$(BUILD)/user/librbnest.a
	@echo "  LD [user] $@"
	$(Q)$(CC) $(RBN_LDFLAGS) $(EXTRA_LDFLAGS) -o $@ $^

# (The ASan run mutates 10 copies of each recording, not 40: 160 ASan
# runs of rbtrace were 3 of its 5 minutes, and the fuzz smoke mutates
# pages under ASan by the hundred thousand.)
RBTRACE_RUNS	= '@rbtrace bash $(TEST_DIR)/test_rbtrace.sh $(RBTRACE) $(BUILD)/user/rbgen' \
		  '@rbtrace-asan $(SAN_ENV) RBT_MUTATIONS=10 bash $(TEST_DIR)/test_rbtrace.sh $(BUILD)/asan/rbtrace $(BUILD)/user/rbgen'
# check, report and export on broken copies of a good recording, and the
# command line's numbers and outputs (a table: one row per breakage)
RECORDINGS_RUNS	= '@recordings bash $(TEST_DIR)/test_recordings.sh $(RBTRACE) $(BUILD)/user/rbgen' \
		  '@recordings-asan $(SAN_ENV) bash $(TEST_DIR)/test_recordings.sh $(BUILD)/asan/rbtrace $(BUILD)/user/rbgen'

# rbtrace plot: pictures of rbgen recordings checked against report and
# check, rendered to PNG with rsvg-convert (librsvg2-bin).
PLOT_RUNS	= '@plot bash $(TEST_DIR)/test_plot.sh $(RBTRACE) $(BUILD)/user/rbgen' \
		  '@plot-asan $(SAN_ENV) bash $(TEST_DIR)/test_plot.sh $(BUILD)/asan/rbtrace $(BUILD)/user/rbgen'
RBTRACE_RUNS	+= $(PLOT_RUNS)

# The kernel log check of the kernel selftests, on a sample of every
# report format of the debug kernels' checkers.
DMESG_RE_RUN	= '@dmesg-re bash $(TEST_DIR)/test_dmesg_re.sh'

# ---- fuzzing tools/rbtrace -----------------------------------------------
#
# libFuzzer targets (clang, ASan + UBSan) on the page checks and decoding
# and on the format loading of rbtrace. "make check" (and "make
# fuzz-smoke") runs the same inputs every time: each input of the
# regression corpus $(FUZZ_CORPUS)/TARGET once, then FUZZ_RUNS_TARGET
# runs with seed FUZZ_SEED (about 10 s each on one core); its logs and
# any crash input are kept in $(BUILD)/fuzz/smoke. "make fuzz" fuzzes
# each target for FUZZ_SECONDS with a random seed, growing the corpora in
# $(BUILD)/fuzz/run; a crash input it finds is in
# $(BUILD)/fuzz/run/artifacts, to be added to the regression corpus
# with its fix.

FUZZ_DIR	:= $(RBTRACE_DIR)/fuzz
FUZZ_CC		?= clang
FUZZ_TARGETS	:= $(patsubst $(FUZZ_DIR)/%.c,%,$(sort $(wildcard $(FUZZ_DIR)/fuzz_*.c)))
FUZZ_BINS	:= $(addprefix $(BUILD)/fuzz/,$(FUZZ_TARGETS))
FUZZ_CFLAGS	= -std=gnu11 -g -O1 -fno-omit-frame-pointer -Wall -Wextra \
		  -Werror -Wno-sign-compare -Wno-unused-function -I. \
		  $(TEP_CFLAGS) -fsanitize=fuzzer,address,undefined \
		  -fno-sanitize-recover=all
FUZZ_SECONDS	?= 600
FUZZ_SEED	?= 20261204
FUZZ_RUNS_fuzz_format ?= 400000
FUZZ_RUNS_fuzz_page ?= 250000
# libtraceevent's static archive when there is one: the shared library
# is stripped, and its internal functions have names in the sanitizers'
# stacks only from the archive's symbol table; the leak suppressions of
# $(FUZZ_DIR)/lsan.supp name them.
TEP_LIBDIR	= $(shell $(PKG_CONFIG) --variable=libdir libtraceevent 2>/dev/null)
FUZZ_TEP_LIBS	= $(or $(wildcard $(TEP_LIBDIR)/libtraceevent.a),$(TEP_LIBS))
FUZZ_CORPUS	:= $(FUZZ_DIR)/corpus
FUZZ_OUT	:= $(BUILD)/fuzz/run
FUZZ_SMOKE_OUT	:= $(BUILD)/fuzz/smoke
# what rbtrace.c, built into each target, calls in the other files
FUZZ_LINK_SRCS	:= $(RBTRACE_DIR)/manifest.c $(RBTRACE_DIR)/args.c

$(FUZZ_BINS): $(BUILD)/fuzz/%: $(FUZZ_DIR)/%.c $(RBTRACE_DEPS)
	@mkdir -p $(@D)
	@echo "  LD [fuzz] $@"
	$(Q)$(if $(TEP_LIBS),,$(error libtraceevent not found by $(PKG_CONFIG); run 'make deps'))
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_LINK_SRCS) $(FUZZ_TEP_LIBS)

fuzz-build: $(FUZZ_BINS) $(BUILD)/user/rbgen

fuzz: fuzz-build
	bash $(FUZZ_DIR)/fuzz.sh -t $(FUZZ_SECONDS) -c $(FUZZ_CORPUS) \
		-o $(FUZZ_OUT) $(BUILD)/user/rbgen $(FUZZ_BINS)

FUZZ_SMOKE	= bash $(FUZZ_DIR)/fuzz.sh -s $(FUZZ_SEED) \
		  $(foreach t,$(FUZZ_TARGETS),-n $(t)=$(FUZZ_RUNS_$(t))) \
		  -c $(FUZZ_CORPUS) -o $(FUZZ_SMOKE_OUT) $(BUILD)/user/rbgen \
		  $(FUZZ_BINS)

fuzz-smoke: fuzz-build
	$(FUZZ_SMOKE)

FUZZ_RUN	= '@fuzz $(FUZZ_SMOKE)'

# ---- the kernel module ---------------------------------------------------

# No fallback to another kernel's headers: a module built for another
# kernel does not load into this one.
define check_kdir
	@if [ ! -f "$(KDIR)/Makefile" ]; then \
		if [ -n "$(KDIR_GIVEN)" ]; then \
			echo "rbnest: KDIR=$(KDIR) is not a kernel build directory (no Makefile in it)" >&2; \
		else \
			echo "rbnest: no headers of kernel $(KVER): $(KDIR) is missing." >&2; \
			echo "  Install them (Debian, Ubuntu: apt-get install linux-headers-$(KVER);" >&2; \
			echo "  Fedora: dnf install kernel-devel-$(KVER)), or build against other" >&2; \
			echo "  headers with KDIR=DIR (e.g. KDIR=/usr/src/linux-headers-VERSION)." >&2; \
		fi; \
		exit 1; \
	fi
endef

module:
	$(check_kdir)
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

module-clean:
	@if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi

# make install: kbuild's modules_install, into
# INSTALL_MOD_PATH/lib/modules/KVER/extra (INSTALL_MOD_PATH defaults to
# DESTDIR), then depmod KVER; as a staged install (INSTALL_MOD_PATH or
# DESTDIR set) is for a package or another root, depmod is left to it.
INSTALL_MOD_PATH ?= $(DESTDIR)
INSTALL_MOD_DIR	?= extra
DEPMOD		?= depmod
MODULE_DEST	= $(INSTALL_MOD_PATH)/lib/modules/$(KVER)/$(INSTALL_MOD_DIR)

define check_kver
	@if [ -z "$(KVER)" ]; then \
		echo "rbnest: no kernel release (KVER=, or $(KDIR)/include/config/kernel.release)" >&2; \
		exit 1; \
	fi
endef

install: module
	$(check_kver)
	@if [ "$(KDIR_RELEASE)" != "$(KVER)" ]; then \
		echo "rbnest: KVER=$(KVER), but KDIR=$(KDIR) holds the headers of '$(KDIR_RELEASE)'" >&2; \
		exit 1; \
	fi
	$(MAKE) -C $(KDIR) M=$(CURDIR) KERNELRELEASE=$(KVER) \
		INSTALL_MOD_PATH=$(INSTALL_MOD_PATH) \
		INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) modules_install
	$(if $(INSTALL_MOD_PATH),,$(DEPMOD) -a $(KVER))

uninstall:
	$(check_kver)
	rm -f $(addprefix $(MODULE_DEST)/rbnest.ko,'' .gz .xz .zst)
	$(if $(INSTALL_MOD_PATH),,$(DEPMOD) -a $(KVER))

# ---- DKMS ------------------------------------------------------------------
#
# make dkms-install copies the module's sources (only those: Kbuild
# builds it, see scripts/module-sources.sh) and dkms.conf, its version filled in, to
# /usr/src/rbnest-RBN_VERSION, then has DKMS add, build and install it
# for KVER (against KDIR), and rebuild it for every kernel installed
# later (AUTOINSTALL). The version is git describe's at that time (0
# outside a git checkout). An earlier copy of the same version is
# removed first. make dkms-uninstall removes every version of rbnest
# from DKMS (its modules from every kernel) and from /usr/src.

DKMS		?= dkms
RBN_VERSION	?= $(shell [ -e .git ] && git describe --tags --always --dirty 2>/dev/null || echo 0)
DKMS_SRC	= /usr/src/rbnest-$(RBN_VERSION)

define check_dkms
	@command -v $(DKMS) >/dev/null 2>&1 || { \
		echo "rbnest: dkms not found (Debian, Ubuntu: apt-get install dkms)" >&2; \
		exit 1; }
endef

dkms-install:
	$(check_dkms)
	$(check_kdir)
	$(check_kver)
	@case "$(RBN_VERSION)" in ''|*[!A-Za-z0-9.+~_-]*) \
		echo "rbnest: unusable version '$(RBN_VERSION)' (RBN_VERSION=)" >&2; \
		exit 1;; esac
	@if [ -n "$$($(DKMS) status -m rbnest -v $(RBN_VERSION))" ]; then \
		echo "  DKMS    remove rbnest/$(RBN_VERSION) (reinstall)"; \
		$(DKMS) remove -m rbnest -v $(RBN_VERSION) --all || exit 1; \
	fi
	rm -rf $(DKMS_SRC)
	sh scripts/module-sources.sh $(DKMS_SRC)
	sed 's/@VERSION@/$(RBN_VERSION)/' dkms.conf >$(DKMS_SRC)/dkms.conf
	$(DKMS) add -m rbnest -v $(RBN_VERSION)
	$(DKMS) build -m rbnest -v $(RBN_VERSION) -k $(KVER) \
		--kernelsourcedir $(KDIR)
	$(DKMS) install -m rbnest -v $(RBN_VERSION) -k $(KVER) \
		--kernelsourcedir $(KDIR)

dkms-uninstall:
	$(check_dkms)
	@for v in $$($(DKMS) status -m rbnest | \
		sed -n 's|^rbnest[/,] *\([^,:]*\)[,:].*|\1|p' | sort -u); do \
		echo "  DKMS    remove rbnest/$$v"; \
		$(DKMS) remove -m rbnest -v "$$v" --all || exit 1; \
	done
	rm -rf /usr/src/rbnest-*

# ---- the module in a VM (scripts/vm.sh) -----------------------------------

# make check's kernels: Debian's 6.1 (KERNELS), and the 6.1-debug kernel
# of scripts/debug-kernel.sh (CHECK_DEBUG_KERNELS: KASAN, UBSAN, KFENCE,
# kmemleak, lockdep, fault injection; built on first use, about 10
# minutes).
KERNELS		?= 6.1
CHECK_DEBUG_KERNELS ?= 6.1-debug
VM_CPUS		?= 2
VM_TIMEOUT	?= 3600

module-for:
	@if [ -z "$(KVER)" ]; then \
		echo "usage: make module-for KVER=6.1|6.1-rt|6.12|6.12-rt|ABI" >&2; \
		exit 1; \
	fi
	@bash scripts/deps.sh --kernels "$(KVER)"
	@bash scripts/vm-kernel.sh module "$(KVER)"

module-matrix:
	@bash scripts/deps.sh --kernels "$(MODULE_KERNELS)"
	@bash scripts/module-matrix.sh $(MODULE_KERNELS)

vm-check:
	@bash scripts/deps.sh --kernels "$(KERNELS)"
	@VM_CPUS="$(VM_CPUS)" VM_TIMEOUT="$(VM_TIMEOUT)" \
		bash scripts/vm-check.sh $(KERNELS)

# The parallel selftest (test_parallel) in PARALLEL_BOOTS boots in a row
# of a VM with vCPUs that run at the same time (multi-threaded TCG), on
# PARALLEL_CPUS vCPUs each, on PARALLEL_KERNEL.
PARALLEL_BOOTS	?= 10
PARALLEL_CPUS	?= 2 4
PARALLEL_KERNEL	?= 6.1

vm-parallel:
	@bash scripts/deps.sh --kernels "$(PARALLEL_KERNEL)"
	@bash scripts/vm-parallel.sh --boots $(PARALLEL_BOOTS) \
		--cpus "$(PARALLEL_CPUS)" --kernel $(PARALLEL_KERNEL)

# Every selftest on every debug kernel, two kernels at a time (insmod
# swept by test_faultinj at every sub-buffer order: about 5 minutes an
# order, hence the longer timeout per script), the module built
# against each without a warning, and the parallel selftest on the KCSAN
# kernel (where vCPUs that run at the same time give KCSAN races to see).
DEBUG_KERNELS	?= 6.1-debug 6.1-kcsan 6.12-rt-debug
DEBUG_PARALLEL_BOOTS ?= 2
# (a variable: a literal comma would end the $(if) below)
DEBUG_PARALLEL_CPUS ?= 2,4

# (The runs are variables: a backslash-newline inside a recipe's quotes
# would reach the shell as it is.)
DEBUG_MODULE_RUN = '@module-matrix RUN_TIMEOUT=7200 \
		  bash scripts/module-matrix.sh $(DEBUG_KERNELS)'
DEBUG_VM_RUN	= '@vm-debug RUN_TIMEOUT=10800 RBN_QUICK=$(RBN_QUICK) \
		  RBN_FAULT_ORDERS=0,1,2,3,4 RBN_TEST_TIMEOUT=3000 \
		  VM_JOBS=2 VM_CPUS=$(VM_CPUS) \
		  VM_TIMEOUT=7200 bash scripts/vm-check.sh --ktap $(DEBUG_KERNELS)'
DEBUG_PARALLEL_RUN = $(if $(filter 6.1-kcsan,$(DEBUG_KERNELS)),'@parallel-6.1-kcsan \
		  RUN_TIMEOUT=7200 RBN_QUICK=$(RBN_QUICK) \
		  bash scripts/vm-parallel.sh --ktap --boots $(DEBUG_PARALLEL_BOOTS) \
		  --cpus $(DEBUG_PARALLEL_CPUS) --kernel 6.1-kcsan')

check-debug:
	@bash scripts/deps.sh
	@$(MAKE) --no-print-directory $(JOBS) rbtrace fail-nth
	@bash $(TEST_DIR)/run.sh $(DEBUG_MODULE_RUN) $(DEBUG_VM_RUN) \
		$(DEBUG_PARALLEL_RUN)

# make soak: every writer, every page checked as it streams, for SOAK_MIN
# minutes and until SOAK_EVENTS events (scripts/soak.sh).
SOAK_MIN	?= 30
SOAK_EVENTS	?= 100000000

soak:
	@bash scripts/deps.sh --kernels "$(KERNEL)"
	@SOAK_MIN=$(SOAK_MIN) SOAK_EVENTS=$(SOAK_EVENTS) KERNEL=$(KERNEL) \
		bash scripts/soak.sh

# ---- tests ---------------------------------------------------------------

deps:
	@bash scripts/deps.sh

define run_args
$(foreach t,$(TESTS_$(1)),'$(strip $(SAN_ENV) $(RUN_ENV_$(1)) $(RUN_PREFIX_$(1)) $(BUILD)/$(1)/$(t))')
endef

COV_RUN		= '@cov/coverage $(PYTHON) scripts/coverage.py --build $(BUILD)/cov'

# rbnest.ko built from scratch against every Debian kernel flavour's
# headers, warnings counted as failures: one result line per kernel.
MODULE_KERNELS	?= 6.1 6.1-rt 6.12 6.12-rt 6.1-debug
MODULE_RUN	= $(if $(strip $(MODULE_KERNELS)),'@module-matrix \
		  RUN_TIMEOUT=3600 bash scripts/module-matrix.sh $(MODULE_KERNELS)')

# make install (staged) and make dkms-install for real, against the
# headers of DKMS_KERNEL (not the running kernel), everything removed
# again (scripts/dkms-check.sh; about a minute).
DKMS_KERNEL	?= 6.1
DKMS_RUN	= $(if $(strip $(DKMS_KERNEL)),'@dkms RUN_TIMEOUT=600 \
		  bash scripts/dkms-check.sh $(DKMS_KERNEL)')

dkms-check:
	@bash scripts/deps.sh --kernels "$(DKMS_KERNEL)"
	@bash scripts/dkms-check.sh $(DKMS_KERNEL)

# The kernel selftests on every kernel of KERNELS, each test case a result
# line; one boot of the parallel selftest with vCPUs that run at the same
# time (CHECK_PARALLEL_CPUS); and the selftests of CHECK_DEBUG_KERNELS,
# which run in the background from the start of the tests on (a VM is
# one host thread), collected last.
VM_JOBS		?= 1
VM_RUNS		= '@vm RUN_TIMEOUT=$(VM_TIMEOUT) RBN_QUICK=$(RBN_QUICK) \
		  VM_JOBS=$(VM_JOBS) VM_CPUS=$(VM_CPUS) VM_TIMEOUT=$(VM_TIMEOUT) \
		  bash scripts/vm-check.sh --ktap $(KERNELS)'
VM_DEBUG_TIMEOUT ?= 5400
# Seconds per script on the debug kernels (run.sh's default is 900: a
# loaded machine slows KASAN and lockdep under emulation even more).
VM_DEBUG_TEST_TIMEOUT ?= 1800
VM_DEBUG_START	= RBN_QUICK=$(RBN_QUICK) VM_CPUS=$(VM_CPUS) \
		  RBN_TEST_TIMEOUT=$(VM_DEBUG_TEST_TIMEOUT) \
		  VM_TIMEOUT=$(VM_DEBUG_TIMEOUT) bash scripts/vm-check.sh \
		  --background $(CHECK_DEBUG_KERNELS)
VM_DEBUG_RUNS	= $(if $(strip $(CHECK_DEBUG_KERNELS)),'@vm-debug \
		  RUN_TIMEOUT=$(VM_DEBUG_TIMEOUT) bash scripts/vm-check.sh --ktap \
		  --wait $(CHECK_DEBUG_KERNELS)')
CHECK_PARALLEL_CPUS ?= 4
PARALLEL_RUN	= $(if $(strip $(CHECK_PARALLEL_CPUS)),'@vm-parallel \
		  RUN_TIMEOUT=1800 RBN_QUICK=$(RBN_QUICK) \
		  bash scripts/vm-parallel.sh --ktap --boots 1 \
		  --cpus $(CHECK_PARALLEL_CPUS)')
RBN_QUICK	?= 1

# A test program that does not build is reported as a failed run (its
# binary is removed first so that a stale one never runs); the others
# still run.
check:
	@bash scripts/deps.sh --kernels "$(sort $(KERNELS) $(MODULE_KERNELS) $(CHECK_DEBUG_KERNELS) $(DKMS_KERNEL))"
	@rm -f $(foreach v,$(VARIANTS),$(addprefix $(BUILD)/$(v)/,$(TESTS_$(v)))) \
		$(RBTRACE_BINS) $(FUZZ_BINS)
	@# What the VMs need first, then the debug kernels' selftests start in
	@# the background (building the kernel first, on first use): they
	@# are the longest part and run on the second CPU.
	@$(MAKE) --no-print-directory $(JOBS) rbtrace fail-nth || true
	@$(if $(strip $(CHECK_DEBUG_KERNELS)),$(VM_DEBUG_START))
	@build=; $(MAKE) --no-print-directory -k $(JOBS) check-build || \
		build='!build some programs did not build (errors above)'; \
	find $(BUILD)/cov -name '*.gcda' -delete 2>/dev/null; \
	bash $(TEST_DIR)/run.sh $(foreach v,$(VARIANTS),$(call run_args,$(v))) \
		$(RBTRACE_RUNS) $(RECORDINGS_RUNS) $(DMESG_RE_RUN) $(FUZZ_RUN) $(COV_RUN) \
		$(MUTANTS_RUN) $(MODULE_RUN) $(DKMS_RUN) $(PARALLEL_RUN) $(VM_RUNS) $(VM_DEBUG_RUNS) \
		$${build:+"$$build"}

check-build: user-lib $(addprefix tests-,$(VARIANTS)) $(RBTRACE_BINS) \
	$(FUZZ_BINS)

coverage: tests-cov
	@find $(BUILD)/cov -name '*.gcda' -delete
	@bash $(TEST_DIR)/run.sh $(call run_args,cov) $(COV_RUN)

# ---- mutation testing ----------------------------------------------------
#
# Each mutant of scripts/mutants.list is a small change of rb_core.c that
# stands for a bug. scripts/mutants.py builds each in its own copy of the
# tree under $(BUILD)/mutants (the -O2 userspace variant) and runs the
# userspace tests on it with quick sizes, fastest first, until one kills
# it. It fails when a mutant survives that the list does not argue to be
# equivalent, or when a text of the list is not found exactly once in
# rb_core.c. make check runs every mutant (one result line each).

MUTANT_JOBS	?= $(shell nproc 2>/dev/null || echo 1)
MUTANTS		?=
MUTANT_TESTS	?=
MUTANTS_RUN	= '@mutants $(PYTHON) scripts/mutants.py --jobs $(MUTANT_JOBS) --out $(BUILD)/mutants'

mutants:
	@$(PYTHON) scripts/mutants.py --jobs $(MUTANT_JOBS) \
		--out $(BUILD)/mutants \
		$(if $(strip $(MUTANT_TESTS)),--tests "$(MUTANT_TESTS)") \
		$(MUTANTS)

# What the run-time validator catches by itself: every mutant against
# test_nest's validate families, a scenario failing only when the
# validator reported (a measurement: about 30 minutes on 2 CPUs).
mutants-validator:
	@$(PYTHON) scripts/mutants.py --report --jobs $(MUTANT_JOBS) \
		--out $(BUILD)/mutants-validator --tests test_nest \
		--env "RBN_NEST_QUICK=1 RBN_NEST_VALIDATOR_ONLY=1" $(MUTANTS)

# ---- run -----------------------------------------------------------------

KERNEL		?= 6.1

run:
	@bash scripts/deps.sh --kernels "$(KERNEL)"
	@$(MAKE) --no-print-directory $(JOBS) rbtrace
	@KERNEL="$(KERNEL)" bash scripts/run-demo.sh

bench:
	@bash scripts/deps.sh --kernels "$(KERNEL)"
	@KERNEL="$(KERNEL)" bash scripts/bench.sh

# ---- benchmark -----------------------------------------------------------

$(BUILD)/user/bench_user: $(BUILD)/user/obj/$(TEST_DIR)/bench_user.o \
		$(BUILD)/user/librbnest.a
	@echo "  LD [user] $@"
	$(Q)$(CC) $(RBN_LDFLAGS) $(EXTRA_LDFLAGS) -o $@ $^

bench-user: $(BUILD)/user/bench_user \
		$(addprefix $(BUILD)/user/,$(filter test_stress,$(TESTS)))
	@bash scripts/bench-user.sh $(BUILD)

BENCH_MB	?= 4096
bench-rbtrace: $(RBTRACE) $(BUILD)/user/rbgen
	@bash scripts/bench-rbtrace.sh $(BENCH_MB)

# ---- clean ---------------------------------------------------------------

clean:
	rm -rf $(BUILD)
	rm -f $(RBTRACE) $(FAIL_NTH)
	rm -f *.o *.ko *.mod *.mod.c .*.cmd .*.d Module.symvers modules.order \
		rbn_kcompat.h \
		port/kernel/*.o port/kernel/.*.cmd
	rm -rf .tmp_versions

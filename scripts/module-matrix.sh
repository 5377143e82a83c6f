#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# module-matrix.sh - build rbnest.ko from scratch against the headers of
# each kernel given; a warning is a failure. KTAP, one result per kernel.
#
# Usage: scripts/module-matrix.sh KERNEL...
#
# KERNEL is what scripts/vm-kernel.sh takes (6.1, 6.1-rt, 6.12, 6.12-rt,
# an ABI name, a debug kernel of scripts/debug-kernel.sh). Each build is
# a clean one, in build/module-matrix/ABI, from a copy of the module's
# sources, so that the warnings of every file are seen; its log is kept
# there (build.log), and so is the test-only build (make module
# RBN_TESTONLY=y) next to it.
# A kernel whose headers cannot be had fails, it is not skipped: the
# matrix is what tells that the module still builds everywhere.
#
# Environment: RBN_BUILD_JOBS (make -j, default 2).

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/module-matrix
JOBS=${RBN_BUILD_JOBS:-2}

# Build for kernel $1 as test case $2; print its result line.
build_one() {
	local k=$1 n=$2 abi kdir dir log f start secs nwarn probes
	local err=$OUT/$k.err
	# Only stdout is the answer: what vm-kernel.sh says on stderr (a
	# debug kernel being built, or waited for) is shown as a comment.
	if ! abi=$(bash "$ROOT/scripts/vm-kernel.sh" abi "$k" 2>"$err"); then
		sed 's/^/# /' "$err"
		echo "not ok $n $k # no such kernel"
		return
	fi
	sed 's/^/# /' "$err"
	if ! kdir=$(bash "$ROOT/scripts/vm-kernel.sh" headers "$abi" 2>"$err"); then
		sed 's/^/# /' "$err"
		echo "not ok $n $k ($abi) # no headers"
		return
	fi
	rm -f "$err"
	dir=$OUT/$abi
	log=$dir/build.log
	rm -rf "$dir"
	mkdir -p "$dir"
	sh "$ROOT/scripts/module-sources.sh" "$dir"
	start=$(date +%s)
	if ! make -C "$kdir" M="$dir" -j"$JOBS" modules >"$log" 2>&1; then
		grep -E 'error|warning' "$log" | head -n 20 | sed 's/^/# /'
		echo "not ok $n $k ($abi) # build failed, see $log"
		return
	fi
	secs=$(($(date +%s) - start))
	# Compiler and modpost warnings alike.
	nwarn=$(grep -ciE 'warning' "$log")
	if [ "$nwarn" -gt 0 ]; then
		grep -iE 'warning' "$log" | head -n 20 | sed 's/^/# /'
		echo "not ok $n $k ($abi) # $nwarn warning lines, see $log"
		return
	fi
	if [ ! -f "$dir/rbnest.ko" ]; then
		echo "not ok $n $k ($abi) # no rbnest.ko"
		return
	fi
	# The test-only build (Kbuild's RBN_TESTONLY), which the VM tests
	# load too: the same rule.
	rm -rf "$dir-testonly"
	mkdir -p "$dir-testonly"
	sh "$ROOT/scripts/module-sources.sh" "$dir-testonly"
	if ! make -C "$kdir" M="$dir-testonly" RBN_TESTONLY=y -j"$JOBS" \
		modules >"$log.testonly" 2>&1 ||
	   [ ! -f "$dir-testonly/rbnest.ko" ]; then
		grep -E 'error|warning' "$log.testonly" | head -n 20 | sed 's/^/# /'
		echo "not ok $n $k ($abi) # the test-only build failed, see $log.testonly"
		return
	fi
	nwarn=$(grep -ciE 'warning' "$log.testonly")
	if [ "$nwarn" -gt 0 ]; then
		grep -iE 'warning' "$log.testonly" | head -n 20 | sed 's/^/# /'
		echo "not ok $n $k ($abi) # test-only build: $nwarn warning lines, see $log.testonly"
		return
	fi
	probes=$(sed -n 's/^#define \(RBN_[A-Z0-9_]*\) 1$/\1/p' \
		"$dir/rbn_kcompat.h" 2>/dev/null | tr '\n' ' ')
	echo "# $k: API probes that built: ${probes:-none}"
	echo "ok $n $k ($abi) built without warnings in ${secs}s, and its test-only build"
}

main() {
	local n=0 k
	[ $# -gt 0 ] || { echo "usage: module-matrix.sh KERNEL..." >&2 && exit 1; }
	echo "KTAP version 1"
	echo "1..$#"
	for k in "$@"; do
		n=$((n + 1))
		build_one "$k" "$n"
	done | tee "$OUT.log.tmp"
	! grep -q '^not ok ' "$OUT.log.tmp"
	local rc=$?
	rm -f "$OUT.log.tmp"
	return $rc
}

mkdir -p "$OUT"
main "$@"

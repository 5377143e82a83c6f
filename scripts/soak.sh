#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# soak.sh - make soak: every writer of rbnest in the VM for SOAK_MIN
# minutes (default 30) and on until SOAK_EVENTS events (default 10^8)
# were checked as they streamed (selftests/kernel/soak.sh, with
# test_dmesg after it). Not part of make check.
#
# Environment: SOAK_MIN, SOAK_EVENTS, SOAK_MAX_MIN (default 3 x
# SOAK_MIN), KERNEL (default 6.1), VM_CPUS (default 2). The VM runs on
# one TCG thread: the tracepoint and kprobe sources patch kernel text
# when they are switched on (see scripts/vm.sh). The guest's console is
# shown and kept in build/vm/soak/.

set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
min=${SOAK_MIN:-30}
events=${SOAK_EVENTS:-100000000}
max=${SOAK_MAX_MIN:-$((min * 3))}
out=$ROOT/build/vm/soak
rm -rf "$out"
mkdir -p "$out"

start=$(date +%s)
rc=0
bash "$ROOT/scripts/vm.sh" --kernel "${KERNEL:-6.1}" --cpus "${VM_CPUS:-2}" \
	--out "$out" --timeout $(((max + 10) * 60)) -- \
	env RBN_VM=1 RBN_SOAK_MIN="$min" RBN_SOAK_EVENTS="$events" \
	RBN_SOAK_MAX_MIN="$max" RBN_TEST_TIMEOUT=$(((max + 5) * 60)) \
	sh selftests/kernel/run.sh soak || rc=$?
echo "soak: $(($(date +%s) - start)) s; console in $out/vm-console.log"
exit $rc

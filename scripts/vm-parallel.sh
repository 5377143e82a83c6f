#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-parallel.sh - boot the VM again and again with vCPUs that run at the
# same time (QEMU's multi-threaded TCG) and run the parallel selftest in
# each boot.
#
# Usage: scripts/vm-parallel.sh [--ktap] [--boots N] [--cpus 2,4]
#                               [--kernel K] [--stop-on-failure]
#
# For every vCPU count of --cpus (default 2,4), N boots (default 10)
# in a row of scripts/vm.sh --kernel K (default 6.1) with
# VM_TCG_THREAD=multi, each running selftests/kernel/run.sh test_parallel
# (and with it test_dmesg: a kernel report of the boot fails it). One
# line per boot: its number, the vCPUs, the runner's totals, the events
# written and accounted for, and the time it took. Boot logs are kept in
# build/vm/parallel/CPUSx-BOOT.
#
# test_parallel patches no kernel text while its load runs (no
# tracepoint, kprobe or inject: the load generator only, its sources set
# at insmod), so that QEMU 7.2's multi-threaded TCG bug (a stale int3
# after text_poke_bp()) cannot strike; see scripts/vm.sh.
#
# --ktap: print a KTAP result line per boot and a plan, for make check's
# runner. Exit status: 0 when every boot passed.
#
# Environment: RBN_QUICK, RBN_PARALLEL_SECONDS, RBN_PARALLEL_KB go to the
# guest; VM_TIMEOUT (seconds per boot, default 900).

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/vm/parallel

boots=10 cpus_list="2 4" kernel=6.1 ktap=0 stop=0
while [ $# -gt 0 ]; do
	case $1 in
	--boots) boots=$2 && shift ;;
	--cpus) cpus_list=${2//,/ } && shift ;;
	--kernel) kernel=$2 && shift ;;
	--ktap) ktap=1 ;;
	--stop-on-failure) stop=1 ;;
	*)
		sed -n '/^# Usage/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2
		exit 2
		;;
	esac
	shift
done

knobs=(RBN_VM=1)
for v in RBN_QUICK RBN_PARALLEL_SECONDS RBN_PARALLEL_KB; do
	[ -n "${!v:-}" ] && knobs+=("$v=${!v}")
done

total=0
for c in $cpus_list; do
	total=$((total + boots))
done
[ $ktap = 1 ] && echo "KTAP version 1" && echo "1..$total"

n=0 pass=0 fail=0
for c in $cpus_list; do
	ok_row=0
	for ((b = 1; b <= boots; b++)); do
		n=$((n + 1))
		out=$OUT/${c}x-$b
		rm -rf "$out"
		mkdir -p "$out"
		start=$(date +%s)
		VM_TCG_THREAD=multi VM_RUN_NAME=parallel \
			bash "$ROOT/scripts/vm.sh" --kernel "$kernel" \
			--cpus "$c" --out "$out" --timeout "${VM_TIMEOUT:-900}" -- \
			env "${knobs[@]}" sh selftests/kernel/run.sh test_parallel \
			>"$out/console.txt" 2>&1
		rc=$?
		secs=$(($(date +%s) - start))
		log=$(tr -d '\r' <"$out/console.txt")
		totals=$(grep -E '^[0-9]+ passed, [0-9]+ failed' <<<"$log" | tail -n 1)
		events=$(sed -n 's/.*events written and accounted for: \([0-9]*\).*/\1/p' <<<"$log" | tail -n 1)
		shr=$(sed -n 's/.*# \(producer\|overwrite\): \([0-9]\) of 3 shrinks.*/\1 \2/p' <<<"$log" | tr '\n' ' ')
		desc="boot $b/$boots, $c vCPUs (multi-threaded TCG): ${totals:-no totals}; ${events:-?} events accounted for; shrinks under load: ${shr:-?}; ${secs} s"
		if [ $rc -eq 0 ] && [ -n "$totals" ] && grep -q ' 0 failed' <<<"$totals"; then
			pass=$((pass + 1))
			ok_row=$((ok_row + 1))
			res="ok"
		else
			fail=$((fail + 1))
			res="not ok"
			grep -E '^ *not ok|vm: ' <<<"$log" | head -n 10 | sed 's/^/# /'
			desc="$desc (exit $rc; log: $out/console.txt)"
		fi
		if [ $ktap = 1 ]; then
			echo "$res $n parallel $desc"
		else
			echo "$res: $desc"
		fi
		[ $stop = 1 ] && [ "$res" = "not ok" ] && break 2
	done
	echo "# $c vCPUs: $ok_row of $boots boots in a row passed"
done
echo "# $pass passed, $fail failed"
[ $fail -eq 0 ]

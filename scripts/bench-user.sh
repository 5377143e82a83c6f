#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-user.sh - userspace benchmark of the rbnest core (not a test).
#
# Usage: scripts/bench-user.sh [BUILD_DIR]	(make bench-user)
#
# 1. Instructions per event of rbn_write(), counted by callgrind in
#    bench_loop() of build/user/bench_user (-O2 library), divided by the
#    number of events:
#    - fast path, payloads of 8, 32, 128 and 1024 bytes;
#    - slow path: every outer 8-byte write is interrupted at label B by one
#      nested 8-byte write (one more when a nested write filled the page
#      and the outer one retries on the next: the attempt that succeeds is
#      always interrupted). The nested writes run inside bench_nested(),
#      counted in a second, identical run (the clock is a counter, so both
#      runs execute the same instructions). Outer event = (loop - nested)
#      / N. That still contains the test hook, which the slow case needs
#      and the fast cases do not have: its cost per call is measured with
#      a hook that does nothing (hooked-8 against fast-8) and taken off
#      for the number of hook calls the outer writer made. The nested
#      event, which gets an absolute stamp, is reported the same way, per
#      nested write.
#    Why not (slow round - 2 N plain 8-byte events) / N: the nested event
#    is not a plain one (it writes an absolute stamp) and the hook that
#    injects it costs about as much as a write; both would land in the
#    outer figure.
#    - the same fast-path writes (8 and 128 bytes) with the run-time
#      validator on: each commit decodes its sub-buffer from the start up
#      to the event, so the cost grows with the events before it on the
#      page. Off, the fast-path figures above include its two switch tests
#      (here a load and a branch each; in the kernel, static-key jumps
#      patched out).
#    Each figure includes the loop and the mock clock (see "loop overhead").
# 2. Events per second of the stress test (build/user/test_stress), from
#    its "# rate: N events/s" line, all simulated CPUs together.
#
# The table is printed and written to BUILD_DIR/bench-user.txt.
#
# Environment: BENCH_EVENTS (events per callgrind run, default 50000),
# BENCH_STRESS_SECONDS (default 5) and BENCH_STRESS_EVENTS (default 10^8:
# the time is the limit) for the stress run.

set -euo pipefail

cd "$(dirname "$0")/.."
build=${1:-build}
bench=$build/user/bench_user
stress=$build/user/test_stress
events=${BENCH_EVENTS:-50000}
stress_secs=${BENCH_STRESS_SECONDS:-5}
stress_events=${BENCH_STRESS_EVENTS:-100000000}
out=$build/bench-user.txt

command -v valgrind >/dev/null || { echo "valgrind is missing: make deps" >&2; exit 1; }
[ -x "$bench" ] || { echo "$bench is missing: make bench-user" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# counters CASE: the key=value line of a native run of CASE
declare -A kv

load_counters() {
	local line k v
	line=$1
	kv=()
	for w in $line; do
		k=${w%%=*}
		v=${w#*=}
		kv[$k]=$v
	done
}

# callgrind_ir FUNCTION CASE: instructions executed inside FUNCTION
callgrind_ir() {
	local fn=$1 c=$2 f=$tmp/cg.$1.$2
	valgrind --tool=callgrind --callgrind-out-file="$f" \
		--collect-atstart=no --toggle-collect="$fn" \
		"$bench" "$c" "$events" >"$tmp/log.$fn.$c" 2>&1 || {
		cat "$tmp/log.$fn.$c" >&2
		echo "bench_user $c failed under callgrind" >&2
		exit 1
	}
	awk '/^(summary|totals):/ { print $2; exit }' "$f"
}

per_event() {
	awk -v a="$1" -v n="$2" 'BEGIN { printf "%.1f", a / n }'
}

echo "rbnest userspace benchmark: $events events per case, callgrind Ir"

declare -A ir
for c in empty fast-8 fast-32 fast-128 fast-1024 hooked-8 slow-8 \
	validate-8 validate-128; do
	ir[$c]=$(callgrind_ir bench_loop "$c")
done
ir_nested=$(callgrind_ir bench_nested slow-8)

# Native runs: counters (and a wall-clock figure for reference).
declare -A ns
for c in empty fast-8 fast-32 fast-128 fast-1024 hooked-8 slow-8 \
	validate-8 validate-128; do
	line=$("$bench" "$c" "$events")
	load_counters "$line"
	ns[$c]=${kv[ns_per_event]}
	case $c in
	fast-*)
		if [ "${kv[dropped]}" != 0 ] || [ "${kv[written]}" != "$events" ]; then
			echo "bench: $c dropped events: $line" >&2
			exit 1
		fi
		;;
	hooked-8)
		hook_fast=${kv[hook_outer]}
		;;
	slow-8)
		hook_slow_outer=${kv[hook_outer]}
		hook_slow_nested=${kv[hook_nested]}
		slow_line=$line
		nested_events=${kv[nested]}
		if [ "${kv[slow]}" != "$events" ] || [ "${kv[zero]}" != 0 ]; then
			echo "bench: slow-8 did not take the slow path for every event: $line" >&2
			exit 1
		fi
		;;
	esac
done

# Hook dispatch cost per call, and the corrected slow-path figures.
hook_call=$(awk -v h="${ir[hooked-8]}" -v f="${ir[fast-8]}" -v c="$hook_fast" \
	'BEGIN { printf "%.3f", (h - f) / c }')
outer_raw=$(awk -v t="${ir[slow-8]}" -v n="$ir_nested" -v e="$events" \
	'BEGIN { printf "%.1f", (t - n) / e }')
outer=$(awk -v t="${ir[slow-8]}" -v n="$ir_nested" -v e="$events" \
	-v h="$hook_slow_outer" -v c="$hook_call" \
	'BEGIN { printf "%.1f", (t - n - h * c) / e }')
nested=$(awk -v n="$ir_nested" -v e="$nested_events" -v h="$hook_slow_nested" \
	-v c="$hook_call" 'BEGIN { printf "%.1f", (n - h * c) / e }')
fast8=$(per_event "${ir[fast-8]}" "$events")

{
	echo "rbnest userspace benchmark ($(date -u +%Y-%m-%d), $(gcc -dumpfullversion 2>/dev/null || echo gcc), -O2)"
	echo
	printf '%-44s %12s %10s\n' "rbn_write() per event" "Ir/event" "ns/event"
	printf '%-44s %12s %10s\n' "--------------------------------------------" "------------" "----------"
	for len in 8 32 128 1024; do
		printf '%-44s %12s %10s\n' "fast path, $len-byte payload" \
			"$(per_event "${ir[fast-$len]}" "$events")" "${ns[fast-$len]}"
	done
	printf '%-44s %12s %10s\n' "slow path, 8-byte outer event" "$outer" "-"
	printf '%-44s %12s %10s\n' "  slow-path extra over fast 8-byte" \
		"$(awk -v a="$outer" -v b="$fast8" 'BEGIN { printf "%.1f", a - b }')" "-"
	printf '%-44s %12s %10s\n' "nested 8-byte event (absolute stamp)" "$nested" "-"
	for len in 8 128; do
		printf '%-44s %12s %10s\n' "validator on, $len-byte payload" \
			"$(per_event "${ir[validate-$len]}" "$events")" "${ns[validate-$len]}"
		printf '%-44s %12s %10s\n' "  over the fast path (validator off)" \
			"$(awk -v a="${ir[validate-$len]}" -v b="${ir[fast-$len]}" -v e="$events" \
				'BEGIN { printf "%.1f", (a - b) / e }')" "-"
	done
	printf '%-44s %12s %10s\n' "loop overhead (included above)" \
		"$(per_event "${ir[empty]}" "$events")" "${ns[empty]}"
	echo
	echo "slow path: outer with hook $outer_raw Ir/event; hook dispatch $hook_call Ir/call,"
	echo "  $hook_slow_outer outer + $hook_slow_nested nested hook calls, $nested_events nested writes"
	echo "  for $events outer events"
	echo "  ($slow_line)"
} >"$tmp/table"

# Events per second of the stress test, as it prints it.
stress_rate=
if [ -x "$stress" ]; then
	rc=0
	RBN_STRESS_SECONDS=$stress_secs RBN_STRESS_EVENTS=$stress_events \
		timeout 600 "$stress" >"$tmp/stress" 2>&1 || rc=$?
	stress_rate=$(sed -n 's/^# rate: *\([0-9.]*\) *events\/s.*/\1 events\/s/p' \
		"$tmp/stress" | tail -n 1)
	[ -n "$stress_rate" ] || stress_rate="(no rate printed)"
	[ $rc -eq 0 ] || stress_rate="$stress_rate (test_stress exit status $rc)"
else
	stress_rate="(no test_stress)"
fi
{
	echo
	printf '%-44s %s\n' "stress test, ${stress_secs}s (all threads)" "$stress_rate"
} >>"$tmp/table"

mkdir -p "$build"
cp "$tmp/table" "$out"
cat "$out"
echo
echo "written to $out"

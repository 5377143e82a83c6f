#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fuzz.sh - run the libFuzzer targets of rbtrace and report them as KTAP.
#
# Usage: fuzz.sh [-t SECONDS] [-o DIR] RBGEN FUZZER...
#
#   -t SECONDS  fuzzing time per target (default 20)
#   -o DIR      keep the corpora (DIR/corpus/TARGET, grown run after run),
#               the crash, leak and timeout inputs (DIR/artifacts/TARGET-*)
#               and the fuzzers' logs (DIR/TARGET.log) there; by default
#               a temporary directory, removed at the end
#
# The seed inputs are made here, not stored: RBGEN writes recordings of
# the userspace core (nested writers, a clock across 2^59, overwrite mode
# with lost events); fuzz_page gets their pages (one, two in a row, and a
# page of each CPU) and fuzz_format their header_page and format texts.
# Every target is one test case: it fails on a crash, a sanitizer report,
# a leak, a slow input (-timeout) or a fuzzer that does not run. Each
# prints the number of inputs it ran.

set -uo pipefail

seconds=20
out=
while getopts t:o: opt; do
	case $opt in
	t) seconds=$OPTARG ;;
	o) out=$OPTARG ;;
	*) echo "usage: $0 [-t SECONDS] [-o DIR] RBGEN FUZZER..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
rbgen=${1:-}
shift
fuzzers=("$@")

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$out" ]; then
	out=$tmp/out
fi
mkdir -p "$out/artifacts" "$out/corpus"

echo "KTAP version 1"
echo "1..${#fuzzers[@]}"

# ---- seeds ----------------------------------------------------------------

page=4096
seeds=$tmp/seeds
mkdir -p "$seeds/fuzz_page" "$seeds/fuzz_format"
gen_ok=1
for mode in nest nest59 overwrite; do
	rec=$tmp/rec-$mode
	if ! "$rbgen" "$mode" "$rec" >"$tmp/gen.log" 2>&1; then
		echo "# rbgen $mode failed:"
		sed 's/^/# /' "$tmp/gen.log"
		gen_ok=0
		continue
	fi
	for cpu in 0 1; do
		raw=$rec/cpu$cpu.raw
		[ -f "$raw" ] || continue
		n=$(($(stat -c %s "$raw") / page))
		# single pages spread over the file, then pairs in a row
		for p in $(seq 0 $(((n + 7) / 8)) $((n - 1))); do
			dd if="$raw" of="$seeds/fuzz_page/$mode-$cpu-$p" \
				bs=$page skip="$p" count=1 status=none
		done
		for p in 0 $((n / 2)) $((n - 2)); do
			[ "$p" -ge 0 ] || continue
			dd if="$raw" of="$seeds/fuzz_page/$mode-$cpu-$p+2" \
				bs=$page skip="$p" count=2 status=none
		done
	done
	# the first page of each CPU, shared between two CPUs (trailing 0x01)
	if [ -f "$rec/cpu1.raw" ]; then
		{
			dd if="$rec/cpu0.raw" bs=$page count=1 status=none
			dd if="$rec/cpu1.raw" bs=$page count=1 status=none
			printf '\001'
		} >"$seeds/fuzz_page/$mode-2cpu"
	fi
	fmt=$rec/events/rbnest/sample/format
	{ cat "$rec/header_page"; printf '\0'; cat "$fmt"; } \
		>"$seeds/fuzz_format/$mode-both"
	cp "$fmt" "$seeds/fuzz_format/$mode-format"
done

# ---- fuzzing --------------------------------------------------------------

max_len() {
	case $1 in
	fuzz_page) echo $((4 * page + 1)) ;;
	*) echo 8192 ;;
	esac
}

# libtraceevent leaks on many broken format texts (suppressed, lsan.supp):
# a leak check after every such input would make fuzz_format ten times
# slower, so its leaks are checked once, at the end of the run.
leak_opt() {
	case $1 in
	fuzz_format) echo -detect_leaks=0 ;;
	*) echo -detect_leaks=1 ;;
	esac
}

nr=0
nr_fail=0
for fz in "${fuzzers[@]}"; do
	nr=$((nr + 1))
	name=$(basename "$fz")
	log=$out/$name.log
	corpus=$out/corpus/$name
	mkdir -p "$corpus"
	if [ ! -x "$fz" ]; then
		echo "not ok $nr $name # not built"
		nr_fail=$((nr_fail + 1))
		continue
	fi
	if [ $gen_ok -eq 0 ] || [ -z "$(ls -A "$seeds/$name" 2>/dev/null)" ]; then
		echo "# $name: no seed inputs"
	fi
	before=$(ls "$out/artifacts" | grep -c "^$name-")
	env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		LSAN_OPTIONS=suppressions=$here/lsan.supp \
		"$fz" -max_total_time="$seconds" -timeout=10 \
		-rss_limit_mb=2048 -max_len="$(max_len "$name")" \
		"$(leak_opt "$name")" -print_final_stats=1 \
		-artifact_prefix="$out/artifacts/$name-" \
		"$corpus" "$seeds/$name" >"$log" 2>&1 </dev/null
	rc=$?
	after=$(ls "$out/artifacts" | grep -c "^$name-")
	runs=$(grep -oE '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1 |
		awk '{ print $2 " inputs in " $5 " s" }')
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | cut -d' ' -f2)
	ft=$(grep -oE 'ft: [0-9]+' <<<"$last" | cut -d' ' -f2)
	corp=$(grep -oE 'corp: [0-9]+' <<<"$last" | cut -d' ' -f2)
	execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" |
		awk '{ print $2 }')
	echo "# $name: ${execs:-?} executions (${runs:-no final line}), ${seconds} s, coverage ${cov:-?} edges ${ft:-?} features, corpus ${corp:-?} inputs"
	if [ "$rc" -ne 0 ] || [ "$after" -ne "$before" ] || [ -z "$runs" ]; then
		echo "# $name: exit status $rc; the end of $name.log:"
		grep -vE '^#[0-9]+|^(INFO|[ ]*")' "$log" | tail -n 40 | sed 's/^/# /'
		ls "$out/artifacts" | grep "^$name-" | sed 's/^/# artifact: /'
		echo "not ok $nr $name"
		nr_fail=$((nr_fail + 1))
	else
		echo "ok $nr $name"
	fi
done
[ "$nr_fail" -eq 0 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fuzz.sh - run the libFuzzer targets of rbtrace and report them as KTAP.
#
# Usage: fuzz.sh [-t SECONDS | -n [TARGET=]RUNS... -s SEED] [-c DIR] [-o DIR]
#                RBGEN FUZZER...
#
#   -t SECONDS  open-ended: fuzz each target for SECONDS (default 20), with
#               a random seed, growing DIR/corpus/TARGET run after run
#   -n RUNS     deterministic: each target runs RUNS inputs (-runs) from a
#               fresh corpus with the seed of -s; TARGET=RUNS sets one
#               target's number (repeat -n for each)
#   -s SEED     the seed of libFuzzer's mutations with -n (default 1)
#   -c DIR      the regression corpus kept in the tree: DIR/TARGET/* are
#               every input that ever crashed a target; each is run once
#               (a test case of its own) and seeds the fuzzing
#   -o DIR      keep the corpora (DIR/corpus/TARGET), the crash, leak and
#               timeout inputs (DIR/artifacts/TARGET-*) and the fuzzers'
#               logs (DIR/TARGET.log) there; by default a temporary
#               directory, removed at the end
#
# The seed inputs are made here, not stored: RBGEN writes recordings of
# the userspace core (nested writers, a clock across 2^59, overwrite mode
# with lost events); fuzz_page gets their pages (one, two in a row, and a
# page of each CPU) and fuzz_format their header_page and format texts.
# The first test case is the seed inputs: it fails if RBGEN fails or
# leaves a recording without the files the seeds are cut from, or if a
# target gets no seed at all. Then every target is two test cases: its
# regression corpus, which fails if an input crashes, and the fuzzing,
# which fails on a crash, a sanitizer report, a leak, a slow input
# (-timeout) or a fuzzer that does not run, and fails unrun without a
# seed input. Each prints the number of inputs it ran. A crash input
# found by the fuzzing is named on the "not ok" line: once fixed, it
# joins the regression corpus (see the README).

set -uo pipefail

seconds=20
runs=
declare -A target_runs=()
seed=1
regress=
out=
usage() {
	echo "usage: $0 [-t SECONDS | -n [TARGET=]RUNS... -s SEED]" \
		"[-c DIR] [-o DIR] RBGEN FUZZER..." >&2
	exit 2
}
while getopts t:n:s:c:o: opt; do
	case $opt in
	t) seconds=$OPTARG ;;
	n)
		case $OPTARG in
		*=*) target_runs[${OPTARG%%=*}]=${OPTARG#*=} ;;
		*) runs=$OPTARG ;;
		esac
		[[ ${OPTARG#*=} =~ ^[1-9][0-9]*$ ]] || usage
		;;
	s) seed=$OPTARG ;;
	c) regress=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
determ=0
if [ -n "$runs" ] || [ ${#target_runs[@]} -gt 0 ]; then
	determ=1
fi
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
rbgen=$1
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
echo "1..$((1 + 2 * ${#fuzzers[@]}))"

nr=0
nr_fail=0

# result ok|fail DESCRIPTION...
result() {
	nr=$((nr + 1))
	if [ "$1" = ok ]; then
		echo "ok $nr ${*:2}"
	else
		nr_fail=$((nr_fail + 1))
		echo "not ok $nr ${*:2}"
	fi
}

# ---- seeds ----------------------------------------------------------------

page=4096
seeds=$tmp/seeds
mkdir -p "$seeds/fuzz_page" "$seeds/fuzz_format"
seed_errs=()
modes=(nest nest59 overwrite)
for mode in "${modes[@]}"; do
	rec=$tmp/rec-$mode
	"$rbgen" "$mode" "$rec" >"$tmp/gen.log" 2>&1 </dev/null
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "# seed inputs: '$rbgen $mode DIR' failed with exit status $rc:"
		sed 's/^/#   /' "$tmp/gen.log"
		seed_errs+=("rbgen $mode: exit status $rc")
		continue
	fi
	# what the seeds are cut from: whole pages of both CPUs, the texts
	bad=
	for cpu in 0 1; do
		raw=$rec/cpu$cpu.raw
		if [ ! -f "$raw" ]; then
			bad+=" no cpu$cpu.raw;"
			continue
		fi
		size=$(stat -c %s "$raw")
		if [ "$size" -lt $((2 * page)) ] || [ $((size % page)) -ne 0 ]; then
			bad+=" cpu$cpu.raw has $size bytes, not two or more pages of $page;"
		fi
	done
	for f in header_page events/rbnest/sample/format; do
		[ -s "$rec/$f" ] || bad+=" $f: missing or empty;"
	done
	if [ -n "$bad" ]; then
		echo "# seed inputs: rbgen $mode exited 0 but its recording is" \
			"unusable:${bad%;}"
		seed_errs+=("rbgen $mode: unusable recording")
		continue
	fi
	for cpu in 0 1; do
		raw=$rec/cpu$cpu.raw
		n=$(($(stat -c %s "$raw") / page))
		# single pages spread over the file, then pairs in a row
		for p in $(seq 0 $(((n + 7) / 8)) $((n - 1))); do
			dd if="$raw" of="$seeds/fuzz_page/$mode-$cpu-$p" \
				bs=$page skip="$p" count=1 status=none
		done
		for p in 0 $((n / 2)) $((n - 2)); do
			dd if="$raw" of="$seeds/fuzz_page/$mode-$cpu-$p+2" \
				bs=$page skip="$p" count=2 status=none
		done
	done
	# the first page of each CPU, shared between two CPUs (trailing 0x01)
	{
		dd if="$rec/cpu0.raw" bs=$page count=1 status=none
		dd if="$rec/cpu1.raw" bs=$page count=1 status=none
		printf '\001'
	} >"$seeds/fuzz_page/$mode-2cpu"
	fmt=$rec/events/rbnest/sample/format
	{ cat "$rec/header_page"; printf '\0'; cat "$fmt"; } \
		>"$seeds/fuzz_format/$mode-both"
	cp "$fmt" "$seeds/fuzz_format/$mode-format"
done
counts=
for fz in "${fuzzers[@]}"; do
	name=$(basename "$fz")
	k=$(find "$seeds/$name" -type f -size +0 2>/dev/null | wc -l)
	counts+=", $k $name"
	if [ "$k" -eq 0 ]; then
		echo "# seed inputs: none for $name"
		seed_errs+=("no seed input for $name")
	fi
done
if [ ${#seed_errs[@]} -eq 0 ]; then
	result ok "seed inputs from rbgen ${modes[*]}: ${counts#, }"
else
	msg=$(printf '; %s' "${seed_errs[@]}")
	echo "# the seed inputs could not be made from $rbgen: the fuzzing" \
		"below would not start from the recordings of the core"
	result fail "seed inputs # ${msg#; }"
fi

# ---- fuzzing --------------------------------------------------------------

max_len() {
	case $1 in
	fuzz_page) echo $((4 * page + 1)) ;;
	*) echo 8192 ;;
	esac
}

# Leaks are checked after every input that allocated more than it freed
# (-detect_leaks=1), the leaking input kept; lsan.supp names the only
# leaks let through, libtraceevent's own.
fuzz_env() {
	env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		LSAN_OPTIONS=suppressions=$here/lsan.supp "$@"
}

for fz in "${fuzzers[@]}"; do
	name=$(basename "$fz")
	log=$out/$name.log
	corpus=$out/corpus/$name
	if [ ! -x "$fz" ]; then
		result fail "$name: regression corpus # not built"
		result fail "$name # not built"
		continue
	fi

	# ---- the regression corpus: every input once ----
	inputs=()
	if [ -n "$regress" ] && [ -d "$regress/$name" ]; then
		mapfile -t inputs < <(find "$regress/$name" -type f | sort)
	fi
	if [ ${#inputs[@]} -eq 0 ]; then
		echo "# $name: no regression inputs"
		result ok "$name: regression corpus (0 inputs)"
	else
		# one process per input: every crashing input is named
		bad=0
		: >"$out/$name-regress.log"
		for input in "${inputs[@]}"; do
			rlog=$tmp/regress.log
			fuzz_env "$fz" -timeout=10 -rss_limit_mb=2048 \
				-detect_leaks=1 "$input" >"$rlog" 2>&1 </dev/null
			rc=$?
			cat "$rlog" >>"$out/$name-regress.log"
			if [ $rc -ne 0 ] ||
			   ! grep -q '^Executed .* in [0-9]* ms$' "$rlog"; then
				bad=$((bad + 1))
				san=$(grep -m1 -oE \
					'(ERROR|SUMMARY): .*Sanitizer: [A-Za-z-]+' "$rlog")
				echo "# $name: $(basename "$input"):" \
					"exit status $rc: $san"
			fi
		done
		echo "# $name: ${#inputs[@]} regression inputs, $bad crashed"
		if [ $bad -ne 0 ]; then
			result fail "$name: regression corpus ($bad of" \
				"${#inputs[@]} inputs crashed, see $name-regress.log)"
		else
			result ok "$name: regression corpus (${#inputs[@]} inputs)"
		fi
	fi

	# ---- fuzzing ----
	if [ -z "$(find "$seeds/$name" -type f -size +0 2>/dev/null)" ]; then
		result fail "$name: fuzzing # not run: no seed inputs"
		continue
	fi
	dirs=("$seeds/$name")
	if [ ${#inputs[@]} -gt 0 ]; then
		dirs+=("$regress/$name")
	fi
	if [ $determ -eq 1 ]; then
		n=${target_runs[$name]:-$runs}
		if [ -z "$n" ]; then
			result fail "$name # no number of runs given (-n $name=RUNS)"
			continue
		fi
		# The same inputs, seed and runs every time: a fresh corpus,
		# no reloading of it (a timer), no operands of comparisons
		# fed back to the mutations (pointers among them, which move
		# with the length of a path in argv) and no address space
		# layout randomisation.
		corpus=$tmp/corpus-$name
		rm -rf "$corpus"
		limit=(-seed="$seed" -runs="$n" -reload=0 -use_cmp=0)
		what="seed $seed, $n runs"
		run=()
		if setarch -R true 2>/dev/null; then
			run=(setarch -R)
		else
			echo "# $name: setarch -R does not work here, addresses are random"
		fi
	else
		limit=(-max_total_time="$seconds")
		what="$seconds s"
		run=()
	fi
	mkdir -p "$corpus"
	before=$(ls "$out/artifacts" | grep -c "^$name-")
	fuzz_env "${run[@]}" "$fz" "${limit[@]}" -timeout=10 \
		-rss_limit_mb=2048 -max_len="$(max_len "$name")" \
		-detect_leaks=1 -print_final_stats=1 \
		-artifact_prefix="$out/artifacts/$name-" \
		"$corpus" "${dirs[@]}" >"$log" 2>&1 </dev/null
	rc=$?
	after=$(ls "$out/artifacts" | grep -c "^$name-")
	done_line=$(grep -oE '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1 |
		awk '{ print $2 " inputs in " $5 " s" }')
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | cut -d' ' -f2)
	ft=$(grep -oE 'ft: [0-9]+' <<<"$last" | cut -d' ' -f2)
	corp=$(grep -oE 'corp: [0-9]+' <<<"$last" | cut -d' ' -f2)
	execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" |
		awk '{ print $2 }')
	echo "# $name: ${execs:-?} executions (${done_line:-no final line}), $what, coverage ${cov:-?} edges ${ft:-?} features, corpus ${corp:-?} inputs"
	if [ "$rc" -ne 0 ] || [ "$after" -ne "$before" ] || [ -z "$done_line" ]; then
		echo "# $name: exit status $rc; the end of $name.log:"
		grep -vE '^#[0-9]+|^(INFO|[ ]*")' "$log" | tail -n 40 | sed 's/^/# /'
		ls "$out/artifacts" | grep "^$name-" | sed 's/^/# artifact: /'
		echo "# once fixed, add the input to the regression corpus:" \
			"${regress:-tools/rbtrace/fuzz/corpus}/$name/"
		result fail "$name: fuzzing ($what)"
	else
		result ok "$name: fuzzing ($what)"
	fi
done
[ "$nr_fail" -eq 0 ]

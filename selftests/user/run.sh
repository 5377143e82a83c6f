#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - run KTAP test programs and add their results up.
#
# Usage: run.sh RUN...
#
# Each RUN is one argument: blank-separated words, optionally starting with
# "@NAME" (the name shown for the run), then VAR=value words (its
# environment), then the command and its arguments, e.g.
#
#	run.sh build/user/test_unit 'RBN_NEST_QUICK=1 build/asan/test_nest'
#
# A RUN "!NAME REASON..." runs nothing and counts one failure (used for a
# step that failed before the tests, such as the build).
#
# The output is KTAP: every program's output is shown indented as a subtest,
# followed by one result line for the program. Test cases are counted from
# the programs' own result lines ("ok N", "not ok N", "# SKIP"). A program
# that crashes, times out, exits non-zero without a "not ok" line, prints
# no plan, reports fewer or more results than planned, or triggers a
# warning of the core ("rbnest: WARNING") counts as one more failure.
# The last line is "N passed, N failed, N skipped"; the exit status is
# non-zero when anything failed or when no test case ran.
#
# Environment: RBN_TEST_TIMEOUT (seconds per program, default 1200). A
# RUN_TIMEOUT=SECONDS word among a RUN's environment words is that run's
# own limit (it is not passed on).

set -uo pipefail

timeout_s=${RBN_TEST_TIMEOUT:-1200}
total_pass=0
total_fail=0
total_skip=0
failed_runs=()

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "KTAP version 1"
echo "1..$#"

n=0
for run in "$@"; do
	n=$((n + 1))
	read -r -a words <<<"$run"
	if [[ ${words[0]:-} == !* ]]; then
		name=${words[0]#!}
		reason=${words[*]:1}
		total_fail=$((total_fail + 1))
		failed_runs+=("$name${reason:+: $reason}")
		echo "not ok $n $name${reason:+ # $reason}"
		continue
	fi
	name=
	envs=()
	i=0
	if [[ ${words[0]:-} == @* ]]; then
		name=${words[0]#@}
		i=1
	fi
	run_timeout=$timeout_s
	while [ $i -lt ${#words[@]} ] && [[ ${words[$i]} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do
		if [[ ${words[$i]} =~ ^RUN_TIMEOUT=[0-9]+$ ]]; then
			run_timeout=${words[$i]#RUN_TIMEOUT=}
		else
			envs+=("${words[$i]}")
		fi
		i=$((i + 1))
	done
	cmd=("${words[@]:$i}")
	prog=
	for w in "${cmd[@]}"; do
		if [[ $w == */* ]]; then
			prog=$w
			break
		fi
	done
	if [ -z "$name" ]; then
		if [ -n "$prog" ]; then
			name=$(basename "$(dirname "$prog")")/$(basename "$prog")
		fi
		name=${name:-${cmd[0]:-empty}}
	fi

	knobs=
	for e in "${envs[@]}"; do
		[[ $e == RBN_* ]] && knobs+=" $e"
	done
	echo "# ---- $name${knobs:+ (${knobs# })}"

	out=$tmp/out.$n
	start=$(date +%s.%N)
	missing=
	if [ ${#cmd[@]} -eq 0 ]; then
		echo "run.sh: empty command" >"$out"
		rc=127
	elif [ -n "$prog" ] && [ ! -e "$prog" ]; then
		: >"$out"
		missing=$prog
		rc=127
	else
		timeout -k 10 "$run_timeout" env "${envs[@]}" "${cmd[@]}" 2>&1 </dev/null |
			tee "$out" | sed 's/^/    /'
		rc=${PIPESTATUS[0]}
	fi
	secs=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }')

	plan=$(grep -m1 -oE '^1\.\.[0-9]+' "$out" | cut -d. -f3)
	skip=$(grep -cE '^(not )?ok [0-9]+.*#[[:space:]]*[Ss][Kk][Ii][Pp]' "$out")
	pass=$(grep -E '^ok [0-9]+' "$out" | grep -cvE '#[[:space:]]*[Ss][Kk][Ii][Pp]')
	fail=$(grep -E '^not ok [0-9]+' "$out" | grep -cvE '#[[:space:]]*[Ss][Kk][Ii][Pp]')
	results=$((pass + fail + skip))

	why=()
	if [ -n "$missing" ]; then
		why+=("$missing is missing (not built)")
	elif [ "$rc" -eq 124 ]; then
		why+=("timed out after ${run_timeout}s")
	elif [ "$rc" -eq 127 ] && [ $results -eq 0 ]; then
		why+=("could not be run")
	elif [ "$rc" -gt 128 ]; then
		why+=("killed by signal $((rc - 128))")
	elif [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		why+=("exit status $rc without a failing test case")
	fi
	if [ -n "$missing" ]; then
		:
	elif [ -z "$plan" ]; then
		why+=("no KTAP plan")
	elif [ "$plan" -ne $results ]; then
		why+=("planned $plan test cases, reported $results")
	fi
	if grep -q 'rbnest: WARNING' "$out"; then
		why+=("$(grep -c 'rbnest: WARNING' "$out") core warning(s)")
	fi
	if [ ${#why[@]} -gt 0 ]; then
		fail=$((fail + 1))
	fi

	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))

	echo "# $name: $pass passed, $fail failed, $skip skipped in ${secs}s"
	if [ "$fail" -gt 0 ]; then
		reason=$(IFS=';'; echo "${why[*]:-}")
		reason=${reason//;/; }
		failed_runs+=("$name${reason:+: $reason}")
		echo "not ok $n $name${reason:+ # $reason}"
	else
		echo "ok $n $name"
	fi
done

for f in "${failed_runs[@]}"; do
	echo "# FAILED: $f"
done
if [ $((total_pass + total_fail)) -eq 0 ]; then
	echo "# no test case ran"
	total_fail=$((total_fail + 1))
fi
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]

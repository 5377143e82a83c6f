#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - run the rbnest.ko kernel tests and add their results up.
#
# Usage: sh selftests/kernel/run.sh [TEST...]
#
# Without arguments every test_*.sh here runs, in the order below
# (test_dmesg.sh last); a TEST is a script name (test_read, test_read.sh)
# or a path, and test_dmesg.sh runs after the TESTs given too (a kernel
# warning in their part of the log fails the run). Run as root on a machine where rbnest.ko can be loaded: the
# tests load and unload it themselves. POSIX sh and busybox applets only.
#
# Output: KTAP. Each script's own KTAP is shown indented as a subtest,
# followed by one result line for the script. The last line is
# "N passed, N failed, N skipped", counting the scripts' test cases (a
# script skipped as a whole counts as one skipped case); the exit status is
# 1 when anything failed, 4 when everything was skipped (not root, no
# module), else 0. A script that exits non-zero without a
# failing case, prints no plan, reports a number of cases other than its
# plan, runs longer than RBN_TEST_TIMEOUT, or while it runs leaves a
# kernel report in the log (rbn_dmesg_reports of ktap_helpers.sh: a
# WARNING, lockdep, KASAN, UBSAN, KFENCE, lockup or kmemleak report, a
# KCSAN report with an rbnest frame, ...) counts as one more failure; so
# does one that leaves rbnest loaded (run.sh unloads it then).
#
# Environment:
#   RBNEST_KO            the module (default <root>/rbnest.ko)
#   RBTRACE              tools/rbtrace/rbtrace (default <root>/tools/rbtrace/
#                        rbtrace, else rbtrace on PATH)
#   RBN_QUICK=1          halve durations and event counts (CI)
#   RBN_TEST_TIMEOUT     seconds per script (default 900)
#   RBN_TMPDIR           scratch space for recordings (default $TMPDIR or
#                        /tmp; test_nesting needs ~100 MB)
#   RBN_KEEP=1           keep the scratch directories
#   RBN_NEST_SECONDS, RBN_MIN_EVENTS, RBN_NEST_BUFFER_KB,
#   RBN_OPTIONAL_SOURCES test_nesting
#   RBN_INJECT_TIMEOUT, RBN_INJECT_OW_KB   test_inject
#   RBN_MODES_SECONDS    test_modes
#   RBN_TSCHECK_SECONDS  test_tscheck
#   RBN_DISCARD_SECONDS, RBN_DISCARD_EVERY   test_discard
#   RBN_TSMODE_SECONDS   test_tsmode
#   RBN_VALIDATE_SECONDS, RBNEST_TESTONLY_KO, RBN_REQUIRE_TESTONLY
#                        test_validate
#   RBN_SNAPSHOT_SECONDS, RBN_SNAPSHOTS, RBN_SNAPSHOT_BUFFER_KB   test_snapshot
#   RBN_HOTPLUG_CYCLES   test_hotplug
#   RBN_LOCKUP_SECONDS   test_lockup
#   RBN_CLOCKBACK_SECONDS test_clockback
#   RBN_HOOK_ROUNDS      test_hook
#   RBN_SH               the shell that runs the scripts (default sh)

dir=$(cd "$(dirname "$0")" && pwd)
# One line: the scripts not listed here are found by matching " NAME ".
order="test_load test_read test_cmdlines test_nesting test_clockback test_inject test_modes test_tscheck"
order="$order test_discard test_tsmode test_validate test_snapshot test_wake test_lockup test_badinput test_resize test_hotplug test_unload"
timeout_s=${RBN_TEST_TIMEOUT:-900}
sh=${RBN_SH:-sh}

if [ $# -gt 0 ]; then
	tests=
	for a in "$@"; do
		case $a in
		*/*) p=$a ;;
		*.sh) p=$dir/$a ;;
		*) p=$dir/$a.sh ;;
		esac
		tests="$tests $p"
	done
	case " $tests " in
	*/test_dmesg.sh" "*) ;;
	*) [ -f "$dir/test_dmesg.sh" ] && tests="$tests $dir/test_dmesg.sh" ;;
	esac
else
	tests=
	for n in $order; do
		[ -f "$dir/$n.sh" ] && tests="$tests $dir/$n.sh"
	done
	# any other test, then test_dmesg.sh last
	for p in "$dir"/test_*.sh; do
		n=$(basename "$p" .sh)
		case " $order test_dmesg " in
		*" $n "*) ;;
		*) tests="$tests $p" ;;
		esac
	done
	[ -f "$dir/test_dmesg.sh" ] && tests="$tests $dir/test_dmesg.sh"
fi

tmp=$(mktemp -d "${RBN_TMPDIR:-${TMPDIR:-/tmp}}/rbnest-run.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

if [ -w /dev/kmsg ]; then
	echo "rbnest-selftest: run.sh start" >/dev/kmsg 2>/dev/null
fi
# kmemleak (debug kernels): a scan marks what is unreferenced before this
# run as reported, and clear forgets it, so that test_dmesg's scan at the
# end reports only what the tests leaked.
kmemleak=/sys/kernel/debug/kmemleak
if [ -w $kmemleak ] && echo scan >$kmemleak 2>/dev/null; then
	echo clear >$kmemleak
fi
. "$dir/ktap_helpers.sh"

# shellcheck disable=SC2086 # a list of paths without blanks
set -- $tests
echo "KTAP version 1"
echo "1..$#"
total_pass=0
total_fail=0
total_skip=0
failed=
n=0
for p in "$@"; do
	n=$((n + 1))
	name=$(basename "$p" .sh)
	out=$tmp/out.$n
	echo "# ---- $name${RBN_QUICK:+ (RBN_QUICK=$RBN_QUICK)}"
	start=$(date +%s)
	mark="rbnest-selftest: run.sh runs $name"
	[ -w /dev/kmsg ] && echo "$mark" >/dev/kmsg 2>/dev/null
	if [ ! -f "$p" ]; then
		echo "run.sh: no $p" >"$out"
		echo 127 >"$tmp/rc"
		sed 's/^/    /' "$out"
	else
		# Shortly before a script is killed for running too long,
		# the kernel log gets every task's state and stack (SysRq
		# t), to show where it hung.
		(
			sleep $((timeout_s > 20 ? timeout_s - 10 : timeout_s))
			if [ -w /proc/sysrq-trigger ]; then
				echo "# $name: still running, task states in dmesg"
				echo t >/proc/sysrq-trigger
			fi
		) &
		watchdog=$!
		{
			timeout -k 20 "$timeout_s" "$sh" "$p" </dev/null 2>&1
			echo $? >"$tmp/rc"
		} | tee "$out" | sed 's/^/    /'
		kill $watchdog 2>/dev/null
		wait $watchdog 2>/dev/null
	fi
	rc=$(cat "$tmp/rc")
	secs=$(($(date +%s) - start))

	plan=$(grep -m 1 -E '^1\.\.[0-9]+' "$out" | sed 's/^1\.\.\([0-9]*\).*/\1/')
	skip=$(grep -cE '^(not )?ok [0-9]+.*#[[:space:]]*[Ss][Kk][Ii][Pp]' "$out")
	pass=$(grep -E '^ok [0-9]+' "$out" | grep -cvE '#[[:space:]]*[Ss][Kk][Ii][Pp]')
	fail=$(grep -E '^not ok [0-9]+' "$out" | grep -cvE '#[[:space:]]*[Ss][Kk][Ii][Pp]')
	results=$((pass + fail + skip))

	why=
	skipped_all=0
	if [ "$plan" = 0 ] && grep -qE '^1\.\.0 #[[:space:]]*SKIP' "$out" &&
	   [ "$rc" -eq 4 ]; then
		skipped_all=1
		skip=1
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] || [ "$rc" -eq 143 ]; then
		why="$why; timed out after ${timeout_s}s or killed (exit $rc)"
	elif [ "$rc" -eq 127 ] && [ $results -eq 0 ]; then
		why="$why; could not be run"
	elif [ "$rc" -gt 128 ]; then
		why="$why; killed by signal $((rc - 128))"
	elif [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && [ "$fail" -eq 0 ]; then
		why="$why; exit status $rc without a failing test case"
	fi
	if [ $skipped_all = 0 ]; then
		if [ -z "$plan" ]; then
			why="$why; no KTAP plan"
		elif [ "$plan" -ne $results ]; then
			why="$why; planned $plan test cases, reported $results"
		fi
	fi
	# A kernel report while the script ran fails the script, whatever
	# it checked itself (test_dmesg looks at the whole run at the end).
	rbn_dmesg_after "$mark" >"$tmp/dmesg"
	report=$(rbn_dmesg_reports "$tmp/dmesg" | head -n 1)
	if [ -n "$report" ] && dmesg 2>/dev/null | grep -qF "$mark"; then
		echo "# $name: kernel report in the log: $report"
		why="$why; kernel report in the log while it ran"
	fi
	# Every script unloads what it loaded; a module left loaded fails
	# it (and is unloaded here, so that the next script does not fail
	# in rbn_require for it).
	if rbn_loaded; then
		left="left $rbn_name loaded"
		rbn_unload >/dev/null 2>&1 || left="$left, rmmod failed: $rbn_err"
		echo "# $name: $left"
		why="$why; $left"
	fi
	if [ -n "$why" ]; then
		fail=$((fail + 1))
	fi
	why=${why#; }

	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))

	echo "# $name: $pass passed, $fail failed, $skip skipped in ${secs}s"
	if [ "$fail" -gt 0 ]; then
		failed="$failed
# FAILED: $name${why:+: $why}"
		echo "not ok $n $name${why:+ # $why}"
	elif [ $skipped_all = 1 ] || { [ "$pass" -eq 0 ] && [ "$skip" -gt 0 ]; }; then
		reason=$(sed -n 's/^1\.\.0 #[[:space:]]*SKIP[[:space:]]*//p' "$out" | head -n 1)
		echo "ok $n $name # SKIP${reason:+ $reason}"
	else
		echo "ok $n $name"
	fi
done

[ -n "$failed" ] && echo "${failed#?}"
status=0
[ "$total_fail" -eq 0 ] || status=1
if [ $((total_pass + total_fail)) -eq 0 ]; then
	echo "# no test case ran"
	status=4
fi
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
exit $status

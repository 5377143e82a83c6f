#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_validate.sh - the run-time validator on under the full nested load.
#
# With validate=1 the outermost commit on a CPU decodes every event just
# committed there (its own and those of the writers that interrupted it)
# from its sub-buffer, before it publishes them, and compares the time
# with the one the write path gave it; per_cpu/cpuN/stats count
# validate_checked, validate_fail and validate_skipped (rbn_set_validate()).
#  1. load with validate=1 and discard_every=N (RBN_DISCARD_EVERY,
#     default 7); the validate file reads 1;
#  2. every source writes for RBN_VALIDATE_SECONDS (default 15, 7 with
#     RBN_QUICK=1) while "rbtrace record" splices: "rbtrace check" passes;
#  3. no CPU counted a failure, and the kernel log has no validate line;
#  4. per CPU that wrote: events checked, checked + skipped covers every
#     event written (and at most the discarded ones more), and writers
#     nested (max_depth >= 2 somewhere);
#  5. the validate file: a bad value (2, -1, abc, empty) is EINVAL and
#     changes nothing; 0 stops the checks (no event checked after a
#     reset while the hrtimer writes), 1 starts them again; the text
#     patching of the static key runs with the sources off;
#  6. absolute time-stamp mode: the same load for half the time, no
#     failure, events checked;
#  7. the test-only build (RBNEST_TESTONLY_KO, default rbnest-testonly.ko
#     next to rbnest.ko; "make module RBN_TESTONLY=y"): its
#     validate_corrupt=K changes the stored time of K samples by one.
#     With the validator off nothing is counted; with it on every one
#     is counted (validate_fail + validate_skipped >= K, fail > 0), one
#     rate-limited line names the mismatch, and the sub-buffer is dumped
#     to the kernel log once, however many fail. Skipped when there is
#     no test-only build, unless RBN_REQUIRE_TESTONLY=1 (the VM runs);
#  8. unload.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

ktap_print_header
ktap_set_plan 8

secs=${RBN_VALIDATE_SECONDS:-$(rbn_secs 15)}
every=${RBN_DISCARD_EVERY:-7}
t=$rbn_tmp
testonly_ko=${RBNEST_TESTONLY_KO:-$(dirname "$RBNEST_KO")/rbnest-testonly.ko}
corrupt=/sys/module/$rbn_name/parameters/validate_corrupt
plan=8

# fail_rest MSG: fail every case left and finish
fail_rest()
{
	while [ "$KTAP_TESTNO" -le $plan ]; do
		ktap_test_fail "$1"
	done
	ktap_finished
}

# run_load SECONDS: every source (and the kprobe when there is one) for
# SECONDS, "rbtrace record" into $t/rec meanwhile; sets rec_rc
run_load()
{
	# a new recording each time (record refuses to write over one)
	rm -rf "$t/rec"
	rbn_record_start "$t/rec"
	rbn_set sources all || ktap_print_msg "$rbn_err"
	_i=0
	while [ $_i -lt "$1" ]; do
		sleep 1
		cat "$rbn_dir/per_cpu/cpu0/stats" >/dev/null
		_i=$((_i + 1))
	done
	rbn_quiesce
	rbn_record_stop
	rec_rc=$?
}

# validate_lines MARK FILE: the validator's lines of the kernel log since
# the last line with MARK, into FILE; prints how many
validate_lines()
{
	rbn_dmesg_after "$1" | grep 'rbnest: validate:' >"$2"
	wc -l <"$2"
}

# ---- 1: load
if ! rbn_load buffer_size_kb="${RBN_NEST_BUFFER_KB:-4096}" \
	    gen_task_busy_us=50 gen_task_idle_us=450 \
	    discard_every="$every" validate=1 sources=; then
	ktap_print_msg "$rbn_err"
	fail_rest "module not loaded"
fi
v=$(rbn_get validate)
ktap_print_msg "validate: '$v'"
ok=0
[ "$v" = 1 ] && ok=1
ktap_test_result $ok "load with validate=1 and discard_every=$every, validate reads 1"

if ! rbn_write kprobe_events "p:rbn_validate vfs_read"; then
	ktap_print_msg "no kprobe on vfs_read ($rbn_err): kprobes source not required"
fi

# ---- 2: the load, recorded and checked
ktap_print_msg "all sources for $secs s with the validator on, rbtrace record splicing"
run_load "$secs"
rbn_check "$t/rec" >/dev/null
check_rc=$?
events=$(rbn_check_events "$t/rec")
ok=0
[ $rec_rc -eq 0 ] && [ $check_rc -eq 0 ] && grep -q ': OK$' "$t/rec.check" &&
	[ "${events:-0}" -gt 0 ] && ok=1
ktap_print_msg "events: ${events:-0} recorded; record exit $rec_rc, check exit $check_rc"
ktap_test_result $ok "rbtrace check passes on a recording made with the validator on"

# ---- 3: no failure
rbn_stat_table written discarded validate_checked validate_fail validate_skipped max_depth
fails=$(rbn_stat_sum validate_fail)
nlines=$(validate_lines "rbnest-selftest: $rbn_test start" "$t/validate.log")
head -n 20 "$t/validate.log" | sed 's/^/# /'
ok=0
[ "$fails" -eq 0 ] && [ "$nlines" -eq 0 ] && ok=1
ktap_print_msg "validate_fail $fails, validator lines in the log $nlines (want 0 and 0)"
ktap_test_result $ok "no event failed the validator under the full load"

# ---- 4: every event checked or counted skipped, writers nested
ok=1
ncpu=0
for c in $(rbn_cpus); do
	w=$(rbn_stat "$c" written)
	d=$(rbn_stat "$c" discarded)
	k=$(rbn_stat "$c" validate_checked)
	s=$(rbn_stat "$c" validate_skipped)
	[ "$((w + d))" -gt 0 ] || continue
	ncpu=$((ncpu + 1))
	ktap_print_msg "cpu$c: checked $k + skipped $s = $((k + s)); written $w, discarded $d: want > 0 checked and $w <= checked + skipped <= $((w + d))"
	[ "$k" -gt 0 ] && [ $((k + s)) -ge "$w" ] && [ $((k + s)) -le $((w + d)) ] ||
		ok=0
done
depth=$(rbn_stat_max max_depth)
ktap_print_msg "deepest nesting: $depth (want >= 2)"
[ $ncpu -gt 0 ] && [ "${depth:-0}" -ge 2 ] || ok=0
ktap_test_result $ok "every event written was checked or counted skipped, nested writers too ($ncpu CPUs)"

# ---- 5: the validate file
ok=1
for bad in 2 -1 abc ""; do
	if rbn_write validate "$bad"; then
		ktap_print_msg "validate '$bad' accepted"
		ok=0
	else
		ktap_print_msg "validate '$bad': $rbn_err"
		case $rbn_err in *nvalid*) ;; *) ok=0 ;; esac
	fi
done
v=$(rbn_get validate)
[ "$v" = 1 ] || { ktap_print_msg "validate reads '$v' after the bad values"; ok=0; }
# The static key is patched with every source off; the hrtimer
# patches nothing when it starts.
rbn_set validate 0 || { ktap_print_msg "$rbn_err"; ok=0; }
rbn_set reset 1
rbn_set tracing_on 1
rbn_set sources hrtimer || ktap_print_msg "$rbn_err"
sleep 2
rbn_set sources -hrtimer
off_w=$(rbn_stat_sum written)
off_k=$(rbn_stat_sum validate_checked)
rbn_set validate 1 || { ktap_print_msg "$rbn_err"; ok=0; }
rbn_set reset 1
rbn_set sources hrtimer || ktap_print_msg "$rbn_err"
sleep 2
rbn_set sources -hrtimer
on_w=$(rbn_stat_sum written)
on_k=$(rbn_stat_sum validate_checked)
ktap_print_msg "validate 0: written $off_w, checked $off_k (want > 0, 0); validate 1: written $on_w, checked $on_k (want > 0, > 0)"
[ "$off_w" -gt 0 ] && [ "$off_k" -eq 0 ] && [ "$on_w" -gt 0 ] && [ "$on_k" -gt 0 ] ||
	ok=0
ktap_test_result $ok "validate: bad values EINVAL and unchanged, 0 stops the checks, 1 starts them"

# ---- 6: absolute mode
rbn_unload || ktap_print_msg "$rbn_err"
rbn_dmesg_mark "$rbn_test absolute"
ok=0
if rbn_load buffer_size_kb="${RBN_NEST_BUFFER_KB:-4096}" \
	   gen_task_busy_us=50 gen_task_idle_us=450 \
	   discard_every="$every" validate=1 timestamp_mode=absolute sources=; then
	rbn_write kprobe_events "p:rbn_validate vfs_read" || true
	run_load $(((secs + 1) / 2))
	rbn_stat_table written discarded ts_abs validate_checked validate_fail validate_skipped
	fails=$(rbn_stat_sum validate_fail)
	checked=$(rbn_stat_sum validate_checked)
	nlines=$(validate_lines "rbnest-selftest: $rbn_test absolute" "$t/validate-abs.log")
	ktap_print_msg "absolute mode: checked $checked, failed $fails, log lines $nlines"
	[ "$fails" -eq 0 ] && [ "$nlines" -eq 0 ] && [ "$checked" -gt 0 ] && ok=1
	rbn_unload || ktap_print_msg "$rbn_err"
else
	ktap_print_msg "$rbn_err"
fi
ktap_test_result $ok "absolute time-stamp mode: events checked, none failed"

# ---- 7: the test-only corruption is caught
# corrupt_run VALIDATE K: load the test-only build with validate=VALIDATE,
# corrupt K samples of the hrtimer source; sets c_fail c_skip c_check
# c_left, and the validator's log lines in $t/corrupt-VALIDATE.log
corrupt_run()
{
	c_fail=0 c_skip=0 c_check=0 c_left=-
	rbn_dmesg_mark "$rbn_test corrupt $1"
	if ! RBNEST_KO=$testonly_ko rbn_load validate="$1" sources=; then
		ktap_print_msg "test-only build: $rbn_err"
		return 1
	fi
	echo "$2" >"$corrupt" || { ktap_print_msg "cannot write $corrupt"; return 1; }
	rbn_set sources hrtimer || ktap_print_msg "$rbn_err"
	_c=0
	while [ "$(cat "$corrupt")" != 0 ] && [ $_c -lt 20 ]; do
		sleep 1
		_c=$((_c + 1))
	done
	rbn_quiesce
	c_left=$(cat "$corrupt")
	c_fail=$(rbn_stat_sum validate_fail)
	c_skip=$(rbn_stat_sum validate_skipped)
	c_check=$(rbn_stat_sum validate_checked)
	validate_lines "rbnest-selftest: $rbn_test corrupt $1" "$t/corrupt-$1.log" >/dev/null
	rbn_unload || ktap_print_msg "$rbn_err"
	return 0
}

k=20
if [ ! -f "$testonly_ko" ] && [ "${RBN_REQUIRE_TESTONLY:-0}" != 1 ]; then
	ktap_test_skip "a corruption is reported" "no test-only build at $testonly_ko (make module RBN_TESTONLY=y)"
else
	ok=1
	if corrupt_run 0 $k; then
		n=$(wc -l <"$t/corrupt-0.log")
		ktap_print_msg "validator off: $k corrupted (left $c_left), failed $c_fail, checked $c_check, log lines $n (want 0 0 0)"
		[ "$c_left" = 0 ] && [ "$c_fail" -eq 0 ] && [ "$c_check" -eq 0 ] &&
			[ "$n" -eq 0 ] || ok=0
	else
		ok=0
	fi
	if corrupt_run 1 $k; then
		lines=$(grep -c 'time differs from its writer' "$t/corrupt-1.log")
		dumps=$(grep -c 'sub-buffer time_stamp' "$t/corrupt-1.log")
		head -n 12 "$t/corrupt-1.log" | sed 's/^/# /'
		ktap_print_msg "validator on: $k corrupted (left $c_left), failed $c_fail, skipped $c_skip, checked $c_check; mismatch lines $lines, dumps $dumps"
		ktap_print_msg "want: failed > 0, failed + skipped >= $k, a mismatch line, exactly one dump"
		[ "$c_left" = 0 ] && [ "$c_fail" -gt 0 ] &&
			[ $((c_fail + c_skip)) -ge $k ] && [ "$lines" -gt 0 ] &&
			[ "$dumps" -eq 1 ] || ok=0
	else
		ok=0
	fi
	ktap_test_result $ok "a corruption of the test-only build is counted and reported, once dumped"
fi

# ---- 8: unload
ok=0
rbn_unload && ok=1
[ $ok = 1 ] || ktap_print_msg "$rbn_err"
ktap_test_result $ok "unload"

ktap_finished

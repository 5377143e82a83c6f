#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_tsmode.sh - the absolute time-stamp mode under real nesting.
#
# The module is loaded with timestamp_mode=absolute and discard_every=5:
# every event carries its full time in an absolute stamp, but a
# sandwiched one (an interrupt wrote in front of it and one behind it
# before its F: it is shown at the time of the event in front, after a
# time extend of 0), and every 5th reserve of a CPU is discarded. Every
# source writes for RBN_TSMODE_SECONDS (default 10, 5 with RBN_QUICK=1;
# the task writers at a tenth of their time; up to three times as long
# until a writer took the slow path) while "rbtrace record" splices.
#  1. timestamp_mode=bogus is refused at insmod, nothing left;
#  2. the load reads "delta [absolute]" from timestamp_mode;
#  3. "rbtrace check" passes on the recording;
#  4. per CPU that wrote: every reserved event has an absolute stamp or
#     is a sandwich (ts_abs + ts_zero == written + discarded), each
#     sandwich wrote its time extend of 0 and nothing else did
#     (ts_extend == ts_zero), writers nested (max_depth >= 2 somewhere)
#     and took the slow path (ts_slow > 0 somewhere);
#  5. "trace-cmd report --ts-check" on "rbtrace export" of the recording
#     prints no "went backwards" (skipped without trace-cmd);
#  6. "delta" written to timestamp_mode empties the buffer and switches:
#     the file reads "[delta] absolute", and the hrtimer's events are not
#     all absolute any more (ts_abs < written);
#  7. a bad mode written to the file is refused with EINVAL and changes
#     nothing; "absolute" written again makes every event absolute;
#  8. unload.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

ktap_print_header
ktap_set_plan 8

secs=${RBN_TSMODE_SECONDS:-$(rbn_secs 10)}
t=$rbn_tmp

# mode_write VALUE: one write(2) of VALUE to timestamp_mode; 0 on success,
# else 1 with the errno text in rbn_err
mode_write()
{
	printf '%s\n' "$1" >"$t/mode"
	rbn_err=
	dd if="$t/mode" of="$rbn_dir/timestamp_mode" bs="$(wc -c <"$t/mode")" \
		count=1 conv=notrunc 2>"$t/dd.err" && return 0
	rbn_err=$(rbn_errtext "$t/dd.err")
	return 1
}

# ---- 1: a bad mode at insmod
ok=1
if insmod "$RBNEST_KO" timestamp_mode=bogus >"$t/insmod.err" 2>&1; then
	ktap_print_msg "insmod timestamp_mode=bogus succeeded"
	ok=0
else
	ktap_print_msg "insmod timestamp_mode=bogus: $(tail -n 1 "$t/insmod.err")"
fi
if rbn_loaded || [ -d "$rbn_dir" ]; then
	ktap_print_msg "left behind: $(rbn_loaded && echo 'module ')$([ -d "$rbn_dir" ] && echo "$rbn_dir")"
	ok=0
	rbn_unload >/dev/null 2>&1
fi
ktap_test_result $ok "insmod timestamp_mode=bogus fails, nothing left"

# ---- 2: load in absolute mode
if ! rbn_load buffer_size_kb="${RBN_NEST_BUFFER_KB:-4096}" \
	    gen_task_busy_us=50 gen_task_idle_us=450 \
	    timestamp_mode=absolute discard_every=5 sources=; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt 8 ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi
v=$(rbn_get timestamp_mode)
ktap_print_msg "timestamp_mode: '$v'"
ok=0
[ "$v" = "delta [absolute]" ] && ok=1
ktap_test_result $ok "load with timestamp_mode=absolute, the file says so"

ktap_print_msg "all sources for $secs s in absolute mode, every 5th reserve discarded, rbtrace record splicing"
rbn_record_start "$t/rec"
rbn_set sources all || ktap_print_msg "$rbn_err"
sleep "$secs"
# A writer interrupted between A and C (the slow path) is rarer on a busy
# host: go on, up to twice as long again, until one has been.
more=0
while [ "$(rbn_stat_sum ts_slow)" = 0 ] && [ $more -lt $((2 * secs)) ]; do
	sleep 1
	more=$((more + 1))
done
[ $more -gt 0 ] &&
	ktap_print_msg "no slow-path event after $secs s: $more s more"
rbn_quiesce
rbn_record_stop
rec_rc=$?

# ---- 3: rbtrace check
rbn_check "$t/rec" >/dev/null
check_rc=$?
sed 's/^/# /' "$t/rec.check" | grep -v VIOLATION | head -n 20
grep -m 5 VIOLATION "$t/rec.check" | sed 's/^/# /'
events=$(rbn_check_events "$t/rec")
ok=0
[ $rec_rc -eq 0 ] && [ $check_rc -eq 0 ] && grep -q ': OK$' "$t/rec.check" &&
	[ "${events:-0}" -gt 0 ] && ok=1
ktap_print_msg "events: ${events:-0} recorded; record exit $rec_rc, check exit $check_rc"
ktap_test_result $ok "rbtrace check passes on an absolute-mode recording"

# ---- 4: every event absolute but the sandwiches
ok=1
ncpu=0
depth=0
slow=0
rbn_stat_table written discarded ts_abs ts_zero ts_extend ts_slow max_depth
for c in $(rbn_cpus); do
	w=$(rbn_stat "$c" written)
	d=$(rbn_stat "$c" discarded)
	a=$(rbn_stat "$c" ts_abs)
	z=$(rbn_stat "$c" ts_zero)
	x=$(rbn_stat "$c" ts_extend)
	s=$(rbn_stat "$c" ts_slow)
	m=$(rbn_stat "$c" max_depth)
	[ $((w + d)) -gt 0 ] || continue
	ncpu=$((ncpu + 1))
	ktap_print_msg "cpu$c: ts_abs $a + ts_zero $z = $((a + z)), written $w + discarded $d = $((w + d)); ts_extend $x; ts_slow $s, max_depth $m"
	[ $((a + z)) -eq $((w + d)) ] && [ "$x" -eq "$z" ] && [ "$d" -gt 0 ] ||
		ok=0
	[ "$m" -gt "$depth" ] && depth=$m
	slow=$((slow + s))
done
ktap_print_msg "deepest nesting $depth, slow-path events $slow (want >= 2, > 0)"
[ $ncpu -gt 0 ] && [ "$depth" -ge 2 ] && [ "$slow" -gt 0 ] || ok=0
ktap_test_result $ok "every reserved event absolute or a sandwich, nested writers included ($ncpu CPUs)"

# ---- 5: trace-cmd --ts-check
if ! command -v trace-cmd >/dev/null 2>&1; then
	ktap_test_skip "trace-cmd report --ts-check" "no trace-cmd on PATH"
else
	ok=0
	if "$RBTRACE" export "$t/rec" -o "$t/trace.dat" >"$t/export.out" 2>&1; then
		: >"$t/ts.out"
		{
			trace-cmd report --ts-check "$t/trace.dat" 2>&1
			echo $? >"$t/ts.rc"
		} | awk -v w="$t/ts.out" '
			/went backwards|WARNING/ { print >w }
			/ sample: / { n++ }
			END { print n + 0 }' >"$t/ts.count"
		rc=$(cat "$t/ts.rc")
		n=$(cat "$t/ts.count")
		r=$(rbn_stat_sum read)
		head -n 5 "$t/ts.out" | sed 's/^/# /'
		ktap_print_msg "trace-cmd report --ts-check: exit $rc, $(wc -l <"$t/ts.out") warning lines; $n sample lines, $r events read"
		[ "$rc" -eq 0 ] && [ ! -s "$t/ts.out" ] && [ "$n" -eq "$r" ] && ok=1
	else
		head -n 5 "$t/export.out" | sed 's/^/# /'
		ktap_print_msg "rbtrace export failed"
	fi
	ktap_test_result $ok "trace-cmd report --ts-check: time never goes backwards, every event read is there"
fi

# ---- 6: back to delta mode at run time
# Only the generator's hrtimer writes from here on, and nothing reads.
ok=1
rbn_set tracing_on 1 || { ktap_print_msg "$rbn_err"; ok=0; }
echo 0 >/sys/module/"$rbn_name"/parameters/discard_every ||
	{ ktap_print_msg "discard_every=0 refused"; ok=0; }
mode_write delta || { ktap_print_msg "delta: $rbn_err"; ok=0; }
v=$(rbn_get timestamp_mode)
e=$(rbn_stat_sum entries)
ktap_print_msg "after 'delta': timestamp_mode '$v', entries $e (want '[delta] absolute', 0)"
[ "$v" = "[delta] absolute" ] && [ "$e" -eq 0 ] || ok=0
rbn_set sources hrtimer || { ktap_print_msg "$rbn_err"; ok=0; }
sleep "$(rbn_secs 3)"
rbn_quiesce
w=$(rbn_stat_sum written)
a=$(rbn_stat_sum ts_abs)
ktap_print_msg "delta mode, hrtimer: written $w, ts_abs $a (want written > 0, ts_abs < written)"
[ "$w" -gt 0 ] && [ "$a" -lt "$w" ] || ok=0
ktap_test_result $ok "'delta' written: buffer emptied, deltas again"

# ---- 7: a bad mode is refused; absolute again
ok=1
for b in bogus "" "absolute delta"; do
	if mode_write "$b"; then
		ktap_print_msg "timestamp_mode='$b' accepted"
		ok=0
	else
		ktap_print_msg "timestamp_mode='$b': $rbn_err"
		case $rbn_err in
		*"Invalid argument"*) ;;
		*) ok=0 ;;
		esac
	fi
done
v=$(rbn_get timestamp_mode)
w=$(rbn_stat_sum written)
ktap_print_msg "after the bad writes: '$v', written $w (want '[delta] absolute', unchanged)"
[ "$v" = "[delta] absolute" ] && [ "$w" -gt 0 ] || ok=0
mode_write absolute || { ktap_print_msg "absolute: $rbn_err"; ok=0; }
rbn_set tracing_on 1 || { ktap_print_msg "$rbn_err"; ok=0; }
rbn_set sources hrtimer || { ktap_print_msg "$rbn_err"; ok=0; }
sleep "$(rbn_secs 3)"
rbn_quiesce
w=$(rbn_stat_sum written)
a=$(rbn_stat_sum ts_abs)
z=$(rbn_stat_sum ts_zero)
ktap_print_msg "absolute mode again, hrtimer: written $w, ts_abs $a + ts_zero $z (want == written > 0)"
[ "$w" -gt 0 ] && [ $((a + z)) -eq "$w" ] || ok=0
ktap_test_result $ok "bad modes refused with EINVAL, nothing changed; absolute again"

# ---- 8: unload
ok=0
if rbn_unload; then
	ok=1
else
	ktap_print_msg "$rbn_err"
fi
ktap_test_result $ok "unload"

ktap_finished
